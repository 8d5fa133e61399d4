package pages

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/i18n"
	"github.com/authkit-go/authkit/core/password"
)

// publicPages answer a signed-out visitor with their form.
var publicPages = map[string]string{
	"/login": "login", "/register": "register", "/2fa": "twofactor", "/forgot-password": "forgot",
}

// badLinkPages answer with the error and the offer of a new link (400).
var badLinkPages = map[string]string{"/reset-password/abc": "reset"}

// accountPages need a session.
var accountPages = map[string]string{
	"/dashboard": "dashboard", "/settings/security": "security", "/settings/recovery-codes": "codes",
	"/resend-verification": "resend",
}

// checkPage checks what every page carries: the headers, the title with
// the app name, no inline script or style or external URL, every input
// labelled, every form posting to a page route under the prefix.
func checkPage(t *testing.T, p *page, prefix, appName string) {
	t.Helper()
	for k, want := range map[string]string{
		"Content-Security-Policy": ContentSecurityPolicy, "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
		"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "Content-Type": "text/html; charset=utf-8",
	} {
		if got := p.Header.Get(k); got != want {
			t.Errorf("%s: %s = %q, want %q", p.URL, k, got, want)
		}
	}
	if !regexp.MustCompile(`<title>[^<]+ · ` + regexp.QuoteMeta(appName) + `</title>`).MatchString(p.Body) {
		t.Errorf("%s: no title naming %s", p.URL, appName)
	}
	if m := regexp.MustCompile(`<script>|<script [^>]*>[^<]|\sstyle=|<style|\son[a-z]+=|https?://`).FindString(p.Body); m != "" {
		t.Errorf("%s: inline script, style, handler or external URL: %q", p.URL, m)
	}
	if !strings.Contains(p.Body, `<script src="`+prefix+`/assets/app.js" defer></script>`) {
		t.Errorf("%s: the script is not the module's own asset under %q", p.URL, prefix+"/assets/")
	}
	for _, m := range regexp.MustCompile(`<input id="([^"]+)"`).FindAllStringSubmatch(p.Body, -1) {
		if !strings.Contains(p.Body, `<label for="`+m[1]+`">`) && !strings.Contains(p.Body, `<label class="check"><input id="`+m[1]) {
			t.Errorf("%s: input #%s has no label", p.URL, m[1])
		}
	}
	for _, f := range regexp.MustCompile(`<form\b[^>]*>`).FindAllString(p.Body, -1) {
		if !strings.Contains(f, ` method="post"`) || !regexp.MustCompile(` action="`+regexp.QuoteMeta(prefix)+`/[a-z0-9]`).MatchString(f) ||
			strings.Contains(f, "/api/") {
			t.Errorf("%s: %s: want method=\"post\" to a page route under %q", p.URL, f, prefix)
		}
	}
}

func TestEveryPageSignedOut(t *testing.T) {
	e := setup(t, nil)
	b := e.browser()
	for path, name := range publicPages {
		p := b.get(path)
		p.wantPage(t, http.StatusOK, name)
		checkPage(t, p, "", "authkit")
	}
	for path, name := range badLinkPages {
		p := b.get(path)
		p.wantPage(t, http.StatusBadRequest, name)
		checkPage(t, p, "", "authkit")
		if !strings.Contains(p.Body, `id="reset-new-link"`) {
			t.Errorf("%s: no offer of a new link", path)
		}
	}
	// The account pages send a signed-out visitor to the login page.
	for path := range accountPages {
		b.get(path).wantRedirect(t, "/login")
	}
}

func TestEveryPageSignedIn(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	for path, name := range accountPages {
		p := b.get(path)
		p.wantPage(t, http.StatusOK, name)
		checkPage(t, p, "", "authkit")
		if !strings.Contains(p.Body, `<form id="logout-form" class="inline" method="post" action="/logout">`) {
			t.Errorf("%s: no sign-out form in the header", path)
		}
	}
}

