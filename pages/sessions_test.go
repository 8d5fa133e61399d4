package pages

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/store"
)

// withRecords gives the Service session records and trusted devices, in
// memory on the test's clock.
func withRecords(a *auth.Config, _ *Config) {
	a.Sessions = store.NewMemorySessions(store.MemoryConfig{Now: a.Now})
	a.TrustedDevices = store.NewMemorySessions(store.MemoryConfig{Now: a.Now})
}

// sessionIDs returns the ids of the session list's sign-out buttons, and
// the id of the one marked as this browser's.
func sessionIDs(t *testing.T, p *page) (ids []string, current string) {
	t.Helper()
	for _, li := range regexp.MustCompile(`(?s)<li>\s*<strong>(.*?)</strong>.*?name="session" value="([^"]+)"`).FindAllStringSubmatch(p.Body, -1) {
		ids = append(ids, li[2])
		if li[1] == "This browser" {
			current = li[2]
		}
	}
	return ids, current
}

func TestSessionList(t *testing.T) {
	e := setup(t, withRecords)
	mine := e.registered()
	other := e.loggedIn("/dashboard")
	third := e.loggedIn("/dashboard")

	p := mine.get("/settings/security")
	p.wantPage(t, http.StatusOK, "security")
	ids, current := sessionIDs(t, p)
	if len(ids) != 3 || current == "" {
		t.Fatalf("session list: ids %q, current %q; want 3 with this browser's marked\n%s", ids, current, p.Body)
	}
	// The others are named by their browser, the raw User-Agent kept in a
	// tooltip.
	if n := strings.Count(p.Body, `<span title="Go-http-client/1.1">Go HTTP client</span>`); n != 2 {
		t.Errorf("%d sessions named by their browser, want 2\n%s", n, p.Body)
	}
	_, otherID := sessionIDs(t, other.get("/settings/security"))
	_, thirdID := sessionIDs(t, third.get("/settings/security"))

	// Another session, with a recent sign-in: ended; its browser is out.
	mine.post("/settings/sessions/end", form("session", otherID)).wantRedirect(t, "/settings/security?done=session-ended-other")
	other.get("/settings/security").wantRedirect(t, "/login")
	if ids, _ := sessionIDs(t, mine.get("/settings/security")); len(ids) != 2 {
		t.Fatalf("after ending one: %d sessions listed, want 2", len(ids))
	}

	// After an old sign-in, ending another asks for the password first.
	e.clock.Advance(16 * time.Minute)
	mine.post("/settings/sessions/end", form("session", thirdID)).wantRedirect(t, "/settings/confirm-password?next=security")
	third.get("/settings/security").wantPage(t, http.StatusOK, "security")
	mine.post("/settings/confirm-password", form("password", adaPass, "next", "security")).wantRedirect(t, "/settings/security?done=password-confirmed")
	mine.post("/settings/sessions/end", form("session", thirdID)).wantRedirect(t, "/settings/security?done=session-ended-other")

	// An id that is not one of hers: the page says so, nothing ends.
	p = mine.post("/settings/sessions/end", form("session", "not-a-session"))
	p.wantPage(t, http.StatusNotFound, "security")
	p.wantSummary(t, "Session not found")

	// Her own (the confirmation moved it to a new id): a sign-out.
	_, current = sessionIDs(t, mine.get("/settings/security"))
	mine.post("/settings/sessions/end", form("session", current)).wantRedirect(t, "/login?done=logged-out")
	mine.get("/settings/security").wantRedirect(t, "/login")
}

