package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/recovery"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
)

// TOTP secrets are encrypted with the user's id (and whether the secret is
// pending or confirmed) as associated data, so a ciphertext copied to
// another row, or from the pending column to the confirmed one, does not
// decrypt.
func secretAD(userID string, pending bool) []byte {
	if pending {
		return []byte("authkit/totp-pending/" + userID)
	}
	return []byte("authkit/totp/" + userID)
}

func (s *Service) sealSecret(userID, secret string, pending bool) (string, error) {
	return s.keys.Encrypt([]byte(secret), secretAD(userID, pending))
}

func (s *Service) openSecret(userID, sealed string, pending bool) (string, error) {
	b, err := s.keys.Decrypt(sealed, secretAD(userID, pending))
	return string(b), err
}

// TwoFactorSetup is a pending TOTP secret, as SetupTwoFactor gives it for
// the user to add to an authenticator app.
type TwoFactorSetup struct {
	// URI is the otpauth:// key URI (the spec's qrUri); it holds the secret.
	URI string
	// QRImage is URI as a PNG QR code in a data: URL, for pages without a
	// QR library.
	QRImage string
}

// SetupTwoFactor is POST /api/2fa/setup: a new secret, stored encrypted as the
// user's pending secret. While 2FA is on it fails with
// [ErrTwoFactorAlreadyEnabled] (SECURITY.md deviation 5): a second setup
// would otherwise leave a pending secret beside the live one. It needs a
// recent authentication ([Service.RecentUser]): [ErrReauthenticationRequired]
// otherwise.
func (s *Service) SetupTwoFactor(ctx context.Context, v *Visit) (_ TwoFactorSetup, err error) {
	ctx, flow := s.enter(ctx, v, "2fa/setup")
	defer flow.end(&err)
	if err := s.enabled(FeatureTwoFactor); err != nil {
		return TwoFactorSetup{}, err
	}
	u, err := s.RecentUser(ctx, v)
	if err != nil {
		return TwoFactorSetup{}, err
	}
	if u.TwoFactorEnabled {
		return TwoFactorSetup{}, ErrTwoFactorAlreadyEnabled
	}
	secret, err := s.totp.GenerateSecret()
	if err != nil {
		return TwoFactorSetup{}, fmt.Errorf("2fa setup: secret: %w", err)
	}
	sealed, err := s.sealSecret(u.ID, secret, true)
	if err != nil {
		return TwoFactorSetup{}, fmt.Errorf("2fa setup: encrypt: %w", err)
	}
	if err := s.users.twoFactor.BeginTOTPSetup(ctx, u.ID, sealed); err != nil {
		return TwoFactorSetup{}, storeWrite("2fa setup", err, ErrTwoFactorAlreadyEnabled)
	}
	uri := s.totp.QRURI(secret, s.cfg.AppName, u.Email)
	img, err := totp.QRCodeDataURL(uri, 256)
	if err != nil {
		return TwoFactorSetup{}, fmt.Errorf("2fa setup: QR image: %w", err)
	}
	return TwoFactorSetup{URI: uri, QRImage: img}, nil
}

// ConfirmTwoFactorInput is what ConfirmTwoFactor takes.
type ConfirmTwoFactorInput struct {
	Code string // a code of the pending secret
}

// ConfirmTwoFactor is POST /api/2fa/confirm: a code of the pending
// secret turns 2FA on and returns the recovery codes, shown once. The
// confirming code's step is recorded as used, so the same code cannot then
// log in. It needs a recent authentication, like SetupTwoFactor, and mails
// the account a notice.
func (s *Service) ConfirmTwoFactor(ctx context.Context, v *Visit, in ConfirmTwoFactorInput) (recoveryCodes []string, err error) {
	ctx, flow := s.enter(ctx, v, "2fa/confirm")
	defer flow.end(&err)
	if err := s.enabled(FeatureTwoFactor); err != nil {
		return nil, err
	}
	if err := checkText(text{"code", in.Code}); err != nil {
		return nil, err
	}
	u, err := s.RecentUser(ctx, v)
	if err != nil {
		return nil, err
	}
	if u.TwoFactorEnabled || u.PendingTOTPSecret == "" {
		return nil, ErrNoPendingSetup
	}
	secret, err := s.openSecret(u.ID, u.PendingTOTPSecret, true)
	if err != nil {
		return nil, fmt.Errorf("2fa confirm: decrypt: %w", err)
	}
	m, err := s.totp.Match(normalizeCode(in.Code), secret, s.now(), 0)
	if err != nil {
		return nil, ErrInvalidCode
	}
	codes, hashes, err := recovery.Generate(ctx, s.recovery, recovery.DefaultCount)
	if err != nil {
		return nil, fmt.Errorf("2fa confirm: recovery codes: %w", err)
	}
	sealed, err := s.sealSecret(u.ID, secret, false)
	if err != nil {
		return nil, fmt.Errorf("2fa confirm: encrypt: %w", err)
	}
	err = s.users.twoFactor.EnableTOTP(ctx, u.ID, user.EnableTOTP{
		Pending: u.PendingTOTPSecret, Secret: sealed, RecoveryCodeHashes: hashes, Step: m.LastStep(),
	})
	if err != nil {
		return nil, storeWrite("2fa confirm", err, ErrNoPendingSetup)
	}
	s.audit(ctx, v, Event{Type: EventTwoFactorEnabled, UserID: u.ID})
	s.send(ctx, v, mail.KindTwoFactorEnabled, u.Email, mail.Data{Name: u.Name})
	return codes, nil
}

