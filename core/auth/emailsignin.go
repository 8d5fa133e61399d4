package auth

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// Sign-in by email (Config.EmailSignIn, off by default): a user types an
// address and gets a mail with a 6-digit code and a link that does the
// same; the code typed into the browser that asked, or the link's page
// finishing with a POST, signs in without a password.
//
// The mailbox is one factor (NIST SP 800-63B rev. 4: email is no
// authenticator at AAL2), so an account with 2FA still takes its second
// step after it, exactly as after a password (the 2fa_pending cookie),
// unless the browser is trusted (Config.TrustedDevices).
//
// The code is a uniform random number below 10^6 (Config.Rand). The store
// keeps only an HMAC of it under a key derived from the app's secret for
// this purpose, bound to the address and to the browser that asked (a
// random nonce in the authkit_email_sign_in cookie, unless
// EmailSignInConfig.AnyBrowser), in user.EmailCodes under a key derived
// from the address (never the address itself, never a user id): the same
// record whether or not the address has an account. One code per address
// (a new request replaces it), single use (taken atomically: of racing
// verifies one wins), EmailSignInConfig.Lifetime long. The link carries
// the address and the code, signed and expiring with the code: it is the
// code in another form and works in the same browser only.
//
// A request answers the same message whatever the address, after the same
// work: the code is made, hashed and stored and the mail rendered for
// every address; the mail is queued only for an account, or for an
// unknown address when sign-up is on. Requests count against
// Limits.EmailSignInIP (a 429) and, silently, Limits.EmailSignInEmail (no
// mail past it, the same answer), as forgot-password does. Verifies count
// against Limits.LoginIP (given back on success, like a correct password)
// and Limits.EmailSignInVerify per address, so at most 5 codes are tried
// per address per 15 minutes by default, whoever tries them. The account
// lock-out (Config.Lockout) counts password guesses and does not apply.
//
// An unknown address may sign up this way when the app allows
// registration (FeatureRegistration on and EmailSignInConfig.NoSignUp
// false): the account is made when the code is verified, not when it is
// mailed, with the address verified, no name and no password (it signs in
// by email, or sets a password through the reset flow), through
// Hooks.BeforeRegister and Hooks.AfterRegister like Register. A sign-in
// to an account whose address was not verified yet verifies it: the code
// proves the mailbox. While the Service verifies addresses, the passkeys
// of such an account (made by a sign-up with a passkey, maybe by someone
// else) are deleted first and its sessions ended (claimPasskeys).

// DefaultEmailSignInLifetime is how long a mailed sign-in code and link
// work when EmailSignInConfig.Lifetime is zero.
const DefaultEmailSignInLifetime = 10 * time.Minute

// EmailSignInCookie holds the random nonce that binds a mailed sign-in
// code to the browser that asked for it (docs/api.md, Cookies).
const EmailSignInCookie = "authkit_email_sign_in"

// purposeEmailSignIn is the purpose whose key signs the mailed links and
// hashes the codes and their store keys.
const purposeEmailSignIn = "email_sign_in"

// signInNonceBytes is the random part of the authkit_email_sign_in cookie.
const signInNonceBytes = 16

// EmailSignInConfig switches on and configures sign-in by a mailed code or
// link. The zero value is off.
type EmailSignInConfig struct {
	// Enabled offers sign-in by email: the routes POST
	// /api/auth/email-sign-in, /api/auth/email-sign-in/verify and
	// /api/auth/email-sign-in/link/{token}, and the methods
	// RequestEmailSignIn, VerifyEmailSignIn and VerifyEmailSignInLink.
	// Config.Users must implement user.EmailCodes. Default: false (the
	// routes are not registered, the methods answer ErrFeatureDisabled).
	Enabled bool

	// Lifetime is how long a mailed code and link work. Default: 10
	// minutes (DefaultEmailSignInLifetime).
	Lifetime time.Duration

	// AnyBrowser lets a code or link finish the sign-in in any browser,
	// not only the one that asked for it (a link opened on a phone). It
	// weakens the sign-in: whoever reads the mail signs in wherever they
	// are, and a mail forwarded or intercepted is a session. Default:
	// false: the code and the link work only in the browser that holds
	// the authkit_email_sign_in cookie of the request.
	AnyBrowser bool

	// NoSignUp refuses sign-up by email: only existing accounts are mailed
	// a code. Default: false: with FeatureRegistration on, an unknown
	// address is mailed a code too, and verifying it creates the account.
	NoSignUp bool
}

