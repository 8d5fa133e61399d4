package auth

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/user"
)

// registerUser is route rules 8 and 14.
func (s *Service) registerUser(c *call) Response {
	in, err := decode(c.req, s.maxBody, str("email"), str("password"), str("name"))
	if err != nil {
		return s.inputFail(c, err)
	}
	v, err := s.attempt(c, s.register, s.clientKey(c.req))
	if err != nil {
		return s.internal(c, "register", err)
	}
	if v.limited {
		return s.tooMany(c, s.register, v)
	}
	s.rateHeaders(c.header, v)
	email, err := normalizeEmail(in.str("email"))
	if err != nil {
		return s.inputFail(c, err)
	}
	name := strings.TrimSpace(in.str("name"))
	if name == "" {
		return s.fail(c, http.StatusBadRequest, "Name is required")
	}
	if utf8.RuneCountInString(name) > maxNameRunes {
		return s.fail(c, http.StatusBadRequest, "Name is too long")
	}
	pw := in.str("password")
	if msg := s.policyError(pw); msg != "" {
		return s.fail(c, http.StatusBadRequest, msg)
	}
	switch _, err := s.users.ByEmail(c.ctx, email); {
	case err == nil:
		return s.fail(c, http.StatusBadRequest, msgEmailRegistered)
	case !errors.Is(err, user.ErrNotFound):
		return s.internal(c, "register: lookup", err)
	}
	hash, err := s.hasher.Hash(c.ctx, pw)
	if err != nil {
		return s.internal(c, "register: hash", err)
	}
	u, err := s.users.Create(c.ctx, &user.User{Email: email, Name: name, PasswordHash: hash})
	if err != nil {
		if errors.Is(err, user.ErrEmailTaken) {
			return s.fail(c, http.StatusBadRequest, msgEmailRegistered)
		}
		return s.internal(c, "register: create", err)
	}
	if err := s.sendVerification(c, u, u.Email); err != nil {
		return s.internal(c, "register: verification token", err)
	}
	if err := c.sess.Login(c.ctx, u, false); err != nil {
		return s.internal(c, "register: session", err)
	}
	s.audit(c, Event{Type: EventRegistered, UserID: u.ID})
	return s.ok(c, msgRegistered)
}

// policyError checks a new password against the policy and returns the
// client's error text, or "".
func (s *Service) policyError(pw string) string {
	if len(pw) > maxPasswordBytes {
		return "Password is too long"
	}
	err := s.policy.Check(pw)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, password.ErrTooShort):
		return "Password must be at least " + itoa(cmp.Or(max(s.policy.Min, 0), password.DefaultMinLength)) + " characters"
	case errors.Is(err, password.ErrTooLong):
		return "Password must be at most " + itoa(cmp.Or(max(s.policy.Max, 0), password.DefaultMaxLength)) + " characters"
	default:
		return "Password contains invalid characters"
	}
}

// sendVerification mails a 24-hour verification link bound to address.
func (s *Service) sendVerification(c *call, u *user.User, address string) error {
	tok, err := s.verify.CreateWith(u.ID, s.verify.Bind(address))
	if err != nil {
		return err
	}
	s.send(c, mail.KindVerifyEmail, address, mail.Data{
		Name: u.Name, Link: s.link(s.cfg.VerifyEmailPath, tok), Expiry: VerificationLifetime,
	})
	return nil
}

func (s *Service) link(path, tok string) string {
	return s.cfg.AppURL + path + url.PathEscape(tok)
}

// verifyEmail is the GET verify route (spec 3.3). A link is dead when the
// account no longer has the address it was mailed to, or when the address
// changed after the link was made (DESIGN.md deviation 1: a change in the
// same millisecond as the link does not kill it, so the link a change
// mails always works).
func (s *Service) verifyEmail(c *call) Response {
	claims, err := s.verify.Verify(c.req.PathValue("token"))
	if err != nil {
		return s.fail(c, http.StatusBadRequest, msgVerifyInvalid)
	}
	u, err := s.users.ByID(c.ctx, claims.UserID)
	if errors.Is(err, user.ErrNotFound) {
		return s.fail(c, http.StatusBadRequest, msgVerifyUserMissing)
	}
	if err != nil {
		return s.internal(c, "verify email: load user", err)
	}
	if !s.verify.BindingHolds(claims, u.Email) || u.EmailChangedAt.After(claims.IssuedAt) {
		return s.fail(c, http.StatusBadRequest, msgVerifyStale)
	}
	if u.EmailVerified() {
		return s.ok(c, msgAlreadyVerified)
	}
	if err := s.users.VerifyEmail(c.ctx, u.ID, u.Email, s.now()); err != nil {
		if errors.Is(err, user.ErrConflict) {
			return s.fail(c, http.StatusBadRequest, msgVerifyStale)
		}
		return s.internal(c, "verify email: store", err)
	}
	s.audit(c, Event{Type: EventEmailVerified, UserID: u.ID})
	return s.ok(c, msgEmailVerified)
}

