package pages

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
)

// passwordless signs in a new verified account without a password (as a
// social or email sign-up makes one) on a new browser.
func (e *env) passwordless(email string) *browser {
	e.t.Helper()
	ctx := context.Background()
	v := e.svc.Visit(auth.HTTPRequest(httptest.NewRequest(http.MethodPost, "/", nil), nil))
	u, err := e.svc.Modules().RegisterExternal(ctx, v, auth.ExternalRegistration{Email: email, Name: "Ada", EmailVerified: true})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.svc.Modules().SignInExternal(ctx, v, auth.ExternalSignInInput{
		Verify: func(context.Context) (string, error) { return u.ID, nil },
	}); err != nil {
		e.t.Fatal(err)
	}
	b := e.browser()
	root, _ := url.Parse(e.srv.URL + "/")
	for _, c := range v.Cookies() {
		if c.Value != "" && c.MaxAge >= 0 {
			b.c.Jar.SetCookies(root, []*http.Cookie{{Name: c.Name, Value: c.Value, Path: "/"}})
		}
	}
	return b
}

// TestSecurityWithoutPassword: the security page of an account without a
// password offers "Set a password" (the reset page) instead of the
// password change, asks for no current password to change the email, and
// the change works from the recent session without one; an account with
// a password keeps the forms as they were.
func TestSecurityWithoutPassword(t *testing.T) {
	e := setup(t, nil)
	b := e.passwordless("nopass@example.com")
	p := b.get("/settings/security")
	p.wantPage(t, http.StatusOK, "security")
	if !strings.Contains(p.Body, `id="set-password" href="/forgot-password"`) || strings.Contains(p.Body, `id="password-form"`) ||
		strings.Contains(p.Body, `id="email-password"`) {
		t.Fatalf("security page of an account without a password: want the set-password link and no password fields:\n%s", p.Body)
	}
	if got := p.text(t, "no-password"); got != "Your account has no password: you sign in with a passkey, by email or with a linked account." {
		t.Errorf("no-password text %q", got)
	}
	b.post("/settings/email", form("newEmail", "nopass2@example.com")).wantRedirect(t, "/settings/security?done=email-changed")
	if u := e.user("nopass2@example.com"); u.PasswordHash != "" {
		t.Fatal("the email change set a password")
	}
	// An old sign-in is sent to the confirmation, which asks for a
	// passkey, not a password.
	e.clock.Advance(auth.DefaultReauthWindow)
	b.post("/settings/email", form("newEmail", "nopass3@example.com")).wantRedirect(t, "/settings/confirm-password?next=security")

	withPassword := e.registered()
	p = withPassword.get("/settings/security")
	if strings.Contains(p.Body, `id="set-password"`) || !strings.Contains(p.Body, `id="password-form"`) {
		t.Fatal("security page of an account with a password: want the change form, no set-password link")
	}
}

// TestConfirmWithoutPassword: the confirmation page of an account without
// a password asks for no password; with passkeys on it offers the passkey
// re-authentication (hidden until the script shows it), which returns to
// the page the confirmation was for.
func TestConfirmWithoutPassword(t *testing.T) {
	e := setup(t, withPasskeys)
	p := e.passwordless("nopass@example.com").get("/settings/confirm-password?next=recovery-codes")
	p.wantPage(t, http.StatusOK, "confirm")
	if strings.Contains(p.Body, `id="confirm-password-form"`) || !strings.Contains(p.Body, `id="no-password"`) {
		t.Fatalf("confirm page of an account without a password asks for one:\n%s", p.Body)
	}
	if !strings.Contains(p.Body, `data-passkey="reauth" data-next="/settings/recovery-codes"`) || !strings.Contains(p.Body, `id="passkey-reauth"`) {
		t.Fatalf("confirm page: no passkey re-authentication returning to the recovery codes:\n%s", p.Body)
	}
	off := setup(t, nil)
	b := off.browser()
	b.register()
	if p := b.get("/settings/confirm-password"); strings.Contains(p.Body, "passkey") || !strings.Contains(p.Body, `id="confirm-password-form"`) {
		t.Fatal("confirm page without passkeys: want the password form and no passkey")
	}
}
