package browsertest

import (
	"strings"
	"testing"

	"github.com/authkit-go/authkit/social/socialtest"
)

// TestSocialSignIn: a person on the net/http example server's login page
// presses "Continue with Test Provider", signs in at a real OpenID
// provider (socialtest.StartProvider: zitadel/oidc's op package, run as a
// process) on its own login form, and comes back signed in: a new
// account for the provider's verified address, shown on the dashboard;
// signing out and in again this way reaches the same account. With
// JavaScript on and off, since every step is a link, a form post or a
// redirect.
func TestSocialSignIn(t *testing.T) {
	Chromium(t)
	for _, js := range []bool{true, false} {
		name := map[bool]string{true: "js", false: "nojs"}[js]
		t.Run(name, func(t *testing.T) {
			app := "http://" + freeAddr(t)
			issuer := socialtest.StartProvider(t, app+"/api/auth/oauth/test/callback")
			startWith(t, "nethttp", "social sign-in: test", "ADDR="+strings.TrimPrefix(app, "http://"), "APP_URL="+app,
				"DATABASE_URL=memory", "OAUTH_PROVIDERS=test", "OAUTH_TEST_CLIENT_ID=web", "OAUTH_TEST_CLIENT_SECRET=secret",
				"OAUTH_TEST_ISSUER="+issuer, "OAUTH_TEST_AUTHORITATIVE=example.com", "OAUTH_TEST_LABEL=Test Provider")
			b := New(t, "social-"+name)
			b.DisableScripts(!js)
			for round := range 2 {
				b.Open(app + "/login")
				b.WaitPage("login", "/login")
				b.WaitFor("the provider's button", `[...document.querySelectorAll(".social a")].some(a => a.textContent.trim() === "Continue with Test Provider")`)
				if round == 0 {
					b.Shot("login")
					if js {
						b.AuditThemes("login with a provider's button")
					}
				}
				Eval[bool](b, `(() => { [...document.querySelectorAll(".social a")].find(a => a.textContent.trim() === "Continue with Test Provider").click(); return true })()`)
				b.WaitFor("the provider's login form", `location.href.startsWith(`+jsString(issuer)+`) && !!document.getElementById("username")`)
				b.Fill("username", "alice")
				b.Fill("password", "alice-pw")
				if round == 0 {
					b.Shot("provider")
				}
				Eval[bool](b, `(() => { document.querySelector("form button[type=submit]").click(); return true })()`)
				b.WaitPage("dashboard", "/dashboard")
				b.WaitText("user-email", "alice@example.com")
				b.Shot("dashboard")
				if round == 0 && js {
					b.AuditThemes("dashboard after a social sign-in")
				}
				b.Click("logout")
				b.WaitPage("login", "/login")
			}
		})
	}
}
