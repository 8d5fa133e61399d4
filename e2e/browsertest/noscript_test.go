package browsertest

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestNoScriptLogin logs in with JavaScript turned off in Chromium, on each
// server, with a wrong password: the form posts to the login page itself,
// which answers 401 with the page and the error beside the password
// field, and neither the address bar nor any history entry ever holds the
// password.
func TestNoScriptLogin(t *testing.T) {
	Chromium(t)
	allAtOnce(t, []string{"nethttp", "gin", "fiber"}, func(t *testing.T, fw string) {
		s := servertest.Start(t, fw)
		b := New(t, fw+"-noscript")
		b.DisableScripts(true)
		const secret = "no-script-s3cret horse"
		b.Open(s.URL + "/login")
		b.WaitPage("login", "/login")
		b.Fill("email", "nobody@example.com")
		b.Fill("password", secret)
		b.Shot("login-noscript")
		b.Submit("login-form")
		f := &flow{t: t, b: b}
		f.fieldError("password", "Invalid credentials", 401)
		b.Shot("login-noscript-answer")
		loc, err := url.Parse(b.Location())
		if err != nil {
			t.Fatal(err)
		}
		if loc.Path != "/login" || loc.RawQuery != "" || strings.Contains(b.Location(), "s3cret") {
			t.Errorf("after submitting without JavaScript the address is %s, want /login without a query", b.Location())
		}
		if got := Eval[string](b, `document.getElementById("password").value`); got != "" {
			t.Errorf("the page filled the password in again: %q", got)
		}
		for _, u := range b.History() {
			if strings.Contains(u, "s3cret") || strings.Contains(u, "password=") || strings.Contains(u, "?") {
				t.Errorf("history entry %s: a form field in a URL", u)
			}
		}
	})
}

// TestNoScriptForms opens every page with JavaScript off and checks every
// form on it: each posts (never a GET, which would put the fields in the
// URL) to a page route of the same origin, never to the JSON API, so the
// answer is a page.
func TestNoScriptForms(t *testing.T) {
	s, b := registeredWithoutScripts(t, "noscript-forms", "No Script", "noscript@example.com")
	for path, want := range map[string]map[string]string{
		"/login":                  {"login-form": "/login", "logout-form": "/logout"},
		"/register":               {"register-form": "/register", "logout-form": "/logout"},
		"/2fa":                    {"totp-form": "/2fa", "recovery-form": "/2fa/recover", "logout-form": "/logout"},
		"/resend-verification":    {"resend-form": "/resend-verification", "logout-form": "/logout"},
		"/forgot-password":        {"forgot-form": "/forgot-password", "logout-form": "/logout"},
		"/reset-password/a-token": {"logout-form": "/logout"}, // a bad link: no form, the offer of a new one
		"/dashboard":              {"logout-form": "/logout"},
		"/settings/security": {"setup-form": "/settings/2fa/setup", "email-form": "/settings/email", "password-form": "/settings/password",
			"sessions-form": "/settings/sessions/end", "devices-form": "/settings/trusted-devices/forget", "logout-all-form": "/logout-all", "logout-form": "/logout"},
		"/settings/recovery-codes": {"logout-form": "/logout"}, // 2FA is off: nothing to replace
		"/settings/delete-account": {"delete-account-form": "/settings/delete-account", "logout-form": "/logout"},
	} {
		b.Open(s.URL + path)
		forms := Eval[map[string][]string](b, `Object.fromEntries([...document.forms].map(f => [f.id, [f.method, new URL(f.action).origin, new URL(f.action).pathname]]))`)
		if len(forms) != len(want) {
			t.Errorf("%s: forms %v, want %v", path, forms, want)
		}
		for id, action := range want {
			if got := forms[id]; fmt.Sprint(got) != fmt.Sprint([]string{"post", s.URL, action}) {
				t.Errorf("%s: form #%s: %q, want post to %s%s", path, id, got, s.URL, action)
			}
		}
	}
}

// TestNoScriptDeleteAccount deletes an account with JavaScript off: the
// security page links to the confirmation page, whose form refuses a wrong
// password beside its field and deletes the account with the right one,
// and the login page says so; signing in again is refused.
func TestNoScriptDeleteAccount(t *testing.T) {
	s, b := registeredWithoutScripts(t, "noscript-delete", "Leaving Soon", "leaving@example.com")
	b.Open(s.URL + "/settings/security")
	b.WaitPage("security", "/settings/security")
	href := Eval[string](b, `document.getElementById("delete-account-link").href`)
	if href != s.URL+"/settings/delete-account" {
		t.Fatalf("the delete link goes to %q", href)
	}
	b.Open(href)
	b.WaitPage("delete", "/settings/delete-account")
	b.Fill("delete-password", "a wrong password")
	b.Submit("delete-account-form")
	f := &flow{t: t, b: b}
	f.fieldError("delete-password", "Invalid password", 401)
	b.Fill("delete-password", "typed-secret-1")
	b.Submit("delete-account-form")
	b.WaitPage("login", "/login")
	if got := Eval[string](b, `document.getElementById("notice").textContent.trim()`); got != "Your account is deleted." {
		t.Errorf("notice %q", got)
	}
	b.Fill("email", "leaving@example.com")
	b.Fill("password", "typed-secret-1")
	b.Submit("login-form")
	f.fieldError("password", "Invalid credentials", 401)
}

// registeredWithoutScripts starts the nethttp server and a browser with
// JavaScript off (its screenshots under shots), and registers name and
// addr there with the password typed-secret-1, up to the dashboard.
func registeredWithoutScripts(t *testing.T, shots, name, addr string) (*servertest.Server, *Browser) {
	t.Helper()
	Chromium(t)
	s := servertest.Start(t, "nethttp")
	b := New(t, shots)
	b.DisableScripts(true)
	b.Open(s.URL + "/register")
	submitRegistration(b, name, addr, "typed-secret-1")
	b.WaitPage("dashboard", "/dashboard")
	return s, b
}
