package authtest

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clientip"
	"github.com/authkit-go/authkit/core/mail"
)

// trustAll believes X-Forwarded-For from any peer (TRUST_PROXY=true), so
// each simulated browser can have its own address.
func trustAll(c *auth.Config) { c.Proxies = clientip.TrustAll() }

// mustRemaining checks X-RateLimit-Remaining and X-RateLimit-Reset on an
// allowed reply.
func (e *env) mustRemaining(t *testing.T, r *reply, remaining int, resetAt time.Time) {
	t.Helper()
	if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(remaining) {
		t.Errorf("%s: X-RateLimit-Remaining %q, want %d", r, got, remaining)
	}
	reset, err := time.Parse(time.RFC3339Nano, r.Header.Get("X-RateLimit-Reset"))
	if err != nil {
		t.Errorf("%s: X-RateLimit-Reset %q is not ISO 8601", r, r.Header.Get("X-RateLimit-Reset"))
	} else if !e.h.RealTimeLimits && !reset.Equal(resetAt.Truncate(time.Millisecond)) {
		t.Errorf("%s: X-RateLimit-Reset %s, want %s", r, reset.Format(time.RFC3339Nano), resetAt.Format(time.RFC3339Nano))
	}
	if v := r.Header.Get("Retry-After"); v != "" {
		t.Errorf("%s: Retry-After %q on an allowed reply", r, v)
	}
}

// waitOut moves the clock as a client told Retry-After would wait.
func (e *env) waitOut(t *testing.T, r *reply) {
	t.Helper()
	e.clock.Advance(retryAfter(t, r))
}

func (s suite) limitLoginIP(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	c := e.client()
	begin := e.clock.Now()
	for i := range 10 {
		mustStatus(t, c.login(fmt.Sprintf("user%d@example.com", i), goodPassword), http.StatusUnauthorized, errInvalidCredentials)
		e.clock.Advance(time.Second)
	}
	r := c.login("ada@example.com", goodPassword)
	e.mustLimited(t, r, msgTooManyLogins, begin.Add(15*time.Minute))
	if r.setCookie(sessionCookie) != nil {
		t.Errorf("%s: a refused login sets a session cookie", r)
	}
	mustBeSignedOut(t, c)
	e.skipRealTime()
	e.waitOut(t, r)
	mustLogin(t, c, "ada@example.com", goodPassword)
}

