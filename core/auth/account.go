package auth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/token"
	"github.com/authkit-go/authkit/core/user"
)

// Accounts: registration, the email address
// (verification, resend, change), and the password (forgot,
// reset, change); docs/api.md describes each route.

// RegisterInput is what Register takes.
type RegisterInput struct {
	Email    string
	Password string
	Name     string // required unless Config.NameOptional
	// Fields are the extra fields of Config.RegisterFields, handed to the
	// register hooks; others are ignored.
	Fields map[string]string
}

// Register creates an account (docs/api.md, Registration): limited per client
// address, the email lowercased, the password checked against the policy
// and hashed, a 24-hour verification link mailed (unless
// FeatureEmailVerification is off), and the new user signed in on v.
func (s *Service) Register(ctx context.Context, v *Visit, in RegisterInput) (_ *user.User, err error) {
	ctx, flow := s.enter(ctx, v, "register")
	defer flow.end(&err)
	if err := s.enabled(FeatureRegistration); err != nil {
		return nil, err
	}
	fields := []text{{"email", in.Email}, {"password", in.Password}, {"name", in.Name}}
	for _, f := range s.cfg.RegisterFields {
		fields = append(fields, text{f, in.Fields[f]})
	}
	if err := checkText(fields...); err != nil {
		return nil, err
	}
	if err := s.checkShown(ctx, v, s.lim.register, v.ClientIP()); err != nil {
		return nil, err
	}
	email, err := normalizeEmail(in.Email)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSpace(in.Name)
	if name == "" && !s.cfg.NameOptional {
		return nil, ErrNameRequired
	}
	if utf8.RuneCountInString(name) > maxNameRunes {
		return nil, ErrNameTooLong
	}
	if err := s.checkPolicy(in.Password, s.policyContext(nil, email, name)); err != nil {
		return nil, err
	}
	switch _, err := s.users.ByEmail(ctx, email); {
	case err == nil:
		return nil, ErrEmailRegistered
	case !errors.Is(err, user.ErrNotFound):
		return nil, fmt.Errorf("register: lookup: %w", err)
	}
	if err := s.checkBreached(ctx, v, in.Password); err != nil {
		return nil, err
	}
	reg := &Registration{Email: email, Name: name, Fields: map[string]string{}}
	for _, f := range s.cfg.RegisterFields {
		reg.Fields[f] = in.Fields[f]
	}
	if err := s.beforeRegister(ctx, reg); err != nil {
		return nil, err
	}
	hash, err := s.hasher.Hash(ctx, in.Password)
	if err != nil {
		return nil, fmt.Errorf("register: hash: %w", err)
	}
	u, err := s.createAccount(ctx, &user.User{Email: email, Name: name, PasswordHash: hash}, reg, "register")
	if err != nil {
		return nil, err
	}
	if err := s.sendVerification(ctx, v, u, u.Email); err != nil {
		return nil, fmt.Errorf("register: verification token: %w", err)
	}
	if err := s.startSession(ctx, v, u, false); err != nil {
		return nil, fmt.Errorf("register: session: %w", err)
	}
	if s.cfg.featureOn(FeatureNewDeviceNotice) {
		s.firstSignIn(ctx, u) // the registering browser is known: a first sign-in elsewhere is a new device
	}
	s.rememberDevice(ctx, v, u)
	s.audit(ctx, v, Event{Type: EventRegistered, UserID: u.ID})
	return u, nil
}

// checkBreached asks Config.PasswordChecker about a new password:
// [ErrPasswordBreached] when it is known. When the checker cannot tell,
// the password passes with a warning logged, or with
// Config.PasswordCheckFailClosed the flow fails as a backend that is down
// (503). Neither the password nor anything derived from it is logged.
func (s *Service) checkBreached(ctx context.Context, v *Visit, pw string) error {
	if s.cfg.PasswordChecker == nil {
		return nil
	}
	err := s.cfg.PasswordChecker.Check(ctx, pw)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, password.ErrBreached):
		return ErrPasswordBreached
	case s.cfg.PasswordCheckFailClosed:
		return fmt.Errorf("breached-password check: %w: %w", errBackend, err)
	}
	s.log.WarnContext(ctx, "authkit: breached-password check failed; the password was let through", "err", err)
	return nil
}

