package authtest

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// Email codes (auth.Config.EmailCode, off by default): at the second step
// of a login, POST /api/2fa/email-code mails a 6-digit code to the
// account's verified address, and POST /api/2fa/email-code/verify takes it
// like /api/2fa/verify takes a TOTP code: single use, bound to the pending
// login it was mailed for, expiring, limited.

// Texts of the email-code routes.
const (
	msgEmailCodeSent       = "Code sent. Check your email."
	errEmailCodeUnverified = "A code can only be sent to a verified email address. Use another method."
	errEmailCodeExpired    = "Code expired. Request a new one."
	msgTooManyEmailCodes   = "Too many codes requested. Try again later."
)

// The email-code routes.
const (
	emailCodePath       = "/api/2fa/email-code"
	emailCodeVerifyPath = "/api/2fa/email-code/verify"
)

// emailCodeIn finds the code in a mail's text.
var emailCodeIn = regexp.MustCompile(`(?m)^Your code: ([0-9]{6})$`)

// codeEnv is env with email codes on; it skips the test when the
// harness's user store does not implement user.EmailCodes.
func (s suite) codeEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	return s.storedCodesEnv(t, emailCodesWhereStored, opts...)
}

// storedCodesEnv is env with on (a feature whose codes the user store
// keeps) applied first; it skips the test when the harness's user store
// does not implement user.EmailCodes (auth.New would refuse the feature).
func (s suite) storedCodesEnv(t *testing.T, on option, opts ...option) *env {
	t.Helper()
	e := s.env(t, append([]option{on}, opts...)...)
	if _, ok := e.users.(user.EmailCodes); !ok {
		t.Skipf("authtest: the user store (%T) does not implement user.EmailCodes", e.users)
	}
	return e
}

// whereCodesStored returns an option that applies on only when the
// harness's user store implements user.EmailCodes, so that the tests of
// every route (405s, Cache-Control, the hostile corpus) reach the routes
// of the features that keep codes there too.
func whereCodesStored(on option) option {
	return func(c *auth.Config) {
		if _, ok := c.Users.(user.EmailCodes); ok {
			on(c)
		}
	}
}

// emailCodesWhereStored switches email codes on where the store can hold
// them.
var emailCodesWhereStored = whereCodesStored(func(c *auth.Config) { c.EmailCode.Enabled = true })

// codeUser signs ada@example.com up, verifies her address and turns 2FA
// on. It returns her record and TOTP secret.
func (e *env) codeUser(t *testing.T) (*user.User, string) {
	t.Helper()
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	e.verifyEmailFromMail(t, c, "ada@example.com")
	secret, _ := e.enable2FA(t, c)
	return u, secret
}

// storedCode returns the user's stored email code, and whether there is
// one.
func (e *env) storedCode(t *testing.T, id string) (user.EmailCode, bool) {
	t.Helper()
	c, err := e.users.(user.EmailCodes).EmailCode(e.ctx(), id)
	if errors.Is(err, user.ErrNotFound) {
		return user.EmailCode{}, false
	}
	if err != nil {
		t.Fatalf("store: EmailCode(%q): %v", id, err)
	}
	return c, true
}

// sendCode asks for a code on c and returns the code of the mail it sent
// to addr: exactly one more, to addr alone.
func (e *env) sendCode(t *testing.T, c *client, addr string) string {
	t.Helper()
	before := len(e.mails(t, addr, mail.KindTwoFactorEmailCode))
	mustMessage(t, c.post(emailCodePath, nil), msgEmailCodeSent)
	ms := e.mails(t, addr, mail.KindTwoFactorEmailCode)
	if len(ms) != before+1 {
		t.Fatalf("%d email-code mails to %s, want %d", len(ms), addr, before+1)
	}
	return mailedCode(t, ms[len(ms)-1], addr, mail.KindTwoFactorEmailCode)
}

// mailedCode checks an email-code mail and returns its code: to addr, the
// code in the text and the HTML, never in the subject.
func mailedCode(t *testing.T, m mail.Message, addr string, kind mail.Kind) string {
	t.Helper()
	if m.To != addr || m.Kind != kind {
		t.Fatalf("mail %s to %q, want %s to %q", m.Kind, m.To, kind, addr)
	}
	found := emailCodeIn.FindStringSubmatch(m.Text)
	if found == nil {
		t.Fatalf("no \"Your code: NNNNNN\" line in the mail:\n%s", m.Text)
	}
	code := found[1]
	if !strings.Contains(m.HTML, "<strong>"+code+"</strong>") {
		t.Errorf("the HTML part does not show the code %s:\n%s", code, m.HTML)
	}
	if strings.Contains(m.Subject, code) {
		t.Errorf("the subject %q shows the code", m.Subject)
	}
	return code
}

