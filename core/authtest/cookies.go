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
	// A Secure session cookie is named with the __Host- prefix: Path=/
	// and no Domain, as a browser requires of it.
	ck := r.setCookie(auth.SecureSessionCookie)
	if ck == nil || ck.Value == "" || !ck.Secure || !ck.HttpOnly || ck.Path != "/" || ck.Domain != "" || r.setCookie(sessionCookie) != nil {
		t.Fatalf("%s: want a Secure HttpOnly %s cookie with Path=/ and no Domain (and no %s), got %v", r, auth.SecureSessionCookie, sessionCookie, ck)
	}
	// The jar keeps Secure cookies off plain http: send them by hand.
	sess := auth.SecureSessionCookie + "=" + ck.Value
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
	if ck := r.setCookie(auth.SecureSessionCookie); ck == nil || !ck.Secure || ck.Path != "/" || ck.Domain != "" {
		t.Fatalf("%s: want a Secure %s cookie with Path=/ and no Domain, got %v", r, auth.SecureSessionCookie, ck)
	}
	if ck := r.setCookie(auth.PendingCookie); ck == nil || ck.MaxAge >= 0 || !ck.Secure {
		t.Errorf("%s: want a Secure Set-Cookie deleting %s, got %v", r, auth.PendingCookie, ck)
	}
	r = c.post("/api/auth/logout", nil, "Cookie", auth.SecureSessionCookie+"="+r.setCookie(auth.SecureSessionCookie).Value)
	mustMessage(t, r, msgLoggedOut)
	for _, name := range []string{auth.SecureSessionCookie, auth.PendingCookie} {
		if ck := r.setCookie(name); ck == nil || ck.MaxAge >= 0 || !ck.Secure || ck.Path != "/" || ck.Domain != "" {
			t.Errorf("%s: want a Secure Set-Cookie deleting %s (Path=/, no Domain), got %v", r, name, ck)
		}
	}
}
