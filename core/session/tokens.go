package session

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/token"
	"github.com/authkit-go/authkit/core/user"
)

// Token mode: the session of a client that keeps no cookies (a mobile
// app, a command-line tool) is held as two tokens instead of the cookie.
//
//   - The access token ("akat_" and a signed token) carries exactly what
//     the cookie carries (the user, the session's record, its start, its
//     time of authentication, the session version) and lives
//     TokenConfig.AccessLifetime (15 minutes). It is checked as the
//     cookie is, record included, on every request: logout, the session
//     list, logout-everywhere and a password reset end it at once.
//   - The refresh token ("akrt_" and a signed token) names the session's
//     record and a generation. Each use hands out the next generation
//     and retires the one used: TokenConfig.Families keeps, per record,
//     the one generation that may be used next, taken and put back by
//     [onetime.Store]'s atomic Take, so of two uses of one refresh token
//     exactly one finds it. A refresh token that finds its generation
//     gone (it was used before: a copy is in other hands, or two requests
//     raced) ends the session, the OAuth 2.0 Security BCP's reuse
//     detection (RFC 9700, 4.14.2): whoever held the copy loses the
//     session with the rightful client, who signs in again.
//
// Both tokens are signed with Config.Secrets under purposes of their own
// (neither verifies as a cookie, nor a cookie as either), and the family
// store keeps no secret: only the generation, and the SHA-256 of the
// refresh token it belongs to, checked in constant time. A refresh token
// lives as long as its session (Lifetime, or RememberLifetime with
// "remember me") and ends with it, and the idle timeout applies to its
// use as to the cookie's.

// The prefixes of the tokens, so that a client, a log scrubber or a
// secret scanner tells them apart from each other and from any other
// bearer token.
const (
	AccessPrefix  = "akat_"
	RefreshPrefix = "akrt_"
)

// DefaultAccessLifetime is TokenConfig.AccessLifetime's default.
const DefaultAccessLifetime = 15 * time.Minute

// Purposes of the tokens (see package token).
const (
	AccessPurpose  = "access"
	RefreshPurpose = "refresh"
)

// ErrInvalidRefresh is returned by [Session.Refresh] for a refresh token
// that does not verify, names a session that has ended, or was used
// before (then it wraps [ErrRefreshReused]).
var ErrInvalidRefresh = errors.New("session: invalid refresh token")

// ErrRefreshReused is wrapped by ErrInvalidRefresh when the refresh token
// was used before: the session has been ended.
var ErrRefreshReused = errors.New("refresh token used before; the session has been ended")

// TokenConfig configures token mode (Config.Tokens).
type TokenConfig struct {
	// Families keeps the next refresh generation of every token-mode
	// session. Required for token mode; several instances share one
	// (sqlxstore's DB.OneTime(), redisstore's OneTime).
	Families onetime.Store

	// AccessLifetime is how long an access token verifies. Default:
	// DefaultAccessLifetime (15 minutes).
	AccessLifetime time.Duration
}

// Tokens is what a token-mode Login, Renew, Reauthenticate or Refresh
// hands out.
type Tokens struct {
	Access        string    // "akat_...", sent as Authorization: Bearer
	Refresh       string    // "akrt_...", sent to the refresh route only
	AccessExpires time.Time // when Access stops verifying
}

// tokenMode sets up token mode from cfg.Tokens.
func (m *Manager) tokenMode(cfg Config) error {
	if cfg.Tokens.Families == nil {
		if cfg.Tokens.AccessLifetime != 0 {
			return errors.New("Tokens.AccessLifetime needs Tokens.Families")
		}
		return nil
	}
	if m.store == nil {
		return errors.New("Tokens needs a Store: a token-mode session is a record")
	}
	life := cfg.Tokens.AccessLifetime
	if life == 0 {
		life = DefaultAccessLifetime
	}
	if life < time.Second {
		return errors.New("Tokens.AccessLifetime must be at least one second")
	}
	var err error
	if m.access, err = token.NewVerifier(token.Config{Secrets: cfg.Secrets, Purpose: AccessPurpose, Expiry: life, Now: m.now}); err != nil {
		return err
	}
	if m.refresh, err = token.NewVerifier(token.Config{Secrets: cfg.Secrets, Purpose: RefreshPurpose, Expiry: max(m.lifetime, m.rememberLifetime), Now: m.now}); err != nil {
		return err
	}
	m.families = cfg.Tokens.Families
	return nil
}

