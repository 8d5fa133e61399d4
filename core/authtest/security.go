package authtest

import (
	"net/http"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

// purposeBinding covers ARCHITECTURE.md "Tokens": a token made for one purpose
// never verifies for another.
func (s suite) purposeBinding(t *testing.T) {
	t.Parallel()

	// tokens returns one live token of every kind for ada, who has 2FA on
	// and an unverified address.
	type tokens struct{ pending, session, verify, reset string }
	setup := func(t *testing.T, e *env) (tokens, string) {
		t.Helper()
		c := e.client()
		u := e.signup(t, c, "ada@example.com")
		var tk tokens
		tk.session = c.cookie(sessionCookie).Value
		tk.verify = e.verifyToken(t, "ada@example.com")
		e.enable2FA(t, c)
		b := e.client()
		tk.pending = pendingLogin(t, b, "ada@example.com").setCookie(auth.PendingCookie).Value
		tk.reset = e.resetToken(t, "ada@example.com")
		return tk, u.ID
	}

	t.Run("other tokens as a verification link", func(t *testing.T) {
		t.Parallel()
		e := s.env(t)
		tk, id := setup(t, e)
		for name, tok := range map[string]string{"2fa_pending": tk.pending, "session": tk.session, "reset": tk.reset} {
			r := e.client().get(verifyPath(tok))
			if r.status != http.StatusBadRequest || r.str("error") != errVerifyInvalid {
				t.Errorf("%s token as a verification link: %s, want 400 %q", name, r, errVerifyInvalid)
			}
		}
		if !e.byID(t, id).EmailVerifiedAt.IsZero() {
			t.Errorf("store: another purpose's token verified the address")
		}
		mustMessage(t, e.client().get(verifyPath(tk.verify)), msgEmailVerified)
	})

	t.Run("other tokens as a reset link", func(t *testing.T) {
		t.Parallel()
		e := s.env(t)
		tk, id := setup(t, e)
		before := e.byID(t, id)
		for name, tok := range map[string]string{"2fa_pending": tk.pending, "session": tk.session, "verify": tk.verify} {
			r := e.client().post(resetPath(tok), resetBody(newPassword))
			if r.status != http.StatusBadRequest || r.str("error") != errResetInvalid {
				t.Errorf("%s token as a reset link: %s, want 400 %q", name, r, errResetInvalid)
			}
		}
		e.mustUnchanged(t, before)
	})

	t.Run("other tokens as the 2fa_pending cookie", func(t *testing.T) {
		t.Parallel()
		e := s.env(t)
		tk, _ := setup(t, e)
		for name, tok := range map[string]string{"session": tk.session, "verify": tk.verify, "reset": tk.reset} {
			b := e.client()
			b.setCookie(auth.PendingCookie, tok)
			r := b.post("/api/2fa/verify", obj{"code": "123456"})
			if r.status != http.StatusUnauthorized || r.str("error") != err2FAExpired {
				t.Errorf("%s token as the 2fa_pending cookie: %s, want 401 %q", name, r, err2FAExpired)
			}
		}
	})

	t.Run("other tokens as the session cookie", func(t *testing.T) {
		t.Parallel()
		e := s.env(t)
		tk, _ := setup(t, e)
		for name, tok := range map[string]string{"2fa_pending": tk.pending, "verify": tk.verify, "reset": tk.reset} {
			b := e.client()
			b.setCookie(sessionCookie, tok)
			r := b.me()
			if r.status != http.StatusUnauthorized || r.str("error") != errNotAuthenticated {
				t.Errorf("%s token as the session cookie: %s, want 401 %q", name, r, errNotAuthenticated)
			}
		}
	})
}

// crossOrigin covers docs/api.md "Cross-origin requests": cross-origin
// browser requests to state-changing routes are refused and change nothing.
func (s suite) crossOrigin(t *testing.T) {
	t.Parallel()
	register := obj{"email": "ada@example.com", "password": goodPassword, "name": "Ada"}

	t.Run("Sec-Fetch-Site cross-site is refused", func(t *testing.T) {
		t.Parallel()
		e := s.env(t)
		c := e.client()
		r := c.post("/api/auth/register", register, "Sec-Fetch-Site", "cross-site")
		mustStatus(t, r, http.StatusForbidden, msgCrossOrigin)
		if r.setCookie(sessionCookie) != nil {
			t.Errorf("%s: sets a session cookie", r)
		}
		e.noUser(t, "ada@example.com")
		if n := e.mailCount(t); n != 0 {
			t.Errorf("%d mails, want none", n)
		}
		// A signed-in user's session is no help to the other site.
		u := e.seed(t, "bob@example.com")
		b := e.loggedIn(t, "bob@example.com")
		before := e.byID(t, u.ID)
		for _, req := range []struct {
			path string
			body obj
		}{
			{"/api/auth/change-email", obj{"newEmail": "evil@example.com", "password": goodPassword}},
			{"/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": newPassword}},
			{"/api/2fa/setup", nil},
			{"/api/auth/logout-all", nil},
		} {
			mustStatus(t, b.post(req.path, req.body, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden, msgCrossOrigin)
		}
		e.mustUnchanged(t, before)
		mustBeSignedIn(t, b, "bob@example.com")
	})

	t.Run("a foreign Origin without Sec-Fetch-Site is refused", func(t *testing.T) {
		t.Parallel()
		e := s.env(t)
		mustStatus(t, e.client().post("/api/auth/register", register, "Origin", "http://evil.test"), http.StatusForbidden, msgCrossOrigin)
		e.noUser(t, "ada@example.com")
		e.seed(t, "bob@example.com")
		c := e.client()
		mustStatus(t, c.login("bob@example.com", goodPassword, "Origin", "http://evil.test"), http.StatusForbidden, msgCrossOrigin)
		mustBeSignedOut(t, c)
	})

	t.Run("same-origin and header-less requests pass", func(t *testing.T) {
		t.Parallel()
		e := s.env(t)
		mustMessage(t, e.client().post("/api/auth/register", register, "Sec-Fetch-Site", "same-origin"), msgRegistered)
		mustMessage(t, e.client().post("/api/auth/register",
			obj{"email": "bob@example.com", "password": goodPassword, "name": "Bob"}, "Origin", e.base), msgRegistered)
		mustMessage(t, e.client().post("/api/auth/register",
			obj{"email": "cy@example.com", "password": goodPassword, "name": "Cy"}), msgRegistered)
	})

	t.Run("a trusted origin passes", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, func(c *auth.Config) { c.TrustedOrigins = []string{"http://front.test"} })
		mustMessage(t, e.client().post("/api/auth/register", register,
			"Sec-Fetch-Site", "cross-site", "Origin", "http://front.test"), msgRegistered)
		mustStatus(t, e.client().post("/api/auth/register", obj{"email": "bob@example.com", "password": goodPassword, "name": "Bob"},
			"Sec-Fetch-Site", "cross-site", "Origin", "http://evil.test"), http.StatusForbidden, msgCrossOrigin)
	})

	t.Run("safe methods pass cross-site", func(t *testing.T) {
		// A verification link opened from a mail client is a cross-site
		// navigation.
		t.Parallel()
		e := s.env(t)
		c := e.client()
		e.signup(t, c, "ada@example.com")
		mustMessage(t, e.client().get(verifyPath(e.verifyToken(t, "ada@example.com")), "Sec-Fetch-Site", "cross-site"), msgEmailVerified)
		if r := c.get("/api/auth/me", "Sec-Fetch-Site", "cross-site"); r.status != http.StatusOK {
			t.Errorf("%s: want 200", r)
		}
	})
}

