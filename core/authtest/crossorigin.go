package authtest

import (
	"net/http"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
)

// registerAda is the body of ada's registration.
var registerAda = obj{"email": "ada@example.com", "password": goodPassword, "name": "Ada"}

func (s suite) crossSiteRefused(t *testing.T) {
	e := s.env(t)
	c := e.client()
	r := c.post("/api/auth/register", registerAda, "Sec-Fetch-Site", "cross-site")
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
		{"/api/auth/confirm-password", obj{"password": goodPassword}},
	} {
		mustStatus(t, b.post(req.path, req.body, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden, msgCrossOrigin)
	}
	e.mustUnchanged(t, before)
	mustBeSignedIn(t, b, "bob@example.com")
}

func (s suite) foreignOriginRefused(t *testing.T) {
	e := s.env(t)
	mustStatus(t, e.client().post("/api/auth/register", registerAda, "Origin", "http://evil.test"), http.StatusForbidden, msgCrossOrigin)
	e.noUser(t, "ada@example.com")
	e.seed(t, "bob@example.com")
	c := e.client()
	mustStatus(t, c.login("bob@example.com", goodPassword, "Origin", "http://evil.test"), http.StatusForbidden, msgCrossOrigin)
	mustBeSignedOut(t, c)
}

func (s suite) sameOriginPasses(t *testing.T) {
	e := s.env(t)
	mustMessage(t, e.client().post("/api/auth/register", registerAda, "Sec-Fetch-Site", "same-origin"), msgRegistered)
	mustMessage(t, e.client().post("/api/auth/register",
		obj{"email": "bob@example.com", "password": goodPassword, "name": "Bob"}, "Origin", e.base), msgRegistered)
	mustMessage(t, e.client().post("/api/auth/register",
		obj{"email": "cy@example.com", "password": goodPassword, "name": "Cy"}), msgRegistered)
}

func (s suite) trustedOriginPasses(t *testing.T) {
	e := s.env(t, func(c *auth.Config) { c.TrustedOrigins = []string{"http://front.test"} })
	mustMessage(t, e.client().post("/api/auth/register", registerAda,
		"Sec-Fetch-Site", "cross-site", "Origin", "http://front.test"), msgRegistered)
	mustStatus(t, e.client().post("/api/auth/register", obj{"email": "bob@example.com", "password": goodPassword, "name": "Bob"},
		"Sec-Fetch-Site", "cross-site", "Origin", "http://evil.test"), http.StatusForbidden, msgCrossOrigin)
}

func (s suite) safeMethodsPass(t *testing.T) {
	// A verification link opened from a mail client is a cross-site
	// navigation.
	e := s.env(t)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	mustMessage(t, e.client().get(verifyPath(e.verifyToken(t, "ada@example.com")), "Sec-Fetch-Site", "cross-site"), msgEmailVerified)
	if r := c.get("/api/auth/me", "Sec-Fetch-Site", "cross-site"); r.Status != http.StatusOK {
		t.Errorf("%s: want 200", r)
	}
}
