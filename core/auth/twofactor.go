package auth

import (
	"errors"
	"net/http"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/recovery"
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

// setup2FA is route rule 2. While 2FA is on it answers 400 "2FA is already
// enabled" (DESIGN.md deviation 5): a second setup would otherwise leave a
// pending secret beside the live one.
func (s *Service) setup2FA(c *call) Response {
	u, fail := s.currentUser(c)
	if fail != nil {
		return *fail
	}
	if u.TwoFactorEnabled {
		return s.fail(c, http.StatusBadRequest, msg2FAAlreadyEnabled)
	}
	secret, err := s.totp.GenerateSecret()
	if err != nil {
		return s.internal(c, "2fa setup: secret", err)
	}
	sealed, err := s.sealSecret(u.ID, secret, true)
	if err != nil {
		return s.internal(c, "2fa setup: encrypt", err)
	}
	if err := s.users.BeginTOTPSetup(c.ctx, u.ID, sealed); err != nil {
		if errors.Is(err, user.ErrConflict) {
			return s.fail(c, http.StatusBadRequest, msg2FAAlreadyEnabled)
		}
		return s.internal(c, "2fa setup: store", err)
	}
	uri := s.totp.QRURI(secret, s.cfg.AppName, u.Email)
	img, err := totp.QRCodeDataURL(uri, 256)
	if err != nil {
		return s.internal(c, "2fa setup: QR image", err)
	}
	// qrImage is authkit's addition beside the spec's qrUri: the same URI
	// as a PNG data URL, for pages that show the code without a QR library.
	return s.respond(c, http.StatusOK, map[string]string{"qrUri": uri, "qrImage": img})
}

// confirm2FA is route rule 3 (spec 3.1). The confirming code's step is
// recorded as used, so the same code cannot then log in.
func (s *Service) confirm2FA(c *call) Response {
	in, err := decode(c.req, s.maxBody, str("code"))
	if err != nil {
		return s.inputFail(c, err)
	}
	u, fail := s.currentUser(c)
	if fail != nil {
		return *fail
	}
	if u.TwoFactorEnabled || u.PendingTOTPSecret == "" {
		return s.fail(c, http.StatusBadRequest, msgNoPendingSetup)
	}
	secret, err := s.openSecret(u.ID, u.PendingTOTPSecret, true)
	if err != nil {
		return s.internal(c, "2fa confirm: decrypt", err)
	}
	code := normalizeCode(in.str("code"))
	m, err := s.totp.Match(code, secret, s.now(), 0)
	if err != nil {
		return s.fail(c, http.StatusBadRequest, msgInvalidCode)
	}
	codes, hashes, err := recovery.Generate(c.ctx, s.recovery, recovery.DefaultCount)
	if err != nil {
		return s.internal(c, "2fa confirm: recovery codes", err)
	}
	sealed, err := s.sealSecret(u.ID, secret, false)
	if err != nil {
		return s.internal(c, "2fa confirm: encrypt", err)
	}
	err = s.users.EnableTOTP(c.ctx, u.ID, user.EnableTOTP{
		Pending: u.PendingTOTPSecret, Secret: sealed, RecoveryCodeHashes: hashes, Step: m.LastStep(),
	})
	if err != nil {
		if errors.Is(err, user.ErrConflict) {
			return s.fail(c, http.StatusBadRequest, msgNoPendingSetup)
		}
		return s.internal(c, "2fa confirm: store", err)
	}
	s.audit(c, Event{Type: EventTwoFactorEnabled, UserID: u.ID})
	return s.respond(c, http.StatusOK, map[string]any{"message": msg2FAEnabled, "recoveryCodes": codes})
}

// regenerateCodes is route rule 6.
func (s *Service) regenerateCodes(c *call) Response {
	u, fail := s.currentUser(c)
	if fail != nil {
		return *fail
	}
	if !u.TwoFactorEnabled {
		return s.fail(c, http.StatusBadRequest, msg2FANotEnabled)
	}
	codes, hashes, err := recovery.Generate(c.ctx, s.recovery, recovery.DefaultCount)
	if err != nil {
		return s.internal(c, "regenerate codes", err)
	}
	if err := s.users.ReplaceRecoveryCodes(c.ctx, u.ID, hashes); err != nil {
		if errors.Is(err, user.ErrConflict) {
			return s.fail(c, http.StatusBadRequest, msg2FANotEnabled)
		}
		return s.internal(c, "regenerate codes: store", err)
	}
	s.audit(c, Event{Type: EventRecoveryCodesRegenerated, UserID: u.ID})
	return s.respond(c, http.StatusOK, map[string]any{"recoveryCodes": codes})
}

// disable2FA is route rule 7. It ends the user's other sessions and keeps
// this one, and mails a notice.
func (s *Service) disable2FA(c *call) Response {
	in, err := decode(c.req, s.maxBody, str("password"))
	if err != nil {
		return s.inputFail(c, err)
	}
	u, fail := s.currentUser(c)
	if fail != nil {
		return *fail
	}
	if !u.TwoFactorEnabled {
		return s.fail(c, http.StatusBadRequest, msg2FANotEnabled)
	}
	if fail := s.checkPassword(c, u, in.str("password")); fail != nil {
		return *fail
	}
	if err := s.users.DisableTOTP(c.ctx, u.ID); err != nil {
		if errors.Is(err, user.ErrConflict) {
			return s.fail(c, http.StatusBadRequest, msg2FANotEnabled)
		}
		return s.internal(c, "2fa disable: store", err)
	}
	if r := s.renewSession(c, u.ID); r != nil {
		return *r
	}
	s.audit(c, Event{Type: EventTwoFactorDisabled, UserID: u.ID})
	s.send(c, mail.KindTwoFactorDisabled, u.Email, mail.Data{Name: u.Name})
	return s.ok(c, msg2FADisabled)
}

// checkPassword is the re-entry of the current password that disable,
// change-email and change-password require (spec 5.4), limited per user.
func (s *Service) checkPassword(c *call, u *user.User, pw string) *Response {
	v, err := s.attempt(c, s.passwordLimit, u.ID)
	if err != nil {
		r := s.internal(c, "password check", err)
		return &r
	}
	if v.limited {
		r := s.tooMany(c, s.passwordLimit, v)
		return &r
	}
	if pw == "" || len(pw) > maxPasswordBytes {
		r := s.fail(c, http.StatusUnauthorized, msgInvalidPassword)
		return &r
	}
	if u.PasswordHash == "" { // a custom store's NULL hash: no password can match
		s.dummyVerify(c, pw)
		s.audit(c, Event{Type: EventPasswordCheckFailed, UserID: u.ID, Detail: "no password"})
		r := s.fail(c, http.StatusUnauthorized, msgInvalidPassword)
		return &r
	}
	ok, err := s.hasher.Verify(c.ctx, pw, u.PasswordHash)
	if err != nil {
		r := s.internal(c, "password check", err)
		return &r
	}
	if !ok {
		s.audit(c, Event{Type: EventPasswordCheckFailed, UserID: u.ID})
		r := s.fail(c, http.StatusUnauthorized, msgInvalidPassword)
		return &r
	}
	s.resetLimit(c, s.passwordLimit, u.ID)
	return nil
}

// renewSession reissues this request's session cookie after a change that
// raised the user's session version, so this session survives while every
// other one ends.
func (s *Service) renewSession(c *call, id string) *Response {
	fresh, err := s.users.ByID(c.ctx, id)
	if err == nil {
		err = c.sess.Renew(c.ctx, fresh)
	}
	if err != nil {
		r := s.internal(c, "renew session", err)
		return &r
	}
	return nil
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
