package pages

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"
)

// Steps many page tests begin with, each a line there.

// registered returns a new browser in which Ada has registered through the
// register page (signed in, address not yet verified).
func (e *env) registered() *browser {
	e.t.Helper()
	b := e.browser()
	b.register()
	return b
}

// logIn posts Ada's email and password to the login page and wants a
// redirect to next ("/dashboard", or "/2fa" when 2FA is on).
func (b *browser) logIn(next string) {
	b.e.t.Helper()
	b.post("/login", form("email", adaEmail, "password", adaPass)).wantRedirect(b.e.t, next)
}

// wantSummary checks that the page's error summary holds exactly want.
func (p *page) wantSummary(t *testing.T, want string) {
	t.Helper()
	if got := p.summary(t); len(got) != 1 || got[0] != want {
		t.Errorf("%s: error summary %q, want [%q]", p.URL, got, want)
	}
}

// startTwoFactor posts the 2FA setup form and returns its answer (the
// security page with the QR code), the otpauth URI its confirm form
// carries (as a browser posts it back) and the secret in it.
func (b *browser) startTwoFactor() (p *page, uri, secret string) {
	t := b.e.t
	t.Helper()
	p = b.post("/settings/2fa/setup", url.Values{})
	p.wantPage(t, http.StatusOK, "security")
	m := regexp.MustCompile(`name="uri" value="([^"]+)"`).FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("setup: no otpauth URI in the confirm form\n%s", p.Body)
	}
	uri = unescape(m[1])
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	return p, uri, u.Query().Get("secret")
}

// loggedIn returns a new browser in which Ada has logged in through the
// login page, which redirected it to next.
func (e *env) loggedIn(next string) *browser {
	e.t.Helper()
	b := e.browser()
	b.logIn(next)
	return b
}

// wantFieldError checks the error shown beside the field with the given id.
func (p *page) wantFieldError(t *testing.T, id, want string) {
	t.Helper()
	if got := p.fieldError(t, id); got != want {
		t.Errorf("%s: beside #%s: %q, want %q", p.URL, id, got, want)
	}
}

// wantText checks the text of the element with the given id.
func (p *page) wantText(t *testing.T, id, want string) {
	t.Helper()
	if got := p.text(t, id); got != want {
		t.Errorf("%s: #%s says %q, want %q", p.URL, id, got, want)
	}
}
