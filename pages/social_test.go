package pages

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
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

// TestIdentities: with Config.Social, the security page lists the user's
// linked provider accounts by label, each with an Unlink form, and a
// "Link <provider>" button per provider: a form posting to the social
// module's link route after a recent sign-in, a link to the password
// confirmation otherwise. Unlinking needs a recent sign-in (the
// confirmation returns to the list), mails the notice naming the
// provider, and another user's identity is not found. Without
// JavaScript: plain forms and links.
func TestIdentities(t *testing.T) {
	e := setup(t, withSocial)
	b := e.registered()
	ada := e.user(adaEmail)
	id, err := e.users.AddIdentity(context.Background(), &user.Identity{UserID: ada.ID, Provider: "google", Subject: "g-1", Email: "ada@gmail.com"})
	if err != nil {
		t.Fatal(err)
	}
	p := b.get("/settings/security")
	for _, want := range []string{
		`<strong id="identity-0">Google</strong>`,
		`ada@gmail.com, linked 2031-03-14 15:09 UTC`,
		`<input type="hidden" name="identity" value="` + id.ID + `">`,
		`<form method="post" action="/api/auth/oauth/google/link?returnTo=%2Fsettings%2Fsecurity%3Fdone%3Didentity-linked"><button type="submit" class="secondary">Link Google</button></form>`,
		`<form method="post" action="/api/auth/oauth/corp-sso/link?returnTo=%2Fsettings%2Fsecurity%3Fdone%3Didentity-linked"><button type="submit" class="secondary">Link Corp &amp; Co</button></form>`,
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the security page lacks %s\n%s", want, p.Body)
		}
	}

	other := e.browser()
	other.post("/register", form("name", "Bob", "email", "bob@example.com", "password", adaPass)).wantRedirect(t, "/dashboard?done=registered")
	p = other.post("/settings/identities/unlink", form("identity", id.ID))
	p.wantPage(t, http.StatusNotFound, "security")
	p.wantSummary(t, "Linked account not found")

	e.clock.Advance(16 * time.Minute)
	p = b.get("/settings/security")
	if want := `<a class="button secondary" href="/settings/confirm-password?next=identities">Link Google</a>`; !strings.Contains(p.Body, want) {
		t.Errorf("after an old sign-in the security page lacks %s\n%s", want, p.Body)
	}
	b.post("/settings/identities/unlink", form("identity", id.ID)).wantRedirect(t, "/settings/confirm-password?next=identities")
	if p := b.get("/settings/confirm-password?next=identities"); !strings.Contains(p.Body, "before linking or unlinking an account.") {
		t.Errorf("the confirmation page for identities\n%s", p.Body)
	}
	b.post("/settings/confirm-password", form("next", "identities", "password", adaPass)).
		wantRedirect(t, "/settings/security?done=password-confirmed#identities")
	b.post("/settings/identities/unlink", form("identity", id.ID)).wantRedirect(t, "/settings/security?done=identity-unlinked#identities")
	p = b.get("/settings/security?done=identity-unlinked")
	if p.text(t, "notice") != "Account unlinked." || p.text(t, "no-identities") != "No account at another service is linked." {
		t.Errorf("after the unlink: %q, %q", p.text(t, "notice"), p.text(t, "no-identities"))
	}
	if ids, _ := e.users.ListIdentities(context.Background(), ada.ID); len(ids) != 0 {
		t.Errorf("identities left: %+v", ids)
	}
	e.flushMail()
	var notices int
	for _, m := range e.mail.To(adaEmail) {
		if m.Kind == mail.KindIdentityUnlinked && strings.Contains(m.Subject, "Google") {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("%d unlink notices naming Google, want 1", notices)
	}
	if p := setup(t, nil).registered().get("/settings/security"); strings.Contains(p.Body, `id="identities"`) {
		t.Error("the security page lists identities without Config.Social")
	}
}
