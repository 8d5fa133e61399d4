package browsertest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestAccessibility audits every page of the pages module with axe-core,
// in every state a person meets (signed out and in, errors shown, 2FA off,
// being set up and on, recovery codes shown, the confirmation before
// replacing them, the 404 page), each in the light and the dark theme:
// 0 violations of the rules axe runs by default (WCAG 2.x A and AA and
// its best practices). At the end it breaks the page on purpose, to show
// that an audit can fail, in either theme.
//
// With AUTHKIT_DOCS_SCREENSHOTS=1 it also writes the pictures of the
// default and the dark theme in pages/docs/ that pages/README.md shows.
func TestAccessibility(t *testing.T) {
	Chromium(t)
	AxePath(t)
	s := servertest.Start(t, "nethttp")
	b := New(t, "a11y")
	f := &flow{t: t, s: s, b: b, js: true}
	audit := b.AuditThemes
	docs := os.Getenv("AUTHKIT_DOCS_SCREENSHOTS") == "1"
	picture := func(name string) {
		t.Helper()
		if !docs {
			return
		}
		dir := filepath.Join(filepath.Dir(ArtifactsDir(t)), "pages", "docs")
		for _, dark := range []bool{false, true} {
			b.DarkMode(dark)
			file := name + ".png"
			if dark {
				file = name + "-dark.png"
			}
			b.ShotTo(filepath.Join(dir, file))
		}
		b.DarkMode(false)
	}

	for path, page := range map[string]string{"/login": "login", "/register": "register", "/forgot-password": "forgot",
		"/reset-password/a-token": "reset", "/2fa": "twofactor", "/no/such-page": "notfound"} {
		b.Open(s.URL + path)
		b.WaitPage(page, path)
		audit(path)
	}
	b.Viewport(900, 700)
	b.Open(s.URL + "/login")
	b.WaitPage("login", "/login")
	picture("login")
	b.Viewport(1280, 900)
	b.Open(s.URL + "/verify-email/not-a-token")
	f.summary("verify", "Invalid or expired verification link", 400)
	audit("bad verification link")
	b.Open(s.URL + "/reset-password/not-a-token")
	f.summary("reset-form", "Invalid or expired reset link", 400)
	audit("bad reset link")

	b.Open(s.URL + "/register")
	submitRegistration(b, userName, email, password)
	b.WaitPage("dashboard", "/dashboard")
	b.WaitText("notice", "Welcome")
	audit("dashboard, unverified")
	b.Open(s.URL + "/resend-verification")
	b.WaitPage("resend", "/resend-verification")
	audit("resend")
	b.Open(s.URL + "/settings/confirm-password?next=security")
	b.WaitPage("confirm", "/settings/confirm-password")
	audit("password confirmation")
	b.Fill("confirm-password", "wrong password")
	b.Submit("confirm-password-form")
	f.fieldError("confirm-password", "Invalid password", 401)
	audit("password confirmation, wrong password")
	b.Open(s.URL + "/settings/security")
	b.WaitText("twofa-state", "is off")
	audit("security, 2FA off")
	b.Fill("newEmail", newEmail)
	b.Fill("email-password", "wrong password")
	b.Submit("email-form")
	f.fieldError("email-password", "Invalid password", 401)
	audit("security, email change error")
	b.Click("setup-start")
	b.WaitFor("the key", `!!document.getElementById("totp-secret")`)
	f.secret = strings.ReplaceAll(b.Text("totp-secret"), " ", "")
	audit("security, 2FA setup")
	b.Viewport(900, 700)
	picture("security-setup")
	b.Viewport(1280, 900)
	b.Fill("confirm-code", f.wrongCode())
	b.Submit("confirm-form")
	f.fieldError("confirm-code", "Invalid code", 400)
	audit("security, wrong confirm code")
	b.Fill("confirm-code", f.code(time.Now()))
	b.Submit("confirm-form")
	b.WaitText("twofa-state", "is on")
	f.shownCodes()
	audit("security, recovery codes shown")
	b.Open(s.URL + "/settings/security")
	b.WaitText("twofa-state", "is on")
	audit("security, 2FA on")
	b.Open(s.URL + "/settings/recovery-codes")
	b.WaitText("codes-left", "Recovery codes left: 8.")
	audit("recovery codes, confirmation")
	b.Submit("regenerate-form")
	codes := f.shownCodes()
	audit("recovery codes, replaced")

	b.Click("logout")
	b.WaitPage("login", "/login")
	f.login(email, "wrong password")
	f.fieldError("password", "Invalid credentials", 401)
	audit("login error")
	f.login(email, password)
	b.WaitPage("twofactor", "/2fa")
	b.Fill("code", f.wrongCode())
	b.Submit("totp-form")
	f.fieldError("code", "Invalid 2FA code", 400)
	audit("2FA, wrong code")
	b.Click("use-recovery")
	b.Fill("recovery-code", "aaaaaaaa-bbbbbbbb")
	b.Submit("recovery-form")
	f.fieldError("recovery-code", "Invalid recovery code", 400)
	audit("2FA, wrong recovery code")
	b.Fill("recovery-code", codes[0])
	b.Submit("recovery-form")
	b.WaitText("notice", "Recovery codes left: 7.")
	audit("dashboard, recovery code used")

	b.Open(s.URL + "/register")
	submitRegistration(b, userName, email, password)
	f.fieldError("email", "Email already registered", 400)
	audit("register error")
	b.Open(s.URL + "/forgot-password")
	b.Fill("email", email)
	b.Submit("forgot-form")
	b.WaitText("notice", "If an account exists")
	audit("forgot, sent")
	b.Open(f.mailedLink("reset-password", 1))
	b.Fill("password", password2)
	b.Fill("confirmPassword", password2+"x")
	b.Submit("reset-form")
	f.fieldError("confirmPassword", "Passwords do not match", 400)
	audit("reset, passwords differ")

	// The audit can fail: an input without a label and an image without
	// a text are reported.
	Eval[bool](b, `(() => { const i = document.createElement("input"); const m = document.createElement("img");
		m.src = "data:image/gif;base64,R0lGODlhAQABAAAAACw="; document.querySelector("main").append(i, m); return true })()`)
	var ids []string
	for _, v := range b.Violations() {
		ids = append(ids, v.ID)
	}
	if !slices.Contains(ids, "label") || !slices.Contains(ids, "image-alt") {
		t.Errorf("axe found %q on a page with an unlabelled input and an image without alt, want label and image-alt", ids)
	}

	// So can the dark theme's: text nearly the colour of the dark card is
	// reported.
	b.DarkMode(true)
	if !Eval[bool](b, `(() => { if (!matchMedia("(prefers-color-scheme: dark)").matches) return false; document.documentElement.style.setProperty("--fg", "#2a3040"); return true })()`) {
		t.Fatal("DarkMode(true): the page does not see prefers-color-scheme: dark")
	}
	ids = nil
	for _, v := range b.Violations() {
		ids = append(ids, v.ID)
	}
	if !slices.Contains(ids, "color-contrast") {
		t.Errorf("axe found %q on the dark page with text of #2a3040 on the #1a202b card, want color-contrast", ids)
	}
	b.DarkMode(false)
}

