package browsertest

import (
	"regexp"
	"testing"
	"time"

	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestEmailSignInPages signs in by a mailed code and by a mailed link, in
// Chromium against the net/http server with EMAIL_SIGN_IN=true, with
// JavaScript on and off: from the login page's "Email me a sign-in code",
// an address without an account (which signs up this way) gets a code; a
// wrong code shows its error beside the field; the right one signs in.
// Signed out, the same address asks again and opens the mailed link: its
// page only shows a button (a mail scanner's GET signs no one in), which
// signs in. With JavaScript on, axe-core audits each page, light and dark.
func TestEmailSignInPages(t *testing.T) {
	Chromium(t)
	for _, js := range []bool{true, false} {
		name := map[bool]string{true: "js", false: "nojs"}[js]
		t.Run(name, func(t *testing.T) {
			if js {
				AxePath(t)
			}
			f := newFlow(t, startWith(t, "nethttp", "email sign-in: on", "EMAIL_SIGN_IN=true", "DATABASE_URL=memory"), "emailsignin-"+name, js)
			s, b := f.s, f.b
			audit := func(state string) {
				t.Helper()
				if js {
					b.AuditThemes(state)
				}
			}
			const addr = "newcomer@example.com"

			b.Open(s.URL + "/login")
			b.WaitPage("login", "/login")
			b.Click("email-sign-in-link")
			b.WaitPage("signin", "/email-sign-in")
			b.Shot("signin")
			audit("email sign-in, the address")
			b.Fill("email", addr)
			b.Submit("signin-form")
			b.WaitText("signin-sent", "If "+addr+" can sign in, we mailed a 6-digit code to it.")
			b.Shot("signin-sent")
			audit("email sign-in, the code")
			f.mailedCodeIn("signin-code", "Invalid or expired sign-in code", func() { b.Shot("signin-wrong"); audit("email sign-in, a wrong code") })
			f.wantText("user-email", addr)
			f.logout()

			// The link of a second mail, opened in this browser.
			b.Open(s.URL + "/email-sign-in")
			b.WaitPage("signin", "/email-sign-in")
			b.Fill("email", addr)
			b.Submit("signin-form")
			b.WaitText("signin-sent", addr)
			link := mailedSignInLink(t, s, 2)
			b.Open(s.URL + link)
			b.WaitText("signin-link-submit", "Sign in")
			if b.Cookie("authkit_session") != nil {
				t.Fatal("opening the link signed in before its button was pressed")
			}
			b.Shot("signin-link")
			audit("email sign-in, the link's page")
			b.Click("signin-link-submit")
			b.WaitPage("dashboard", "/dashboard")
			f.wantText("user-email", addr)
			b.NoProblems()
		})
	}
}

// signInLink matches the path of a sign-in link the console mailer printed.
var signInLink = regexp.MustCompile(`https?://[^/\s]+(/email-sign-in/[A-Za-z0-9_-]+)`)

// mailedSignInLink waits until the server has printed n sign-in links and
// returns the path of the last.
func mailedSignInLink(t *testing.T, s *servertest.Server, n int) string {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		var paths []string
		for _, m := range signInLink.FindAllStringSubmatch(s.Stdout(), -1) {
			if len(paths) == 0 || paths[len(paths)-1] != m[1] {
				paths = append(paths, m[1]) // a mail prints its link twice (text and HTML)
			}
		}
		if len(paths) >= n {
			return paths[len(paths)-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sign-in links mailed after %v, want %d; stdout:\n%s", len(paths), Timeout, n, s.Stdout())
		}
		time.Sleep(50 * time.Millisecond) // the server mails asynchronously
	}
}
