package authtest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
)

// Sign-in by email (auth.Config.EmailSignIn, off by default): POST
// /api/auth/email-sign-in mails a 6-digit code and a link, bound to the
// browser that asked (the authkit_email_sign_in cookie); POST
// /api/auth/email-sign-in/verify and /api/auth/email-sign-in/link/{token}
// finish the first step like a password: single use, expiring, limited,
// the same answer for every address.

// Texts of the email sign-in routes.
const (
	msgEmailSignInSent      = "If that address can sign in, a sign-in code has been sent. Check your email."
	errInvalidSignInCode    = "Invalid or expired sign-in code"
	errSignInLinkInvalid    = "Sign-in link is invalid or has expired"
	errSignInOtherBrowser   = "Finish signing in in the browser where you asked for the code"
	errTooManySignInRequest = "Too many sign-in requests. Try again later."
)

// The email sign-in routes and the page the mailed link opens.
const (
	signInPath       = "/api/auth/email-sign-in"
	signInVerifyPath = "/api/auth/email-sign-in/verify"
	signInLinkPath   = "/api/auth/email-sign-in/link/"
	signInPage       = "/email-sign-in/"
)

// signInEnv is env with sign-in by email on; it skips the test when the
// harness's user store does not implement user.EmailCodes.
func (s suite) signInEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	return s.storedCodesEnv(t, emailSignInWhereStored, opts...)
}

// emailSignInWhereStored switches sign-in by email on where the store can
// hold its codes.
var emailSignInWhereStored = whereCodesStored(func(c *auth.Config) { c.EmailSignIn.Enabled = true })

// anyBrowser lets a sign-in code finish in any browser.
func anyBrowser(c *auth.Config) { c.EmailSignIn.AnyBrowser = true }

// noSignUp refuses sign-up by email.
func noSignUp(c *auth.Config) { c.EmailSignIn.NoSignUp = true }

// askSignIn asks for a sign-in mail to addr on c and returns the mailed
// code and link token: exactly one more mail, to addr.
func (e *env) askSignIn(t *testing.T, c *client, addr string) (code, tok string) {
	t.Helper()
	before := len(e.mails(t, addr, mail.KindEmailSignIn))
	mustMessage(t, c.post(signInPath, obj{"email": addr}), msgEmailSignInSent)
	ms := e.mails(t, addr, mail.KindEmailSignIn)
	if len(ms) != before+1 {
		t.Fatalf("%d sign-in mails to %s, want %d", len(ms), addr, before+1)
	}
	m := ms[len(ms)-1]
	return mailedCode(t, m, addr, mail.KindEmailSignIn), linkToken(t, m, signInPage, "10 minutes")
}

// signInVerify posts a code to the verify route.
func (c *client) signInVerify(addr, code string) *reply {
	c.t.Helper()
	return c.post(signInVerifyPath, obj{"email": addr, "code": code})
}

