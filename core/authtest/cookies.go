package authtest

import (
	"net/http"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
)

func (s suite) cookiesSecureUnlessInsecure(t *testing.T) {
	e := s.env(t, func(c *auth.Config) { c.Insecure = false })
	c := e.client()
	r := c.post("/api/auth/register", obj{"email": "ada@example.com", "password": goodPassword, "name": "Ada"})
	mustMessage(t, r, msgRegistered)
	mustSessionCookie(t, r, false, true)
	// The jar keeps Secure cookies off plain http: send them by hand.
	sess := sessionCookie + "=" + r.setCookie(sessionCookie).Value
	r = c.post("/api/2fa/setup", nil, "Cookie", sess)
	if r.Status != http.StatusOK {
		t.Fatalf("%s: want 200", r)
	}
	secret := qrSecret(t, r)
	r = c.post("/api/2fa/confirm", obj{"code": e.now(t, secret)}, "Cookie", sess)
	if r.Status != http.StatusOK {
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
}
