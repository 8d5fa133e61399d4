package authtest

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

// Trusted devices (auth.Config.TrustedDevices, a second record store from
// Harness.NewSessions): "trustDevice": true at 2FA verify or recover spares
// that browser the second step for 30 days; GET /api/2fa/trusted-devices
// lists the trusted browsers, DELETE /api/2fa/trusted-devices/{id} ends one,
// and every change that raises the session version ends them all.

// Texts of the trusted-device routes.
const (
	msgTrustedDeviceRemoved = "Trusted device removed"
	errTrustedNotFound      = "Trusted device not found"
	trustedMaxAge           = 30 * 24 * 60 * 60
)

// trustEnv is env with a trusted-device store (and session records) from
// the harness; it skips the test when the harness has none.
func (s suite) trustEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	if s.h.NewSessions == nil {
		t.Skip("authtest: the harness has no record store for trusted devices (Harness.NewSessions)")
	}
	return s.recordEnv(t, append([]option{func(c *auth.Config) { c.TrustedDevices = s.h.NewSessions(t, c.Now) }}, opts...)...)
}

// trusting logs c in as email with 2FA and trusts the browser: the verify
// sets the trusted-device cookie.
func (e *env) trusting(t *testing.T, c *client, email, secret string) {
	t.Helper()
	pendingLogin(t, c, email)
	e.nextStep()
	r := c.post("/api/2fa/verify", obj{"code": e.now(t, secret), "trustDevice": true})
	mustBody(t, r, obj{"success": true})
	mustTrustedCookie(t, r)
}

// mustTrustedCookie checks the trusted-device cookie a reply sets.
func mustTrustedCookie(t *testing.T, r *reply) {
	t.Helper()
	ck := r.setCookie(auth.TrustedDeviceCookie)
	if ck == nil {
		t.Fatalf("%s: no Set-Cookie for %s", r, auth.TrustedDeviceCookie)
	}
	if ck.Value == "" || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.MaxAge != trustedMaxAge || ck.Domain != "" {
		t.Errorf("%s: Set-Cookie %q; want a value, HttpOnly, SameSite=Lax, Path=/, Max-Age=%d, no Domain", r, ck.Raw, trustedMaxAge)
	}
}

// mustSkipSecondStep logs c in with the password alone: {"success": true},
// a session, no pending cookie.
func mustSkipSecondStep(t *testing.T, c *client, email string) {
	t.Helper()
	r := c.login(email, goodPassword)
	mustBody(t, r, obj{"success": true})
	if r.setCookie(auth.PendingCookie) != nil {
		t.Errorf("%s: sets %s from a trusted browser", r, auth.PendingCookie)
	}
	mustBeSignedIn(t, c, email)
}

// trustedList lists c's trusted devices: their ids, and the id marked
// current ("" for none).
func trustedList(t *testing.T, c *client) (ids []string, current string) {
	t.Helper()
	r := c.get("/api/2fa/trusted-devices")
	raw, ok := r.JSON["devices"].([]any)
	if r.Status != http.StatusOK || !ok || len(r.JSON) != 1 {
		t.Fatalf("%s: want 200 {\"devices\": [...]}", r)
	}
	ids = []string{}
	for _, v := range raw {
		m, _ := v.(map[string]any)
		id, _ := m["id"].(string)
		if len(m) != 7 || !sessionIDPattern.MatchString(id) {
			t.Fatalf("%s: entry %v: want id, current, createdAt, lastUsedAt, expiresAt, ip, userAgent", r, v)
		}
		if cur, _ := m["current"].(bool); cur {
			current = id
		}
		ids = append(ids, id)
	}
	return ids, current
}