// resendVerification is route rule 9.
func (s *Service) resendVerification(c *call) Response {
	u, fail := s.currentUser(c)
	if fail != nil {
		return *fail
	}
	if u.EmailVerified() {
		return s.ok(c, msgAlreadyVerified)
	}
	v, err := s.attempt(c, s.resend, u.ID)
	if err != nil {
		return s.internal(c, "resend verification", err)
	}
	if v.limited {
		return s.tooMany(c, s.resend, v)
	}
	s.rateHeaders(c.header, v)
	if err := s.sendVerification(c, u, u.Email); err != nil {
		return s.internal(c, "resend verification: token", err)
	}
	return s.ok(c, msgVerificationSent)
}

// changeEmail is route rule 10. The password is checked before the new
// address, so a stolen session cannot probe which addresses exist.
func (s *Service) changeEmail(c *call) Response {
	in, err := decode(c.req, s.maxBody, str("newEmail"), str("password"))
	if err != nil {
		return s.inputFail(c, err)
	}
	u, fail := s.currentUser(c)
	if fail != nil {
		return *fail
	}
	if in.str("newEmail") == "" {
		return s.fail(c, http.StatusBadRequest, "New email is required")
	}
	newEmail, err := normalizeEmail(in.str("newEmail"))
	if err != nil {
		return s.inputFail(c, err)
	}
	if fail := s.checkPassword(c, u, in.str("password")); fail != nil {
		return *fail
	}
	if newEmail == u.Email {
		return s.fail(c, http.StatusBadRequest, msgEmailInUse)
	}
	if err := s.users.ChangeEmail(c.ctx, u.ID, u.Email, newEmail, s.now()); err != nil {
		switch {
		case errors.Is(err, user.ErrEmailTaken):
			return s.fail(c, http.StatusBadRequest, msgEmailInUse)
		case errors.Is(err, user.ErrConflict):
			return s.fail(c, http.StatusConflict, msgEmailChangedRace)
		}
		return s.internal(c, "change email: store", err)
	}
	if r := s.renewSession(c, u.ID); r != nil {
		return *r
	}
	if err := s.sendVerification(c, u, newEmail); err != nil {
		return s.internal(c, "change email: verification token", err)
	}
	s.send(c, mail.KindEmailChanged, u.Email, mail.Data{Name: u.Name, NewEmail: newEmail})
	s.audit(c, Event{Type: EventEmailChanged, UserID: u.ID})
	return s.ok(c, msgEmailChanged)
}

// forgotPassword is route rule 11. Unknown addresses and the per-email
// limit get the same 200 as a mailed link, after the same work: the link is
// signed and the mail rendered in every case (for an unknown address, for a
// throw-away id) and only a real one is queued, so the answer takes the same
// time whether or not the address has an account. The mail itself is sent
// off the request path.
func (s *Service) forgotPassword(c *call) Response {
	in, err := decode(c.req, s.maxBody, str("email"))
	if err != nil {
		return s.inputFail(c, err)
	}
	v, err := s.attempt(c, s.resetIP, s.clientKey(c.req))
	if err != nil {
		return s.internal(c, "forgot password", err)
	}
	if v.limited {
		return s.tooMany(c, s.resetIP, v)
	}
	s.rateHeaders(c.header, v)
	email, err := normalizeEmail(in.str("email"))
	if err != nil {
		return s.inputFail(c, err)
	}
	ev, err := s.attempt(c, s.resetEmail, email)
	if err != nil {
		return s.internal(c, "forgot password", err)
	}
	u, err := s.users.ByEmail(c.ctx, email)
	known := err == nil
	if err != nil && !errors.Is(err, user.ErrNotFound) {
		return s.internal(c, "forgot password: lookup", err)
	}
	if !known {
		u = &user.User{ID: user.NewID(), Email: email}
	}
	tok, err := s.reset.CreateWith(u.ID, s.reset.Bind(u.Email, u.PasswordHash))
	if err != nil {
		return s.internal(c, "forgot password: token", err)
	}
	msg, err := s.render(c, mail.KindResetPassword, u.Email, mail.Data{
		Name: u.Name, Link: s.link(s.cfg.ResetPasswordPath, tok), Expiry: ResetLifetime,
	})
	switch {
	case ev.limited:
		s.audit(c, Event{Type: EventRateLimited, Email: email, Detail: s.resetEmail.name})
	case known && err == nil:
		s.queue(c, msg)
		s.audit(c, Event{Type: EventPasswordResetRequested, UserID: u.ID})
	}
	return s.ok(c, msgForgotSent)
}