// otherCode is a well-formed code that is not code.
func otherCode(code string) string {
	last := (code[5]-'0'+1)%10 + '0'
	return code[:5] + string(last)
}

// verifyCode posts a mailed code to the verify route.
func (c *client) verifyCode(code string) *reply {
	c.t.Helper()
	return c.post(emailCodeVerifyPath, obj{"code": code})
}

// mustNoSecretInAudit checks that no audit event carries code.
func (e *env) mustNoSecretInAudit(t *testing.T, code string) {
	t.Helper()
	for _, ev := range e.audit.Events() {
		if strings.Contains(fmt.Sprint(ev), code) {
			t.Errorf("audit event %+v carries the code %s", ev, code)
		}
	}
}

func (s suite) emailCodeOffByDefault(t *testing.T) {
	e := s.env(t)
	e.codeUser(t)
	b := e.pending(t)
	for _, path := range []string{emailCodePath, emailCodeVerifyPath} {
		mustBeAbsent(t, b, http.MethodPost, path, []byte(`{"code":"123456"}`), "email codes are off")
	}
	if n := len(e.mails(t, "ada@example.com", mail.KindTwoFactorEmailCode)); n != 0 {
		t.Errorf("%d email-code mails, want none", n)
	}
	mustBeSignedOut(t, b)
}

func (s suite) emailCodeSendAndVerify(t *testing.T) {
	e := s.codeEnv(t)
	u, _ := e.codeUser(t)
	b := e.pending(t)
	sentAt := e.clock.Now()
	code := e.sendCode(t, b, "ada@example.com")
	if m := e.lastMail(t, "ada@example.com", mail.KindTwoFactorEmailCode); !strings.Contains(m.Text, "The code works once and expires in 10 minutes.") {
		t.Errorf("the mail does not say the code works once and expires in 10 minutes:\n%s", m.Text)
	}
	for _, m := range e.mail.Messages() {
		if m.Kind == mail.KindTwoFactorEmailCode && m.To != "ada@example.com" {
			t.Errorf("an email code went to %q", m.To)
		}
	}
	stored, ok := e.storedCode(t, u.ID)
	switch {
	case !ok:
		t.Fatal("store: no email code after the send")
	case bytes.Contains(stored.Hash, []byte(code)) || len(stored.Hash) < 16:
		t.Errorf("store: the code is stored as %x, want a keyed hash of at least 16 bytes", stored.Hash)
	case !stored.ExpiresAt.Equal(sentAt.Add(10 * time.Minute).Truncate(time.Millisecond)):
		t.Errorf("store: ExpiresAt %v, want %v (10 minutes)", stored.ExpiresAt, sentAt.Add(10*time.Minute))
	}
	if _, ok := e.audit.Last(auth.EventEmailCodeSent); !ok {
		t.Errorf("no %s event", auth.EventEmailCodeSent)
	}
	mustBeSignedOut(t, b)
	r := b.verifyCode(" " + code[:3] + " " + code[3:]) // spaces are dropped, as for TOTP codes
	mustBody(t, r, obj{"success": true})
	mustDeletePending(t, b, r)
	mustBeSignedIn(t, b, "ada@example.com")
	if ev, ok := e.audit.Last(auth.EventLoginSucceeded); !ok || ev.UserID != u.ID || ev.Detail != string(auth.LoginEmailCode) {
		t.Errorf("login_succeeded event %+v, want user %s detail %q", ev, u.ID, auth.LoginEmailCode)
	}
	if _, ok := e.storedCode(t, u.ID); ok {
		t.Error("store: the code is still there after it signed in")
	}
	e.mustNoSecretInAudit(t, code)
}

func (s suite) emailCodeWrongCodeSharesLimit(t *testing.T) {
	e := s.codeEnv(t)
	u, secret := e.codeUser(t)
	b := e.pending(t)
	begin := e.clock.Now()
	code := e.sendCode(t, b, "ada@example.com")
	for _, bad := range []string{otherCode(code), otherCode(otherCode(code)), "12345", "abcdef"} {
		r := b.verifyCode(bad)
		mustStatus(t, r, http.StatusBadRequest, errInvalid2FACode)
		mustKeepPending(t, b, r)
	}
	// The fifth attempt is a TOTP code: email codes and TOTP codes share
	// one limit of 5 per 5 minutes per user.
	mustStatus(t, b.verify(e.wrongCode(t, secret)), http.StatusBadRequest, errInvalid2FACode)
	r := b.verifyCode(code)
	e.mustLimited(t, r, msgTooMany2FA, begin.Add(5*time.Minute))
	mustKeepPending(t, b, r)
	mustBeSignedOut(t, b)
	if _, ok := e.storedCode(t, u.ID); !ok {
		t.Error("store: a refused attempt spent the code")
	}
	if n := e.audit.Count(auth.EventTwoFactorFailed, u.ID); n != 5 {
		t.Errorf("%d 2fa_failed events, want 5", n)
	}
}

