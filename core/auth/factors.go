package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// Entry points for sign-in methods and second factors that live outside
// core (the passkeys module): core keeps the decisions that every method
// shares (the pending-login checks, the limits, the hooks, the session, the
// audit events and the notices), and the method brings only its verifier.
// Core knows nothing of WebAuthn.

// LoginPasskey is the LoginMethod of a login whose last factor was a
// passkey: the second step of a 2FA login, or a passwordless sign-in.
const LoginPasskey LoginMethod = "passkey"

// The security events of passkeys (the passkeys module reports them with
// [Modules.Audit]).
const (
	// EventPasskeyAdded: the signed-in user registered a passkey (Detail:
	// its name).
	EventPasskeyAdded EventType = "passkey_added"
	// EventPasskeyDeleted: the signed-in user deleted a passkey (Detail:
	// its name).
	EventPasskeyDeleted EventType = "passkey_deleted"
	// EventPasskeyCountRegressed: an assertion's signature counter was not
	// above the stored one, a sign that the authenticator may have been
	// cloned (Detail: the stored and the received count, and whether the
	// assertion was refused). Logged at WARN without Config.Audit.
	EventPasskeyCountRegressed EventType = "passkey_sign_count_regressed"
)

// The errors of the passkey routes.
var (
	ErrPasskeyChallengeInvalid  = def(400, "passkey_challenge_invalid", "Passkey request expired or already used. Start again.")
	ErrPasskeyInvalid           = def(400, "passkey_invalid", "Passkey could not be verified")
	ErrPasskeyAlreadyRegistered = def(400, "passkey_already_registered", "This passkey is already registered")
	ErrPasskeyCountRegressed    = def(400, "passkey_sign_count_regressed", "Passkey refused: it may have been copied. Use another sign-in method.")
	ErrPasskeyNotFound          = def(404, "passkey_not_found", "Passkey not found")
)

// SecondFactorInput is what FinishTwoFactor takes.
type SecondFactorInput struct {
	// Method names the factor (LoginPasskey): the AfterLogin hook and the
	// audit events see it.
	Method LoginMethod
	// Verify checks the factor for the pending login's user. It runs after
	// the pending-login checks and the per-user 2FA limit; an error
	// refuses the login (an *Error answers as it says; any other error is
	// unexpected, 500 or 503) and keeps the pending cookie.
	Verify func(ctx context.Context, u *user.User) error
	// Remember, when set, overrides the remember flag of the password
	// step.
	Remember *bool
	// TrustDevice marks the browser as trusted on success, as
	// TwoFactorInput.TrustDevice does for a TOTP code: later password
	// logins from it skip the second step. Ignored without
	// Config.TrustedDevices.
	TrustDevice bool
}

