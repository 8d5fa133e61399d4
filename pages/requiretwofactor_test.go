package pages

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

// TestRequireTwoFactorPages: with auth.Config.RequireTwoFactor, registering
// and signing in land on the security page with its notice; during the
// grace period the dashboard still shows, after it the dashboard sends the
// user to the security page; once 2FA is on, the dashboard shows again.
func TestRequireTwoFactorPages(t *testing.T) {
	e := setup(t, func(c *auth.Config, _ *Config) {
		c.RequireTwoFactor = auth.TwoFactorPolicy{Enabled: true, Grace: 2 * time.Hour}
		c.SessionIdleTimeout = -1 // hours pass between the pages' requests
	})
	b := e.browser()
	b.post("/register", form("name", "Ada", "email", adaEmail, "password", adaPass)).wantRedirect(t, twoFactorRequired)
	p := b.get(twoFactorRequired)
	p.wantPage(t, http.StatusOK, "security")
	if !strings.Contains(p.Body, "Your account must use two-factor authentication: set it up below.") {
		t.Errorf("the security page lacks the notice\n%s", p.Body)
	}
	b.get("/dashboard").wantPage(t, http.StatusOK, "dashboard")

	e.clock.Advance(2 * time.Hour)
	b.get("/dashboard").wantRedirect(t, twoFactorRequired)
	c := e.browser()
	c.post("/login", form("email", adaEmail, "password", adaPass)).wantRedirect(t, twoFactorRequired)
	c.enableTwoFactor()
	c.get("/dashboard").wantPage(t, http.StatusOK, "dashboard")
}
