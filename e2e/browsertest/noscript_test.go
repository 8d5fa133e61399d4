package browsertest

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestNoScriptLogin logs in with JavaScript turned off in Chromium, on each
// server: the form posts, so the browser goes to the API route with no
// query, and neither the address bar nor any history entry ever holds the
// password. The API's answer shows (the pages need their script to be
// pages), and it is not a server error.
func TestNoScriptLogin(t *testing.T) {
	Chromium(t)
	var wg sync.WaitGroup
	for _, fw := range []string{"nethttp", "gin", "fiber"} {
		wg.Go(func() {
			t.Run(fw, func(t *testing.T) {
				s := servertest.Start(t, fw)
				b := New(t, fw+"-noscript")
				b.DisableScripts(true)
				const secret = "no-script-s3cret horse"
				b.Open(s.URL + "/login")
				b.WaitFor("the login page", `document.readyState === "complete" && document.body.dataset.page === "login"`)
				if !b.Visible("noscript-notice") {
					t.Error("/login without JavaScript: no notice that the pages need it")
				}
				b.Fill("email", "nobody@example.com")
				b.Fill("password", secret)
				b.Shot("login-noscript")
				b.Submit("login-form")
				b.WaitFor("the API's answer", `location.pathname === "/api/login" && document.readyState === "complete"`)
				b.Shot("login-noscript-answer")
				loc, err := url.Parse(b.Location())
				if err != nil {
					t.Fatal(err)
				}
				if loc.RawQuery != "" || strings.Contains(b.Location(), "s3cret") {
					t.Errorf("after submitting without JavaScript the address is %s: it has a query", b.Location())
				}
				if got := strings.TrimSpace(Eval[string](b, `document.body.innerText`)); got != `{"error":"Invalid credentials","code":"invalid_credentials"}` {
					t.Errorf("the API answered %q, want Invalid credentials", got)
				}
				if status := Eval[int](b, `performance.getEntriesByType("navigation")[0].responseStatus`); status != 401 {
					t.Errorf("the API answered status %d, want 401", status)
				}
				for _, u := range b.History() {
					if strings.Contains(u, "s3cret") || strings.Contains(u, "password=") || strings.Contains(u, "?") {
						t.Errorf("history entry %s: a form field in a URL", u)
					}
				}
			})
		})
	}
	wg.Wait()
}

// TestNoScriptForms opens every page with JavaScript off and submits each
// form a person can see there, filled in: every one posts to its API
// route, nothing typed appears in a URL or the history, and no answer is a
// server error. The hidden forms (shown by the script) must post too. The
// pages go in order: the registration signs the browser in, so the forms
// after it act on that account.
func TestNoScriptForms(t *testing.T) {
	Chromium(t)
	s := servertest.Start(t, "nethttp")
	b := New(t, "noscript-forms")
	b.DisableScripts(true)
	// A value for each field name that the browser's own checks accept.
	values := map[string]string{
		"email": "nobody@example.com", "newEmail": "other@example.com", "name": "No Script",
		"password": "typed-secret-1", "confirmPassword": "typed-secret-1", "currentPassword": "typed-secret-1",
		"newPassword": "typed-secret-2", "code": "123456",
	}
	for _, tc := range []struct {
		path    string
		forms   map[string]string // every form on the page: id -> action
		submit  []string          // the visible ones, submitted in turn
		answers []int             // the status each submit gets
	}{
		{"/login", map[string]string{"login-form": "/api/login"}, []string{"login-form"}, []int{401}},
		{"/register", map[string]string{"register-form": "/api/auth/register"}, []string{"register-form"}, []int{200}},
		{"/2fa", map[string]string{"totp-form": "/api/2fa/verify", "recovery-form": "/api/2fa/recover"}, []string{"totp-form"}, []int{401}},
		{"/resend-verification", map[string]string{"resend-form": "/api/auth/resend-verification"}, []string{"resend-form"}, []int{200}},
		{"/forgot-password", map[string]string{"forgot-form": "/api/auth/forgot-password"}, []string{"forgot-form"}, []int{200}},
		{"/reset-password/not-a-token", map[string]string{"reset-form": "/api/auth/reset-password/not-a-token"}, []string{"reset-form"}, []int{400}},
		{"/settings/security", map[string]string{"confirm-form": "/api/2fa/confirm", "disable-form": "/api/2fa/disable",
			"email-form": "/api/auth/change-email", "password-form": "/api/auth/change-password"},
			[]string{"email-form", "password-form"}, []int{200, 200}},
		// 2FA is off: the API says so, nothing is replaced.
		{"/settings/recovery-codes", map[string]string{"regenerate-form": "/api/2fa/regenerate-codes"}, []string{"regenerate-form"}, []int{400}},
	} {
		{
			b.Open(s.URL + tc.path)
			forms := Eval[map[string][]string](b, `Object.fromEntries([...document.forms].map(f => [f.id, [f.method, f.getAttribute("action")]]))`)
			if len(forms) != len(tc.forms) {
				t.Errorf("%s: forms %v, want %v", tc.path, forms, tc.forms)
			}
			for id, action := range tc.forms {
				if got := forms[id]; len(got) != 2 || got[0] != "post" || got[1] != action {
					t.Errorf("%s: form #%s: method and action %q, want post %s", tc.path, id, got, action)
				}
			}
			for i, id := range tc.submit {
				b.Open(s.URL + tc.path)
				for _, name := range Eval[[]string](b, fmt.Sprintf(`[...document.getElementById(%s).querySelectorAll("input:not([type=checkbox])")].map(i => i.id + " " + i.name)`, jsString(id))) {
					inputID, field, _ := strings.Cut(name, " ")
					b.Fill(inputID, values[field])
				}
				b.Submit(id)
				b.WaitFor("the answer to #"+id, fmt.Sprintf(`location.pathname === %s && document.readyState === "complete"`, jsString(tc.forms[id])))
				b.Shot(strings.ReplaceAll(strings.Trim(tc.path, "/"), "/", "-") + "-" + id)
				if strings.Contains(b.Location(), "?") || strings.Contains(b.Location(), "typed-secret") {
					t.Errorf("#%s: posted to %s, which has a query", id, b.Location())
				}
				if status := Eval[int](b, `performance.getEntriesByType("navigation")[0].responseStatus`); status != tc.answers[i] {
					t.Errorf("#%s: answered %d, want %d: %s", id, status, tc.answers[i], Eval[string](b, `document.body.innerText`))
				}
			}
			for _, u := range b.History() {
				if strings.Contains(u, "?") || strings.Contains(u, "typed-secret") || strings.Contains(u, "nobody%40") {
					t.Errorf("history entry %s: a form field in a URL", u)
				}
			}
		}
	}
}
