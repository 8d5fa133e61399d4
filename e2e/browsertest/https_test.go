package browsertest

import (
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestPlainHTTPWarning opens a production server (Secure cookies) over
// plain HTTP on a name that is not a loopback address, as a deployment
// without TLS would be reached: the browser drops the sign-in cookie
// there, so the pages say, in an alert, that signing in needs HTTPS, and
// a login indeed comes back to the login page. On 127.0.0.1, where
// browsers keep Secure cookies, and on a development server (cookies not
// Secure), nothing is said.
func TestPlainHTTPWarning(t *testing.T) {
	Chromium(t)
	key, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	prod := servertest.Start(t, "nethttp", "APP_ENV=production", "SESSION_SECRET="+strings.Repeat("s", 32),
		"ENCRYPTION_KEY="+key, "SMTP_URL=smtp://127.0.0.1:1", "APP_URL=https://app.test", "DATABASE_URL=memory")
	dev := servertest.Start(t, "nethttp", "DATABASE_URL=memory")
	b := New(t, "plain-http", MapHost("app.test"))
	// Over plain HTTP on a name that is not loopback, Chromium ignores the
	// pages' Cross-Origin-Opener-Policy, and says so: expected here.
	t.Cleanup(func() {
		for _, p := range b.Problems() {
			if !strings.Contains(p, "The Cross-Origin-Opener-Policy header has been ignored, because the URL's origin was untrustworthy") {
				t.Errorf("page problem: %s", p)
			}
		}
	})
	onAppTest := func(s *servertest.Server) string { return strings.Replace(s.URL, "127.0.0.1", "app.test", 1) }

	b.Open(onAppTest(prod) + "/login")
	b.WaitPage("login", "/login")
	msg := b.WaitText("https-warning", "signing in needs HTTPS")
	if !strings.Contains(msg, "https://") {
		t.Errorf("the warning %q does not say to use an https:// address", msg)
	}
	if role := Eval[string](b, `document.getElementById("https-warning").getAttribute("role")`); role != "alert" {
		t.Errorf("#https-warning has role %q, want alert", role)
	}
	b.Shot("login-plain-http")

	// Why: a real login's cookie is dropped, and the dashboard sends the
	// person back to /login, where the warning explains it.
	b.Open(onAppTest(prod) + "/register")
	b.WaitText("https-warning", "signing in needs HTTPS")
	submitRegistration(b, userName, email, password)
	b.WaitPage("login", "/login")
	b.WaitText("https-warning", "signing in needs HTTPS")
	for _, name := range []string{auth.SecureSessionCookie, "authkit_session"} {
		if c := b.Cookie(name); c != nil {
			t.Errorf("the browser kept a Secure cookie over plain HTTP: %+v", c)
		}
	}

	for _, u := range []string{prod.URL + "/login", onAppTest(dev) + "/login"} {
		b.Open(u)
		b.WaitPage("login", "/login")
		if b.Visible("https-warning") {
			t.Errorf("%s: the HTTPS warning shows where the cookie is kept", u)
		}
	}
}