// TestAccessibilityPasskeysAndSessions audits, like TestAccessibility, the
// states of the pages that need the passkeys module and the session and
// trusted-browser lists: the login page with "Sign in with a passkey" and
// its error, the security page with no passkey and with one, "Add a
// passkey", a rename error, two sessions listed and one ended, the
// password confirmation before a passkey change, the 2FA page offering a
// passkey and to trust the browser, a trusted browser listed and
// forgotten; light and dark, 0 violations.
func TestAccessibilityPasskeysAndSessions(t *testing.T) {
	Chromium(t)
	AxePath(t)
	s := passkeyExample(t, "nethttp")
	b := New(t, "a11y-passkeys", MapHost("localhost"))
	f := &flow{t: t, s: s, b: b, js: true}
	audit := b.AuditThemes
	b.Open(s.URL + "/login")
	addAuthenticator(t, b)
	withoutAutofill(t, b) // the buttons, not the virtual authenticator's instant autofill
	b.Open(s.URL + "/login")
	b.WaitText("passkey-signin", "Sign in with a passkey")
	audit("login, passkey offered")
	b.Open(s.URL + "/register")
	b.WaitText("passkey-signup", "Sign up with a passkey")
	audit("register, passkey sign-up offered")

	b.Open(s.URL + "/register")
	submitRegistration(b, userName, email, password)
	b.WaitPage("dashboard", "/dashboard")
	f.verifyFirstLink() // a passkey needs a verified address
	// A second session of the account, from a request whose cookie the
	// browser does not keep.
	if st := Eval[float64](b, `fetch("/api/auth/login", {method: "POST", credentials: "omit", headers: {"Content-Type": "application/json"},
		body: JSON.stringify({email: "`+email+`", password: "`+password+`"})}).then(r => r.status)`); st != 200 {
		t.Fatalf("second session: %v", st)
	}
	b.Open(s.URL + "/settings/security")
	b.WaitText("no-passkeys", "You have no passkeys yet.")
	b.WaitFor("the add form", `!!document.getElementById("passkey-add-form")`)
	if n := Eval[float64](b, `document.querySelectorAll("#session-list li").length`); n != 2 {
		t.Fatalf("%v sessions listed, want 2", n)
	}
	audit("security, no passkey, add form, two sessions")
	Eval[bool](b, `(() => { [...document.querySelectorAll("#session-list li")].find(li => !li.textContent.includes("This browser")).querySelector("button").click(); return true })()`)
	b.WaitText("notice", "That session is signed out.")
	audit("security, other session ended")

	b.Fill("passkey-new-name", "Chromium")
	b.Submit("passkey-add-form")
	b.WaitText("notice", "Passkey added.")
	audit("security, passkey listed")
	b.Fill("passkey-name-0", strings.Repeat("x", 65))
	b.Submit("passkey-rename-0")
	f.fieldError("passkey-name-0", "Name is too long", 400)
	audit("security, passkey rename error")
	b.Open(s.URL + "/settings/confirm-password?next=passkeys")
	b.WaitText("confirm-password-form", "before adding or deleting a passkey")
	audit("password confirmation before a passkey change")

	f.turnOnTwoFactor()
	codes := f.shownCodes()
	f.logout()
	f.login(email, password)
	b.WaitPage("twofactor", "/2fa")
	b.WaitText("passkey-2fa", "Use a passkey")
	audit("2FA, passkey and trust offered")
	b.Click("use-recovery")
	b.Click("recovery-trust")
	b.Fill("recovery-code", codes[0])
	b.Submit("recovery-form")
	b.WaitText("notice", "Recovery codes left: 7.")
	b.Open(s.URL + "/settings/security")
	b.WaitFor("the trusted browser", `document.querySelectorAll("#device-list li").length === 1`)
	audit("security, trusted browser listed")
	b.Submit("devices-form")
	b.WaitText("notice", "That browser will ask for the second step again.")
	b.WaitText("no-devices", "No browser is trusted.")
	audit("security, trusted browser forgotten")

	b.Submit("passkey-delete-0")
	b.WaitText("notice", "Passkey deleted.")
	audit("security, passkey deleted")
	f.logout()
	b.Click("passkey-signin")
	b.WaitText("passkey-signin-error", "Passkey could not be verified")
	audit("login, passkey refused")
}
