package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// Re-authentication ("sudo mode", SECURITY.md deviation 12): the session
// cookie carries when its user last authenticated (registration, a login
// with every factor, a password confirmation, a correct current password).
// Changes that would let whoever holds a stolen session keep the account
// need that time to be recent (Config.ReauthWindow): 2FA setup, confirm and
// recovery-code regeneration, and the routes that take the current password
// (2FA disable, email change, password change), where that password is the
// re-authentication.

// DefaultReauthWindow is how recent an authentication must be for the
// changes that need one, unless Config.ReauthWindow says otherwise.
const DefaultReauthWindow = 15 * time.Minute

// ConfirmPasswordInput is what ConfirmPassword takes.
type ConfirmPasswordInput struct {
	Password string // the signed-in user's current password
}

// ConfirmPasswordResult is what a password confirmation gives.
type ConfirmPasswordResult struct {
	User *user.User
	// Until is when the confirmation stops counting as recent
	// (Config.ReauthWindow from now); zero when re-authentication is off.
	Until time.Time
}

// ConfirmPassword is POST /api/auth/confirm-password: the signed-in user
// re-enters the current password, and the visit's session cookie is
// reissued with the time of authentication set to now, so the changes that
// need a recent authentication work for Config.ReauthWindow. It is limited
// like every re-entry of the current password (Limits.Password, key
// password:{user id}); a wrong password fails with [ErrInvalidPassword]
// and changes nothing.
func (s *Service) ConfirmPassword(ctx context.Context, v *Visit, in ConfirmPasswordInput) (_ ConfirmPasswordResult, err error) {
	ctx, flow := s.enter(ctx, v, "confirm-password")
	defer flow.end(&err)
	if err := checkText(text{"password", in.Password}); err != nil {
		return ConfirmPasswordResult{}, err
	}
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return ConfirmPasswordResult{}, err
	}
	if err := s.checkPassword(ctx, v, u, in.Password); err != nil {
		return ConfirmPasswordResult{}, err
	}
	if err := v.sess.Reauthenticate(ctx, u); err != nil {
		return ConfirmPasswordResult{}, fmt.Errorf("confirm password: session: %w", err)
	}
	s.audit(ctx, v, Event{Type: EventPasswordConfirmed, UserID: u.ID})
	res := ConfirmPasswordResult{User: u}
	if s.cfg.ReauthWindow > 0 {
		res.Until = v.sess.AuthenticatedAt().Add(s.cfg.ReauthWindow)
	}
	return res, nil
}

// RecentUser returns the visit's signed-in user when they authenticated
// within Config.ReauthWindow: [ErrNotAuthenticated] without a session, and
// [ErrReauthenticationRequired] (403) when the last authentication is older,
// or unknown (a session cookie made before authkit recorded it). With
// re-authentication off (a negative ReauthWindow) it is CurrentUser. An app
// guards its own sensitive handlers with it; the client answers a 403 with
// POST /api/auth/confirm-password and tries again.
func (s *Service) RecentUser(ctx context.Context, v *Visit) (_ *user.User, err error) {
	ctx, flow := s.enter(ctx, v, "me/recent")
	defer flow.end(&err)
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return nil, err
	}
	if !s.recent(v) {
		return nil, ErrReauthenticationRequired
	}
	return u, nil
}

// recent reports whether the visit's session authenticated within the
// window: its time of authentication is set and now is before that time
// plus the window. The time is signed into this request's own cookie, so
// no other request (a confirmation racing this one) can make it recent.
func (s *Service) recent(v *Visit) bool {
	if s.cfg.ReauthWindow < 0 {
		return true
	}
	at := v.sess.AuthenticatedAt()
	return !at.IsZero() && s.now().Before(at.Add(s.cfg.ReauthWindow))
}

func confirmPasswordRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("password"))
	if err == nil {
		_, err = s.ConfirmPassword(ctx, v, ConfirmPasswordInput{Password: in.str("password")})
	}
	return s.answer(ctx, v, "confirm password", s.say(v, "password_confirmed", msgPasswordConfirmed), err)
}