func TestAutocomplete(t *testing.T) {
	e := setup(t, nil)
	b := e.browser()
	for path, want := range map[string][]string{
		"/login":        {`id="email" name="email" type="email" autocomplete="username"`, `id="password" name="password" type="password" autocomplete="current-password"`},
		"/register":     {`id="email" name="email" type="email" autocomplete="email"`, `id="password" name="password" type="password" autocomplete="new-password" required minlength="8"`, `autocomplete="name"`},
		"/2fa":          {`id="code" name="code" type="text" inputmode="numeric" pattern="[0-9 ]*" maxlength="9" autocomplete="one-time-code"`},
		resetLink(t, e): {`id="password" name="password" type="password" autocomplete="new-password"`, `id="confirmPassword" name="confirmPassword" type="password" autocomplete="new-password"`},
	} {
		body := b.get(path).Body
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %s", path, w)
			}
		}
	}
	b.register()
	body := b.get("/settings/security").Body
	for _, w := range []string{`id="currentPassword" name="currentPassword" type="password" autocomplete="current-password"`,
		`id="newPassword" name="newPassword" type="password" autocomplete="new-password"`, `id="newEmail" name="newEmail" type="email" autocomplete="email"`} {
		if !strings.Contains(body, w) {
			t.Errorf("/settings/security lacks %s", w)
		}
	}
}

// TestNewPasswordMinLength: a new password's minlength is what the
// configured policy accepts for the account: 8 by default; under
// password.NIST() 15 for a registration (no second factor yet) and for
// the reset or change of an account without 2FA, 8 with 2FA.
func TestNewPasswordMinLength(t *testing.T) {
	minlength := func(t *testing.T, body, id string) string {
		t.Helper()
		m := regexp.MustCompile(`id="` + id + `" name="` + id + `" type="password" autocomplete="new-password" required minlength="([0-9]+)"`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no new-password field %s with a minlength", id)
		}
		return m[1]
	}
	for _, tc := range []struct {
		name      string
		policy    password.Policy
		plain, mf string // without, with 2FA
	}{
		{"default", password.Policy{}, "8", "8"},
		{"NIST", password.NIST(), "15", "8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, func(c *auth.Config, _ *Config) { c.PasswordPolicy = tc.policy })
			if got := minlength(t, e.browser().get("/register").Body, "password"); got != tc.plain {
				t.Errorf("register: minlength %s, want %s", got, tc.plain)
			}
			reset := e.browser().get(resetLink(t, e)).Body
			for _, id := range []string{"password", "confirmPassword"} {
				if got := minlength(t, reset, id); got != tc.plain {
					t.Errorf("reset, no 2FA: %s minlength %s, want %s", id, got, tc.plain)
				}
			}
			b := e.browser()
			b.register()
			if got := minlength(t, b.get("/settings/security").Body, "newPassword"); got != tc.plain {
				t.Errorf("change, no 2FA: minlength %s, want %s", got, tc.plain)
			}
			b.enableTwoFactor()
			if got := minlength(t, b.get("/settings/security").Body, "newPassword"); got != tc.mf {
				t.Errorf("change, 2FA: minlength %s, want %s", got, tc.mf)
			}
			b.post("/forgot-password", form("email", adaEmail))
			links := e.mailed("reset-password")
			if got := minlength(t, e.browser().get(links[len(links)-1]).Body, "password"); got != tc.mf {
				t.Errorf("reset, 2FA: minlength %s, want %s", got, tc.mf)
			}
		})
	}
}

// TestShowPasswordToggle: every password field has its toggle, hidden
// until the script shows it, so without script it stays a password field.
func TestShowPasswordToggle(t *testing.T) {
	e := setup(t, nil)
	body := e.browser().get("/login").Body
	want := `<button type="button" class="reveal secondary" id="password-reveal" data-reveal="password" aria-controls="password" aria-pressed="false" hidden>Show password</button>`
	if !strings.Contains(body, want) {
		t.Errorf("/login: no hidden show-password toggle\n%s", body)
	}
}

func TestNotFound(t *testing.T) {
	e := setup(t, nil)
	for _, path := range []string{"/no/such-page", "/assets/nope.js", "/verify-email/", "/login/x"} {
		p := e.browser().get(path)
		p.wantPage(t, http.StatusNotFound, "notfound")
		checkPage(t, p, "", "authkit")
		if !strings.Contains(p.Body, "<title>Page not found · authkit</title>") || !strings.Contains(p.Body, "There is no page at this address") ||
			!strings.Contains(p.Body, `id="notfound-login" href="/login"`) {
			t.Errorf("%s: not the 404 page\n%s", path, p.Body)
		}
	}
}

func TestAssets(t *testing.T) {
	e := setup(t, nil)
	for path, ct := range map[string]string{"/assets/app.js": "text/javascript", "/assets/app.css": "text/css",
		"/assets/favicon.svg": "image/svg+xml", "/assets/theme.css": "text/css"} {
		p := e.browser().get(path)
		if p.Status != http.StatusOK || !strings.HasPrefix(p.Header.Get("Content-Type"), ct) ||
			p.Header.Get("Content-Security-Policy") != ContentSecurityPolicy || p.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d %q %v", path, p.Status, p.Header.Get("Content-Type"), p.Header)
		}
	}
}