// mustSignInLinkPostOnly checks that a GET of the link route signs nobody
// in: mail scanners follow links, so only the page's POST finishes.
func mustSignInLinkPostOnly(t *testing.T, c *client, tok string) {
	t.Helper()
	r, err := c.try(http.MethodGet, signInLinkPath+url.PathEscape(tok), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusMethodNotAllowed {
		t.Errorf("%s: status %d, want 405 (a GET must sign nobody in)", r, r.Status)
	}
	mustBeSignedOut(t, c)
}

func (s suite) emailSignInOffByDefault(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	c := e.client()
	for _, path := range []string{signInPath, signInVerifyPath, signInLinkPath + "x"} {
		mustBeAbsent(t, c, http.MethodPost, path, []byte(`{"email":"ada@example.com","code":"123456"}`), "sign-in by email is off")
	}
	if n := len(e.mails(t, "ada@example.com", mail.KindEmailSignIn)); n != 0 {
		t.Errorf("%d sign-in mails, want none", n)
	}
	mustBeSignedOut(t, c)
}

func (s suite) emailSignInByCode(t *testing.T) {
	e := s.signInEnv(t)
	u := e.seed(t, "ada@example.com")
	c := e.client()
	r := c.post(signInPath, obj{"email": "Ada@Example.com"})
	mustMessage(t, r, msgEmailSignInSent)
	ck := r.setCookie(auth.EmailSignInCookie)
	switch {
	case ck == nil:
		t.Fatalf("%s: no %s cookie", r, auth.EmailSignInCookie)
	case !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.MaxAge != 600 || ck.Path != "/":
		t.Errorf("%s cookie %+v, want HttpOnly, SameSite=Lax, Path=/, Max-Age=600", auth.EmailSignInCookie, ck)
	}
	m := e.lastMail(t, "ada@example.com", mail.KindEmailSignIn)
	code := mailedCode(t, m, "ada@example.com", mail.KindEmailSignIn)
	if !strings.Contains(m.Text, "expire in 10 minutes") {
		t.Errorf("the mail does not say the code expires in 10 minutes:\n%s", m.Text)
	}
	linkToken(t, m, signInPage, "10 minutes")
	e.mustNoSecretInAudit(t, code)
	mustBeSignedOut(t, c)
	r = c.signInVerify("ada@example.com", code[:3]+" "+code[3:])
	mustBody(t, r, obj{"success": true})
	if ck := r.setCookie(auth.EmailSignInCookie); ck == nil || ck.MaxAge >= 0 {
		t.Errorf("%s: the %s cookie is not expired", r, auth.EmailSignInCookie)
	}
	mustBeSignedIn(t, c, "ada@example.com")
	if ev, ok := e.audit.Last(auth.EventLoginSucceeded); !ok || ev.UserID != u.ID || ev.Detail != string(auth.LoginEmailSignIn) {
		t.Errorf("login_succeeded event %+v, want user %s detail %q", ev, u.ID, auth.LoginEmailSignIn)
	}
	if got := e.byID(t, u.ID); got.EmailVerifiedAt.IsZero() {
		t.Error("store: the address is not verified after a sign-in by its mailed code")
	}
	// The cookie is gone with the code: this browser asks anew.
	mustStatus(t, c.signInVerify("ada@example.com", code), http.StatusBadRequest, errSignInOtherBrowser)
}

func (s suite) emailSignInReplay(t *testing.T) {
	e := s.signInEnv(t)
	e.seed(t, "ada@example.com")
	c := e.client()
	code, _ := e.askSignIn(t, c, "ada@example.com")
	nonce := c.cookie(auth.EmailSignInCookie).Value
	mustBody(t, c.signInVerify("ada@example.com", code), obj{"success": true})
	// The same browser state again (the cookie kept by a copy of it).
	copyOf := e.client()
	copyOf.setCookie(auth.EmailSignInCookie, nonce)
	mustStatus(t, copyOf.signInVerify("ada@example.com", code), http.StatusBadRequest, errInvalidSignInCode)
	mustBeSignedOut(t, copyOf)
}

func (s suite) emailSignInByLink(t *testing.T) {
	e := s.signInEnv(t)
	e.seed(t, "ada@example.com")
	c := e.client()
	_, tok := e.askSignIn(t, c, "ada@example.com")
	copyOf := e.client()
	copyOf.setCookie(auth.EmailSignInCookie, c.cookie(auth.EmailSignInCookie).Value)
	mustSignInLinkPostOnly(t, c, tok)
	r := c.post(signInLinkPath+url.PathEscape(tok), obj{"remember": true})
	mustBody(t, r, obj{"success": true})
	mustBeSignedIn(t, c, "ada@example.com")
	if ck := r.setCookie(sessionCookie); ck == nil || ck.MaxAge < int((29*24*time.Hour).Seconds()) {
		t.Errorf("%s: session cookie %+v, want a 30-day one (remember)", r, ck)
	}
	// The link works once, also in a copy of the browser; a tampered one
	// never.
	mustStatus(t, copyOf.post(signInLinkPath+url.PathEscape(tok), nil), http.StatusBadRequest, errInvalidSignInCode)
	mustBeSignedOut(t, copyOf)
	mustStatus(t, e.client().post(signInLinkPath+"not-a-token", nil), http.StatusBadRequest, errSignInLinkInvalid)
}

func (s suite) emailSignInBoundToBrowser(t *testing.T) {
	e := s.signInEnv(t)
	e.seed(t, "ada@example.com")
	asker := e.client()
	code, tok := e.askSignIn(t, asker, "ada@example.com")
	elsewhere := e.client()
	mustStatus(t, elsewhere.signInVerify("ada@example.com", code), http.StatusBadRequest, errSignInOtherBrowser)
	mustStatus(t, elsewhere.post(signInLinkPath+url.PathEscape(tok), nil), http.StatusBadRequest, errSignInOtherBrowser)
	// Another browser's own request does not make the first one's code its.
	mustMessage(t, elsewhere.post(signInPath, obj{"email": "someone@example.com"}), msgEmailSignInSent)
	mustStatus(t, elsewhere.signInVerify("ada@example.com", code), http.StatusBadRequest, errInvalidSignInCode)
	mustBeSignedOut(t, elsewhere)
	mustBody(t, asker.signInVerify("ada@example.com", code), obj{"success": true})
}

func (s suite) emailSignInAnyBrowser(t *testing.T) {
	e := s.signInEnv(t, anyBrowser)
	e.seed(t, "ada@example.com")
	asker := e.client()
	r := asker.post(signInPath, obj{"email": "ada@example.com"})
	mustMessage(t, r, msgEmailSignInSent)
	if ck := r.setCookie(auth.EmailSignInCookie); ck != nil {
		t.Errorf("%s: sets %s with AnyBrowser", r, auth.EmailSignInCookie)
	}
	_, tok := e.askSignIn(t, asker, "ada@example.com")
	phone := e.client()
	mustBody(t, phone.post(signInLinkPath+url.PathEscape(tok), nil), obj{"success": true})
	mustBeSignedIn(t, phone, "ada@example.com")
}

func (s suite) emailSignInNewRequestReplaces(t *testing.T) {
	e := s.signInEnv(t)
	e.seed(t, "ada@example.com")
	c := e.client()
	first, _ := e.askSignIn(t, c, "ada@example.com")
	second, _ := e.askSignIn(t, c, "ada@example.com")
	if first != second {
		mustStatus(t, c.signInVerify("ada@example.com", first), http.StatusBadRequest, errInvalidSignInCode)
	}
	mustBody(t, c.signInVerify("ada@example.com", second), obj{"success": true})
}

func (s suite) emailSignInExpires(t *testing.T) {
	e := s.signInEnv(t)
	e.seed(t, "ada@example.com")
	c := e.client()
	code, tok := e.askSignIn(t, c, "ada@example.com")
	e.clock.Advance(10*time.Minute + time.Second)
	mustStatus(t, c.signInVerify("ada@example.com", code), http.StatusBadRequest, errEmailCodeExpired)
	mustStatus(t, c.post(signInLinkPath+url.PathEscape(tok), nil), http.StatusBadRequest, errSignInLinkInvalid)
	mustBeSignedOut(t, c)
}

func (s suite) emailSignInGuessingLimited(t *testing.T) {
	e := s.signInEnv(t)
	e.skipRealTime()
	e.seed(t, "ada@example.com")
	c := e.client()
	begin := e.clock.Now()
	code, _ := e.askSignIn(t, c, "ada@example.com")
	for range 5 {
		mustStatus(t, c.signInVerify("ada@example.com", otherCode(code)), http.StatusBadRequest, errInvalidSignInCode)
	}
	// The sixth try is refused before the code is looked at, even the
	// right one, from this browser or any other address.
	e.mustLimited(t, c.signInVerify("ada@example.com", code), msgTooManyLogins, begin.Add(15*time.Minute))
	mustBeSignedOut(t, c)
	failed := string(auth.LoginEmailSignIn) + ": invalid_sign_in_code"
	if n := len(slices.DeleteFunc(e.audit.Details(auth.EventLoginFailed), func(d string) bool { return d != failed })); n != 5 {
		t.Errorf("%d failed email sign-ins audited, want 5", n)
	}
	// After the window a new code works.
	e.clock.Advance(15 * time.Minute)
	code, _ = e.askSignIn(t, c, "ada@example.com")
	mustBody(t, c.signInVerify("ada@example.com", code), obj{"success": true})
}

func (s suite) emailSignInRequestsLimited(t *testing.T) {
	e := s.signInEnv(t, trustAll)
	e.seed(t, "ada@example.com")
	begin := e.clock.Now()
	// Per address: 3 mails in 15 minutes, then the same answer and no mail.
	for i := range 4 {
		mustMessage(t, e.clientFrom(fmt.Sprintf("198.51.100.%d", i+1)).post(signInPath, obj{"email": "ada@example.com"}), msgEmailSignInSent)
	}
	if n := len(e.mails(t, "ada@example.com", mail.KindEmailSignIn)); n != 3 {
		t.Errorf("%d sign-in mails to one address, want 3", n)
	}
	// Per client address: 5 in 15 minutes, then 429.
	c := e.clientFrom("203.0.113.7")
	for i := range 5 {
		mustMessage(t, c.post(signInPath, obj{"email": fmt.Sprintf("u%d@example.com", i)}), msgEmailSignInSent)
	}
	e.mustLimited(t, c.post(signInPath, obj{"email": "u9@example.com"}), errTooManySignInRequest, begin.Add(15*time.Minute))
}

func (s suite) emailSignInAnswersAlike(t *testing.T) {
	e := s.signInEnv(t, trustAll, noSignUp)
	e.seed(t, "ada@example.com")
	e.seed(t, "limited@example.com")
	for i := range 3 {
		e.clientFrom(fmt.Sprintf("198.51.100.%d", i+1)).post(signInPath, obj{"email": "limited@example.com"})
	}
	known := e.clientFrom("203.0.113.1").post(signInPath, obj{"email": "ada@example.com"})
	for i, addr := range []string{"nobody@example.com", "limited@example.com"} {
		r := e.clientFrom(fmt.Sprintf("203.0.113.%d", i+2)).post(signInPath, obj{"email": addr})
		mustSameSignInReply(t, e, r, known)
	}
	if n := len(e.mails(t, "nobody@example.com", mail.KindEmailSignIn)); n != 0 {
		t.Errorf("%d sign-in mails to an unknown address without sign-up, want none", n)
	}
	if n := len(e.mails(t, "limited@example.com", mail.KindEmailSignIn)); n != 3 {
		t.Errorf("%d sign-in mails to the over-limit address, want 3", n)
	}
	// Verifying for an unknown address answers as a wrong code does.
	c := e.clientFrom("203.0.113.9")
	mustMessage(t, c.post(signInPath, obj{"email": "nobody@example.com"}), msgEmailSignInSent)
	mustStatus(t, c.signInVerify("nobody@example.com", "123456"), http.StatusBadRequest, errInvalidSignInCode)
	e.noUser(t, "nobody@example.com")
}

// mustSameSignInReply checks that two answers to sign-in requests cannot
// be told apart: status, body, headers but Date and the random cookie's
// value, and the cookie's attributes.
func mustSameSignInReply(t *testing.T, e *env, got, want *reply) {
	t.Helper()
	if got.Status != want.Status || got.Body != want.Body {
		t.Errorf("%s differs from %s", got, want)
	}
	g, w := got.setCookie(auth.EmailSignInCookie), want.setCookie(auth.EmailSignInCookie)
	if g == nil || w == nil || g.MaxAge != w.MaxAge || g.HttpOnly != w.HttpOnly || g.SameSite != w.SameSite || len(g.Value) != len(w.Value) || g.Value == w.Value {
		t.Errorf("%s: %s cookie %+v, want one like %+v with its own value", got, auth.EmailSignInCookie, g, w)
	}
	gh, wh := got.Header.Clone(), want.Header.Clone()
	for _, h := range []string{"Date", "Set-Cookie", "X-RateLimit-Reset"} {
		if h != "X-RateLimit-Reset" || e.h.RealTimeLimits {
			gh.Del(h)
			wh.Del(h)
		}
	}
	if fmt.Sprint(gh) != fmt.Sprint(wh) {
		t.Errorf("%s: headers %v differ from %v", got, gh, wh)
	}
}

func (s suite) emailSignInSignsUp(t *testing.T) {
	e := s.signInEnv(t)
	c := e.client()
	code, _ := e.askSignIn(t, c, "new@example.com")
	e.noUser(t, "new@example.com") // made when the code is verified, not when mailed
	r := c.signInVerify("new@example.com", code)
	mustBody(t, r, obj{"success": true})
	mustBeSignedIn(t, c, "new@example.com")
	u := e.user(t, "new@example.com")
	switch {
	case u.PasswordHash != "":
		t.Error("store: the account made by email has a password")
	case u.EmailVerifiedAt.IsZero():
		t.Error("store: the account made by email is not verified")
	}
	if ev, ok := e.audit.Last(auth.EventRegistered); !ok || ev.UserID != u.ID {
		t.Errorf("registered event %+v, want user %s", ev, u.ID)
	}
	// It has no password: a password login fails like any other.
	mustStatus(t, e.client().login("new@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
}

func (s suite) emailSignInNoSignUpWithoutRegistration(t *testing.T) {
	e := s.signInEnv(t, func(c *auth.Config) { c.Disable = append(c.Disable, auth.FeatureRegistration) })
	c := e.client()
	mustMessage(t, c.post(signInPath, obj{"email": "new@example.com"}), msgEmailSignInSent)
	if n := len(e.mails(t, "new@example.com", mail.KindEmailSignIn)); n != 0 {
		t.Errorf("%d sign-in mails to an unknown address with registration off, want none", n)
	}
	e.noUser(t, "new@example.com")
}

func (s suite) emailSignInBeforeRegisterVetoes(t *testing.T) {
	veto := &auth.Error{Status: http.StatusForbidden, Code: "invitation_required", Message: "An invitation is required"}
	e := s.signInEnv(t, func(c *auth.Config) {
		c.Hooks.BeforeRegister = func(context.Context, *auth.Registration) error { return veto }
	})
	c := e.client()
	code, _ := e.askSignIn(t, c, "new@example.com")
	mustAppError(t, c.signInVerify("new@example.com", code), http.StatusForbidden, "invitation_required", "An invitation is required")
	e.noUser(t, "new@example.com")
	mustBeSignedOut(t, c)
}

func (s suite) emailSignInTwoFactor(t *testing.T) {
	e := s.signInEnv(t, relaxed)
	c, _, secret := e.signedOutTwoFactor(t)
	e.verifyEmailFromMail(t, c, "ada@example.com") // an unverified account's 2FA would be claimed away
	code, _ := e.askSignIn(t, c, "ada@example.com")
	r := c.signInVerify("ada@example.com", code)
	mustBody(t, r, obj{"requiresTwoFactor": true})
	e.finishSecondStep(t, c, r, secret)
}

func (s suite) raceEmailSignIn(t *testing.T) {
	e := s.signInEnv(t, relaxed, fast)
	u := e.seed(t, "ada@example.com")
	asker := e.client()
	code, _ := e.askSignIn(t, asker, "ada@example.com")
	nonce := asker.cookie(auth.EmailSignInCookie).Value
	bs := e.cookieCopies(stormSize, auth.EmailSignInCookie, nonce)
	rs := storm(t, stormSize, func(i int) (*reply, error) {
		return bs[i].send(signInVerifyPath, obj{"email": "ada@example.com", "code": code})
	})
	winner := -1
	for i, r := range rs {
		switch {
		case r.Status == http.StatusOK && winner < 0:
			winner = i
			mustBody(t, r, obj{"success": true})
		case r.Status == http.StatusOK:
			t.Errorf("%s: request %d won too (request %d won first)", r, i, winner)
		case r.str("error") == errCodeUsed:
			mustStatus(t, r, http.StatusBadRequest, errCodeUsed)
		default:
			mustStatus(t, r, http.StatusBadRequest, errInvalidSignInCode)
		}
	}
	if winner < 0 {
		t.Fatal("no request won")
	}
	mustOneSession(t, bs, winner, "ada@example.com")
	if n := e.audit.Count(auth.EventLoginSucceeded, u.ID); n != 1 {
		t.Errorf("%d login_succeeded events, want 1", n)
	}
}

// emailSignInClaimsUnverified: whoever registered an address they do not
// own (a password, TOTP) loses it all when the owner proves the mailbox
// by signing in by email (SECURITY.md deviation 23): the password no
// longer signs in, 2FA is off, the squatter's session ended.
func (s suite) emailSignInClaimsUnverified(t *testing.T) {
	e := s.signInEnv(t, relaxed)
	squatter, u, _, _ := e.twoFactorUser(t) // signed up, unverified, 2FA on, signed in
	owner := e.client()
	code, _ := e.askSignIn(t, owner, "ada@example.com")
	mustBody(t, owner.signInVerify("ada@example.com", code), obj{"success": true})
	mustBeSignedIn(t, owner, "ada@example.com")
	mustBeSignedOut(t, squatter)
	stored := e.byID(t, u.ID)
	if stored.PasswordHash != "" || stored.TwoFactorEnabled || !stored.EmailVerified() {
		t.Errorf("store after the claim: password %v, 2FA %v, verified %v; want no password, 2FA off, verified",
			stored.PasswordHash != "", stored.TwoFactorEnabled, stored.EmailVerified())
	}
	mustStatus(t, e.client().login("ada@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
	if n := e.audit.Count(auth.EventUnverifiedSetupRevoked, u.ID); n != 1 {
		t.Errorf("%d unverified_setup_revoked events, want 1", n)
	}
}