func (s suite) trustedVerifySkipsSecondStep(t *testing.T) {
	e := s.trustEnv(t)
	e.seed(t, "ada@example.com")
	secret, _ := e.enable2FA(t, e.loggedIn(t, "ada@example.com"))
	c := e.client()
	e.trusting(t, c, "ada@example.com", secret)
	mustMessage(t, c.post("/api/auth/logout", nil), msgLoggedOut)
	mustSkipSecondStep(t, c, "ada@example.com")
	// Another browser still needs the second step, and so does one that
	// verified without asking for trust.
	pendingLogin(t, e.client(), "ada@example.com")
	plain := e.client()
	e.loginWith2FA(t, plain, "ada@example.com", secret)
	if plain.cookie(auth.TrustedDeviceCookie) != nil {
		t.Errorf("a verify without trustDevice set %s", auth.TrustedDeviceCookie)
	}
	mustMessage(t, plain.post("/api/auth/logout", nil), msgLoggedOut)
	pendingLogin(t, plain, "ada@example.com")
	// The wrong password is still wrong.
	mustStatus(t, c.login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
}

func (s suite) trustedRecover(t *testing.T) {
	e := s.trustEnv(t)
	e.seed(t, "ada@example.com")
	_, codes := e.enable2FA(t, e.loggedIn(t, "ada@example.com"))
	c := e.client()
	pendingLogin(t, c, "ada@example.com")
	r := c.post("/api/2fa/recover", obj{"code": codes[0], "trustDevice": true})
	mustBody(t, r, obj{"success": true, "remainingCodes": 7})
	mustTrustedCookie(t, r)
	mustMessage(t, c.post("/api/auth/logout", nil), msgLoggedOut)
	mustSkipSecondStep(t, c, "ada@example.com")
}

func (s suite) trustedLifetime(t *testing.T) {
	e := s.trustEnv(t)
	e.seed(t, "ada@example.com")
	secret, _ := e.enable2FA(t, e.loggedIn(t, "ada@example.com"))
	c := e.client()
	e.trusting(t, c, "ada@example.com", secret)
	e.clock.Advance(30*24*time.Hour - time.Millisecond)
	mustSkipSecondStep(t, e.clientWith(c), "ada@example.com")
	e.clock.Advance(time.Millisecond)
	pendingLogin(t, e.clientWith(c), "ada@example.com")
}

// clientWith returns a new browser holding c's trusted-device cookie only.
func (e *env) clientWith(c *client) *client {
	b := e.client()
	b.setCookie(auth.TrustedDeviceCookie, c.cookie(auth.TrustedDeviceCookie).Value)
	return b
}

func (s suite) trustedListAndForget(t *testing.T) {
	e := s.trustEnv(t)
	e.seed(t, "ada@example.com")
	e.seed(t, "bob@example.com")
	secret, _ := e.enable2FA(t, e.loggedIn(t, "ada@example.com"))
	bobSecret, _ := e.enable2FA(t, e.loggedIn(t, "bob@example.com"))
	first, second := e.client(), e.client()
	e.trusting(t, first, "ada@example.com", secret)
	e.clock.Advance(time.Second)
	e.trusting(t, second, "ada@example.com", secret)
	bob := e.client()
	e.trusting(t, bob, "bob@example.com", bobSecret)
	ids, cur := trustedList(t, second)
	if len(ids) != 2 || cur != ids[0] {
		t.Fatalf("ada's trusted devices %v (current %s): want her 2, newest first, the newest current", ids, cur)
	}
	bobIDs, _ := trustedList(t, bob)
	mustStatus(t, e.client().get("/api/2fa/trusted-devices"), http.StatusUnauthorized, errNotAuthenticated)
	// Bob's id and unknown ids: 404, nothing ends.
	for _, id := range append([]string{bobIDs[0], fmt.Sprintf("%032x", 9), "x"}, malformedRecordIDs...) {
		r := second.del("/api/2fa/trusted-devices/" + id)
		mustStatus(t, r, http.StatusNotFound, errTrustedNotFound)
		if r.str("code") != "trusted_device_not_found" {
			t.Errorf("%s: code %q, want trusted_device_not_found", r, r.str("code"))
		}
	}
	mustMessage(t, bob.post("/api/auth/logout", nil), msgLoggedOut)
	mustSkipSecondStep(t, bob, "bob@example.com")
	// Forgetting the first browser from the second.
	mustMessage(t, second.del("/api/2fa/trusted-devices/"+ids[1]), msgTrustedDeviceRemoved)
	mustMessage(t, first.post("/api/auth/logout", nil), msgLoggedOut)
	pendingLogin(t, first, "ada@example.com")
	// Forgetting its own expires its cookie.
	r := second.del("/api/2fa/trusted-devices/" + ids[0])
	mustMessage(t, r, msgTrustedDeviceRemoved)
	mustClearCookies(t, second, r, auth.TrustedDeviceCookie)
	if ids, _ := trustedList(t, second); len(ids) != 0 {
		t.Errorf("trusted devices after forgetting both: %v", ids)
	}
}

func (s suite) trustedEndedByChanges(t *testing.T) {
	for _, change := range []string{"password reset", "logout-all", "2FA disable", "password change"} {
		t.Run(change, func(t *testing.T) {
			e := s.trustEnv(t)
			e.seed(t, "ada@example.com")
			secret, _ := e.enable2FA(t, e.loggedIn(t, "ada@example.com"))
			c := e.client()
			e.trusting(t, c, "ada@example.com", secret)
			pw := goodPassword
			e.clock.Advance(time.Second)
			switch change {
			case "password reset":
				mustMessage(t, e.client().post(resetPath(e.resetToken(t, "ada@example.com")), resetBody(newPassword)), msgPasswordReset)
				pw = newPassword
			case "logout-all":
				mustMessage(t, c.post("/api/auth/logout-all", nil), msgLoggedOutAll)
			case "2FA disable":
				mustMessage(t, c.post("/api/2fa/disable", obj{"password": goodPassword}), msg2FADisabled)
			case "password change":
				mustMessage(t, c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": newPassword}), msgPasswordChanged)
				pw = newPassword
			}
			// The trusted browser gives the second factor again (or,
			// after 2FA disable, none at all), and lists no trust.
			b := e.clientWith(c)
			if change == "2FA disable" {
				mustLogin(t, b, "ada@example.com", pw)
			} else {
				mustBody(t, b.login("ada@example.com", pw), obj{"requiresTwoFactor": true})
				e.nextStep()
				mustBody(t, b.verify(e.now(t, secret)), obj{"success": true})
			}
			if ids, _ := trustedList(t, b); len(ids) != 0 {
				t.Errorf("trusted devices after the %s: %v, want none", change, ids)
			}
			if change == "2FA disable" {
				mustConfirmPassword(t, b)
				e.enable2FA(t, b)
				mustMessage(t, b.post("/api/auth/logout", nil), msgLoggedOut)
				mustBody(t, b.login("ada@example.com", pw), obj{"requiresTwoFactor": true})
			}
		})
	}
}

func (s suite) trustedCookieIsTheUsers(t *testing.T) {
	e := s.trustEnv(t)
	e.seed(t, "ada@example.com")
	e.seed(t, "bob@example.com")
	secret, _ := e.enable2FA(t, e.loggedIn(t, "ada@example.com"))
	e.enable2FA(t, e.loggedIn(t, "bob@example.com"))
	c := e.client()
	e.trusting(t, c, "ada@example.com", secret)
	mustMessage(t, c.post("/api/auth/logout", nil), msgLoggedOut)
	// Bob on Ada's trusted browser still gives his second factor.
	pendingLogin(t, c, "bob@example.com")
	// A tampered cookie trusts nothing.
	b := e.client()
	b.setCookie(auth.TrustedDeviceCookie, tamper(c.cookie(auth.TrustedDeviceCookie).Value))
	pendingLogin(t, b, "ada@example.com")
}

func (s suite) trustedOffWithoutStore(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	secret, _ := e.enable2FA(t, e.loggedIn(t, "ada@example.com"))
	c := e.client()
	pendingLogin(t, c, "ada@example.com")
	e.nextStep()
	r := c.post("/api/2fa/verify", obj{"code": e.now(t, secret), "trustDevice": true})
	mustBody(t, r, obj{"success": true})
	if r.setCookie(auth.TrustedDeviceCookie) != nil {
		t.Errorf("%s: sets %s without a trusted-device store", r, auth.TrustedDeviceCookie)
	}
	mustListRoutesAbsent(t, c, "/api/2fa/trusted-devices", "no trusted-device store")
}