func TestRootRedirects(t *testing.T) {
	e := setup(t, func(_ *auth.Config, c *Config) { c.AfterLogin = "/app" })
	e.browser().get("/").wantRedirect(t, "/app")
}

// TestPrefix mounts the pages under /auth: every page, link, form, asset
// and redirect carries the prefix, and the mailed links point at them.
func TestPrefix(t *testing.T) {
	e := setup(t, func(a *auth.Config, c *Config) {
		c.Prefix = "/auth/"
		a.VerifyEmailPath, a.ResetPasswordPath = MailLinks("/auth")
	})
	b := e.browser()
	pages := map[string]int{}
	for path := range publicPages {
		pages[path] = http.StatusOK
	}
	for path := range badLinkPages {
		pages[path] = http.StatusBadRequest
	}
	for path, status := range pages {
		p := b.get("/auth" + path)
		p.wantPage(t, status, cmpOr(publicPages[path], badLinkPages[path]))
		checkPage(t, p, "/auth", "authkit")
		for _, href := range regexp.MustCompile(`(?:href|src|action)="(/[^"]*)"`).FindAllStringSubmatch(p.Body, -1) {
			if !strings.HasPrefix(href[1], "/auth/") {
				t.Errorf("/auth%s: %s is not under the prefix", path, href[1])
			}
		}
	}
	if p := b.get("/login"); p.Status != http.StatusNotFound || strings.Contains(p.Body, "data-page") {
		t.Errorf("/login outside the prefix: %d %s, want the app's own 404", p.Status, p.Body)
	}
	b.get("/auth/nope").wantPage(t, http.StatusNotFound, "notfound")
	b.get("/auth/assets/app.css")
	b.post("/auth/register", form("name", "Ada", "email", adaEmail, "password", adaPass)).wantRedirect(t, "/auth/dashboard?done=registered")
	b.get("/auth/dashboard").wantPage(t, http.StatusOK, "dashboard")
	links := e.mailed("verify-email")
	if len(links) != 1 || !strings.HasPrefix(links[0], "/auth/verify-email/") {
		t.Fatalf("mailed links %q, want one under /auth/verify-email/", links)
	}
	b.get(links[0]).wantRedirect(t, "/auth/dashboard?done=email-verified")
	b.post("/auth/logout", nil).wantRedirect(t, "/auth/login?done=logged-out")
	b.get("/auth/dashboard").wantRedirect(t, "/auth/login")
	b.get("/auth/").wantRedirect(t, "/auth/dashboard")
}

func TestMailLinks(t *testing.T) {
	for prefix, want := range map[string][2]string{
		"": {"/verify-email/", "/reset-password/"}, "/": {"/verify-email/", "/reset-password/"},
		"/auth": {"/auth/verify-email/", "/auth/reset-password/"}, "auth/": {"/auth/verify-email/", "/auth/reset-password/"},
		"/a/b/": {"/a/b/verify-email/", "/a/b/reset-password/"},
	} {
		v, r := MailLinks(prefix)
		if v != want[0] || r != want[1] {
			t.Errorf("MailLinks(%q) = %q, %q; want %q", prefix, v, r, want)
		}
	}
}

// TestTemplateOverride: an app's file replaces the embedded one of its
// name, the others stay; a broken one fails New.
func TestTemplateOverride(t *testing.T) {
	app := fstest.MapFS{
		"layout.html": {Data: []byte(`{{define "layout"}}<!doctype html><html lang="{{.Lang}}"><title>{{.Title}}</title><body data-page="{{.Page}}"><div id="app-frame">{{template "content" .}}</div></body></html>{{end}}`)},
		"forgot.html": {Data: []byte(`{{define "content"}}<p id="app-forgot">Ask the office: {{.T "title.forgot"}}</p>{{end}}`)},
	}
	e := setup(t, func(_ *auth.Config, c *Config) { c.Templates = app })
	b := e.browser()
	p := b.get("/forgot-password")
	p.wantPage(t, http.StatusOK, "forgot")
	if !strings.Contains(p.Body, `<div id="app-frame"><p id="app-forgot">Ask the office: Forgot your password</p></div>`) {
		t.Errorf("the app's layout and forgot template are not used:\n%s", p.Body)
	}
	p = b.get("/login")
	if !strings.Contains(p.Body, `<div id="app-frame">`) || !strings.Contains(p.Body, `<form id="login-form" method="post" action="/login">`) {
		t.Errorf("/login: want the app's layout around the embedded login form:\n%s", p.Body)
	}

	broken := fstest.MapFS{"login.html": {Data: []byte(`{{define "content"}}{{.Nope`)}}
	svc := setup(t, nil).svc
	if _, err := New(svc, Config{Templates: broken}); err == nil || !strings.Contains(err.Error(), "login.html") {
		t.Errorf("New with a broken login.html: %v, want an error naming it", err)
	}
}

