package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/recovery"
	"github.com/authkit-go/authkit/core/totp"
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
	// Code is the second factor of an account with 2FA on: a TOTP code or
	// an unused recovery code (which it spends). Ignored without 2FA.
	Code string
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
//
// On an account with 2FA on, the re-authentication is full, as a login is
// (ASVS 5.0 7.5.1): the password and the second factor, in.Code, a TOTP
// code (used once, like at login) or a recovery code (spent, and the
// owner mailed). Without a code it fails with [ErrTwoFactorCodeRequired]
// before the password is checked; a wrong code with
// [ErrInvalidTwoFactorCode] or [ErrCodeUsed], counted against the per-user
// 2FA limit (Limits.TwoFactor) shared with the login's second step. The
// passkeys module re-authenticates with a passkey alone.
//
// The session keeps its start: a confirmation never extends its lifetime.
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
	if u.TwoFactorEnabled && in.Code == "" {
		return ConfirmPasswordResult{}, ErrTwoFactorCodeRequired
	}
	if err := checkText(text{"code", in.Code}); err != nil {
		return ConfirmPasswordResult{}, err
	}
	if err := s.checkPassword(ctx, v, u, in.Password); err != nil {
		return ConfirmPasswordResult{}, err
	}
	if u.TwoFactorEnabled {
		if err := s.checkSecondFactor(ctx, v, u, in.Code); err != nil {
			return ConfirmPasswordResult{}, err
		}
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

// storeAndUser is the start of a flow on one feature's store: the store
// (an error such as ErrFeatureDisabled when the app keeps none), then the
// visit's user as who finds it, CurrentUser or, for a change that needs a
// recent authentication, RecentUser.
func storeAndUser[S any](ctx context.Context, v *Visit, store func() (S, error), who func(context.Context, *Visit) (*user.User, error)) (S, *user.User, error) {
	st, err := store()
	if err != nil {
		return st, nil, err
	}
	u, err := who(ctx, v)
	return st, u, err
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

// checkSecondFactor checks code, a TOTP code or a recovery code, as the
// second factor of u's re-authentication: limited per user with the
// login's second step (Limits.TwoFactor), a TOTP step accepted once
// (AcceptTOTPStep), a recovery code spent with one conditional update and
// its use mailed. A code of 6 digits (spaces dropped) is taken as TOTP,
// anything else as a recovery code.
func (s *Service) checkSecondFactor(ctx context.Context, v *Visit, u *user.User, code string) error {
	if s.users.twoFactor == nil {
		return errNoTwoFactor
	}
	if err := s.checkShown(ctx, v, s.lim.twoFactor, u.ID); err != nil {
		return err
	}
	if len(code) > maxCodeBytes {
		return ErrInvalidTwoFactorCode
	}
	if c := normalizeCode(code); len(c) == 6 && isDigits(c) {
		secret, err := s.openSecret(u.ID, u.TOTPSecret, false)
		if err != nil {
			return fmt.Errorf("confirm: decrypt: %w", err)
		}
		m, err := s.totp.Match(c, secret, s.now(), u.LastTOTPStep)
		switch {
		case errors.Is(err, totp.ErrCodeUsed):
			s.audit(ctx, v, Event{Type: EventTwoFactorFailed, UserID: u.ID, Detail: "reauthentication: code already used", Factor: LoginTOTP})
			return ErrCodeUsed
		case err != nil:
			s.audit(ctx, v, Event{Type: EventTwoFactorFailed, UserID: u.ID, Detail: "reauthentication", Factor: LoginTOTP})
			return ErrInvalidTwoFactorCode
		}
		if err := s.users.twoFactor.AcceptTOTPStep(ctx, u.ID, m.Step, m.Current); err != nil {
			if errors.Is(err, user.ErrConflict) {
				return ErrCodeUsed
			}
			return fmt.Errorf("confirm: accept step: %w", err)
		}
	} else {
		valid, rest, err := recovery.Verify(ctx, code, u.RecoveryCodeHashes, s.recovery)
		if err != nil && !valid {
			return fmt.Errorf("confirm: recovery code: %w", err)
		}
		if !valid {
			s.audit(ctx, v, Event{Type: EventTwoFactorFailed, UserID: u.ID, Detail: "reauthentication: recovery code", Factor: LoginRecoveryCode})
			return ErrInvalidTwoFactorCode
		}
		if err := s.users.twoFactor.ConsumeRecoveryCode(ctx, u.ID, u.RecoveryCodeHashes, rest); err != nil {
			if errors.Is(err, user.ErrConflict) { // spent by a racing request
				return ErrInvalidTwoFactorCode
			}
			return fmt.Errorf("confirm: consume recovery code: %w", err)
		}
		s.audit(ctx, v, Event{Type: EventRecoveryCodeUsed, UserID: u.ID, Detail: "remaining " + itoa(len(rest)), Factor: LoginRecoveryCode})
		s.send(ctx, v, mail.KindRecoveryCodeUsed, u.Email, mail.Data{Name: u.Name, IP: v.clientAddr(), CodesLeft: len(rest)})
	}
	s.resetLimit(ctx, v, s.lim.twoFactor, u.ID)
	return nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func confirmPasswordRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("password"), str("code"))
	if err == nil {
		_, err = s.ConfirmPassword(ctx, v, ConfirmPasswordInput{Password: in.str("password"), Code: in.str("code")})
	}
	return s.answer(ctx, v, "confirm password", s.say(v, "password_confirmed", msgPasswordConfirmed), err)
}

// ErrPasswordNotSet is ChangePassword's answer for an account without a
// password: it sets one through the password reset.
var ErrPasswordNotSet = def(400, "password_not_set", "This account has no password yet. Set one with a password reset.")

// ReauthenticationInput is what Modules.Reauthenticate takes.
type ReauthenticationInput struct {
	// Method names the proof in the audit event (LoginPasskey).
	Method LoginMethod
	// Verify checks the proof for the signed-in user u: nil when it
	// holds, else the *Error to answer with. It must be every factor of
	// the account at once (a user-verified passkey is: something held and
	// something known or are), since the re-authentication it gives
	// stands for a full one, the second factor of a 2FA account included.
	Verify func(ctx context.Context, u *user.User) error
}

// Reauthenticate is a re-authentication by a module's proof other than
// the password (the passkeys module's assertion): for the signed-in user
// ([ErrNotAuthenticated] without a session), in.Verify decides, and on
// success the visit's session cookie is reissued with its time of
// authentication now, as ConfirmPassword does, so the changes that need a
// recent authentication work for Config.ReauthWindow, on accounts with
// and without a password or 2FA alike. The session keeps its start. It is
// audited (EventReauthenticated, Detail: in.Method).
func (m *Modules) Reauthenticate(ctx context.Context, v *Visit, in ReauthenticationInput) (_ ConfirmPasswordResult, err error) {
	s := m.svc()
	ctx, flow := s.enter(ctx, v, "reauthenticate")
	defer flow.end(&err)
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return ConfirmPasswordResult{}, err
	}
	if in.Verify == nil {
		return ConfirmPasswordResult{}, errors.New("reauthenticate: no Verify")
	}
	if err := in.Verify(ctx, u); err != nil {
		return ConfirmPasswordResult{}, err
	}
	if err := v.sess.Reauthenticate(ctx, u); err != nil {
		return ConfirmPasswordResult{}, fmt.Errorf("reauthenticate: session: %w", err)
	}
	s.audit(ctx, v, Event{Type: EventReauthenticated, UserID: u.ID, Detail: string(in.Method)})
	res := ConfirmPasswordResult{User: u}
	if s.cfg.ReauthWindow > 0 {
		res.Until = v.sess.AuthenticatedAt().Add(s.cfg.ReauthWindow)
	}
	return res, nil
}
