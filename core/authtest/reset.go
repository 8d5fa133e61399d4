package authtest

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

func resetPath(tok string) string { return "/api/auth/reset-password/" + url.PathEscape(tok) }

// resetBody is a reset request with both fields equal to pw.
func resetBody(pw string) obj { return obj{"password": pw, "confirmPassword": pw} }

// sameUser reports whether two records are equal, times compared as
// instants and an empty code list equal to none.
func sameUser(a, b *user.User) bool {
	x, y := *a, *b
	for _, p := range [][2]*time.Time{
		{&x.EmailVerifiedAt, &y.EmailVerifiedAt}, {&x.EmailChangedAt, &y.EmailChangedAt},
		{&x.PasswordChangedAt, &y.PasswordChangedAt}, {&x.LockedUntil, &y.LockedUntil}, {&x.CreatedAt, &y.CreatedAt},
	} {
		if !p[0].Equal(*p[1]) {
			return false
		}
		*p[0], *p[1] = time.Time{}, time.Time{}
	}
	if !slices.Equal(x.RecoveryCodeHashes, y.RecoveryCodeHashes) {
		return false
	}
	x.RecoveryCodeHashes, y.RecoveryCodeHashes = nil, nil
	return reflect.DeepEqual(x, y)
}

func (s suite) forgotUnknownEmail(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	mustMessage(t, e.client().post("/api/auth/forgot-password", obj{"email": "nobody@example.com"}), msgForgotSent)
	if n := e.mailCount(t); n != 0 {
		t.Errorf("%d mails for an unknown address, want none", n)
	}
}

func (s suite) forgotMailsResetLink(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	mustMessage(t, e.client().post("/api/auth/forgot-password", obj{"email": "Ada@Example.com"}), msgForgotSent)
	e.mustOnlyLinkMail(t, "ada@example.com", mail.KindResetPassword, "/reset-password/", "1 hour")
}

func (s suite) resetPasswordsDiffer(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	tok := e.resetToken(t, "ada@example.com")
	mustStatus(t, e.client().post(resetPath(tok), obj{"password": newPassword, "confirmPassword": newPassword + "!"}),
		http.StatusBadRequest, errPasswordsDiffer)
	e.mustUnchanged(t, u)
	// The link still works.
	mustMessage(t, e.client().post(resetPath(tok), resetBody(newPassword)), msgPasswordReset)
}

func (s suite) resetLinkInvalid(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	tok := e.resetToken(t, "ada@example.com")
	for _, bad := range []string{"garbage", tamper(tok), tok + "x", tok[:len(tok)-1]} {
		mustStatus(t, e.client().post(resetPath(bad), resetBody(newPassword)), http.StatusBadRequest, errResetInvalid)
	}
	e.mustUnchanged(t, u)
}

func (s suite) resetLinkLifetime(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	tok := e.resetToken(t, "ada@example.com")
	e.clock.Advance(time.Hour - time.Millisecond)
	mustMessage(t, e.client().post(resetPath(tok), resetBody(newPassword)), msgPasswordReset)
}

func (s suite) resetLinkExpired(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	tok := e.resetToken(t, "ada@example.com")
	e.clock.Advance(time.Hour + time.Millisecond)
	mustStatus(t, e.client().post(resetPath(tok), resetBody(newPassword)), http.StatusBadRequest, errResetInvalid)
	e.mustUnchanged(t, u)
}