func TestTheme(t *testing.T) {
	e := setup(t, func(_ *auth.Config, c *Config) {
		c.Theme = Theme{AppName: "Acme", Logo: "/static/acme.svg", Accent: "#0b7285", Font: `"Inter", sans-serif`, Radius: "0"}
	})
	b := e.browser()
	p := b.get("/login")
	checkPage(t, p, "", "Acme")
	if !strings.Contains(p.Body, `<a class="brand" href="/dashboard"><img class="logo" src="/static/acme.svg" alt="">Acme</a>`) {
		t.Errorf("/login: no logo and app name in the header\n%s", p.Body)
	}
	css := b.get("/assets/theme.css").Body
	for _, want := range []string{"--accent: #0b7285;", `--font: "Inter", sans-serif;`, "--radius: 0;", "@media (prefers-color-scheme: dark)"} {
		if !strings.Contains(css, want) {
			t.Errorf("theme.css lacks %s:\n%s", want, css)
		}
	}
	svc := setup(t, nil).svc
	if _, err := New(svc, Config{Theme: Theme{Accent: "red; } body { display: none"}}); err == nil {
		t.Error("New accepted a theme value that ends the declaration")
	}
}

func TestFeaturesOff(t *testing.T) {
	e := setup(t, func(a *auth.Config, _ *Config) {
		a.Disable = []auth.Feature{auth.FeatureRegistration, auth.FeaturePasswordReset, auth.FeatureEmailChange}
	})
	b := e.browser()
	for _, path := range []string{"/register", "/forgot-password", "/reset-password/x"} {
		b.get(path).wantPage(t, http.StatusNotFound, "notfound")
	}
	body := b.get("/login").Body
	if strings.Contains(body, `href="/register"`) || strings.Contains(body, `href="/forgot-password"`) {
		t.Errorf("/login links to switched-off pages:\n%s", body)
	}
	b.post("/register", form("name", "Ada", "email", adaEmail, "password", adaPass)).wantPage(t, http.StatusNotFound, "notfound")
	if _, err := e.users.ByEmail(t.Context(), adaEmail); err == nil {
		t.Error("a post to the switched-off register page created an account")
	}
}

// TestGerman: a Service with the German catalog answers a German browser
// with German pages, the API's German error text beside the field.
func TestGerman(t *testing.T) {
	e := setup(t, german)
	b := e.browser()
	b.header.Set("Accept-Language", "de-DE,de;q=0.9,en;q=0.5")
	p := b.get("/login")
	if !strings.Contains(p.Body, `<html lang="de">`) || !strings.Contains(p.Body, "<title>Anmelden · authkit</title>") ||
		!strings.Contains(p.Body, `<label for="password">Passwort</label>`) || p.Header.Get("Content-Language") != "de" {
		t.Fatalf("/login in German:\n%s", p.Body)
	}
	p = b.post("/login", form("email", adaEmail, "password", "wrong password"))
	p.wantPage(t, http.StatusUnauthorized, "login")
	p.wantFieldError(t, "password", "E-Mail-Adresse oder Passwort ist falsch")
	if got := p.summary(t); len(got) != 1 || got[0] != "E-Mail-Adresse oder Passwort ist falsch" || !strings.Contains(p.Body, "Es gibt ein Problem") {
		t.Errorf("the error summary: %q", got)
	}
	// English stays English.
	b.header.Set("Accept-Language", "en")
	if body := b.get("/login").Body; !strings.Contains(body, "<title>Sign in · authkit</title>") {
		t.Errorf("/login for English:\n%s", body)
	}
}

