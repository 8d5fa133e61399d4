package pages

import (
	"net/http"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
)

// emailSignIn turns sign-in by email on (the memory store holds codes).
func emailSignIn(c *auth.Config, _ *Config) { c.EmailSignIn.Enabled = true }

// TestEmailSignInPages: the login page links to sign-in by email; the
// address form shows the code's form on the same page, and the mailed
// code signs in, all as plain form posts.
func TestEmailSignInPages(t *testing.T) {
	e := setup(t, emailSignIn)
	b := e.browser()
	b.register()
	b.post("/logout", nil).wantRedirect(t, "/login?done=logged-out")
	if got := b.get("/login").text(t, "email-sign-in-link"); got != "Email me a sign-in code" {
		t.Errorf("login page link %q", got)
	}
	b.get("/email-sign-in").wantPage(t, http.StatusOK, "signin")
	p := b.post("/email-sign-in", form("email", "Ada@Example.com"))
	p.wantPage(t, http.StatusOK, "signin")
	if got := p.text(t, "signin-sent"); !strings.Contains(got, "ada@example.com") {
		t.Errorf("the code form says %q, want the address", got)
	}
	code := e.mailedCode(adaEmail)
	p = b.post("/email-sign-in/verify", form("email", adaEmail, "code", otherCode(code)))
	p.wantPage(t, http.StatusBadRequest, "signin")
	if got := p.fieldError(t, "signin-code"); got != "Invalid or expired sign-in code" {
		t.Errorf("wrong code: %q", got)
	}
	b.post("/email-sign-in/verify", form("email", adaEmail, "code", code)).wantRedirect(t, "/dashboard")
	b.get("/dashboard").wantPage(t, http.StatusOK, "dashboard")
}

// TestEmailSignInLinkPage: the mailed link's GET only shows a button (mail
// scanners follow links); its POST signs in, once.
func TestEmailSignInLinkPage(t *testing.T) {
	e := setup(t, emailSignIn)
	b := e.browser()
	b.register()
	b.post("/logout", nil).wantRedirect(t, "/login?done=logged-out")
	b.post("/email-sign-in", form("email", adaEmail)).wantPage(t, http.StatusOK, "signin")
	links := e.mailed("email-sign-in")
	if len(links) != 1 {
		t.Fatalf("%d sign-in links mailed, want 1", len(links))
	}
	p := b.get(links[0])
	p.wantPage(t, http.StatusOK, "signinlink")
	if !strings.Contains(p.Body, `<form id="signin-link-form" method="post" action="`+links[0]+`">`) {
		t.Errorf("the link page has no form posting to %s\n%s", links[0], p.Body)
	}
	b.post(links[0], nil).wantRedirect(t, "/dashboard")
	b.post("/logout", nil).wantRedirect(t, "/login?done=logged-out")
	p = b.post(links[0], nil)
	p.wantPage(t, http.StatusBadRequest, "signinlink")
}

// TestEmailSignInOff: without auth.Config.EmailSignIn the pages and the
// login page's link are not there.
func TestEmailSignInOff(t *testing.T) {
	e := setup(t, nil)
	b := e.browser()
	if strings.Contains(b.get("/login").Body, "email-sign-in-link") {
		t.Error("the login page links to sign-in by email while it is off")
	}
	b.get("/email-sign-in").wantPage(t, http.StatusNotFound, "notfound")
}