// TokenMode reports whether token mode is on (Config.Tokens).
func (m *Manager) TokenMode() bool { return m.families != nil }

// AccessLifetime returns how long an access token verifies; 0 without
// token mode.
func (m *Manager) AccessLifetime() time.Duration {
	if m.access == nil {
		return 0
	}
	return m.access.Expiry()
}

// TokenSession returns the session of one token-mode request: bearer is
// the access token it came with ("" for none). It reads and sets no
// cookie: [Session.User] checks the access token, and Login, Renew,
// Reauthenticate and [Session.Refresh] hand out new tokens
// ([Session.Tokens]). Without token mode (Config.Tokens) the session
// never authenticates and Login fails.
func (m *Manager) TokenSession(bearer string) *Session {
	return &Session{m: m, tokenMode: true, bearer: bearer}
}

// AccessUser is [Manager.User] for an access token (its prefix
// included): the user of a valid token-mode session, checked exactly as
// Session.User checks it.
func (m *Manager) AccessUser(ctx context.Context, accessToken string) (*user.User, error) {
	raw, ok := strings.CutPrefix(accessToken, AccessPrefix)
	if !ok || raw == "" || m.access == nil {
		return nil, ErrNotAuthenticated
	}
	return m.readUser(ctx, m.access, raw)
}

// Tokens returns the tokens a Login, Renew, Reauthenticate or Refresh of
// this token-mode session issued in this request.
func (s *Session) Tokens() (Tokens, bool) {
	if s.minted == nil {
		return Tokens{}, false
	}
	return *s.minted, true
}

// TokenMode reports whether s is a token-mode session.
func (s *Session) TokenMode() bool { return s.tokenMode }

// credential is the request's session credential without its prefix and
// the verifier that checks it: the cookie, or the bearer access token in
// token mode. raw is "" when the request has none.
func (s *Session) credential() (raw string, v *token.Verifier) {
	if s.tokenMode {
		raw, ok := strings.CutPrefix(s.bearer, AccessPrefix)
		if !ok || s.m.access == nil {
			return "", nil
		}
		return raw, s.m.access
	}
	raw, ok := s.cookies.Get(s.m.name)
	if !ok {
		return "", nil
	}
	return raw, s.m.tokens
}

// familyState is what the family store keeps of a token-mode session:
// the generation of the one refresh token that may be used next, the
// SHA-256 of that token, and the session's data as its cookie would carry
// it (the access tokens a refresh issues carry it on).
type familyState struct {
	gen      uint64
	hash     [sha256.Size]byte
	remember bool
	version  int64
	authAt   time.Time
	start    time.Time
}

func familyKey(record string) string { return "refresh:" + record }