// FinishTwoFactor is the second step of a 2FA login by a factor that core
// does not check itself: the same steps as VerifyTwoFactor, with
// in.Verify in place of the TOTP check. The 2fa_pending cookie must be
// valid and current (ErrNoPendingTwoFactor, ErrTwoFactorExpired), the
// attempt counts against Limits.TwoFactor (key 2fa:{user id}, shared with
// TOTP and recovery codes), the account must have 2FA on
// (ErrInvalidSession). A failed verification is audited as
// EventTwoFactorFailed and keeps the pending cookie, so the user can try
// again or use another factor; a success ends the pending login like a
// TOTP code does (AfterLogin, the session, EventLoginSucceeded, the
// new-device notice).
func (m *Modules) FinishTwoFactor(ctx context.Context, v *Visit, in SecondFactorInput) (_ TwoFactorResult, err error) {
	s := m.svc()
	ctx, flow := s.enter(ctx, v, "2fa/finish")
	defer flow.end(&err)
	if in.Method == "" || in.Verify == nil {
		return TwoFactorResult{}, errors.New("auth: FinishTwoFactor: Method and Verify are required")
	}
	u, claims, err := s.pendingUser(ctx, v)
	if err != nil {
		return TwoFactorResult{}, err
	}
	if !u.TwoFactorEnabled {
		return TwoFactorResult{}, ErrInvalidSession
	}
	if !pendingCurrent(claims, u) {
		return TwoFactorResult{}, ErrTwoFactorExpired
	}
	held, err := s.holdPending(ctx, claims)
	if err != nil {
		return TwoFactorResult{}, err
	}
	defer held.release(ctx, &err)
	if err := in.Verify(ctx, u); err != nil {
		var e *Error
		if errors.As(err, &e) {
			s.audit(ctx, v, Event{Type: EventTwoFactorFailed, UserID: u.ID, Detail: string(in.Method) + ": " + string(e.Code), Factor: in.Method})
			return TwoFactorResult{}, err
		}
		return TwoFactorResult{}, fmt.Errorf("2fa %s: %w", in.Method, err)
	}
	if err := s.finishPending(ctx, v, u, claims, in.Method, in.Remember); err != nil {
		return TwoFactorResult{}, err
	}
	s.audit(ctx, v, Event{Type: EventLoginSucceeded, UserID: u.ID, Detail: string(in.Method), Factor: in.Method})
	s.maybeTrust(ctx, v, u, in.TrustDevice)
	return TwoFactorResult{User: u, RemainingCodes: len(u.RecoveryCodeHashes)}, nil
}

// PendingTwoFactorUser returns the user of the visit's pending 2FA login,
// for a second factor that must show the user something before they
// answer (a passkey's allowed credentials). It checks the pending cookie
// like FinishTwoFactor (ErrNoPendingTwoFactor, ErrTwoFactorExpired,
// ErrInvalidSession) but counts nothing: it verifies no factor.
func (m *Modules) PendingTwoFactorUser(ctx context.Context, v *Visit) (_ *user.User, err error) {
	s := m.svc()
	ctx, flow := s.enter(ctx, v, "2fa/pending")
	defer flow.end(&err)
	claims, err := s.pendingClaims(v)
	if err != nil {
		return nil, err
	}
	u, err := s.pendingUserOf(ctx, claims)
	if err != nil {
		return nil, err
	}
	if !u.TwoFactorEnabled {
		return nil, ErrInvalidSession
	}
	if !pendingCurrent(claims, u) {
		return nil, ErrTwoFactorExpired
	}
	return u, nil
}

// PasswordlessInput is what SignInWithoutPassword takes.
type PasswordlessInput struct {
	// Method names the sign-in method (LoginPasskey).
	Method LoginMethod
	// Verify checks the credential and returns the id of the user it
	// belongs to. It runs after the client address's login limit counted
	// the attempt; an error refuses the sign-in (audited as
	// EventLoginFailed).
	Verify func(ctx context.Context) (userID string, err error)
	// Remember asks for a long-lived session (Config.RememberLifetime).
	Remember bool
}

