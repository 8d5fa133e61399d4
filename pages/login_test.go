package pages

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

func TestLoginWrongPassword(t *testing.T) {
	e := setup(t, nil)
	e.browser().register()
	b := e.browser()
	p := b.post("/login", form("email", adaEmail, "password", "wrong password", "remember", "on"))
	p.wantPage(t, http.StatusUnauthorized, "login")
	p.wantFieldError(t, "password", "Invalid credentials")
	p.wantSummary(t, "Invalid credentials")
	// The email and the checkbox are kept, the password never; the field
	// takes the focus; no cookie is set.
	for _, want := range []string{`id="email" name="email" type="email" autocomplete="username" value="ada@example.com"`,
		`id="remember" name="remember" type="checkbox" checked`, `aria-describedby="password-error" autofocus>`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the page lacks %s\n%s", want, p.Body)
		}
	}
	if strings.Contains(p.Body, "wrong password") {
		t.Error("the page shows the password typed")
	}
	if b.cookie("authkit_session") != "" {
		t.Error("a session cookie after a failed login")
	}
	if u := e.user(adaEmail); u.FailedLogins != 1 {
		t.Errorf("failed logins in the store: %d, want 1", u.FailedLogins)
	}
}

func TestLoginEmptyEmail(t *testing.T) {
	e := setup(t, nil)
	p := e.browser().post("/login", form("email", "", "password", "x"))
	p.wantPage(t, http.StatusBadRequest, "login")
	p.wantFieldError(t, "email", "Email and password are required")
}

func TestLoginSucceeds(t *testing.T) {
	e := setup(t, nil)
	e.browser().register()
	b := e.loggedIn("/dashboard")
	if b.cookie("authkit_session") == "" {
		t.Fatal("no session cookie after the login")
	}
	p := b.get("/dashboard")
	p.wantPage(t, http.StatusOK, "dashboard")
	if p.text(t, "user-email") != adaEmail || p.text(t, "user-2fa") != "off" {
		t.Errorf("dashboard:\n%s", p.Body)
	}
}

func TestLoginAfterLoginConfigurable(t *testing.T) {
	e := setup(t, func(_ *auth.Config, c *Config) { c.AfterLogin = "/app?tab=home" })
	e.browser().post("/register", form("name", "Ada", "email", adaEmail, "password", adaPass)).wantRedirect(t, "/app?done=registered&tab=home")
	e.browser().post("/login", form("email", adaEmail, "password", adaPass)).wantRedirect(t, "/app?tab=home")
}

// TestLoginRememberCookie: "Keep me signed in" gives the 30-day cookie.
func TestLoginRememberCookie(t *testing.T) {
	e := setup(t, nil)
	e.browser().register()
	p := e.browser().post("/login", form("email", adaEmail, "password", adaPass, "remember", "on"))
	p.wantRedirect(t, "/dashboard")
	if c := p.Header.Get("Set-Cookie"); !strings.Contains(c, "authkit_session=") || !strings.Contains(c, "Max-Age=2592000") || !strings.Contains(c, "HttpOnly") {
		t.Errorf("Set-Cookie %q, want a 30-day HttpOnly session", c)
	}
}

// TestLoginRateLimited: the form post counts against the same limits as
// the JSON route: the sixth failure for one email answers 429.
func TestLoginRateLimited(t *testing.T) {
	e := setup(t, nil)
	e.browser().register()
	b := e.browser()
	for i := range 5 {
		if p := b.post("/login", form("email", adaEmail, "password", "wrong password")); p.Status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i+1, p.Status)
		}
	}
	p := b.post("/login", form("email", adaEmail, "password", adaPass))
	p.wantPage(t, http.StatusTooManyRequests, "login")
	p.wantSummary(t, "Too many login attempts. Try again later.")
	if p.Header.Get("Retry-After") == "" || p.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("429 headers: %v", p.Header)
	}
	if !strings.Contains(p.Body, `class="error-summary" id="login-form-summary" role="alert" tabindex="-1" autofocus`) {
		t.Error("a form-level error does not focus the summary")
	}
	if b.cookie("authkit_session") != "" {
		t.Error("a session cookie while limited")
	}
}

// TestCrossOriginPost: every form route refuses a cross-site post, as
// the JSON routes do, and changes nothing.
func TestCrossOriginPost(t *testing.T) {
	e := setup(t, nil)
	e.browser().register()
	b := e.browser()
	b.header.Set("Sec-Fetch-Site", "cross-site")
	for _, path := range []string{"/login", "/register", "/2fa", "/2fa/recover", "/logout", "/logout-all", "/forgot-password",
		"/reset-password/x", "/resend-verification", "/settings/2fa/setup", "/settings/2fa/confirm", "/settings/2fa/disable",
		"/settings/recovery-codes", "/settings/email", "/settings/password"} {
		p := b.post(path, form("email", adaEmail, "password", adaPass, "name", "Eve"))
		p.wantPage(t, http.StatusForbidden, "problem")
		p.wantSummary(t, "Cross-origin request blocked")
	}
	if b.cookie("authkit_session") != "" {
		t.Error("a cross-site login post signed in")
	}
	b.header.Set("Sec-Fetch-Site", "same-origin")
	b.logIn("/dashboard")
}