// checkPolicy checks a new password against the policy in its context
// (policyContext): the length for an account with or without a second
// factor, the context words.
func (s *Service) checkPolicy(pw string, c password.Context) error {
	if len(pw) > maxPasswordBytes {
		return ErrPasswordTooLong.with("Password is too long", "password_too_long.bytes", nil)
	}
	err := s.policy.CheckFor(pw, c)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, password.ErrContextWord):
		return ErrPasswordContextWord
	case errors.Is(err, password.ErrTooShort):
		n := itoa(s.policy.MinFor(c.SecondFactor))
		return ErrPasswordTooShort.with("Password must be at least "+n+" characters", "", map[string]string{"min": n})
	case errors.Is(err, password.ErrTooLong):
		n := itoa(cmp.Or(max(s.policy.Max, 0), password.DefaultMaxLength))
		return ErrPasswordTooLong.with("Password must be at most "+n+" characters", "", map[string]string{"max": n})
	default:
		return ErrPasswordInvalid
	}
}

// policyContext is what the password policy knows of the account a new
// password is for: whether it has a second factor (u nil: a new account,
// which has none), and its context words, the app's name and the
// account's address and name.
func (s *Service) policyContext(u *user.User, email, name string) password.Context {
	return password.Context{SecondFactor: u != nil && u.TwoFactorEnabled, Words: []string{s.cfg.AppName, email, name}}
}

// anyAccount is the policy context of a password whose account is not
// known yet: the bounds every account has (the minimum with a second
// factor), no words. The full check follows once the account is known.
var anyAccount = password.Context{SecondFactor: true}

// sendVerification mails a 24-hour verification link bound to address,
// unless FeatureEmailVerification is off.
func (s *Service) sendVerification(ctx context.Context, v *Visit, u *user.User, address string) error {
	if !s.cfg.featureOn(FeatureEmailVerification) {
		return nil
	}
	tok, err := s.verify.CreateWith(u.ID, s.verify.Bind(address))
	if err != nil {
		return err
	}
	s.send(ctx, v, mail.KindVerifyEmail, address, mail.Data{
		Name: u.Name, Link: s.link(s.cfg.VerifyEmailPath, tok), Expiry: VerificationLifetime,
	})
	return nil
}

func (s *Service) link(path, tok string) string {
	return s.cfg.AppURL + path + url.PathEscape(tok)
}

// VerifyEmailInput is what VerifyEmail takes.
type VerifyEmailInput struct {
	Token string // from the mailed link
}

// VerifyEmail marks an address verified from the token of a mailed link
// (docs/api.md, Email verification). A link is dead when the account no longer has the address it
// was mailed to, or when the address changed after the link was made
// (SECURITY.md deviation 1: a change in the same millisecond as the link
// does not kill it, so the link a change mails always works). It reports
// whether the address was verified already.
func (s *Service) VerifyEmail(ctx context.Context, v *Visit, in VerifyEmailInput) (alreadyVerified bool, err error) {
	ctx, flow := s.enter(ctx, v, "verify-email")
	defer flow.end(&err)
	if err := s.enabled(FeatureEmailVerification); err != nil {
		return false, err
	}
	claims, err := s.verify.Verify(in.Token)
	if err != nil {
		return false, ErrVerifyLinkInvalid
	}
	u, err := s.users.ByID(ctx, claims.UserID)
	if errors.Is(err, user.ErrNotFound) {
		return false, ErrVerifyLinkUserMissing
	}
	if err != nil {
		return false, fmt.Errorf("verify email: load user: %w", err)
	}
	if !s.verify.BindingHolds(claims, u.Email) || u.EmailChangedAt.After(claims.IssuedAt) {
		return false, ErrVerifyLinkStale
	}
	if u.EmailVerified() {
		return true, nil
	}
	if err := s.users.verification.VerifyEmail(ctx, u.ID, u.Email, s.now()); err != nil {
		return false, storeWrite("verify email", err, ErrVerifyLinkStale)
	}
	s.audit(ctx, v, Event{Type: EventEmailVerified, UserID: u.ID})
	return false, nil
}

// ResendVerification mails the signed-in user a new verification link
// (docs/api.md, Resend verification), limited per user. It reports whether a mail was sent:
// false when the address is verified already.
func (s *Service) ResendVerification(ctx context.Context, v *Visit) (sent bool, err error) {
	ctx, flow := s.enter(ctx, v, "resend-verification")
	defer flow.end(&err)
	if err := s.enabled(FeatureEmailVerification); err != nil {
		return false, err
	}
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return false, err
	}
	if u.EmailVerified() {
		return false, nil
	}
	if err := s.checkShown(ctx, v, s.lim.resend, u.ID); err != nil {
		return false, err
	}
	if err := s.sendVerification(ctx, v, u, u.Email); err != nil {
		return false, fmt.Errorf("resend verification: token: %w", err)
	}
	return true, nil
}

