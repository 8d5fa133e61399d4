package pages

import (
	"net/http"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
)

func withSocial(_ *auth.Config, c *Config) {
	c.Social = []SocialProvider{{Name: "google", Label: "Google"}, {Name: "corp-sso", Label: "Corp & Co"}}
}

// TestSocialButtons: the login and registration pages link each provider's
// start route, returning to the page after login; without Config.Social
// there are none.
func TestSocialButtons(t *testing.T) {
	e := setup(t, withSocial)
	for _, page := range []string{"/login", "/register"} {
		p := e.browser().get(page)
		p.wantPage(t, http.StatusOK, strings.TrimPrefix(page, "/"))
		for _, want := range []string{
			`<a class="button secondary" href="/api/auth/oauth/google/start?returnTo=%2Fdashboard">Continue with Google</a>`,
			`<a class="button secondary" href="/api/auth/oauth/corp-sso/start?returnTo=%2Fdashboard">Continue with Corp &amp; Co</a>`,
		} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("%s lacks %s\n%s", page, want, p.Body)
			}
		}
	}
	if p := setup(t, nil).browser().get("/login"); strings.Contains(p.Body, "/api/auth/oauth/") {
		t.Error("the login page links a provider without Config.Social")
	}
}

// TestSocialError: a failed sign-in's ?error= shows as its text, in the
// visit's language; an unknown code, or text of the query's own, shows
// nothing.
func TestSocialError(t *testing.T) {
	e := setup(t, func(a *auth.Config, c *Config) { german(a, c); withSocial(a, c) })
	p := e.browser().get("/login?error=social_link_required")
	if got := p.summary(t); len(got) != 1 || got[0] != "An account with this email exists. Sign in to it, then link this provider from your account." {
		t.Errorf("summary %q", got)
	}
	b := e.browser()
	b.header.Set("Accept-Language", "de")
	if got := b.get("/login?error=social_state_invalid").summary(t); len(got) != 1 || got[0] != "Die Anmeldung ist abgelaufen oder wurde schon verwendet. Beginnen Sie erneut." {
		t.Errorf("German summary %q", got)
	}
	for _, q := range []string{"no_such_code", "<b>owned</b>"} {
		if p := e.browser().get("/login?error=" + q); strings.Contains(p.Body, "error-summary") {
			t.Errorf("?error=%s shows a summary", q)
		}
	}
}