// RegenerateRecoveryCodes is POST /api/2fa/regenerate-codes: a new set of recovery codes
// replaces every earlier one. It needs a recent authentication, like
// SetupTwoFactor, and mails the account a notice.
func (s *Service) RegenerateRecoveryCodes(ctx context.Context, v *Visit) (_ []string, err error) {
	ctx, flow := s.enter(ctx, v, "2fa/regenerate-codes")
	defer flow.end(&err)
	if err := s.enabled(FeatureTwoFactor); err != nil {
		return nil, err
	}
	u, err := s.RecentUser(ctx, v)
	if err != nil {
		return nil, err
	}
	if !u.TwoFactorEnabled {
		return nil, ErrTwoFactorNotEnabled
	}
	codes, hashes, err := recovery.Generate(ctx, s.recovery, recovery.DefaultCount)
	if err != nil {
		return nil, fmt.Errorf("regenerate codes: %w", err)
	}
	if err := s.users.twoFactor.ReplaceRecoveryCodes(ctx, u.ID, hashes); err != nil {
		return nil, storeWrite("regenerate codes", err, ErrTwoFactorNotEnabled)
	}
	s.audit(ctx, v, Event{Type: EventRecoveryCodesRegenerated, UserID: u.ID})
	s.send(ctx, v, mail.KindRecoveryCodesRegenerated, u.Email, mail.Data{Name: u.Name})
	return codes, nil
}

// DisableTwoFactorInput is what DisableTwoFactor takes.
type DisableTwoFactorInput struct {
	CurrentPassword string
}

// DisableTwoFactor is POST /api/2fa/disable: with the current password, 2FA goes
// off. It needs a recent full authentication ([ErrReauthenticationRequired]:
// a login with both factors, or ConfirmPassword with the code), since it
// changes the account's MFA configuration. It ends the user's other
// sessions, keeps this one, and mails a notice.
func (s *Service) DisableTwoFactor(ctx context.Context, v *Visit, in DisableTwoFactorInput) (err error) {
	ctx, flow := s.enter(ctx, v, "2fa/disable")
	defer flow.end(&err)
	if err := checkText(text{"password", in.CurrentPassword}); err != nil {
		return err
	}
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return err
	}
	if !u.TwoFactorEnabled {
		return ErrTwoFactorNotEnabled
	}
	if !s.recent(v) {
		// Turning the second factor off changes the MFA configuration:
		// a full re-authentication first (ASVS 5.0 7.5.1), the password
		// below being only one of its factors.
		return ErrReauthenticationRequired
	}
	if s.users.twoFactor == nil {
		return errNoTwoFactor
	}
	if err := s.checkPassword(ctx, v, u, in.CurrentPassword); err != nil {
		return err
	}
	if err := s.users.twoFactor.DisableTOTP(ctx, u.ID); err != nil {
		return storeWrite("2fa disable", err, ErrTwoFactorNotEnabled)
	}
	s.audit(ctx, v, Event{Type: EventTwoFactorDisabled, UserID: u.ID})
	s.send(ctx, v, mail.KindTwoFactorDisabled, u.Email, mail.Data{Name: u.Name})
	return s.renewSession(ctx, v, u)
}