// ChangeEmailInput is what ChangeEmail takes.
type ChangeEmailInput struct {
	NewEmail        string
	CurrentPassword string
}

// ChangeEmail moves the signed-in user to a new address (docs/api.md, Change email):
// the address unverified until its mailed link is followed, a notice to
// the old address, every other session ended. The password is checked
// before the new address, so a stolen session cannot probe which addresses
// exist.
func (s *Service) ChangeEmail(ctx context.Context, v *Visit, in ChangeEmailInput) (err error) {
	ctx, flow := s.enter(ctx, v, "change-email")
	defer flow.end(&err)
	if err := s.enabled(FeatureEmailChange); err != nil {
		return err
	}
	if err := checkText(text{"newEmail", in.NewEmail}, text{"password", in.CurrentPassword}); err != nil {
		return err
	}
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return err
	}
	if in.NewEmail == "" {
		return ErrNewEmailRequired
	}
	newEmail, err := normalizeEmail(in.NewEmail)
	if err != nil {
		return err
	}
	if err := s.checkPassword(ctx, v, u, in.CurrentPassword); err != nil {
		return err
	}
	if newEmail == u.Email {
		return ErrEmailInUse
	}
	if err := s.users.emailChange.ChangeEmail(ctx, u.ID, u.Email, newEmail, s.now()); err != nil {
		switch {
		case errors.Is(err, user.ErrEmailTaken):
			return ErrEmailInUse
		case errors.Is(err, user.ErrConflict):
			return ErrEmailChangedMeanwhile
		}
		return fmt.Errorf("change email: store: %w", err)
	}
	// Committed: the notice, the audit event and the hook come first, so
	// nothing that happens to this session afterwards can lose them.
	s.send(ctx, v, mail.KindEmailChanged, u.Email, mail.Data{Name: u.Name, NewEmail: newEmail})
	s.audit(ctx, v, Event{Type: EventEmailChanged, UserID: u.ID})
	if h := s.cfg.Hooks.AfterEmailChange; h != nil {
		s.notify(ctx, "AfterEmailChange", func() { h(ctx, u, newEmail) })
	}
	if err := s.sendVerification(ctx, v, u, newEmail); err != nil {
		// The new address stays unverified; resend-verification mails another link.
		s.log.ErrorContext(ctx, "authkit: change email: verification link not sent", "user", u.ID, "err", err)
	}
	return s.renewSession(ctx, v, u)
}

// ForgotPasswordInput is what ForgotPassword takes.
type ForgotPasswordInput struct {
	Email string
}

// ForgotPassword mails a one-hour reset link to an account's address
// (docs/api.md, Forgot password). Unknown addresses and the per-email limit succeed like a
// mailed link, after the same work: the link is signed and the mail
// rendered in every case (for an unknown address, for a throw-away id) and
// only a real one is queued, so the call takes the same time whether or
// not the address has an account. The mail itself is sent off the request
// path.
func (s *Service) ForgotPassword(ctx context.Context, v *Visit, in ForgotPasswordInput) (err error) {
	ctx, flow := s.enter(ctx, v, "forgot-password")
	defer flow.end(&err)
	if err := s.enabled(FeaturePasswordReset); err != nil {
		return err
	}
	mr, err := s.startMailRequest(ctx, v, in.Email, s.lim.resetIP, s.lim.resetEmail)
	if err != nil {
		return err // an *Error as it is, or a wrapped lookup failure
	}
	email, ev, u, known := mr.email, mr.ev, mr.u, mr.u != nil
	if !known {
		u = &user.User{ID: user.NewID(), Email: email}
	}
	tok, err := s.reset.CreateWith(u.ID, s.reset.Bind(u.Email, u.PasswordHash))
	if err != nil {
		return fmt.Errorf("forgot password: token: %w", err)
	}
	msg, err := s.render(ctx, v, mail.KindResetPassword, u.Email, mail.Data{
		Name: u.Name, Link: s.link(s.cfg.ResetPasswordPath, tok), Expiry: ResetLifetime,
	})
	switch {
	case ev.limited:
		s.audit(ctx, v, Event{Type: EventRateLimited, Email: email, Detail: s.lim.resetEmail.name})
	case known && err == nil:
		s.queue(ctx, msg)
		s.audit(ctx, v, Event{Type: EventPasswordResetRequested, UserID: u.ID})
	}
	return nil
}