// lockout covers Config.Lockout: consecutive failures lock the account,
// whatever the rate limits allow.
func (s suite) lockout(t *testing.T) {
	t.Parallel()
	cfg := func(c *auth.Config) {
		relaxed(c)
		c.Lockout = auth.Lockout{Max: 3, Duration: time.Hour}
	}
	lock := func(t *testing.T, e *env) {
		t.Helper()
		c := e.client()
		for range 3 {
			mustStatus(t, c.login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
		}
	}

	t.Run("the right password is refused while locked; an hour later it works", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, cfg)
		u := e.seed(t, "ada@example.com")
		lock(t, e)
		if got := e.byID(t, u.ID).LockedUntil; !got.Equal(e.clock.Now().Add(time.Hour).Truncate(time.Millisecond)) && !got.Equal(e.clock.Now().Add(time.Hour)) {
			t.Errorf("store: lockedUntil %s, want %s", got, e.clock.Now().Add(time.Hour))
		}
		c := e.client()
		r := c.login("ada@example.com", goodPassword)
		mustStatus(t, r, http.StatusUnauthorized, errInvalidCredentials)
		if r.setCookie(sessionCookie) != nil {
			t.Errorf("%s: a locked account got a session cookie", r)
		}
		e.clock.Advance(59 * time.Minute)
		mustStatus(t, c.login("ada@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
		e.clock.Advance(time.Minute)
		mustLogin(t, c, "ada@example.com", goodPassword)
		if got := e.byID(t, u.ID); got.FailedLogins != 0 || !got.LockedUntil.IsZero() {
			t.Errorf("store: failedLogins %d, lockedUntil %v after a login; want 0, none", got.FailedLogins, got.LockedUntil)
		}
	})

	t.Run("a password reset unlocks", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, cfg)
		e.seed(t, "ada@example.com")
		lock(t, e)
		mustStatus(t, e.client().login("ada@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
		tok := e.resetToken(t, "ada@example.com")
		mustMessage(t, e.client().post(resetPath(tok), resetBody(newPassword)), msgPasswordReset)
		mustLogin(t, e.client(), "ada@example.com", newPassword)
	})

	t.Run("a success clears the count", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, cfg)
		e.seed(t, "ada@example.com")
		c := e.client()
		for range 2 {
			mustStatus(t, c.login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
		}
		mustLogin(t, c, "ada@example.com", goodPassword)
		for range 2 {
			mustStatus(t, c.login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
		}
		mustLogin(t, c, "ada@example.com", goodPassword)
	})
}

// cookies covers the Secure attribute, which the other subtests cannot see
// (they run with Insecure so that the cookie jar sends cookies over http):
// docs/api.md "Cookies" (Secure unless Config.Insecure) and the session cookie.
func (s suite) cookies(t *testing.T) {
	t.Parallel()

	t.Run("cookies are Secure unless Insecure", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, func(c *auth.Config) { c.Insecure = false })
		c := e.client()
		r := c.post("/api/auth/register", obj{"email": "ada@example.com", "password": goodPassword, "name": "Ada"})
		mustMessage(t, r, msgRegistered)
		mustSessionCookie(t, r, false, true)
		// The jar keeps Secure cookies off plain http: send them by hand.
		sess := sessionCookie + "=" + r.setCookie(sessionCookie).Value
		r = c.post("/api/2fa/setup", nil, "Cookie", sess)
		if r.status != http.StatusOK {
			t.Fatalf("%s: want 200", r)
		}
		secret := qrSecret(t, r)
		r = c.post("/api/2fa/confirm", obj{"code": e.now(t, secret)}, "Cookie", sess)
		if r.status != http.StatusOK {
			t.Fatalf("%s: want 200", r)
		}
		r = c.login("ada@example.com", goodPassword)
		mustBody(t, r, obj{"requiresTwoFactor": true})
		mustPendingCookie(t, r, true)
		pending := auth.PendingCookie + "=" + r.setCookie(auth.PendingCookie).Value
		e.nextStep()
		r = c.post("/api/2fa/verify", obj{"code": e.now(t, secret)}, "Cookie", pending)
		mustBody(t, r, obj{"success": true})
		mustSessionCookie(t, r, false, true)
		if ck := r.setCookie(auth.PendingCookie); ck == nil || ck.MaxAge >= 0 || !ck.Secure {
			t.Errorf("%s: want a Secure Set-Cookie deleting %s, got %v", r, auth.PendingCookie, ck)
		}
		r = c.post("/api/auth/logout", nil, "Cookie", sessionCookie+"="+r.setCookie(sessionCookie).Value)
		mustMessage(t, r, msgLoggedOut)
		for _, name := range []string{sessionCookie, auth.PendingCookie} {
			if ck := r.setCookie(name); ck == nil || ck.MaxAge >= 0 || !ck.Secure {
				t.Errorf("%s: want a Secure Set-Cookie deleting %s, got %v", r, name, ck)
			}
		}
	})
}