// LoginEmailSignIn is the LoginMethod of a sign-in by a mailed code or
// link (the first step; an account with 2FA then takes its second).
const LoginEmailSignIn LoginMethod = "email_sign_in"

// The security events of sign-in by email.
const (
	// EventEmailSignInRequested: a sign-in mail was asked for (UserID for
	// an account, Email for an address without one; Detail "sign-up"
	// when that address was mailed to sign up, "not mailed" when it was
	// not). Never the code.
	EventEmailSignInRequested EventType = "email_sign_in_requested"
)

// The errors of sign-in by email.
var (
	// ErrInvalidSignInCode: the code is wrong, was mailed for another
	// address, was replaced by a newer one, or there is none.
	ErrInvalidSignInCode = def(400, "invalid_sign_in_code", "Invalid or expired sign-in code")
	// ErrSignInLinkInvalid: the mailed link's token does not verify or has
	// expired.
	ErrSignInLinkInvalid = def(400, "sign_in_link_invalid", "Sign-in link is invalid or has expired")
	// ErrSignInOtherBrowser: the code or link is used in a browser other
	// than the one that asked for it (EmailSignInConfig.AnyBrowser off).
	ErrSignInOtherBrowser = def(400, "sign_in_other_browser", "Finish signing in in the browser where you asked for the code")
	// ErrTooManySignInRequests: Limits.EmailSignInIP refused another
	// request from this client address.
	ErrTooManySignInRequests = def(429, "too_many_sign_in_requests", "Too many sign-in requests. Try again later.")
)

// HasEmailSignIn reports whether sign-in by email is on
// (Config.EmailSignIn.Enabled): a page offers "email me a code" only then.
func (s *Service) HasEmailSignIn() bool { return s.cfg.EmailSignIn.Enabled }

// signUpByEmail reports whether an unknown address may sign up by email.
func (s *Service) signUpByEmail() bool {
	return s.cfg.featureOn(FeatureRegistration) && !s.cfg.EmailSignIn.NoSignUp
}

// EmailSignInInput is what RequestEmailSignIn takes.
type EmailSignInInput struct {
	Email string
}