// resetPassword is route rule 12 (spec 3.4). The link is bound to the
// address and the password hash it was made for, and the update is
// conditional on both the hash and PasswordChangedAt, so one link changes
// the password once, however many requests race with it.
func (s *Service) resetPassword(c *call) Response {
	in, err := decode(c.req, s.maxBody, str("password"), str("confirmPassword"))
	if err != nil {
		return s.inputFail(c, err)
	}
	pw := in.str("password")
	if pw != in.str("confirmPassword") {
		return s.fail(c, http.StatusBadRequest, msgPasswordsDiffer)
	}
	if msg := s.policyError(pw); msg != "" {
		return s.fail(c, http.StatusBadRequest, msg)
	}
	claims, err := s.reset.Verify(c.req.PathValue("token"))
	if err != nil {
		return s.fail(c, http.StatusBadRequest, msgResetInvalid)
	}
	u, err := s.users.ByID(c.ctx, claims.UserID)
	if errors.Is(err, user.ErrNotFound) {
		return s.fail(c, http.StatusBadRequest, msgResetInvalid)
	}
	if err != nil {
		return s.internal(c, "reset password: load user", err)
	}
	if !s.reset.BindingHolds(claims, u.Email, u.PasswordHash) ||
		(!u.PasswordChangedAt.IsZero() && !u.PasswordChangedAt.Before(claims.IssuedAt)) {
		return s.fail(c, http.StatusBadRequest, msgResetUsed)
	}
	hash, err := s.hasher.Hash(c.ctx, pw)
	if err != nil {
		return s.internal(c, "reset password: hash", err)
	}
	err = s.users.SetPassword(c.ctx, u.ID, user.PasswordUpdate{
		Hash: hash, OldHash: u.PasswordHash, IssuedBefore: claims.IssuedAt, At: s.now(),
	})
	if err != nil {
		if errors.Is(err, user.ErrConflict) {
			return s.fail(c, http.StatusBadRequest, msgResetUsed)
		}
		return s.internal(c, "reset password: store", err)
	}
	s.audit(c, Event{Type: EventPasswordReset, UserID: u.ID})
	s.send(c, mail.KindPasswordResetDone, u.Email, mail.Data{Name: u.Name})
	return s.ok(c, msgPasswordReset)
}

// changePassword: a signed-in user replaces their password. Every other
// session ends; this one is renewed.
func (s *Service) changePassword(c *call) Response {
	in, err := decode(c.req, s.maxBody, str("currentPassword"), str("newPassword"))
	if err != nil {
		return s.inputFail(c, err)
	}
	u, fail := s.currentUser(c)
	if fail != nil {
		return *fail
	}
	pw := in.str("newPassword")
	if msg := s.policyError(pw); msg != "" {
		return s.fail(c, http.StatusBadRequest, msg)
	}
	if fail := s.checkPassword(c, u, in.str("currentPassword")); fail != nil {
		return *fail
	}
	hash, err := s.hasher.Hash(c.ctx, pw)
	if err != nil {
		return s.internal(c, "change password: hash", err)
	}
	err = s.users.SetPassword(c.ctx, u.ID, user.PasswordUpdate{Hash: hash, OldHash: u.PasswordHash, At: s.now()})
	if err != nil {
		if errors.Is(err, user.ErrConflict) {
			return s.fail(c, http.StatusConflict, "Your password was changed by another request")
		}
		return s.internal(c, "change password: store", err)
	}
	if r := s.renewSession(c, u.ID); r != nil {
		return *r
	}
	s.audit(c, Event{Type: EventPasswordChanged, UserID: u.ID})
	s.send(c, mail.KindPasswordChanged, u.Email, mail.Data{Name: u.Name})
	return s.ok(c, msgPasswordChanged)
}

// send renders and queues one mail. It never fails the request: a mail
// that cannot be rendered or queued is logged (without its link).
func (s *Service) send(c *call, kind mail.Kind, to string, data mail.Data) {
	if msg, err := s.render(c, kind, to, data); err == nil {
		s.queue(c, msg)
	}
}

// render renders one mail, logging (without the link) when it cannot.
func (s *Service) render(c *call, kind mail.Kind, to string, data mail.Data) (mail.Message, error) {
	data.To = to
	data.AppName = s.cfg.AppName
	data.Time = s.now()
	msg, err := s.tmpl.Render(kind, data)
	if err != nil {
		s.log.ErrorContext(c.ctx, "authkit: mail not rendered", "kind", string(kind), "err", err)
	}
	return msg, err
}

// queue hands msg to the asynchronous sender.
func (s *Service) queue(c *call, msg mail.Message) {
	err := s.sender.Send(context.WithoutCancel(c.ctx), msg)
	if err != nil && !errors.Is(err, mail.ErrQueueFull) { // the sender logs a full queue itself
		s.log.ErrorContext(c.ctx, "authkit: mail not queued", "kind", string(msg.Kind), "err", err)
	}
}