func TestTrustedBrowser(t *testing.T) {
	e := setup(t, withRecords)
	b := e.registered()
	secret, _ := b.enableTwoFactor()
	b.post("/logout", nil)

	b.logIn("/2fa")
	p := b.get("/2fa")
	if !strings.Contains(p.Body, `<input id="trust" name="trustDevice" type="checkbox">`) ||
		!strings.Contains(p.Body, `<input id="recovery-trust" name="trustDevice" type="checkbox">`) {
		t.Fatalf("the 2FA page does not offer to trust the browser\n%s", p.Body)
	}
	b.post("/2fa", form("code", e.code(secret), "trustDevice", "on")).wantRedirect(t, "/dashboard")
	p = b.get("/settings/security")
	if !strings.Contains(p.Body, `id="device-list"`) || !strings.Contains(p.Body, "<strong>This browser</strong>") {
		t.Fatalf("the trusted browser is not listed\n%s", p.Body)
	}

	// The next sign-in from it skips the second step.
	b.post("/logout", nil)
	b.logIn("/dashboard")

	// Forgotten: the step is back.
	p = b.get("/settings/security")
	id := regexp.MustCompile(`(?s)id="device-list">.*?name="device" value="([^"]+)"`).FindStringSubmatch(p.Body)
	if id == nil {
		t.Fatalf("no forget button\n%s", p.Body)
	}
	b.post("/settings/trusted-devices/forget", form("device", id[1])).wantRedirect(t, "/settings/security?done=device-forgotten")
	if p := b.get("/settings/security"); !strings.Contains(p.Body, `id="no-devices"`) {
		t.Errorf("after forgetting: the list is not empty\n%s", p.Body)
	}
	b.post("/logout", nil)
	e.clock.Advance(30 * time.Second)
	b.logIn("/2fa")
}

// TestNoRecordsNoLists: without records the security page lists nothing,
// the 2FA page offers no trust, and the list routes are not there.
func TestNoRecordsNoLists(t *testing.T) {
	e := setup(t, func(c *auth.Config, _ *Config) { c.StatelessSessions = true })
	b := e.registered()
	p := b.get("/settings/security")
	if strings.Contains(p.Body, `id="sessions-form"`) || strings.Contains(p.Body, `id="devices-form"`) {
		t.Error("the security page lists sessions or devices without records")
	}
	if p := b.get("/2fa"); strings.Contains(p.Body, `name="trustDevice"`) {
		t.Error("the 2FA page offers trust without trusted devices")
	}
	b.post("/settings/sessions/end", form("session", "x")).wantPage(t, http.StatusNotFound, "notfound")
}

// TestSecurityContents: the security page opens with links to each of its
// sections that is shown, and every link leads to one.
func TestSecurityContents(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(*auth.Config, *Config)
		want   []string
	}{
		{"the defaults", nil, []string{"twofa", "email", "password", "sessions", "account"}},
		{"with records and passkeys", func(a *auth.Config, c *Config) { withRecords(a, c); withPasskeys(a, c) },
			[]string{"twofa", "passkeys", "email", "password", "sessions", "devices", "account"}},
		{"with social sign-in", withSocial, []string{"twofa", "identities", "email", "password", "sessions", "account"}},
		{"with API keys", withAPIKeys, []string{"twofa", "email", "password", "sessions", "apikeys", "account"}},
		{"without email and password change", func(a *auth.Config, _ *Config) {
			a.Disable = []auth.Feature{auth.FeatureEmailChange, auth.FeaturePasswordChange}
		}, []string{"twofa", "sessions", "account"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t, tt.change)
			p := e.registered().get("/settings/security")
			p.wantPage(t, http.StatusOK, "security")
			toc := regexp.MustCompile(`(?s)<nav id="security-toc"[^>]*>(.*?)</nav>`).FindStringSubmatch(p.Body)
			if toc == nil {
				t.Fatalf("no contents\n%s", p.Body)
			}
			var got []string
			for _, m := range regexp.MustCompile(`<a href="#([a-z]+)">`).FindAllStringSubmatch(toc[1], -1) {
				got = append(got, m[1])
				if !strings.Contains(p.Body, `<section id="`+m[1]+`"`) {
					t.Errorf("the contents link to #%s, which no section is", m[1])
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("contents %q, want %q", got, tt.want)
			}
		})
	}
}