// RequestEmailSignIn mails a sign-in code and link to an address (POST
// /api/auth/email-sign-in), replacing any earlier code of the address, and
// sets the authkit_email_sign_in cookie that binds them to this browser.
// It answers nil for every well-formed address, known or not, over
// Limits.EmailSignInEmail or not, after the same work (see the section
// comment); a malformed address gets its 400, and Limits.EmailSignInIP
// its 429 (ErrTooManySignInRequests). ErrFeatureDisabled unless
// Config.EmailSignIn.Enabled.
func (s *Service) RequestEmailSignIn(ctx context.Context, v *Visit, in EmailSignInInput) (err error) {
	ctx, flow := s.enter(ctx, v, "email-sign-in")
	defer flow.end(&err)
	if err := s.emailSignInOn(); err != nil {
		return err
	}
	mr, err := s.startMailRequest(ctx, v, in.Email, s.lim.emailSignInIP, s.lim.emailSignInEmail)
	if err != nil {
		return err // an *Error as it is, or a wrapped lookup failure
	}
	email, ev, u, known := mr.email, mr.ev, mr.u, mr.u != nil
	nonce, err := s.newSignInNonce(v)
	if err != nil {
		return fmt.Errorf("email sign-in: %w", err)
	}
	code, err := newEmailCode(s.cfg.Rand)
	if err != nil {
		return fmt.Errorf("email sign-in: code: %w", err)
	}
	tok, err := s.signIn.CreateWith(email, []byte(code))
	if err != nil {
		return fmt.Errorf("email sign-in: link: %w", err)
	}
	name := ""
	if known {
		name = u.Name
	}
	msg, renderErr := s.render(ctx, v, mail.KindEmailSignIn, email, mail.Data{
		Name: name, Code: code, Link: s.link(s.cfg.EmailSignInPath, tok), Expiry: s.cfg.EmailSignIn.Lifetime, IP: v.clientAddr(),
	})
	e := Event{Type: EventEmailSignInRequested, Email: email}
	if known {
		e = Event{Type: EventEmailSignInRequested, UserID: u.ID}
	}
	if ev.limited {
		s.audit(ctx, v, Event{Type: EventRateLimited, Email: email, Detail: s.lim.emailSignInEmail.name})
		return nil
	}
	now := s.now()
	c := user.EmailCode{UserID: s.signInKey(email), Hash: s.signInHash(email, nonce, code), CreatedAt: now, ExpiresAt: now.Add(s.cfg.EmailSignIn.Lifetime)}
	if err := s.users.emailCodes.PutEmailCode(ctx, c); err != nil {
		return fmt.Errorf("email sign-in: store: %w", err)
	}
	switch {
	case renderErr != nil:
		e.Detail = "not mailed"
	case known:
		s.queue(ctx, msg)
	case s.signUpByEmail():
		s.queue(ctx, msg)
		e.Detail = "sign-up"
	default:
		e.Detail = "not mailed"
	}
	s.audit(ctx, v, e)
	return nil
}

// EmailSignInVerifyInput is what VerifyEmailSignIn takes.
type EmailSignInVerifyInput struct {
	Email    string
	Code     string // spaces are dropped
	Remember bool   // a long-lived session (Config.RememberLifetime)
}

// VerifyEmailSignIn finishes a sign-in by the mailed code (POST
// /api/auth/email-sign-in/verify), in the browser that asked for it. The
// result is Login's: a session, or for an account with 2FA the
// 2fa_pending cookie and RequiresTwoFactor; SignedUp when the code made
// the account. A wrong code (or none) is ErrInvalidSignInCode, the right
// code past its lifetime ErrEmailCodeExpired, a code another request
// spent first ErrCodeUsed, another browser's ErrSignInOtherBrowser; each
// counts against Limits.LoginIP and Limits.EmailSignInVerify (a 429
// ErrTooManyLogins). A failed AfterLogin or register hook answers as it
// says. ErrFeatureDisabled unless Config.EmailSignIn.Enabled.
func (s *Service) VerifyEmailSignIn(ctx context.Context, v *Visit, in EmailSignInVerifyInput) (_ LoginResult, err error) {
	ctx, flow := s.enter(ctx, v, "email-sign-in/verify")
	defer flow.end(&err)
	if err := s.emailSignInOn(); err != nil {
		return LoginResult{}, err
	}
	if err := checkText(text{"email", in.Email}, text{"code", in.Code}); err != nil {
		return LoginResult{}, err
	}
	email, err := normalizeEmail(in.Email)
	if err != nil {
		return LoginResult{}, err
	}
	return s.finishEmailSignIn(ctx, v, email, in.Code, in.Remember)
}

// EmailSignInLinkInput is what VerifyEmailSignInLink takes.
type EmailSignInLinkInput struct {
	Token    string // from the mailed link
	Remember bool
}