// mailRequest is the start of a flow that mails an address whatever it
// is, answering alike for every one (forgot-password, sign-in by email).
type mailRequest struct {
	email string     // normalised
	ev    verdict    // of the address's limit: when limited, nothing may be mailed
	u     *user.User // the address's account; nil for none
}

// startMailRequest checks the typed address, counts the client address's
// limit ipLim (its 429 and headers) and, silently, the address's emailLim,
// and looks the account up. An *Error (a malformed address, the 429) is
// returned as it is.
func (s *Service) startMailRequest(ctx context.Context, v *Visit, raw string, ipLim, emailLim *limiter) (mailRequest, error) {
	if err := checkText(text{"email", raw}); err != nil {
		return mailRequest{}, err
	}
	if err := s.checkShown(ctx, v, ipLim, v.ClientIP()); err != nil {
		return mailRequest{}, err
	}
	email, err := normalizeEmail(raw)
	if err != nil {
		return mailRequest{}, err
	}
	ev, err := s.attempt(ctx, v, emailLim, email)
	if err != nil {
		return mailRequest{}, err
	}
	u, err := s.users.ByEmail(ctx, email)
	switch {
	case errors.Is(err, user.ErrNotFound):
		u = nil
	case err != nil:
		return mailRequest{}, fmt.Errorf("mail request: lookup: %w", err)
	}
	return mailRequest{email: email, ev: ev, u: u}, nil
}

// ResetPasswordInput is what ResetPassword takes.
type ResetPasswordInput struct {
	Token           string // from the mailed link
	Password        string
	ConfirmPassword string
}

// CheckResetLink reports whether the mailed reset link with this token can
// still set a password, changing nothing: nil, ErrResetLinkInvalid (a
// token that does not verify, has expired or names no account) or
// ErrResetLinkUsed (the password changed since the link was mailed). A
// page calls it when the link is opened, to offer a new link at once
// instead of after the form; ResetPassword checks the same again.
func (s *Service) CheckResetLink(ctx context.Context, v *Visit, token string) error {
	_, err := s.CheckResetLinkMin(ctx, v, token)
	return err
}

// CheckResetLinkMin is CheckResetLink that also returns, for a link that
// can still be used, the fewest characters Config.PasswordPolicy accepts
// for the new password of its account (which depends on the account's
// factors under password.NIST()), so that a form's minlength says what the
// reset will accept. It changes nothing.
func (s *Service) CheckResetLinkMin(ctx context.Context, v *Visit, token string) (minLength int, err error) {
	ctx, flow := s.enter(ctx, v, "reset-password/check")
	defer flow.end(&err)
	if err := s.enabled(FeaturePasswordReset); err != nil {
		return 0, err
	}
	u, _, err := s.resetLink(ctx, v, token)
	if err != nil {
		return 0, err
	}
	return s.PasswordMinLength(u.TwoFactorEnabled), nil
}

// PasswordMinLength returns the fewest characters Config.PasswordPolicy
// accepts for a new password of an account with (secondFactor) or without
// a second factor: 8 by default; under password.NIST() 15 without, 8 with.
// A fresh registration has no second factor. Pages use it for a new
// password's minlength.
func (s *Service) PasswordMinLength(secondFactor bool) int { return s.policy.MinFor(secondFactor) }

// resetLink returns the account of a reset token and its claims, when the
// link can still be used.
func (s *Service) resetLink(ctx context.Context, v *Visit, tok string) (*user.User, token.Claims, error) {
	claims, err := s.reset.Verify(tok)
	if err != nil {
		return nil, claims, ErrResetLinkInvalid
	}
	u, err := s.users.ByID(ctx, claims.UserID)
	if errors.Is(err, user.ErrNotFound) {
		return nil, claims, ErrResetLinkInvalid
	}
	if err != nil {
		return nil, claims, fmt.Errorf("reset password: load user: %w", err)
	}
	if !s.reset.BindingHolds(claims, u.Email, u.PasswordHash) ||
		(!u.PasswordChangedAt.IsZero() && !u.PasswordChangedAt.Before(claims.IssuedAt)) {
		return nil, claims, ErrResetLinkUsed
	}
	return u, claims, nil
}