// SignInWithoutPassword signs in with a method that is every factor at
// once (a passkey: something the user has, unlocked by something they are
// or know), for accounts with and without 2FA. The attempt counts against
// Limits.LoginIP before in.Verify runs, and a success gives it back, like
// the password step. An address over that limit is not refused before the
// credential is checked: a verified credential cannot be guessed, so it
// signs in (an office behind one address is not locked out of passkey
// sign-in by one client's password guesses); a failed one is answered
// with the limit's 429, and in.Verify runs at most as often as the
// method's own begin step allows (a passkey's challenge is single-use and
// limited per address). There is no email key: the method names no
// address.
// The account lock-out (Config.Lockout) does not apply: it counts
// password guesses, and a verified passkey is not one; it lets the owner
// in while an attacker is locking the password out. A success runs
// AfterLogin, starts the session, ends any pending 2FA login on the
// visit, audits EventLoginSucceeded and sends the new-device notice.
func (m *Modules) SignInWithoutPassword(ctx context.Context, v *Visit, in PasswordlessInput) (_ *user.User, err error) {
	s := m.svc()
	ctx, flow := s.enter(ctx, v, "login/passwordless")
	defer flow.end(&err)
	if in.Method == "" || in.Verify == nil {
		return nil, errors.New("auth: SignInWithoutPassword: Method and Verify are required")
	}
	ipv, err := s.attempt(ctx, v, s.lim.loginIP, v.ClientIP())
	if err != nil {
		return nil, err
	}
	if !ipv.limited {
		s.rateHeaders(v.header, ipv)
	}
	// An address over its limit (another client behind the same address
	// guessing passwords) still gets its credential checked: a verified
	// one cannot have been guessed, and the limit is meant for guessing.
	// A failed one is refused with the limit's 429, as before the check.
	id, err := in.Verify(ctx)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			s.audit(ctx, v, Event{Type: EventLoginFailed, UserID: id, Detail: string(in.Method) + ": " + string(e.Code)})
			if ipv.limited {
				return nil, s.tooMany(ctx, v, s.lim.loginIP, ipv)
			}
			return nil, err
		}
		return nil, fmt.Errorf("sign in %s: %w", in.Method, err)
	}
	u, err := s.users.ByID(ctx, id)
	if errors.Is(err, user.ErrNotFound) {
		s.audit(ctx, v, Event{Type: EventLoginFailed, UserID: id, Detail: string(in.Method) + ": account deleted"})
		return nil, ErrInvalidCredentials
	}
	if err != nil {
		return nil, fmt.Errorf("sign in %s: load user: %w", in.Method, err)
	}
	if !ipv.limited && s.refundLimit(ctx, v, s.lim.loginIP, v.ClientIP(), ipv) {
		ipv.res.Remaining = min(ipv.res.Remaining+1, ipv.res.Limit)
		s.rateHeaders(v.header, ipv)
	}
	if err := s.afterLogin(ctx, u, in.Method); err != nil {
		return nil, err
	}
	s.clearPending(v)
	if err := v.sess.Login(ctx, u, in.Remember); err != nil {
		return nil, fmt.Errorf("sign in %s: session: %w", in.Method, err)
	}
	s.audit(ctx, v, Event{Type: EventLoginSucceeded, UserID: u.ID, Detail: string(in.Method)})
	s.signedIn(ctx, v, u)
	return u, nil
}

// Audit reports e as the flows report theirs (Config.Audit, or the log),
// with the time and the visit's client address filled in: for the events
// of modules built on the Service (passkeys).
func (m *Modules) Audit(ctx context.Context, v *Visit, e Event) { m.svc().audit(ctx, v, e) }

// Notify mails u one of the security notices (KindPasskeyAdded,
// KindPasskeyDeleted, ...) in the visit's language, as the flows send
// theirs: through Config.Mailer's queue, never failing the caller. data's
// Name and IP default to u's name and the client's address.
func (m *Modules) Notify(ctx context.Context, v *Visit, kind mail.Kind, u *user.User, data mail.Data) {
	s := m.svc()
	if data.Name == "" {
		data.Name = u.Name
	}
	if data.IP == "" {
		data.IP = v.clientAddr()
	}
	s.send(ctx, v, kind, u.Email, data)
}

// Answer renders a flow's outcome as the JSON routes do: 200 with body
// and the visit's cookies and headers, or the error's {"error", "code"}
// answer (see AsError), for modules that add JSON routes of their own.
func (m *Modules) Answer(ctx context.Context, v *Visit, op string, body any, err error) Response {
	return m.svc().answer(ctx, v, op, body, err)
}

// Users returns Config.Users as it was given, for modules and apps that
// need to tell which parts of the store contract it implements. Calls
// made through it are not reported to Config.Observer; the passkeys part
// as the flows call it is [Modules.PasskeyStore].
func (m *Modules) Users() user.Accounts { return m.svc().cfg.Users }