func TestTwoFactorLogin(t *testing.T) {
	e := setup(t, nil)
	owner := e.registered()
	secret, codes := owner.enableTwoFactor()

	b := e.loggedIn("/2fa")
	if b.cookie("2fa_pending") == "" || b.cookie("authkit_session") != "" {
		t.Fatal("after the password: want the 2fa_pending cookie and no session")
	}
	// A wrong code: beside the field, the pending login kept.
	p := b.post("/2fa", form("code", "000000"))
	if e.code(secret) == "000000" {
		t.Skip("the current code is 000000")
	}
	p.wantPage(t, http.StatusBadRequest, "twofactor")
	p.wantFieldError(t, "code", "Invalid 2FA code")
	if b.cookie("2fa_pending") == "" {
		t.Fatal("a wrong code dropped the pending login")
	}
	// The right code, typed as the app shows it.
	c := e.code(secret)
	b.post("/2fa", form("code", c[:3]+" "+c[3:])).wantRedirect(t, "/dashboard")
	if b.cookie("authkit_session") == "" || b.cookie("2fa_pending") != "" {
		t.Fatal("after the code: want a session and no pending cookie")
	}

	// The same code again, on another login: replay refused.
	b2 := e.loggedIn("/2fa")
	p = b2.post("/2fa", form("code", c))
	p.wantPage(t, http.StatusBadRequest, "twofactor")
	p.wantFieldError(t, "code", "Code already used")

	// A recovery code: the details open with the error, then it works once.
	p = b2.post("/2fa/recover", form("code", "aaaaaaaa-bbbbbbbb"))
	p.wantPage(t, http.StatusBadRequest, "twofactor")
	if got := p.fieldError(t, "recovery-code"); got != "Invalid recovery code" || !strings.Contains(p.Body, `<details id="recovery" open>`) {
		t.Errorf("wrong recovery code: %q\n%s", got, p.Body)
	}
	b2.post("/2fa/recover", form("code", codes[0])).wantRedirect(t, "/dashboard?done=recovery-used")
	p = b2.get("/dashboard?done=recovery-used")
	p.wantText(t, "notice", "You signed in with a recovery code. Recovery codes left: 7.")
	if n := len(e.user(adaEmail).RecoveryCodeHashes); n != 7 {
		t.Errorf("recovery codes in the store: %d, want 7", n)
	}
}

func TestTwoFactorWithoutPendingLogin(t *testing.T) {
	e := setup(t, nil)
	p := e.browser().post("/2fa", form("code", "123456"))
	p.wantPage(t, http.StatusUnauthorized, "twofactor")
	p.wantSummary(t, "No pending 2FA session")
	if !strings.Contains(p.Body, `id="restart-link" href="/login"`) {
		t.Error("no way back to the login page")
	}
}

func TestTwoFactorPendingExpires(t *testing.T) {
	e := setup(t, nil)
	owner := e.registered()
	secret, _ := owner.enableTwoFactor()
	b := e.loggedIn("/2fa")
	e.clock.Advance(auth.PendingLifetime + time.Second)
	p := b.post("/2fa", form("code", e.code(secret)))
	p.wantPage(t, http.StatusUnauthorized, "twofactor")
	p.wantSummary(t, "2FA session expired")
}

func TestLogout(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	p := b.post("/logout", nil)
	p.wantRedirect(t, "/login?done=logged-out")
	if b.cookie("authkit_session") != "" {
		t.Error("the session cookie survived the logout")
	}
	if got := b.get("/login?done=logged-out").text(t, "notice"); got != "You are signed out." {
		t.Errorf("notice %q", got)
	}
	// An unknown key shows nothing: a query cannot put text on a page.
	if body := b.get("/login?done=%3Cb%3Ehi").Body; strings.Contains(body, `id="notice"`) {
		t.Error("an unknown done key shows a notice")
	}
}

func TestLogoutEverywhere(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	other := e.loggedIn("/dashboard")
	before := e.user(adaEmail).SessionVersion
	b.post("/logout-all", nil).wantRedirect(t, "/login?done=logged-out-everywhere")
	if e.user(adaEmail).SessionVersion != before+1 {
		t.Error("the session version was not raised")
	}
	other.get("/dashboard").wantRedirect(t, "/login")
}
