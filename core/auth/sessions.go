package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// Server-side sessions (Config.Sessions): the list of a user's sessions and
// ending one. Without a record store the routes are not registered (404
// like any unknown path) and the typed methods fail with
// [ErrFeatureDisabled].

// SessionInfo is one session of the signed-in user as the list shows it.
type SessionInfo struct {
	ID         string
	Current    bool // the session of the visit
	CreatedAt  time.Time
	LastSeenAt time.Time // written at most once a minute
	IP         string    // the client address at login; "" when unknown
	UserAgent  string    // its User-Agent header at login
}

// ListSessions is GET /api/auth/sessions: every live session of the
// signed-in user, newest first, the visit's own marked Current.
func (s *Service) ListSessions(ctx context.Context, v *Visit) (_ []SessionInfo, err error) {
	ctx, flow := s.enter(ctx, v, "sessions")
	defer flow.end(&err)
	st, u, err := storeAndUser(ctx, v, s.recordStore, s.CurrentUser)
	if err != nil {
		return nil, err
	}
	recs, err := st.List(ctx, u.ID)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	now, current := s.now(), v.sess.RecordID()
	out := make([]SessionInfo, 0, len(recs))
	for _, r := range recs {
		if !now.Before(r.ExpiresAt) || s.idle(r, now) {
			continue
		}
		out = append(out, SessionInfo{ID: r.ID, Current: r.ID == current, CreatedAt: r.CreatedAt, LastSeenAt: r.LastSeenAt,
			IP: r.IP, UserAgent: r.UserAgent})
	}
	return out, nil
}

// idle reports whether r is past its idle timeout (Config.SessionIdleTimeout,
// Config.RememberIdleTimeout).
func (s *Service) idle(r session.Record, now time.Time) bool { return s.sessions.Idle(r, now) }

// EndSessionInput is what EndSession takes.
type EndSessionInput struct {
	ID string // a session id from ListSessions
}

// EndSession is DELETE /api/auth/sessions/{id}: it ends one session of the
// signed-in user. Ending the visit's own session is a logout (its cookie
// is expired). Ending another needs a recent authentication
// ([ErrReauthenticationRequired]): whoever holds a stolen session must not
// be able to sign the owner out everywhere else. An id that is not one of
// the user's live sessions, another user's included, fails with
// [ErrSessionNotFound], whichever it is.
func (s *Service) EndSession(ctx context.Context, v *Visit, in EndSessionInput) (err error) {
	ctx, flow := s.enter(ctx, v, "sessions/delete")
	defer flow.end(&err)
	st, u, err := storeAndUser(ctx, v, s.recordStore, s.CurrentUser)
	if err != nil {
		return err
	}
	if in.ID == v.sess.RecordID() {
		if err := v.sess.Logout(ctx); err != nil {
			return fmt.Errorf("end session: %w", err)
		}
		s.clearPending(v)
		s.audit(ctx, v, Event{Type: EventSessionEnded, UserID: u.ID, Detail: "current"})
		return nil
	}
	if !s.recent(v) {
		return ErrReauthenticationRequired
	}
	if !isRecordID(in.ID) {
		return ErrSessionNotFound // no id authkit makes: no store sees it
	}
	if err := st.Delete(ctx, u.ID, in.ID); err != nil {
		if errors.Is(err, user.ErrNotFound) {
			return ErrSessionNotFound
		}
		return fmt.Errorf("end session: %w", err)
	}
	s.audit(ctx, v, Event{Type: EventSessionEnded, UserID: u.ID})
	return nil
}

// recordStore returns Config.Sessions, or ErrFeatureDisabled without one.
// HasSessionRecords reports whether sessions have server-side records
// (Config.Sessions), so that ListSessions and EndSession work: a page
// shows the session list only then.
func (s *Service) HasSessionRecords() bool { return s.cfg.Sessions != nil }

// HasTrustedDevices reports whether a browser can be trusted at the second
// step (Config.TrustedDevices): a page offers "trust this browser" only
// then.
func (s *Service) HasTrustedDevices() bool { return s.cfg.TrustedDevices != nil }

func (s *Service) recordStore() (session.Store, error) {
	if s.cfg.Sessions == nil {
		return nil, ErrFeatureDisabled
	}
	return s.cfg.Sessions, nil
}

// startSession signs u in on the visit: the session cookie and, with a
// record store, its record, which keeps the client's address and
// User-Agent.
func (s *Service) startSession(ctx context.Context, v *Visit, u *user.User, remember bool) error {
	if s.cfg.Sessions != nil {
		v.sess.SetClient(v.clientAddr(), v.userAgent())
	}
	return v.sess.Login(ctx, u, remember)
}

// endOtherSessions deletes the records of every session of userID but the
// visit's (all of them when keepCurrent is false), and every trusted
// device of userID, after a change that raised the session version: those
// sessions and trusts are dead already (their cookies carry the old
// version), and their records must leave the lists.
func (s *Service) endOtherSessions(ctx context.Context, v *Visit, userID string, keepCurrent bool) error {
	if err := s.forgetTrustedDevices(ctx, v, userID); err != nil {
		return err
	}
	if s.cfg.Sessions == nil {
		return nil
	}
	except := ""
	if keepCurrent {
		except = v.sess.RecordID()
	}
	if err := s.cfg.Sessions.DeleteAll(ctx, userID, except); err != nil {
		return fmt.Errorf("end sessions: %w", err)
	}
	return nil
}

// sessionJSON is one session on the wire.
type sessionJSON struct {
	ID         string `json:"id"`
	Current    bool   `json:"current"`
	CreatedAt  string `json:"createdAt"`
	LastSeenAt string `json:"lastSeenAt"`
	IP         string `json:"ip"`
	UserAgent  string `json:"userAgent"`
}

func toSessionJSON(si SessionInfo) sessionJSON {
	return sessionJSON{ID: si.ID, Current: si.Current, CreatedAt: isoTime(si.CreatedAt), LastSeenAt: isoTime(si.LastSeenAt),
		IP: si.IP, UserAgent: si.UserAgent}
}

func listSessionsRoute(ctx context.Context, s *Service, v *Visit) Response {
	return listRoute(ctx, s, v, "sessions", "sessions", s.ListSessions, toSessionJSON)
}

func endSessionRoute(ctx context.Context, s *Service, v *Visit) Response {
	err := s.EndSession(ctx, v, EndSessionInput{ID: v.req.PathValue("id")})
	return s.answer(ctx, v, "end session", s.say(v, "session_ended", msgSessionEnded), err)
}

// isRecordID reports whether id has the shape of the ids the session
// Manager makes for records (session.Record.ID): 32 lowercase hex
// characters. Anything else names no record and never reaches a store, so
// a NUL or invalid UTF-8, which PostgreSQL refuses in a text value, cannot
// turn a 404 into a backend error.
func isRecordID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