// ResetPassword sets a new password from a reset link (docs/api.md, Reset
// password). The link is bound to the address and the password hash it was made
// for, and the update is conditional on both the hash and
// PasswordChangedAt, so one link changes the password once, however many
// requests race with it. Every session of the account ends, and every
// passkey is deleted (each audited and mailed): a reset proves the
// mailbox, not that the passkeys are the owner's (SECURITY.md, deviation 15).
func (s *Service) ResetPassword(ctx context.Context, v *Visit, in ResetPasswordInput) (err error) {
	ctx, flow := s.enter(ctx, v, "reset-password")
	defer flow.end(&err)
	if err := s.enabled(FeaturePasswordReset); err != nil {
		return err
	}
	if err := checkText(text{"password", in.Password}, text{"confirmPassword", in.ConfirmPassword}); err != nil {
		return err
	}
	if in.Password != in.ConfirmPassword {
		return ErrPasswordsDiffer
	}
	if err := s.checkPolicy(in.Password, anyAccount); err != nil {
		return err
	}
	u, claims, err := s.resetLink(ctx, v, in.Token)
	if err != nil {
		return err
	}
	if err := s.checkPolicy(in.Password, s.policyContext(u, u.Email, u.Name)); err != nil {
		return err
	}
	if err := s.checkBreached(ctx, v, in.Password); err != nil {
		return err
	}
	hash, err := s.hasher.Hash(ctx, in.Password)
	if err != nil {
		return fmt.Errorf("reset password: hash: %w", err)
	}
	err = s.users.reset.ResetPassword(ctx, u.ID, user.Reset{
		OldHash: u.PasswordHash, Hash: hash, IssuedBefore: claims.IssuedAt, At: s.now(),
	})
	if err != nil {
		return storeWrite("reset password", err, ErrResetLinkUsed)
	}
	if err := s.endOtherSessions(ctx, v, u.ID, false); err != nil {
		// The sessions are dead already (the version rose); only their
		// records stay listed until they expire.
		s.log.WarnContext(ctx, "authkit: reset password: session records not deleted", "user", u.ID, "err", err)
	}
	s.revokePasskeys(ctx, v, u)
	s.revokeAPIKeys(ctx, v, u)
	s.audit(ctx, v, Event{Type: EventPasswordReset, UserID: u.ID})
	s.send(ctx, v, mail.KindPasswordResetDone, u.Email, mail.Data{Name: u.Name})
	if h := s.cfg.Hooks.AfterPasswordChange; h != nil {
		s.notify(ctx, "AfterPasswordChange", func() { h(ctx, u, PasswordReset) })
	}
	return nil
}

// ChangePasswordInput is what ChangePassword takes.
type ChangePasswordInput struct {
	CurrentPassword string
	NewPassword     string
}

// ChangePassword replaces the signed-in user's password. Every other
// session ends; this one is renewed; a notice is mailed. An account
// without a password (signed up by passkey, email or a social provider)
// fails with [ErrPasswordNotSet]: it sets one through the password reset
// (RequestPasswordReset), which proves the mailbox.
func (s *Service) ChangePassword(ctx context.Context, v *Visit, in ChangePasswordInput) (err error) {
	ctx, flow := s.enter(ctx, v, "change-password")
	defer flow.end(&err)
	if err := s.enabled(FeaturePasswordChange); err != nil {
		return err
	}
	if err := checkText(text{"currentPassword", in.CurrentPassword}, text{"newPassword", in.NewPassword}); err != nil {
		return err
	}
	u, err := s.CurrentUser(ctx, v)
	if err != nil {
		return err
	}
	if u.PasswordHash == "" {
		return ErrPasswordNotSet // set through the reset flow, which proves the mailbox
	}
	if err := s.checkPolicy(in.NewPassword, s.policyContext(u, u.Email, u.Name)); err != nil {
		return err
	}
	if err := s.checkPassword(ctx, v, u, in.CurrentPassword); err != nil {
		return err
	}
	if err := s.checkBreached(ctx, v, in.NewPassword); err != nil {
		return err
	}
	hash, err := s.hasher.Hash(ctx, in.NewPassword)
	if err != nil {
		return fmt.Errorf("change password: hash: %w", err)
	}
	err = s.users.change.ChangePassword(ctx, u.ID, u.PasswordHash, hash, s.now())
	if err != nil {
		return storeWrite("change password", err, ErrPasswordChangedMeanwhile)
	}
	s.audit(ctx, v, Event{Type: EventPasswordChanged, UserID: u.ID})
	s.send(ctx, v, mail.KindPasswordChanged, u.Email, mail.Data{Name: u.Name})
	if h := s.cfg.Hooks.AfterPasswordChange; h != nil {
		s.notify(ctx, "AfterPasswordChange", func() { h(ctx, u, PasswordChanged) })
	}
	return s.renewSession(ctx, v, u)
}