func (s suite) emailCodeExpires(t *testing.T) {
	e := s.codeEnv(t, func(c *auth.Config) { c.EmailCode.Lifetime = time.Minute })
	u, _ := e.codeUser(t)
	b := e.pending(t)
	mustMessage(t, b.post(emailCodePath, nil), msgEmailCodeSent)
	m := e.lastMail(t, "ada@example.com", mail.KindTwoFactorEmailCode)
	if !strings.Contains(m.Text, "expires in 1 minute.") {
		t.Errorf("the mail does not say the configured lifetime:\n%s", m.Text)
	}
	code := emailCodeIn.FindStringSubmatch(m.Text)[1]
	e.clock.Advance(time.Minute)
	r := b.verifyCode(code)
	mustStatus(t, r, http.StatusBadRequest, errEmailCodeExpired)
	mustKeepPending(t, b, r)
	mustStatus(t, b.verifyCode(otherCode(code)), http.StatusBadRequest, errInvalid2FACode) // a wrong one says nothing of expiry
	if _, ok := e.storedCode(t, u.ID); !ok {
		t.Error("store: the expired code is gone; it stays until replaced")
	}
	fresh := e.sendCode(t, b, "ada@example.com")
	mustBody(t, b.verifyCode(fresh), obj{"success": true})
}

func (s suite) emailCodeOnce(t *testing.T) {
	e := s.codeEnv(t)
	e.codeUser(t)
	b := e.pending(t)
	kept := b.cookie(auth.PendingCookie).Value
	code := e.sendCode(t, b, "ada@example.com")
	mustBody(t, b.verifyCode(code), obj{"success": true})
	// A copy of the pending cookie taken before the success, with the
	// same code: the pending login is finished (and the code spent).
	x := e.client()
	x.setCookie(auth.PendingCookie, kept)
	r := x.verifyCode(code)
	mustStatus(t, r, http.StatusUnauthorized, err2FAExpired)
	mustBeSignedOut(t, x)
}

func (s suite) emailCodeBoundToLogin(t *testing.T) {
	e := s.codeEnv(t)
	e.codeUser(t)
	first := e.pending(t)
	// A pending token is its user's, issue time and flags, signed: two
	// logins of one account in the same millisecond hold the same one
	// (SECURITY.md, "Email codes").
	e.clock.Advance(time.Millisecond)
	second := e.pending(t)
	if first.cookie(auth.PendingCookie).Value == second.cookie(auth.PendingCookie).Value {
		t.Fatal("two logins a millisecond apart hold the same pending cookie")
	}
	code := e.sendCode(t, first, "ada@example.com")
	r := second.verifyCode(code)
	mustStatus(t, r, http.StatusBadRequest, errInvalid2FACode)
	mustKeepPending(t, second, r)
	mustBeSignedOut(t, second)
	// The login it was mailed for still takes it.
	mustBody(t, first.verifyCode(code), obj{"success": true})
	mustBeSignedIn(t, first, "ada@example.com")
}

func (s suite) emailCodeNewSendReplaces(t *testing.T) {
	e := s.codeEnv(t)
	e.codeUser(t)
	b := e.pending(t)
	old := e.sendCode(t, b, "ada@example.com")
	fresh := e.sendCode(t, b, "ada@example.com")
	if old != fresh { // one chance in a million that they are the same
		mustStatus(t, b.verifyCode(old), http.StatusBadRequest, errInvalid2FACode)
	}
	mustBody(t, b.verifyCode(fresh), obj{"success": true})
}

func (s suite) emailCodeSendLimited(t *testing.T) {
	e := s.codeEnv(t)
	u, secret := e.codeUser(t)
	b := e.pending(t)
	begin := e.clock.Now()
	for range 3 {
		e.sendCode(t, b, "ada@example.com")
	}
	r := b.post(emailCodePath, nil)
	e.mustLimited(t, r, msgTooManyEmailCodes, begin.Add(15*time.Minute))
	mustKeepPending(t, b, r)
	// Per user: another login of hers is limited too.
	e.mustLimited(t, e.pending(t).post(emailCodePath, nil), msgTooManyEmailCodes, begin.Add(15*time.Minute))
	if n := len(e.mails(t, "ada@example.com", mail.KindTwoFactorEmailCode)); n != 3 {
		t.Errorf("%d email-code mails, want 3", n)
	}
	if ev, ok := e.audit.Last(auth.EventRateLimited); !ok || ev.Detail != "email-code" {
		t.Errorf("rate_limited event %+v, want detail email-code", ev)
	}
	// Sending verifies nothing: it never counted against the 2FA limit.
	e.nextStep()
	mustBody(t, b.verify(e.now(t, secret)), obj{"success": true})
	if n := e.audit.Count(auth.EventEmailCodeSent, u.ID); n != 3 {
		t.Errorf("%d %s events, want 3", n, auth.EventEmailCodeSent)
	}
}