func (s suite) resetReplacesPassword(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	before := e.loggedIn(t, "ada@example.com")
	remembered := e.client()
	mustBody(t, remembered.post("/api/login", obj{"email": "ada@example.com", "password": goodPassword, "remember": true}), obj{"success": true})
	tok := e.resetToken(t, "ada@example.com")
	// The clock stands still: the sessions above were issued in the
	// same second as the reset, which the spec's seconds comparison
	// alone would let live.
	mustMessage(t, e.client().post(resetPath(tok), resetBody(newPassword)), msgPasswordReset)
	got := e.byID(t, u.ID)
	if got.PasswordHash == u.PasswordHash {
		t.Errorf("store: password hash unchanged")
	}
	mustTime(t, "passwordChangedAt", got.PasswordChangedAt, e.clock.Now())
	// The spec: such a session is logged out; its cookie is expired.
	r := before.me()
	mustStatus(t, r, http.StatusUnauthorized, errNotAuthenticated)
	if ck := r.setCookie(sessionCookie); ck == nil || ck.MaxAge >= 0 {
		t.Errorf("%s: want a Set-Cookie expiring the dead session, got %v", r, ck)
	}
	mustBeSignedOut(t, before)
	mustBeSignedOut(t, remembered)
	mustStatus(t, e.client().login("ada@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
	after := e.client()
	mustLogin(t, after, "ada@example.com", newPassword)
	mustBeSignedIn(t, after, "ada@example.com")
	mustStatus(t, e.client().post(resetPath(tok), resetBody("yet another passphrase")), http.StatusBadRequest, errResetUsed)
	e.clock.Advance(time.Minute)
	mustStatus(t, e.client().post(resetPath(tok), resetBody("yet another passphrase")), http.StatusBadRequest, errResetUsed)
	mustLogin(t, e.client(), "ada@example.com", newPassword)
}

func (s suite) resetOlderLinkDies(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	first := e.resetToken(t, "ada@example.com")
	e.clock.Advance(time.Second)
	second := e.resetToken(t, "ada@example.com")
	mustMessage(t, e.client().post(resetPath(second), resetBody(newPassword)), msgPasswordReset)
	mustStatus(t, e.client().post(resetPath(first), resetBody("yet another passphrase")), http.StatusBadRequest, errResetUsed)
	mustLogin(t, e.client(), "ada@example.com", newPassword)
}

func (s suite) resetLinkDeletedUser(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	tok := e.resetToken(t, "ada@example.com")
	if err := e.users.Delete(e.ctx(), u.ID); err != nil {
		t.Fatalf("store: Delete: %v", err)
	}
	mustStatus(t, e.client().post(resetPath(tok), resetBody(newPassword)), http.StatusBadRequest, errResetInvalid)
}

func (s suite) resetByFormPost(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	tok := e.resetToken(t, "ada@example.com")
	r := e.client().postForm(resetPath(tok), url.Values{"password": {newPassword}, "confirmPassword": {newPassword}})
	mustMessage(t, r, msgPasswordReset)
	if e.byID(t, u.ID).PasswordHash == u.PasswordHash {
		t.Errorf("store: password hash unchanged")
	}
	mustLogin(t, e.client(), "ada@example.com", newPassword)
	e.lastMail(t, "ada@example.com", mail.KindPasswordResetDone)
}

func (s suite) resetPolicyRefuses(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	tok := e.resetToken(t, "ada@example.com")
	mustStatus(t, e.client().post(resetPath(tok), resetBody("short")), http.StatusBadRequest, msgPasswordTooShort)
	e.mustUnchanged(t, u)
	mustMessage(t, e.client().post(resetPath(tok), resetBody(newPassword)), msgPasswordReset)
}

func (s suite) resetLeaves2FA(t *testing.T) {
	e := s.env(t)
	_, u, secret, _ := e.twoFactorUser(t)
	tok := e.resetToken(t, "ada@example.com")
	mustMessage(t, e.client().post(resetPath(tok), resetBody(newPassword)), msgPasswordReset)
	if got := e.byID(t, u.ID); !got.TwoFactorEnabled || got.TOTPSecret == "" || len(got.RecoveryCodeHashes) != 8 {
		t.Errorf("store: the reset changed the 2FA state: %+v", got)
	}
	c := e.client()
	mustBody(t, c.login("ada@example.com", newPassword), obj{"requiresTwoFactor": true})
	mustBeSignedOut(t, c)
	e.nextStep()
	mustBody(t, c.verify(e.now(t, secret)), obj{"success": true})
}

func (s suite) forgotAnswersAlike(t *testing.T) {
	// Forgot-password never reveals whether an email exists (docs/api.md).
	// Each request comes from a fresh address, so the address limit's
	// headers are the same for all.
	e := s.env(t, trustAll)
	e.seed(t, "ada@example.com")
	for i := range 3 {
		e.clientFrom(fmt.Sprintf("198.51.100.%d", i+1)).post("/api/auth/forgot-password", obj{"email": "limited@example.com"})
	}
	e.seed(t, "limited@example.com")
	known := e.clientFrom("203.0.113.1").post("/api/auth/forgot-password", obj{"email": "ada@example.com"})
	for i, email := range []string{"nobody@example.com", "limited@example.com"} {
		r := e.clientFrom(fmt.Sprintf("203.0.113.%d", i+2)).post("/api/auth/forgot-password", obj{"email": email})
		e.mustSameReply(t, r, known)
	}
	if n := len(e.mails(t, "limited@example.com", mail.KindResetPassword)); n != 0 {
		t.Errorf("%d reset mails to the over-limit address, want none", n)
	}
}

// mustSameReply checks that two replies cannot be told apart: status,
// body, cookies and headers (but Date, and the window end of a limit
// store on its own clock).
func (e *env) mustSameReply(t *testing.T, got, want *reply) {
	t.Helper()
	if got.Status != want.Status || got.Body != want.Body {
		t.Errorf("%s differs from %s", got, want)
	}
	g, w := got.Header.Clone(), want.Header.Clone()
	for _, h := range []string{"Date", "X-RateLimit-Reset"} {
		if h == "Date" || e.h.RealTimeLimits {
			g.Del(h)
			w.Del(h)
		}
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: headers %v differ from %v (%s)", got, g, w, want)
	}
}

func (s suite) sessionsInResetSecond(t *testing.T) {
	// start is 26.535897932 s past the minute: the reset at .635 and
	// the logins at .535 and .935 share its second, which the spec's
	// seconds comparison cannot tell apart; the session version can.
	e := s.env(t, relaxed, fast, noIdle)
	u := e.seedFast(t, "ada@example.com")
	tok := e.resetToken(t, "ada@example.com")
	before := e.loggedIn(t, "ada@example.com")
	e.clock.Advance(100 * time.Millisecond)
	mustMessage(t, e.client().post(resetPath(tok), resetBody(newPassword)), msgPasswordReset)
	resetAt := e.clock.Now()
	mustTime(t, "passwordChangedAt", e.byID(t, u.ID).PasswordChangedAt, resetAt)
	at := e.client()
	mustLogin(t, at, "ada@example.com", newPassword)
	e.clock.Advance(300 * time.Millisecond)
	if e.clock.Now().Truncate(time.Second) != resetAt.Truncate(time.Second) {
		t.Fatalf("the clock left the reset's second")
	}
	after := e.client()
	mustBody(t, after.post("/api/login", obj{"email": "ada@example.com", "password": newPassword, "remember": true}), obj{"success": true})
	mustBeSignedOut(t, before)
	for _, c := range []*client{at, after} {
		mustBeSignedIn(t, c, "ada@example.com")
	}
	e.clock.Advance(time.Hour)
	mustBeSignedIn(t, at, "ada@example.com")
	mustBeSignedIn(t, after, "ada@example.com")
	mustBeSignedOut(t, before)
}