// Mail.

// send renders and queues one mail. It never fails the flow: a mail that
// cannot be rendered or queued is logged (without its link).
func (s *Service) send(ctx context.Context, v *Visit, kind mail.Kind, to string, data mail.Data) {
	if msg, err := s.render(ctx, v, kind, to, data); err == nil {
		s.queue(ctx, msg)
	}
}

// render renders one mail in the visit's language, logging (without the
// link) when it cannot.
func (s *Service) render(ctx context.Context, v *Visit, kind mail.Kind, to string, data mail.Data) (mail.Message, error) {
	data.To = to
	data.AppName = s.cfg.AppName
	data.Time = s.now()
	tmpl := s.tmpl
	if m, ok := v.lang.Mail(string(kind)); ok {
		tmpl, _ = tmpl.With(kind, mail.Template{Subject: m.Subject, Text: m.Text, HTML: m.HTML}) // kind is mail's own
		data.Words = v.lang
	}
	msg, err := tmpl.Render(kind, data)
	if err != nil {
		s.log.ErrorContext(ctx, "authkit: mail not rendered", "kind", string(kind), "err", err)
	}
	return msg, err
}

// queue hands msg to the asynchronous sender.
func (s *Service) queue(ctx context.Context, msg mail.Message) {
	err := s.sender.Send(context.WithoutCancel(ctx), msg)
	if err != nil && !errors.Is(err, mail.ErrQueueFull) { // the sender logs a full queue itself
		s.log.ErrorContext(ctx, "authkit: mail not queued", "kind", string(msg.Kind), "err", err)
	}
}

// The routes of the group.

func registerRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, s.registerFields...)
	if err == nil {
		ri := RegisterInput{Email: in.str("email"), Password: in.str("password"), Name: in.str("name"), Fields: map[string]string{}}
		for _, f := range s.cfg.RegisterFields {
			ri.Fields[f] = in.str(f)
		}
		_, err = s.Register(ctx, v, ri)
	}
	return s.answer(ctx, v, "register", s.say(v, "registered", msgRegistered), err)
}

func verifyEmailRoute(ctx context.Context, s *Service, v *Visit) Response {
	already, err := s.VerifyEmail(ctx, v, VerifyEmailInput{Token: v.req.PathValue("token")})
	msg := s.say(v, "email_verified", msgEmailVerified)
	if already {
		msg = s.say(v, "already_verified", msgAlreadyVerified)
	}
	return s.answer(ctx, v, "verify email", msg, err)
}

func resendVerificationRoute(ctx context.Context, s *Service, v *Visit) Response {
	sent, err := s.ResendVerification(ctx, v)
	msg := s.say(v, "verification_sent", msgVerificationSent)
	if !sent {
		msg = s.say(v, "already_verified", msgAlreadyVerified)
	}
	return s.answer(ctx, v, "resend verification", msg, err)
}

func changeEmailRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("newEmail"), str("password"))
	if err == nil {
		err = s.ChangeEmail(ctx, v, ChangeEmailInput{NewEmail: in.str("newEmail"), CurrentPassword: in.str("password")})
	}
	return s.answer(ctx, v, "change email", s.say(v, "email_changed", msgEmailChanged), err)
}

func forgotPasswordRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("email"))
	if err == nil {
		err = s.ForgotPassword(ctx, v, ForgotPasswordInput{Email: in.str("email")})
	}
	return s.answer(ctx, v, "forgot password", s.say(v, "forgot_sent", msgForgotSent), err)
}

func resetPasswordRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("password"), str("confirmPassword"))
	if err == nil {
		err = s.ResetPassword(ctx, v, ResetPasswordInput{
			Token: v.req.PathValue("token"), Password: in.str("password"), ConfirmPassword: in.str("confirmPassword"),
		})
	}
	return s.answer(ctx, v, "reset password", s.say(v, "password_reset", msgPasswordReset), err)
}

func changePasswordRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("currentPassword"), str("newPassword"))
	if err == nil {
		err = s.ChangePassword(ctx, v, ChangePasswordInput{CurrentPassword: in.str("currentPassword"), NewPassword: in.str("newPassword")})
	}
	return s.answer(ctx, v, "change password", s.say(v, "password_changed", msgPasswordChanged), err)
}
