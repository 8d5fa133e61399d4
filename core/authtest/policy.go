package authtest

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/password"
)

// The texts of the NIST policy's refusals.
const (
	errPasswordTooShort15 = "Password must be at least 15 characters"
	errPasswordContext    = "Password must not be based on the app's name, your email address or your name"
)

// nist is the option of a Service with the NIST SP 800-63B rev. 4 password
// policy (password.NIST).
func nist(c *auth.Config) { c.PasswordPolicy = password.NIST() }

func (s suite) policyLengthByFactors(t *testing.T) {
	e := s.env(t, nist, relaxed)
	c := e.client()
	// A new account has no second factor: 15 characters.
	mustStatus(t, c.post("/api/auth/register", obj{"email": "ada@example.com", "password": "fourteen chars", "name": "Ada"}),
		http.StatusBadRequest, errPasswordTooShort15)
	e.noUser(t, "ada@example.com")
	u := e.signup(t, c, "ada@example.com")
	// Without 2FA, a reset and a change need 15 too.
	tok := e.resetToken(t, "ada@example.com")
	mustStatus(t, e.client().post("/api/auth/reset-password/"+url.PathEscape(tok), obj{"password": "fourteen chars", "confirmPassword": "fourteen chars"}),
		http.StatusBadRequest, errPasswordTooShort15)
	mustStatus(t, c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": "fourteen chars"}),
		http.StatusBadRequest, errPasswordTooShort15)
	if got := e.byID(t, u.ID); got.PasswordHash != u.PasswordHash {
		t.Fatal("store: a refused password was stored")
	}
	// With 2FA on, 8 are enough.
	e.enable2FA(t, c)
	mustMessage(t, c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": "8 chars!"}), msgPasswordChanged)
	e.clock.Advance(time.Second) // a link issued in the change's second dies with it
	tok = e.resetToken(t, "ada@example.com")
	mustMessage(t, e.client().post("/api/auth/reset-password/"+url.PathEscape(tok), obj{"password": "9 chars!!", "confirmPassword": "9 chars!!"}), msgPasswordReset)
}

func (s suite) policyContextWords(t *testing.T) {
	e := s.env(t, nist, relaxed, func(c *auth.Config) { c.AppName = "Acme Portal" })
	c := e.client()
	for _, pw := range []string{"Lovelace18151852!", "ada.lovelace@example.com", "acme portal acme portal"} {
		mustStatus(t, c.post("/api/auth/register", obj{"email": "ada.lovelace@example.com", "password": pw, "name": "Ada Lovelace"}),
			http.StatusBadRequest, errPasswordContext)
	}
	e.noUser(t, "ada.lovelace@example.com")
	mustMessage(t, c.post("/api/auth/register", obj{"email": "ada.lovelace@example.com", "password": "lovelace wrote the first program", "name": "Ada Lovelace"}), msgRegistered)
	u := e.user(t, "ada.lovelace@example.com")
	tok := e.resetToken(t, "ada.lovelace@example.com")
	mustStatus(t, e.client().post("/api/auth/reset-password/"+url.PathEscape(tok), obj{"password": "ACME-PORTAL-2031!", "confirmPassword": "ACME-PORTAL-2031!"}),
		http.StatusBadRequest, errPasswordContext)
	mustStatus(t, c.post("/api/auth/change-password", obj{"currentPassword": "lovelace wrote the first program", "newPassword": "adalovelace1815!!"}),
		http.StatusBadRequest, errPasswordContext)
	if got := e.byID(t, u.ID); got.PasswordHash != u.PasswordHash || got.SessionVersion != u.SessionVersion {
		t.Fatal("store: a refused password changed the account")
	}
	mustBeSignedIn(t, c, "ada.lovelace@example.com")
}