// VerifyEmailSignInLink finishes a sign-in by the mailed link (POST
// /api/auth/email-sign-in/link/{token}): the page the link opens shows a
// button that posts here (a GET must sign nobody in: mail scanners follow
// links). A token that does not verify or has expired is
// ErrSignInLinkInvalid (counted like a wrong code); otherwise it is
// VerifyEmailSignIn with the address and code the link carries.
func (s *Service) VerifyEmailSignInLink(ctx context.Context, v *Visit, in EmailSignInLinkInput) (_ LoginResult, err error) {
	ctx, flow := s.enter(ctx, v, "email-sign-in/link")
	defer flow.end(&err)
	if err := s.emailSignInOn(); err != nil {
		return LoginResult{}, err
	}
	claims, err := s.signIn.Verify(in.Token)
	if err != nil {
		if _, err := s.check(ctx, v, s.lim.loginIP, v.ClientIP()); err != nil {
			return LoginResult{}, err
		}
		return LoginResult{}, ErrSignInLinkInvalid
	}
	return s.finishEmailSignIn(ctx, v, claims.UserID, string(claims.Data), in.Remember)
}

// finishEmailSignIn checks and spends the code of email (already
// normalised) for this browser, finds or makes the account and ends the
// first step.
func (s *Service) finishEmailSignIn(ctx context.Context, v *Visit, email, code string, remember bool) (LoginResult, error) {
	ipv, err := s.check(ctx, v, s.lim.loginIP, v.ClientIP())
	if err != nil {
		return LoginResult{}, err
	}
	ev, err := s.check(ctx, v, s.lim.emailSignInVerify, email)
	if err != nil {
		return LoginResult{}, err
	}
	shown := ipv
	if ev.checked && (!shown.checked || ev.res.Remaining < shown.res.Remaining) {
		shown = ev
	}
	s.rateHeaders(v.header, shown)
	if err := s.takeSignInCode(ctx, v, email, code); err != nil {
		var e *Error
		if errors.As(err, &e) {
			s.audit(ctx, v, Event{Type: EventLoginFailed, Email: email, Detail: string(LoginEmailSignIn) + ": " + string(e.Code)})
		}
		return LoginResult{}, err
	}
	u, created, err := s.signInAccount(ctx, v, email)
	if err != nil {
		return LoginResult{}, err
	}
	s.resetLimit(ctx, v, s.lim.emailSignInVerify, email)
	s.refundLimit(ctx, v, s.lim.loginIP, v.ClientIP(), ipv)
	v.setCookie(s.signInCookie("", -1))
	res, err := s.firstFactorDone(ctx, v, u, firstFactor{how: LoginEmailSignIn, remember: remember})
	if err != nil {
		return LoginResult{}, err
	}
	res.SignedUp = created
	return res, nil
}

// takeSignInCode checks code against the stored one of email for this
// browser and spends it.
func (s *Service) takeSignInCode(ctx context.Context, v *Visit, email, code string) error {
	nonce := ""
	if !s.cfg.EmailSignIn.AnyBrowser {
		raw, ok := v.req.Cookie(EmailSignInCookie)
		if !ok || raw == "" {
			return ErrSignInOtherBrowser
		}
		nonce = raw
	}
	code = normalizeCode(code)
	if len(code) != emailCodeDigits {
		return ErrInvalidSignInCode
	}
	key := s.signInKey(email)
	stored, err := s.users.emailCodes.EmailCode(ctx, key)
	if errors.Is(err, user.ErrNotFound) {
		return ErrInvalidSignInCode
	}
	if err != nil {
		return fmt.Errorf("email sign-in: read code: %w", err)
	}
	if subtle.ConstantTimeCompare(s.signInHash(email, nonce, code), stored.Hash) != 1 {
		return ErrInvalidSignInCode
	}
	now := s.now()
	if !stored.ExpiresAt.After(now) {
		return ErrEmailCodeExpired
	}
	err = s.users.emailCodes.TakeEmailCode(ctx, key, stored.Hash, now)
	if errors.Is(err, user.ErrConflict) {
		return ErrCodeUsed // another request took it first, or a new request replaced it
	}
	if err != nil {
		return fmt.Errorf("email sign-in: take code: %w", err)
	}
	return nil
}