// checkPassword is the re-entry of the current password that disable,
// change-email and change-password require (docs/api.md), limited per user.
// An account without a password sends none and passes when the session
// authenticated recently (Config.ReauthWindow), else fails with
// [ErrReauthenticationRequired]: its re-authentication is a passkey's
// (Modules.Reauthenticate).
func (s *Service) checkPassword(ctx context.Context, v *Visit, u *user.User, pw string) error {
	if _, err := s.check(ctx, v, s.lim.password, u.ID); err != nil {
		return err
	}
	if u.PasswordHash == "" && pw == "" {
		// An account without a password (passkey, email or social
		// sign-up) proves itself by a recent re-authentication instead,
		// a passkey's (Modules.Reauthenticate).
		if !s.recent(v) {
			return ErrReauthenticationRequired
		}
		return nil
	}
	if pw == "" || len(pw) > maxPasswordBytes {
		return ErrInvalidPassword
	}
	if u.PasswordHash == "" { // no password can match
		s.dummyVerify(ctx, v, pw)
		s.audit(ctx, v, Event{Type: EventPasswordCheckFailed, UserID: u.ID, Detail: "no password"})
		return ErrInvalidPassword
	}
	ok, err := s.hasher.Verify(ctx, pw, u.PasswordHash)
	if err != nil {
		return fmt.Errorf("password check: %w", err)
	}
	if !ok {
		s.audit(ctx, v, Event{Type: EventPasswordCheckFailed, UserID: u.ID})
		return ErrInvalidPassword
	}
	s.resetLimit(ctx, v, s.lim.password, u.ID)
	return nil
}

// renewSession reissues the visit's session cookie after a change to u
// that raised the user's session version by one, so this session survives
// while every other one ends. Every caller checked the current password in
// this request, which counts as a re-authentication of an account without
// 2FA: the renewed session is recent (Config.ReauthWindow). On a 2FA
// account the password is one factor of two, so the session keeps its time
// of authentication.
//
// The change is committed, audited and notified before it is called, so
// nothing here may hide it: when this session was ended meanwhile (a
// sign-out, logout-everywhere or the support CLI racing the change: its
// record is gone, or the version rose by more than this change's one) the
// session stays ended, its cookie is expired, and the change is answered as
// done. Only a backend failure renewing this session is an error (503: the
// change is saved, the client signs in again); records of the other
// sessions that could not be deleted are logged (those sessions are dead by
// their version already).
func (s *Service) renewSession(ctx context.Context, v *Visit, u *user.User) error {
	fresh, err := s.users.ByID(ctx, u.ID)
	switch {
	case errors.Is(err, user.ErrNotFound):
		err = session.ErrNotAuthenticated
	case err == nil && fresh.SessionVersion != u.SessionVersion+1:
		err = session.ErrNotAuthenticated // ended by another change since
	case err == nil && (u.TwoFactorEnabled || u.PasswordHash == ""):
		// The password alone is not a full re-authentication of a 2FA
		// account, and an account without one re-entered none: the
		// session stays as recent as it was.
		err = v.sess.Renew(ctx, fresh)
	case err == nil:
		err = v.sess.Reauthenticate(ctx, fresh)
	}
	if errors.Is(err, session.ErrNotAuthenticated) {
		s.log.InfoContext(ctx, "authkit: a change was saved while its session was ended; the session stays ended", "user", u.ID)
		_ = v.sess.Logout(ctx)
		err = nil
	}
	if err != nil {
		return fmt.Errorf("renew session: %w", err)
	}
	if err := s.endOtherSessions(ctx, v, u.ID, true); err != nil {
		s.log.WarnContext(ctx, "authkit: session records not deleted", "user", u.ID, "err", err)
	}
	return nil
}

// The routes of the group.

func setupTwoFactorRoute(ctx context.Context, s *Service, v *Visit) Response {
	// qrImage is authkit's addition beside the spec's qrUri.
	res, err := s.SetupTwoFactor(ctx, v)
	return s.answer(ctx, v, "2fa setup", map[string]string{"qrUri": res.URI, "qrImage": res.QRImage}, err)
}

func confirmTwoFactorRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("code"))
	var codes []string
	if err == nil {
		codes, err = s.ConfirmTwoFactor(ctx, v, ConfirmTwoFactorInput{Code: in.str("code")})
	}
	return s.answer(ctx, v, "2fa confirm", map[string]any{"message": s.say(v, "two_factor_enabled", msg2FAEnabled).Message, "recoveryCodes": codes}, err)
}

func regenerateCodesRoute(ctx context.Context, s *Service, v *Visit) Response {
	codes, err := s.RegenerateRecoveryCodes(ctx, v)
	return s.answer(ctx, v, "regenerate codes", map[string]any{"recoveryCodes": codes}, err)
}

func disableTwoFactorRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("password"))
	if err == nil {
		err = s.DisableTwoFactor(ctx, v, DisableTwoFactorInput{CurrentPassword: in.str("password")})
	}
	return s.answer(ctx, v, "2fa disable", s.say(v, "two_factor_disabled", msg2FADisabled), err)
}

// normalizeCode drops the spaces people type or paste inside a TOTP code
// ("123 456"); anything else is left for the TOTP check to refuse.
func normalizeCode(code string) string {
	if len(code) > maxCodeBytes {
		return ""
	}
	out := make([]byte, 0, len(code))
	for i := 0; i < len(code); i++ {
		if code[i] != ' ' {
			out = append(out, code[i])
		}
	}
	return string(out)
}