func (f familyState) encode() []byte {
	b := binary.AppendUvarint(nil, f.gen)
	b = append(b, f.hash[:]...)
	if f.remember {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendVarint(b, f.version)
	b = binary.AppendVarint(b, f.authAt.UnixMilli())
	return binary.AppendVarint(b, f.start.UnixMilli())
}

func decodeFamily(b []byte) (familyState, error) {
	var f familyState
	gen, n := binary.Uvarint(b)
	if n <= 0 || len(b[n:]) < sha256.Size+1 {
		return f, errData
	}
	f.gen, b = gen, b[n:]
	copy(f.hash[:], b)
	b = b[sha256.Size:]
	f.remember, b = b[0] == 1, b[1:]
	var vals [3]int64
	for i := range vals {
		v, n := binary.Varint(b)
		if n <= 0 {
			return f, errData
		}
		vals[i], b = v, b[n:]
	}
	if len(b) != 0 {
		return f, errData
	}
	f.version, f.authAt, f.start = vals[0], time.UnixMilli(vals[1]).UTC(), time.UnixMilli(vals[2]).UTC()
	return f, nil
}

// issueTokens mints the access token (data d) and the refresh token of
// generation gen of record's family, and keeps the family's state.
func (s *Session) issueTokens(ctx context.Context, u *user.User, d []byte, record string, gen uint64, f familyState) error {
	if s.m.families == nil {
		return errors.New("session: token mode is off (Config.Tokens)")
	}
	if record == "" {
		return errors.New("session: a token-mode session needs a record")
	}
	id, err := hex.DecodeString(record)
	if err != nil || len(id) != recordIDLen {
		return fmt.Errorf("session: record id %q is not %d bytes of hex", record, recordIDLen)
	}
	access, err := s.m.access.CreateWith(u.ID, d)
	if err != nil {
		return fmt.Errorf("session: access token: %w", err)
	}
	refresh, err := s.m.refresh.CreateWith(u.ID, binary.AppendUvarint(id, gen))
	if err != nil {
		return fmt.Errorf("session: refresh token: %w", err)
	}
	refresh = RefreshPrefix + refresh
	f.gen, f.hash = gen, sha256.Sum256([]byte(refresh))
	f.authAt, f.start = f.authAt.Truncate(time.Millisecond), f.start.Truncate(time.Millisecond)
	expires := f.start.Add(s.m.life(f.remember))
	if err := s.m.families.Put(ctx, familyKey(record), f.encode(), expires); err != nil {
		return fmt.Errorf("session: keep refresh family: %w", err)
	}
	now := s.m.now()
	s.minted = &Tokens{Access: AccessPrefix + access, Refresh: refresh, AccessExpires: now.Add(s.m.access.Expiry())}
	return nil
}

// nextGen takes record's family for a Renew in token mode: the renewed
// session's refresh token is the next generation, and the one the client
// holds is retired. Without token mode it is 0.
func (s *Session) nextGen(ctx context.Context, record string) (uint64, error) {
	if !s.tokenMode {
		return 0, nil
	}
	b, err := s.m.families.Take(ctx, familyKey(record), s.m.now())
	if errors.Is(err, onetime.ErrNotFound) {
		return 0, s.end(errRecordGone)
	}
	if err != nil {
		return 0, fmt.Errorf("session: renew refresh family: %w", err)
	}
	f, err := decodeFamily(b)
	if err != nil {
		return 0, s.end(err)
	}
	return f.gen + 1, nil
}

// dropFamily retires record's refresh family, after a re-authentication
// moved the session to a new record: its refresh token, used after this,
// is taken for a copy's and ends what is left of the old record.
func (s *Session) dropFamily(ctx context.Context, record string) {
	_, _ = s.m.families.Take(ctx, familyKey(record), s.m.now()) // gone or not: the old record retires anyway
}

// Refresh turns a refresh token into a new pair ([Session.Tokens]) and
// makes its session this request's, as Session.User would: the session
// must still be valid (its record, its lifetime and idle timeout, its
// user, the session version and the last password change). The refresh
// token used is retired; a refresh token used a second time (or two
// refreshes with one token at once: of them exactly one succeeds) ends
// the session, record and family, and fails with [ErrInvalidRefresh]
// wrapping [ErrRefreshReused], with the session's user (for an audit
// record). Every other refusal is ErrInvalidRefresh;
// an error of a store is returned wrapped.
func (s *Session) Refresh(ctx context.Context, refreshToken string) (*user.User, error) {
	if !s.tokenMode || s.m.families == nil {
		return nil, ErrInvalidRefresh
	}
	raw, ok := strings.CutPrefix(refreshToken, RefreshPrefix)
	if !ok || raw == "" {
		return nil, ErrInvalidRefresh
	}
	c, err := s.m.refresh.Verify(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRefresh, err)
	}
	if len(c.Data) < recordIDLen+1 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRefresh, errData)
	}
	record := hex.EncodeToString(c.Data[:recordIDLen])
	gen, n := binary.Uvarint(c.Data[recordIDLen:])
	if n <= 0 || recordIDLen+n != len(c.Data) {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRefresh, errData)
	}
	now := s.m.now()
	rec, err := s.m.store.Get(ctx, record)
	switch {
	case errors.Is(err, user.ErrNotFound):
		return nil, fmt.Errorf("%w: %w", ErrInvalidRefresh, errRecordGone)
	case err != nil:
		return nil, fmt.Errorf("session: refresh: record: %w", err)
	case rec.UserID != c.UserID || !now.Before(rec.ExpiresAt):
		return nil, fmt.Errorf("%w: %w", ErrInvalidRefresh, errRecordGone)
	case s.m.Idle(rec, now):
		return nil, s.endFamily(ctx, rec, errIdle)
	}
	u, err := s.m.resolveUser(ctx, c.UserID)
	if err != nil {
		return nil, fmt.Errorf("session: refresh: resolve user: %w", err)
	}
	if u == nil {
		return nil, s.endFamily(ctx, rec, errUserGone)
	}
	if !u.PasswordChangedAt.IsZero() && floorDiv(c.IssuedAtMs(), 1000) < floorDiv(u.PasswordChangedAt.UnixMilli(), 1000) {
		return nil, s.endFamily(ctx, rec, errPasswordChanged)
	}
	if !now.Before(rec.LastSeenAt.Add(s.m.touch)) {
		err := s.m.store.Touch(ctx, rec.ID, now.Truncate(time.Millisecond), rec.ExpiresAt)
		if errors.Is(err, user.ErrNotFound) {
			return nil, fmt.Errorf("%w: %w", ErrInvalidRefresh, errRecordGone)
		}
		if err != nil {
			return nil, fmt.Errorf("session: refresh: touch record: %w", err)
		}
	}
	b, err := s.m.families.Take(ctx, familyKey(record), now)
	if errors.Is(err, onetime.ErrNotFound) {
		return u, s.endFamily(ctx, rec, ErrRefreshReused)
	}
	if err != nil {
		return nil, fmt.Errorf("session: refresh: family: %w", err)
	}
	f, err := decodeFamily(b)
	if err != nil {
		return nil, s.endFamily(ctx, rec, err)
	}
	if sum := sha256.Sum256([]byte(refreshToken)); f.gen != gen || subtle.ConstantTimeCompare(sum[:], f.hash[:]) != 1 {
		return u, s.endFamily(ctx, rec, ErrRefreshReused)
	}
	if f.version < u.SessionVersion {
		return nil, s.endFamily(ctx, rec, errVersion)
	}
	d, err := appendData(nil, f.remember, f.version, f.authAt, f.start, record)
	if err != nil {
		return nil, fmt.Errorf("session: refresh: %w", err)
	}
	if err := s.issueTokens(ctx, u, d, record, gen+1, f); err != nil {
		return nil, err
	}
	s.state, s.user, s.remember, s.authAt, s.start, s.record, s.expires = authenticated, u, f.remember, f.authAt, f.start, record, rec.ExpiresAt
	return u, nil
}

// endFamily ends the session of a refresh token refused for reason: its
// record goes, and with it every access token of the session.
func (s *Session) endFamily(ctx context.Context, rec Record, reason error) error {
	if err := s.m.store.Delete(ctx, rec.UserID, rec.ID); err != nil && !errors.Is(err, user.ErrNotFound) {
		return fmt.Errorf("session: refresh: end session: %w", err)
	}
	_, _ = s.m.families.Take(ctx, familyKey(rec.ID), s.m.now())
	return fmt.Errorf("%w: %w", ErrInvalidRefresh, reason)
}
