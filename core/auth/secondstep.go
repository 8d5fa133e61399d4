package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/authkit-go/authkit/core/user"
)

// authkit's second step behind an app's own login: an app that checks
// passwords itself (its own users table, a directory, single sign-on)
// still uses authkit's second factors. After its own check it calls
// StartSecondStep with the user's id; an account with 2FA then gets the
// 2fa_pending cookie exactly as after Login, and the second step is
// finished by the usual methods (VerifyTwoFactor, RecoverTwoFactor,
// VerifyTwoFactorEmailCode, a passkey) with their limits and checks. With
// OwnSession the pending login remembers that the app keeps its own
// sessions: finishing it starts no authkit session, and the verified user
// is in the result for the app to sign in.

// LoginApp is the LoginMethod of a first step the app checked itself
// (StartSecondStep).
const LoginApp LoginMethod = "app"

// SecondStepInput is what StartSecondStep takes.
type SecondStepInput struct {
	// UserID is the account the app authenticated. Required.
	UserID string
	// Remember asks for a long-lived authkit session
	// (Config.RememberLifetime). Ignored with OwnSession.
	Remember bool
	// OwnSession: the app keeps its own sessions. No authkit session
	// is started, neither now (an account without 2FA) nor when the
	// second step finishes; the methods that finish it return the
	// verified user (TwoFactorResult.User) for the app to sign in.
	// The new-device notice is the app's then too.
	OwnSession bool
}

// ErrUnknownUser is what StartSecondStep answers for an id the store does
// not hold (an account deleted after the app's own check): 401, like a
// failed login.
var ErrUnknownUser = def(401, "unknown_user", "Account not found")

// StartSecondStep is the first step of a sign-in whose password the app
// checked itself: for an account with 2FA it sets the 2fa_pending cookie
// on v and answers RequiresTwoFactor (a browser trusted at an earlier
// second step skips it, Config.TrustedDevices); for any other it runs
// AfterLogin and starts authkit's session, or with in.OwnSession none
// (the app starts its own with the returned user). An account locked by
// authkit's lock-out (Config.Lockout) is refused with
// ErrInvalidCredentials, as Login refuses it; an id the store does not
// hold with ErrUnknownUser. It counts no rate limit: the app's check
// carries its own; the second step counts Limits.TwoFactor as always.
func (s *Service) StartSecondStep(ctx context.Context, v *Visit, in SecondStepInput) (_ LoginResult, err error) {
	ctx, flow := s.enter(ctx, v, "login/app")
	defer flow.end(&err)
	if in.UserID == "" {
		return LoginResult{}, errors.New("auth: StartSecondStep: UserID is required")
	}
	u, err := s.users.ByID(ctx, in.UserID)
	if errors.Is(err, user.ErrNotFound) {
		s.audit(ctx, v, Event{Type: EventLoginFailed, UserID: in.UserID, Detail: string(LoginApp) + ": unknown user"})
		return LoginResult{}, ErrUnknownUser
	}
	if err != nil {
		return LoginResult{}, fmt.Errorf("second step: load user: %w", err)
	}
	if u.LockedUntil.After(s.now()) {
		s.audit(ctx, v, Event{Type: EventLoginFailed, UserID: u.ID, Detail: string(LoginApp) + ": account locked"})
		return LoginResult{}, ErrInvalidCredentials
	}
	return s.firstFactorDone(ctx, v, u, firstFactor{how: LoginApp, remember: in.Remember && !in.OwnSession, ownSession: in.OwnSession})
}
