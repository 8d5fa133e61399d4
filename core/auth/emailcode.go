package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// Email codes: a fallback second factor (Config.EmailCode, off by default).
// At the second step of a login, a user whose account has 2FA on and a
// verified address may ask for a 6-digit code by mail instead of opening
// their authenticator app, and type it in like a TOTP code.
//
// It is the weakest factor authkit has (whoever reads the mailbox has it,
// and a mailbox is often where a stolen password came from), so it is only
// ever an alternative at the second step of an account that has TOTP: it
// never turns 2FA on, and an account cannot have it as its only factor.
// The code is a uniform random number below 10^6 from Config.Rand; the
// store keeps only an HMAC of it, bound to the user and to the pending
// login it was mailed for (the 2fa_pending cookie), under a key derived
// from the app's secret for this purpose, so a code mailed for one login
// cannot finish another and a leaked store reveals no code. A code works
// once (taken atomically: of racing verifies one wins), for
// Config.EmailCode.Lifetime, and a new send replaces the old code. A wrong
// code counts against Limits.TwoFactor, the limit TOTP and recovery codes
// share, and keeps the pending cookie; sending counts against
// Limits.EmailCode, so the route cannot be used to flood a mailbox.
// SECURITY.md, "Email codes", has the reasoning.

// DefaultEmailCodeLifetime is how long a mailed code works when
// EmailCodeConfig.Lifetime is zero. The pending login it belongs to lasts
// PendingLifetime, and a code never outlives it.
const DefaultEmailCodeLifetime = 10 * time.Minute

// emailCodeDigits is the length of a mailed code; emailCodeSpace is 10^6.
const emailCodeDigits = 6

var emailCodeSpace = big.NewInt(1_000_000)

// purposeEmailCode is the purpose whose key hashes mailed codes.
const purposeEmailCode = "2fa_email_code"

// EmailCodeConfig switches on and configures the email code, a fallback
// second factor. The zero value is off.
type EmailCodeConfig struct {
	// Enabled offers the email code at the second step of a login: the
	// routes POST /api/2fa/email-code and /api/2fa/email-code/verify and
	// the methods SendTwoFactorEmailCode and VerifyTwoFactorEmailCode.
	// Config.Users must implement user.EmailCodes. Default: false (the
	// routes answer 404, the methods ErrFeatureDisabled).
	Enabled bool

	// Lifetime is how long a mailed code works. Default: 10 minutes
	// (DefaultEmailCodeLifetime). The pending login lasts 5 minutes, so a
	// longer lifetime only matters for the code's own record.
	Lifetime time.Duration
}

// LoginEmailCode is the LoginMethod of a 2FA login finished by a mailed
// code.
const LoginEmailCode LoginMethod = "email_code"

// The security events of email codes.
const (
	// EventEmailCodeSent: a code was mailed for the second step of a
	// login (never the code itself).
	EventEmailCodeSent EventType = "2fa_email_code_sent"
)

// The errors of email codes.
var (
	// ErrEmailCodeNeedsVerifiedEmail: the account's address is not
	// verified, so no code is mailed to it.
	ErrEmailCodeNeedsVerifiedEmail = def(403, "email_code_needs_verified_email", "A code can only be sent to a verified email address. Use another method.")
	// ErrEmailCodeExpired: the right code, but older than
	// EmailCodeConfig.Lifetime.
	ErrEmailCodeExpired = def(400, "email_code_expired", "Code expired. Request a new one.")
	// ErrTooManyEmailCodes: Limits.EmailCode refused another mail.
	ErrTooManyEmailCodes = def(429, "too_many_email_codes", "Too many codes requested. Try again later.")
)

// HasEmailCodes reports whether the second step of a login offers a
// mailed code (Config.EmailCode.Enabled), so that SendTwoFactorEmailCode
// and VerifyTwoFactorEmailCode work: a page offers "email me a code" only
// then (and only to an account whose address is verified).
func (s *Service) HasEmailCodes() bool { return s.cfg.EmailCode.Enabled }

// emailCodesOn fails the email-code methods when the feature is off.
func (s *Service) emailCodesOn() error {
	if !s.cfg.EmailCode.Enabled {
		return ErrFeatureDisabled
	}
	return nil
}

// SendTwoFactorEmailCode mails a new code for the visit's pending 2FA login
// (POST /api/2fa/email-code), replacing any earlier one. The pending login
// must be valid and current (ErrNoPendingTwoFactor, ErrTwoFactorExpired,
// ErrInvalidSession), the account's address verified
// (ErrEmailCodeNeedsVerifiedEmail), and the user under Limits.EmailCode
// (ErrTooManyEmailCodes). Sending counts nothing against Limits.TwoFactor:
// it verifies no factor. ErrFeatureDisabled unless
// Config.EmailCode.Enabled.
func (s *Service) SendTwoFactorEmailCode(ctx context.Context, v *Visit) (err error) {
	ctx, flow := s.enter(ctx, v, "2fa/email-code")
	defer flow.end(&err)
	if err := s.emailCodesOn(); err != nil {
		return err
	}
	u, err := s.Modules().PendingTwoFactorUser(ctx, v)
	if err != nil {
		return err
	}
	if u.EmailVerifiedAt.IsZero() {
		return ErrEmailCodeNeedsVerifiedEmail
	}
	if err := s.checkShown(ctx, v, s.lim.emailCode, u.ID); err != nil {
		return err
	}
	code, err := newEmailCode(s.cfg.Rand)
	if err != nil {
		return fmt.Errorf("2fa email code: %w", err)
	}
	now := s.now()
	c := user.EmailCode{UserID: u.ID, Hash: s.emailCodeHash(v, u.ID, code), CreatedAt: now, ExpiresAt: now.Add(s.cfg.EmailCode.Lifetime)}
	if err := s.users.emailCodes.PutEmailCode(ctx, c); err != nil {
		return fmt.Errorf("2fa email code: store: %w", err)
	}
	s.audit(ctx, v, Event{Type: EventEmailCodeSent, UserID: u.ID})
	s.send(ctx, v, mail.KindTwoFactorEmailCode, u.Email, mail.Data{
		Name: u.Name, Code: code, Expiry: s.cfg.EmailCode.Lifetime, IP: v.clientAddr(),
	})
	return nil
}

