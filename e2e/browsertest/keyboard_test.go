package browsertest

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestKeyboardOnly registers, turns on 2FA, signs out and signs in with a
// password and a TOTP code using the keyboard alone: Tab to move, typing,
// Enter to submit, never a click. With JavaScript on and off.
func TestKeyboardOnly(t *testing.T) {
	Chromium(t)
	for _, js := range []bool{true, false} {
		name := map[bool]string{true: "js", false: "nojs"}[js]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFlow(t, servertest.Start(t, "nethttp"), "keyboard-"+name, js)
			s, b := f.s, f.b
			// at tabs to the element id and presses keys there: text to
			// type, or kb.Enter on a link or button.
			at := func(id, keys string) {
				t.Helper()
				b.TabTo(id)
				b.Press(keys)
			}

			b.Open(s.URL + "/register")
			b.WaitPage("register", "/register")
			at("name", userName)
			at("email", email)
			at("password", password)
			b.Press(kb.Enter)
			b.WaitPage("dashboard", "/dashboard")
			b.WaitText("user-email", email)

			at("nav-security", kb.Enter)
			b.WaitPage("security", "/settings/security")
			at("setup-start", kb.Enter)
			b.WaitFor("the key", `!!document.getElementById("totp-secret")`)
			f.secret = strings.ReplaceAll(b.Text("totp-secret"), " ", "")
			at("confirm-code", f.code(time.Now()))
			b.Press(kb.Enter)
			b.WaitText("twofa-state", "Two-factor authentication is on")
			f.confirmed = time.Now()

			at("logout", kb.Enter)
			b.WaitPage("login", "/login")
			at("email", email)
			at("password", password)
			b.Press(kb.Enter)
			b.WaitPage("twofactor", "/2fa")
			next := time.Unix((f.confirmed.Unix()/30+1)*30, 0)
			if d := time.Until(next); d > 0 {
				time.Sleep(d) // the confirming code's step is spent: wait for the next
			}
			at("code", f.code(time.Now()))
			b.Press(kb.Enter)
			b.WaitPage("dashboard", "/dashboard")
			b.WaitText("user-2fa", "on")
			b.Shot("keyboard-done")
		})
	}
}
