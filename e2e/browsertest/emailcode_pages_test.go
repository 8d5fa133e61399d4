package browsertest

import (
	"regexp"
	"testing"
	"time"

	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestEmailCodePages signs in with a code mailed at the second step, in
// Chromium against each server with EMAIL_CODE=true (JavaScript on), and
// the net/http one with it off too: register and verify the address, turn
// 2FA on, log in with the password, press "Email me a code instead", read
// the code from the mail the server printed, type a wrong one (the error
// beside the field), then the right one, which signs in. On net/http with
// JavaScript on, axe-core audits the 2FA page offering the code, after the
// mail, and with the wrong code, light and dark: 0 violations.
func TestEmailCodePages(t *testing.T) {
	Chromium(t)
	for _, run := range []struct {
		fw string
		js bool
	}{{"nethttp", true}, {"nethttp", false}, {"gin", true}, {"fiber", true}} {
		js := run.js
		name := run.fw + "-" + map[bool]string{true: "js", false: "nojs"}[js]
		t.Run(name, func(t *testing.T) {
			audited := run.fw == "nethttp" && js
			if audited {
				AxePath(t)
			}
			f := newFlow(t, startWith(t, run.fw, "email codes: on", "EMAIL_CODE=true"), "emailcode-"+name, js)
			s, b := f.s, f.b
			audit := func(state string) {
				t.Helper()
				if !audited {
					return
				}
				b.AuditThemes(state)
			}

			b.Open(s.URL + "/register")
			submitRegistration(b, userName, email, password)
			b.WaitPage("dashboard", "/dashboard")
			b.Open(f.mailedLink("verify-email", 1))
			b.WaitText("notice", "Your email address is verified")
			f.turnOnTwoFactor()
			f.logout()

			f.login(email, password)
			b.WaitPage("twofactor", "/2fa")
			b.WaitText("email-code-send", "Email me a code instead")
			b.Shot("2fa-email-offered")
			audit("2FA, email code offered")

			b.Submit("email-send-form")
			b.WaitText("email-code-sent", "We mailed a 6-digit code to "+email+".")
			if !b.Eventually(`document.activeElement === document.getElementById("email-code")`) {
				t.Errorf("after the mail the focus is on #%s, want the code field", b.Focused())
			}
			b.Shot("2fa-email-sent")
			audit("2FA, email code sent")
			f.mailedCodeIn("email-code", "Invalid 2FA code", func() { b.Shot("2fa-email-wrong"); audit("2FA, wrong email code") })
			f.wantText("user-email", email)
			if b.Cookie("authkit_session") == nil || b.Cookie("2fa_pending") != nil {
				t.Error("after the mailed code: want a session cookie and no pending one")
			}
			b.NoProblems()
		})
	}
}

// mailedCodeIn types into the code field id (of the form id+"-form") a
// wrong code, which wantErr must show beside it (then wrong runs), and
// then the code the server mailed, which must lead to the dashboard.
func (f *flow) mailedCodeIn(id, wantErr string, wrong func()) {
	f.t.Helper()
	b := f.b
	code := mailedCode(f.t, f.s)
	bad := "000000"
	if code == bad {
		bad = "111111"
	}
	b.Fill(id, bad)
	b.Submit(id + "-form")
	f.fieldError(id, wantErr, 400)
	wrong()
	b.Fill(id, code)
	b.Submit(id + "-form")
	b.WaitPage("dashboard", "/dashboard")
}

// mailCode matches the code of the sign-in mail the console mailer printed.
var mailCode = regexp.MustCompile(`Your code: ([0-9]{6})`)

// mailedCode waits for the server's sign-in mail and returns its code.
func mailedCode(t *testing.T, s *servertest.Server) string {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		if m := mailCode.FindAllStringSubmatch(s.Stdout(), -1); m != nil {
			return m[len(m)-1][1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sign-in code mailed after %v; stdout:\n%s", Timeout, s.Stdout())
		}
		time.Sleep(50 * time.Millisecond) // the server mails asynchronously
	}
}