// signInAccount returns the account of a verified address, verifying the
// address when it was not yet, or makes one when sign-up by email is on
// (created true).
func (s *Service) signInAccount(ctx context.Context, v *Visit, email string) (_ *user.User, created bool, _ error) {
	u, err := s.users.ByEmail(ctx, email)
	switch {
	case err == nil:
		if u, err = s.claimPasskeys(ctx, v, u); err != nil {
			return nil, false, err
		}
		return s.markVerified(ctx, v, u)
	case !errors.Is(err, user.ErrNotFound):
		return nil, false, fmt.Errorf("email sign-in: lookup: %w", err)
	case !s.signUpByEmail():
		// No account, and none may be made: the code was mailed before
		// the account was deleted, or sign-up was switched off since.
		return nil, false, ErrInvalidSignInCode
	}
	reg := &Registration{Email: email, Fields: map[string]string{}}
	if err := s.beforeRegister(ctx, reg); err != nil {
		return nil, false, err
	}
	u, err = s.users.registration.Create(ctx, &user.User{Email: email, EmailVerifiedAt: s.now()})
	if errors.Is(err, user.ErrEmailTaken) {
		// Registered meanwhile (a password sign-up racing this one): the
		// code proves the mailbox of that account as well.
		if u, err = s.users.ByEmail(ctx, email); err != nil {
			return nil, false, fmt.Errorf("email sign-in: lookup after sign-up race: %w", err)
		}
		if u, err = s.claimPasskeys(ctx, v, u); err != nil {
			return nil, false, err
		}
		return s.markVerified(ctx, v, u)
	}
	if err != nil {
		return nil, false, fmt.Errorf("email sign-in: create: %w", err)
	}
	if err := s.afterRegister(ctx, u, reg, "email sign-in"); err != nil {
		return nil, false, err
	}
	if u, _, err = s.markVerified(ctx, v, u); err != nil {
		return nil, false, err
	}
	s.audit(ctx, v, Event{Type: EventRegistered, UserID: u.ID, Detail: string(LoginEmailSignIn)})
	return u, true, nil
}

// claimPasskeys claims an account whose address nobody proved before
// this code, while the Service verifies addresses: whatever was set up on
// it (a password, TOTP, passkeys, API keys, sessions, trusted devices)
// may be the work of someone other than the owner who just proved the
// mailbox, waiting for them (pre-account takeover), so it is revoked as
// the social module's claim revokes it (Modules.ClaimUnverified,
// SECURITY.md deviation 23), audited as EventUnverifiedSetupRevoked and
// mailed for each passkey. The owner signs in by email and sets a password
// through the reset. It returns u as stored now. An unverified account
// with nothing set up is left as it is (markVerified verifies it).
func (s *Service) claimPasskeys(ctx context.Context, v *Visit, u *user.User) (*user.User, error) {
	if u.EmailVerified() || !s.cfg.featureOn(FeatureEmailVerification) {
		return u, nil
	}
	var keys []*user.Passkey
	if st := s.users.passkeys; st != nil {
		var err error
		if keys, err = st.ListPasskeys(ctx, u.ID); err != nil {
			return nil, fmt.Errorf("email sign-in: passkeys: %w", err)
		}
	}
	if len(keys) == 0 && u.PasswordHash == "" && !u.TwoFactorEnabled {
		return u, nil
	}
	if s.users.change == nil {
		// A store that cannot take the password (user.PasswordChange):
		// the account cannot be claimed, so the code cannot sign it in.
		return nil, ErrInvalidSignInCode
	}
	if err := s.Modules().ClaimUnverified(ctx, v, u, u.Email, string(LoginEmailSignIn)); err != nil {
		if errors.Is(err, ErrSocialLinkRequired) {
			return nil, ErrInvalidSignInCode // the account changed meanwhile
		}
		return nil, fmt.Errorf("email sign-in: %w", err)
	}
	now, err := s.users.ByID(ctx, u.ID)
	if err != nil {
		return nil, fmt.Errorf("email sign-in: reload: %w", err)
	}
	return now, nil
}