// TestGermanIsComplete: the German file has every text the pages use, and
// no key they do not.
func TestGermanIsComplete(t *testing.T) {
	raw, err := localeFS.ReadFile("locales/de.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Texts map[string]string }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	for k := range english {
		if f.Texts[k] == "" {
			t.Errorf("de.json lacks %q", k)
		}
	}
	for k := range f.Texts {
		if _, ok := english[k]; !ok {
			t.Errorf("de.json has %q, which no page uses", k)
		}
	}
	// Every key a template asks for has an English text.
	for _, name := range append(templates, "layout", "parts") {
		src, err := templateFS.ReadFile("templates/" + name + ".html")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`\.T "([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
			if _, ok := english[m[1]]; !ok {
				t.Errorf("%s.html uses %q, which has no English text", name, m[1])
			}
		}
	}
}

func TestMust(t *testing.T) {
	e := setup(t, nil)
	if h := Must(New(e.svc, Config{})); h == nil {
		t.Fatal("Must returned nil for a good Config")
	}
	defer func() {
		if recover() == nil {
			t.Error("Must did not panic on an error")
		}
	}()
	Must(New(nil, Config{}))
}

// TestLanguageWithoutPageTexts: a language the Service speaks but the
// pages have no texts for shows the pages in English, marked English.
func TestLanguageWithoutPageTexts(t *testing.T) {
	e := setup(t, func(a *auth.Config, _ *Config) {
		a.Catalog = catalog(t, i18n.Language{Lang: "fr", Texts: map[string]string{"invalid_credentials": "Identifiants invalides"}})
	})
	b := e.browser()
	b.header.Set("Accept-Language", "fr")
	p := b.post("/login", form("email", adaEmail, "password", "wrong password"))
	if !strings.Contains(p.Body, `<html lang="en">`) || p.Header.Get("Content-Language") != "en" || !strings.Contains(p.Body, "<title>Sign in · authkit</title>") {
		t.Errorf("French without page texts: want the English page\n%s", p.Body)
	}
	p.wantFieldError(t, "password", "Identifiants invalides")
}

// TestAppTexts: an app's catalog adds a language to the pages.
func TestAppTexts(t *testing.T) {
	e := setup(t, func(a *auth.Config, c *Config) {
		a.Catalog = catalog(t, i18n.Language{Lang: "fr", Texts: map[string]string{}})
		c.Texts = catalog(t, i18n.Language{Lang: "fr", Texts: map[string]string{"title.login": "Connexion"}})
	})
	b := e.browser()
	b.header.Set("Accept-Language", "fr")
	p := b.get("/login")
	if !strings.Contains(p.Body, `<html lang="fr">`) || !strings.Contains(p.Body, "<title>Connexion · authkit</title>") ||
		!strings.Contains(p.Body, `<label for="password">Password</label>`) {
		t.Errorf("the app's French: want its title, English where it has no text\n%s", p.Body)
	}
}

// TestServerErrorPage: a template that fails while rendering (an app's
// override calling a method on a nil value) answers 500 with an HTML page
// saying so, in the visit's language, never a bare text the script would
// take for a lost connection; when the problem page fails too, a page that
// needs no template says the same.
func TestServerErrorPage(t *testing.T) {
	nilUser := `{{define "content"}}<p>{{.User.Email}}</p>{{end}}` // no user on the forgot page: a nil pointer
	for _, tt := range []struct {
		name      string
		templates fstest.MapFS
		problem   bool // the problem page's layout, with its link back
	}{
		{"the problem page", fstest.MapFS{"forgot.html": {Data: []byte(nilUser)}}, true},
		{"a page without templates", fstest.MapFS{"forgot.html": {Data: []byte(nilUser)}, "problem.html": {Data: []byte(nilUser)}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t, func(a *auth.Config, c *Config) { german(a, c); c.Templates = tt.templates })
			for _, lang := range []struct{ accept, text, lang string }{
				{"en", "Something went wrong on our side. Please try again in a moment.", "en"},
				{"de", "Bei uns ist etwas schiefgelaufen. Bitte versuchen Sie es gleich noch einmal.", "de"},
			} {
				b := e.browser()
				b.header.Set("Accept-Language", lang.accept)
				p := b.get("/forgot-password")
				if p.Status != http.StatusInternalServerError {
					t.Fatalf("%s: status %d, want 500", lang.accept, p.Status)
				}
				for name, want := range map[string]string{
					"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store",
					"Content-Language": lang.lang, "X-Content-Type-Options": "nosniff", "Content-Security-Policy": ContentSecurityPolicy,
				} {
					if got := p.Header.Get(name); got != want {
						t.Errorf("%s: %s %q, want %q", lang.accept, name, got, want)
					}
				}
				if !strings.Contains(p.Body, lang.text) || !strings.Contains(p.Body, `lang="`+lang.lang+`"`) || strings.Contains(p.Body, "Internal server error") {
					t.Errorf("%s: body does not say what happened in its language:\n%s", lang.accept, p.Body)
				}
				if got := strings.Contains(p.Body, `data-page="problem"`); got != tt.problem {
					t.Errorf("%s: the problem page's layout: %v, want %v", lang.accept, got, tt.problem)
				}
			}
		})
	}
}