func (s suite) emailCodeNeedsVerifiedAddress(t *testing.T) {
	e := s.codeEnv(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com") // never verified
	e.enable2FA(t, c)
	b := e.pending(t)
	r := b.post(emailCodePath, nil)
	mustStatus(t, r, http.StatusForbidden, errEmailCodeUnverified)
	if r.str("code") != "email_code_needs_verified_email" {
		t.Errorf("%s: code %q, want email_code_needs_verified_email", r, r.str("code"))
	}
	mustKeepPending(t, b, r)
	if n := len(e.mails(t, "ada@example.com", mail.KindTwoFactorEmailCode)); n != 0 {
		t.Errorf("%d email-code mails to an unverified address, want none", n)
	}
	if _, ok := e.storedCode(t, u.ID); ok {
		t.Error("store: a code was stored for an unverified address")
	}
	mustStatus(t, b.verifyCode("123456"), http.StatusForbidden, errEmailCodeUnverified)
	mustBeSignedOut(t, b)
}

func (s suite) emailCodeNeedsPendingLogin(t *testing.T) {
	e := s.codeEnv(t)
	e.codeUser(t)
	for _, path := range []string{emailCodePath, emailCodeVerifyPath} {
		mustStatus(t, e.client().post(path, obj{"code": "123456"}), http.StatusUnauthorized, errNoPending2FA)
		x := e.client()
		x.setCookie(auth.PendingCookie, "not-a-token")
		mustStatus(t, x.post(path, obj{"code": "123456"}), http.StatusUnauthorized, err2FAExpired)
	}
}

func (s suite) emailCodeRemember(t *testing.T) {
	e := s.codeEnv(t)
	e.codeUser(t)
	b := e.pending(t)
	code := e.sendCode(t, b, "ada@example.com")
	r := b.post(emailCodeVerifyPath, obj{"code": code, "remember": true})
	mustBody(t, r, obj{"success": true})
	if ck := r.setCookie(sessionCookie); ck == nil || ck.MaxAge != rememberMaxAge {
		t.Errorf("%s: session cookie %v, want Max-Age %d", r, ck, rememberMaxAge)
	}
}

func (s suite) raceEmailCode(t *testing.T) {
	e := s.codeEnv(t, relaxed, fast)
	u, _ := e.codeUser(t)
	b := e.pending(t)
	code := e.sendCode(t, b, "ada@example.com")
	pending := b.cookie(auth.PendingCookie).Value
	bs := e.cookieCopies(stormSize, auth.PendingCookie, pending)
	rs := storm(t, stormSize, func(i int) (*reply, error) { return bs[i].send(emailCodeVerifyPath, obj{"code": code}) })
	// The winner holds the pending login, then finishes it.
	winner := mustSoleWinner(t, rs, obj{"success": true}, http.StatusUnauthorized, err2FAExpired)
	mustOneSession(t, bs, winner, "ada@example.com")
	if n := e.audit.Count(auth.EventLoginSucceeded, u.ID); n != 1 {
		t.Errorf("%d login_succeeded events, want 1", n)
	}
	if _, ok := e.storedCode(t, u.ID); ok {
		t.Error("store: the code is still there")
	}
}

func (s suite) emailCodeTrustsDevice(t *testing.T) {
	e := s.trustEnv(t, emailCodesWhereStored)
	if _, ok := e.users.(user.EmailCodes); !ok {
		t.Skipf("authtest: the user store (%T) does not implement user.EmailCodes", e.users)
	}
	u, _ := e.codeUser(t)
	b := e.pending(t)
	code := e.sendCode(t, b, "ada@example.com")
	r := b.post(emailCodeVerifyPath, obj{"code": code, "trustDevice": true})
	mustBody(t, r, obj{"success": true})
	mustTrustedCookie(t, r)
	if n := e.audit.Count(auth.EventDeviceTrusted, u.ID); n != 1 {
		t.Errorf("%d device_trusted events, want 1", n)
	}
	mustMessage(t, b.post("/api/auth/logout", nil), msgLoggedOut)
	mustSkipSecondStep(t, b, "ada@example.com")
}