// markVerified records u's address as verified (the code proved the
// mailbox) when it is not yet and the store can.
func (s *Service) markVerified(ctx context.Context, v *Visit, u *user.User) (*user.User, bool, error) {
	if !u.EmailVerifiedAt.IsZero() || s.users.verification == nil {
		return u, false, nil
	}
	at := s.now()
	err := s.users.verification.VerifyEmail(ctx, u.ID, u.Email, at)
	switch {
	case errors.Is(err, user.ErrConflict), errors.Is(err, user.ErrNotFound):
		return u, false, nil // the address changed meanwhile: it stays unverified
	case err != nil:
		return nil, false, fmt.Errorf("email sign-in: verify address: %w", err)
	}
	u.EmailVerifiedAt = at.Truncate(time.Millisecond)
	s.audit(ctx, v, Event{Type: EventEmailVerified, UserID: u.ID, Detail: string(LoginEmailSignIn)})
	return u, false, nil
}

// emailSignInOn fails the email sign-in methods when the feature is off.
func (s *Service) emailSignInOn() error {
	if !s.cfg.EmailSignIn.Enabled {
		return ErrFeatureDisabled
	}
	return nil
}

// newSignInNonce sets a fresh authkit_email_sign_in cookie on v and returns
// its value; "" and no cookie with EmailSignInConfig.AnyBrowser.
func (s *Service) newSignInNonce(v *Visit) (string, error) {
	if s.cfg.EmailSignIn.AnyBrowser {
		return "", nil
	}
	var b [signInNonceBytes]byte
	if _, err := io.ReadFull(s.cfg.Rand, b[:]); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	nonce := base64.RawURLEncoding.EncodeToString(b[:])
	v.setCookie(s.signInCookie(nonce, int(s.cfg.EmailSignIn.Lifetime.Seconds())))
	return nonce, nil
}

func (s *Service) signInCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: EmailSignInCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: !s.cfg.Insecure, SameSite: http.SameSiteLaxMode,
	}
}

// signInKey is the key a sign-in code of email is stored under in
// user.EmailCodes: a keyed hash of the address, so the store holds no
// address and the key never equals a user id.
func (s *Service) signInKey(email string) string {
	return "email-sign-in:" + hex.EncodeToString(s.signIn.Bind("store key", email))
}

// signInHash is the keyed hash a sign-in code is stored as: bound to the
// address and to the browser's nonce ("" with AnyBrowser).
func (s *Service) signInHash(email, nonce, code string) []byte {
	return s.signIn.Bind("code", email, nonce, code)
}

// The routes of sign-in by email.

func emailSignInRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("email"))
	if err == nil {
		err = s.RequestEmailSignIn(ctx, v, EmailSignInInput{Email: in.str("email")})
	}
	return s.answer(ctx, v, "email sign-in", s.say(v, "email_sign_in_sent", msgEmailSignInSent), err)
}

func emailSignInVerifyRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, str("email"), str("code"), boolean("remember"))
	var res LoginResult
	if err == nil {
		res, err = s.VerifyEmailSignIn(ctx, v, EmailSignInVerifyInput{Email: in.str("email"), Code: in.str("code"), Remember: in.flag("remember")})
	}
	return s.signInAnswer(ctx, v, "email sign-in verify", res, err)
}

func emailSignInLinkRoute(ctx context.Context, s *Service, v *Visit) Response {
	in, err := decode(v.req, s.maxBody, boolean("remember"))
	var res LoginResult
	if err == nil {
		res, err = s.VerifyEmailSignInLink(ctx, v, EmailSignInLinkInput{Token: v.req.PathValue("token"), Remember: in.flag("remember")})
	}
	return s.signInAnswer(ctx, v, "email sign-in link", res, err)
}

// signInAnswer answers a first step as the login route does:
// {requiresTwoFactor: true} when the second step follows, else
// {success: true}.
func (s *Service) signInAnswer(ctx context.Context, v *Visit, op string, res LoginResult, err error) Response {
	if err == nil && res.RequiresTwoFactor {
		return s.respond(v, http.StatusOK, map[string]bool{"requiresTwoFactor": true})
	}
	return s.answer(ctx, v, op, map[string]bool{"success": true}, err)
}