// newEmailCode returns a code of emailCodeDigits decimal digits, uniform
// over all 10^6 (crypto/rand.Int rejects the bias a modulo would have),
// read from r (Config.Rand: crypto/rand unless a test injects one).
func newEmailCode(r io.Reader) (string, error) {
	n, err := rand.Int(r, emailCodeSpace)
	if err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return fmt.Sprintf("%0*d", emailCodeDigits, n), nil
}

// emailCodeHash is the keyed hash a code is stored as: bound to the user
// and to the visit's pending login (its 2fa_pending cookie), so a code
// mailed for one login cannot finish another.
func (s *Service) emailCodeHash(v *Visit, userID, code string) []byte {
	pending, _ := v.pendingValue()
	return s.emailCode.Bind(userID, pending, code)
}

// VerifyTwoFactorEmailCode is the second step of a login by a mailed code
// (POST /api/2fa/email-code/verify): the same checks, limit and outcome as
// VerifyTwoFactor (FinishTwoFactor's path), with the code in place of a
// TOTP code. A wrong code, one mailed for another login, or none gives
// ErrInvalidTwoFactorCode; the right code past its lifetime
// ErrEmailCodeExpired; a code another request spent first ErrCodeUsed.
// Each counts against Limits.TwoFactor and keeps the pending cookie.
// in.TrustDevice and in.Remember work as they do for VerifyTwoFactor.
// ErrFeatureDisabled unless Config.EmailCode.Enabled.
func (s *Service) VerifyTwoFactorEmailCode(ctx context.Context, v *Visit, in TwoFactorInput) (_ TwoFactorResult, err error) {
	ctx, flow := s.enter(ctx, v, "2fa/email-code/verify")
	defer flow.end(&err)
	if err := s.emailCodesOn(); err != nil {
		return TwoFactorResult{}, err
	}
	if err := checkText(text{"code", in.Code}); err != nil {
		return TwoFactorResult{}, err
	}
	return s.Modules().FinishTwoFactor(ctx, v, SecondFactorInput{
		Method:      LoginEmailCode,
		Remember:    in.Remember,
		TrustDevice: in.TrustDevice,
		Verify:      func(ctx context.Context, u *user.User) error { return s.takeEmailCode(ctx, v, u, in.Code) },
	})
}

// takeEmailCode checks code against u's stored one and spends it.
func (s *Service) takeEmailCode(ctx context.Context, v *Visit, u *user.User, code string) error {
	if u.EmailVerifiedAt.IsZero() {
		// An address changed since the code was mailed: the change raised
		// the session version, so FinishTwoFactor refused first. This is
		// a store whose record says otherwise.
		return ErrEmailCodeNeedsVerifiedEmail
	}
	code = normalizeCode(code)
	if len(code) != emailCodeDigits {
		return ErrInvalidTwoFactorCode
	}
	stored, err := s.users.emailCodes.EmailCode(ctx, u.ID)
	if errors.Is(err, user.ErrNotFound) {
		return ErrInvalidTwoFactorCode
	}
	if err != nil {
		return fmt.Errorf("read code: %w", err)
	}
	if subtle.ConstantTimeCompare(s.emailCodeHash(v, u.ID, code), stored.Hash) != 1 {
		return ErrInvalidTwoFactorCode
	}
	now := s.now()
	if !stored.ExpiresAt.After(now) {
		return ErrEmailCodeExpired
	}
	err = s.users.emailCodes.TakeEmailCode(ctx, u.ID, stored.Hash, now)
	if errors.Is(err, user.ErrConflict) {
		return ErrCodeUsed // another request took it first, or a new send replaced it
	}
	if err != nil {
		return fmt.Errorf("take code: %w", err)
	}
	return nil
}

// The routes of email codes.

func sendEmailCodeRoute(ctx context.Context, s *Service, v *Visit) Response {
	err := s.SendTwoFactorEmailCode(ctx, v)
	return s.answer(ctx, v, "2fa email code", s.say(v, "email_code_sent", msgEmailCodeSent), err)
}

func verifyEmailCodeRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := s.secondStep(v)
	if err == nil {
		_, err = s.VerifyTwoFactorEmailCode(ctx, v, in)
	}
	return s.answer(ctx, v, "2fa email code verify", map[string]bool{"success": true}, err)
}