func (s suite) limitLoginEmail(t *testing.T) {
	e := s.env(t, trustAll)
	e.seed(t, "ada@example.com")
	e.seed(t, "bob@example.com")
	begin := e.clock.Now()
	for i := range 5 {
		c := e.clientFrom(fmt.Sprintf("203.0.113.%d", i+1))
		mustStatus(t, c.login("Ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
	c := e.clientFrom("203.0.113.99")
	r := c.login("ada@example.com", goodPassword)
	e.mustLimited(t, r, msgTooManyLogins, begin.Add(15*time.Minute))
	mustBeSignedOut(t, c)
	// The same address may still log in to another account.
	mustLogin(t, c, "bob@example.com", goodPassword)
	e.skipRealTime()
	e.waitOut(t, r)
	mustLogin(t, e.clientFrom("203.0.113.100"), "ada@example.com", goodPassword)
}

func (s suite) limitLoginSuccessRefunds(t *testing.T) {
	// SECURITY.md deviation 4.
	e := s.env(t, trustAll)
	e.seed(t, "ada@example.com")
	attacker := e.clientFrom("198.51.100.1")
	for range 4 {
		mustStatus(t, attacker.login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
	mustLogin(t, attacker, "ada@example.com", goodPassword) // address count 5, refunded to 4
	// The email key starts afresh: 5 more failures from elsewhere pass.
	for i := range 5 {
		c := e.clientFrom(fmt.Sprintf("203.0.113.%d", i+1))
		mustStatus(t, c.login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
	// The address key kept its 4 failures: 6 more attempts, then 429.
	for i := range 6 {
		mustStatus(t, attacker.login(fmt.Sprintf("other%d@example.com", i), wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
	r := attacker.login("bob@example.com", wrongPassword)
	e.mustLimited(t, r, msgTooManyLogins, start.Add(15*time.Minute))
}

func (s suite) limitCorrectPasswordsFree(t *testing.T) {
	// An office behind one address: any number of correct logins.
	e := s.env(t)
	e.seed(t, "ada@example.com")
	e.seed(t, "bob@example.com")
	begin := e.clock.Now()
	for i := range 15 {
		c := e.client()
		r := c.login([]string{"ada@example.com", "bob@example.com"}[i%2], goodPassword)
		mustBody(t, r, obj{"success": true})
		if r.setCookie(sessionCookie) == nil {
			t.Fatalf("%s: correct login %d sets no session cookie", r, i+1)
		}
	}
	// Failures still count in full: 10 wrong, then a correct one is 429.
	c := e.client()
	for i := range 10 {
		mustStatus(t, c.login(fmt.Sprintf("user%d@example.com", i), wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
	r := c.login("ada@example.com", goodPassword)
	e.mustLimited(t, r, msgTooManyLogins, begin.Add(15*time.Minute))
	mustBeSignedOut(t, c)
}

func (s suite) limit2FAPasswordStepRefunded(t *testing.T) {
	e := s.env(t)
	e.twoFactorUser(t)
	begin := e.clock.Now()
	for range 12 {
		pendingLogin(t, e.client(), "ada@example.com")
	}
	c := e.client()
	for i := range 10 {
		mustStatus(t, c.login(fmt.Sprintf("user%d@example.com", i), wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
	e.mustLimited(t, c.login("ada@example.com", goodPassword), msgTooManyLogins, begin.Add(15*time.Minute))
}

func (s suite) limitOwnLoginsBuyNoGuesses(t *testing.T) {
	// Each success gives back its own attempt only: 10 guesses, with a
	// login to the attacker's own account after each, and the 11th
	// guess is 429, as without the logins.
	e := s.env(t)
	e.seed(t, "mallory@example.com")
	begin := e.clock.Now()
	c := e.client()
	for i := range 10 {
		mustStatus(t, c.login(fmt.Sprintf("victim%d@example.com", i), wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
		if i < 9 {
			mustLogin(t, c, "mallory@example.com", goodPassword)
		}
	}
	e.mustLimited(t, c.login("victim10@example.com", wrongPassword), msgTooManyLogins, begin.Add(15*time.Minute))
	e.mustLimited(t, c.login("mallory@example.com", goodPassword), msgTooManyLogins, begin.Add(15*time.Minute))
}

func (s suite) limitRegister(t *testing.T) {
	e := s.env(t)
	c := e.client()
	begin := e.clock.Now()
	for i := range 3 {
		r := c.post("/api/auth/register", obj{"email": fmt.Sprintf("user%d@example.com", i), "password": goodPassword, "name": "U"})
		mustMessage(t, r, msgRegistered)
		e.mustRemaining(t, r, 2-i, begin.Add(time.Hour))
	}
	e.clock.Advance(1500 * time.Millisecond) // Retry-After rounds up
	r := c.post("/api/auth/register", obj{"email": "late@example.com", "password": goodPassword, "name": "Late"})
	e.mustLimited(t, r, msgTooManyRegister, begin.Add(time.Hour))
	e.noUser(t, "late@example.com")
	if n := e.mailCount(t); n != 3 {
		t.Errorf("%d mails, want 3", n)
	}
	e.skipRealTime()
	e.waitOut(t, r)
	mustMessage(t, c.post("/api/auth/register", obj{"email": "late@example.com", "password": goodPassword, "name": "Late"}), msgRegistered)
}

func (s suite) limitForgotIP(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	c := e.client()
	begin := e.clock.Now()
	for i := range 5 {
		r := c.post("/api/auth/forgot-password", obj{"email": fmt.Sprintf("user%d@example.com", i)})
		mustMessage(t, r, msgForgotSent)
		e.mustRemaining(t, r, 4-i, begin.Add(15*time.Minute))
	}
	r := c.post("/api/auth/forgot-password", obj{"email": "ada@example.com"})
	e.mustLimited(t, r, msgTooManyResets, begin.Add(15*time.Minute))
	if n := e.mailCount(t); n != 0 {
		t.Errorf("%d mails, want none", n)
	}
	e.skipRealTime()
	e.waitOut(t, r)
	mustMessage(t, c.post("/api/auth/forgot-password", obj{"email": "ada@example.com"}), msgForgotSent)
	e.lastMail(t, "ada@example.com", mail.KindResetPassword)
}

func (s suite) limitForgotEmail(t *testing.T) {
	e := s.env(t, trustAll)
	e.seed(t, "ada@example.com")
	for i := range 4 {
		c := e.clientFrom(fmt.Sprintf("203.0.113.%d", i+1))
		r := c.post("/api/auth/forgot-password", obj{"email": "ADA@example.com"})
		mustMessage(t, r, msgForgotSent)
	}
	if n := len(e.mails(t, "ada@example.com", mail.KindResetPassword)); n != 3 {
		t.Errorf("%d reset mails, want 3 (the 4th request is over the email limit)", n)
	}
	e.skipRealTime()
	e.clock.Advance(15 * time.Minute)
	mustMessage(t, e.clientFrom("203.0.113.50").post("/api/auth/forgot-password", obj{"email": "ada@example.com"}), msgForgotSent)
	if n := len(e.mails(t, "ada@example.com", mail.KindResetPassword)); n != 4 {
		t.Errorf("%d reset mails after the window, want 4", n)
	}
}

func (s suite) limitResend(t *testing.T) {
	e := s.env(t)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	begin := e.clock.Now()
	for i := range 3 {
		r := c.post("/api/auth/resend-verification", nil)
		mustMessage(t, r, msgVerificationSent)
		e.mustRemaining(t, r, 2-i, begin.Add(15*time.Minute))
	}
	r := c.post("/api/auth/resend-verification", nil)
	e.mustLimited(t, r, msgTooManyResends, begin.Add(15*time.Minute))
	// Per user, not per browser.
	other := e.loggedIn(t, "ada@example.com")
	e.mustLimited(t, other.post("/api/auth/resend-verification", nil), msgTooManyResends, begin.Add(15*time.Minute))
	if n := len(e.mails(t, "ada@example.com", mail.KindVerifyEmail)); n != 4 {
		t.Errorf("%d verification mails, want 4 (registration and 3 resends)", n)
	}
	e.skipRealTime()
	e.waitOut(t, r)
	mustMessage(t, c.post("/api/auth/resend-verification", nil), msgVerificationSent)
}

func (s suite) limitTwoFactor(t *testing.T) {
	e := s.env(t)
	_, _, secret, codes := e.twoFactorUser(t)
	e.nextStep()
	b := e.pending(t)
	begin := e.clock.Now()
	for range 5 {
		r := b.verify(e.wrongCode(t, secret))
		mustStatus(t, r, http.StatusBadRequest, errInvalid2FACode)
	}
	r := b.verify(e.now(t, secret))
	e.mustLimited(t, r, msgTooMany2FA, begin.Add(5*time.Minute))
	mustKeepPending(t, b, r)
	mustBeSignedOut(t, b)
	// Per user: another browser of the same user is limited too, on
	// both routes.
	x := e.pending(t)
	e.mustLimited(t, x.verify(e.now(t, secret)), msgTooMany2FA, begin.Add(5*time.Minute))
	e.mustLimited(t, x.recover(codes[0]), msgTooMany2FA, begin.Add(5*time.Minute))
	e.skipRealTime()
	e.waitOut(t, r) // the pending cookies have expired with the window
	pendingLogin(t, x, "ada@example.com")
	mustBody(t, x.verify(e.now(t, secret)), obj{"success": true})
}

func (s suite) limitPasswordReentry(t *testing.T) {
	e := s.env(t)
	c, u, secret, _ := e.twoFactorUser(t)
	begin := e.clock.Now()
	for range 5 {
		mustStatus(t, c.post("/api/2fa/disable", obj{"password": wrongPassword}), http.StatusUnauthorized, errInvalidPassword)
	}
	r := c.post("/api/2fa/disable", obj{"password": goodPassword})
	e.mustLimited(t, r, msgTooManyPasswords, begin.Add(15*time.Minute))
	if !e.byID(t, u.ID).TwoFactorEnabled {
		t.Errorf("store: a limited request disabled 2FA")
	}
	e.skipRealTime()
	e.waitOut(t, r)
	// The session grew stale while waiting: disabling 2FA needs a full
	// re-authentication first.
	mustMessage(t, c.post("/api/auth/confirm-password", obj{"password": goodPassword, "code": e.now(t, secret)}), msgPasswordConfirmed)
	mustMessage(t, c.post("/api/2fa/disable", obj{"password": goodPassword}), msg2FADisabled)
}
