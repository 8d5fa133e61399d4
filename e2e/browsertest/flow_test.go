package browsertest

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestPeople walks every page of the pages module as a person would, in
// Chromium, against each example server, once with JavaScript on and once
// with it off: register, verify the email from the mailed link, turn on
// two-factor authentication from the QR code's key, keep the recovery
// codes (downloaded as a file), log in with a code and with a recovery
// code, replace the codes after a confirmation, reset a forgotten
// password, change the email and the password, turn 2FA off, sign out
// everywhere. Errors must show beside their field, marked and focused.
// Every page is screenshotted and must cause no console error or CSP
// violation.
//
// The six subtests (three servers, JavaScript on and off) run at the same
// time, whatever -parallel says (t.Run from goroutines), so that their one
// real wait, for the next 30-second TOTP step (see loginWithCode),
// overlaps. Each has a server and a browser of its own.
func TestPeople(t *testing.T) {
	Chromium(t)
	allAtOnce(t, []string{"nethttp", "gin", "fiber"}, func(t *testing.T, fw string) {
		allAtOnce(t, []string{"js", "nojs"}, func(t *testing.T, name string) {
			newFlow(t, servertest.Start(t, fw), fw+"-"+name, name == "js").run()
		})
	})
}

// allAtOnce runs f as a subtest for each name, all of them at the same
// time whatever -parallel says (t.Run from goroutines), and returns when
// every one has ended.
func allAtOnce(t *testing.T, names []string, f func(t *testing.T, name string)) {
	t.Helper()
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			t.Run(name, func(t *testing.T) { f(t, name) })
		})
	}
	wg.Wait()
}

const (
	userName  = "Ada Lovelace"
	email     = "ada@example.com"
	newEmail  = "ada.lovelace@example.com"
	password  = "correct horse battery"
	password2 = "staple horse battery 2"
)

// flow is one person's visit to one server.
type flow struct {
	t  *testing.T
	s  *servertest.Server
	b  *Browser
	js bool // JavaScript on

	secret    string    // the TOTP key shown on the settings page
	confirmed time.Time // when the confirming code was accepted
	codes     []string  // the recovery codes, as last shown
}

// newFlow returns a flow against s in a new browser (its screenshots
// under shots) with JavaScript on or off.
func newFlow(t *testing.T, s *servertest.Server, shots string, js bool) *flow {
	t.Helper()
	b := New(t, shots)
	b.DisableScripts(!js)
	return &flow{t: t, s: s, b: b, js: js}
}

func (f *flow) run() {
	f.register()
	f.verifyEmail()
	f.enableTwoFactor()
	f.loginWithRecoveryCode()
	f.regenerateCodes()
	f.loginWithCode() // last of these: it may have to wait for the next TOTP step
	f.resetPassword()
	f.wrongCodeThenRecovery()
	f.changeEmailAndDisable()
	f.changePassword()
	f.verifyLoggedOut()
	f.phone()
	f.signOutEverywhere()
	f.notFound()
	if f.js {
		f.cspIsEnforced()
	}
}

func (f *flow) page(path string) string { return f.s.URL + path }

func (f *flow) register() {
	b := f.b
	b.Open(f.page("/register"))
	b.WaitPage("register", "/register")
	if f.js {
		// The show-password toggle: the script shows it; it turns the
		// field into a text field and back, saying so with aria-pressed.
		b.Fill("password", password)
		b.Click("password-reveal")
		if !Eval[bool](b, `document.getElementById("password").type === "text" && document.getElementById("password-reveal").getAttribute("aria-pressed") === "true"`) {
			f.t.Error("register: show password did not show it")
		}
		b.Click("password-reveal")
		if !Eval[bool](b, `document.getElementById("password").type === "password"`) {
			f.t.Error("register: hide password did not hide it")
		}
	} else {
		f.wantHidden("password-reveal", "register: the show-password toggle shows without JavaScript, where it cannot work")
	}
	b.Shot("register")
	submitRegistration(b, userName, email, password)
	b.WaitPage("dashboard", "/dashboard")
	b.WaitText("notice", "We sent you a link to verify your email address")
	b.WaitText("unverified-notice", "not verified")
	f.wantText("user-name", userName)
	f.wantText("user-email", email)
	f.wantText("user-2fa", "off")
	b.Shot("dashboard-unverified")
}

func (f *flow) verifyEmail() {
	b := f.b
	// A link that is not a token: the page says so and offers a new link.
	b.Open(f.page("/verify-email/not-a-token"))
	b.WaitPage("verify", "/verify-email/not-a-token")
	f.summary("verify", "Invalid or expired verification link", 400)
	b.Shot("verify-invalid")
	b.Click("verify-resend-link")
	b.WaitPage("resend", "/resend-verification")
	b.Submit("resend-form")
	b.WaitPage("resend", "/resend-verification")
	b.WaitText("notice", "Verification email sent")
	b.Shot("resend-sent")

	// The newest mailed link verifies and lands on the dashboard's notice.
	b.Open(f.mailedLink("verify-email", 2))
	b.WaitPage("dashboard", "/dashboard")
	if got := b.Location(); !strings.HasSuffix(got, "/dashboard?done=email-verified") {
		f.t.Errorf("after verifying: at %s, want /dashboard?done=email-verified", got)
	}
	b.WaitText("notice", "Your email address is verified")
	f.wantHidden("unverified-notice", "dashboard: unverified notice still shown after verification")
	b.Shot("dashboard-verified")
}

// turnOnTwoFactor turns 2FA on from the security page, the short way
// (enableTwoFactor walks every state of it), and keeps the key.
func (f *flow) turnOnTwoFactor() {
	b := f.b
	b.Open(f.page("/settings/security"))
	b.Click("setup-start")
	b.WaitFor("the key", `!!document.getElementById("totp-secret")`)
	f.secret = strings.ReplaceAll(b.Text("totp-secret"), " ", "")
	b.Fill("confirm-code", f.code(time.Now()))
	b.Submit("confirm-form")
	b.WaitText("twofa-state", "Two-factor authentication is on")
}

func (f *flow) enableTwoFactor() {
	b := f.b
	b.Open(f.page("/settings/security"))
	b.WaitPage("security", "/settings/security")
	b.WaitText("twofa-state", "Two-factor authentication is off")
	b.Shot("security-off")

	b.Click("setup-start")
	// The QR code is an image the server rendered, shown under the CSP.
	b.WaitFor("the QR code image to load", `(i => i && i.complete && i.naturalWidth >= 100)(document.getElementById("qr-image"))`)
	// The key shows in groups of four for typing it by hand.
	b.WaitFor("the key", `/^([A-Z2-7]{4} ){3,}[A-Z2-7]{1,4}$/.test(document.getElementById("totp-secret").textContent)`)
	f.secret = strings.ReplaceAll(b.Text("totp-secret"), " ", "")
	if f.js && !strings.HasSuffix(b.Location(), "/settings/security") {
		f.t.Errorf("setup with JavaScript: at %s, want the QR code inline on /settings/security", b.Location())
	}
	b.Shot("security-setup")

	// A wrong code first: the error shows beside the field, the same QR
	// code and key stay, 2FA stays off.
	b.Fill("confirm-code", f.wrongCode())
	b.Submit("confirm-form")
	f.fieldError("confirm-code", "Invalid code", 400)
	if got := strings.ReplaceAll(b.Text("totp-secret"), " ", ""); got != f.secret {
		f.t.Errorf("after a wrong code the key is %s, want the same %s", got, f.secret)
	}
	b.Shot("security-setup-wrong-code")

	b.Fill("confirm-code", f.code(time.Now()))
	b.Submit("confirm-form")
	b.WaitText("twofa-state", "Two-factor authentication is on")
	f.confirmed = time.Now()
	f.codes = f.shownCodes()
	b.Shot("security-codes")

	if f.js {
		b.AllowClipboard(f.s.URL)
		b.Click("codes-copy")
		b.WaitText("codes-copied", "Copied.")
		if got := strings.Fields(Eval[string](b, `navigator.clipboard.readText()`)); !slices.Equal(got, f.codes) {
			f.t.Errorf("copied recovery codes: %q, want the 8 shown: %v", got, f.codes)
		}
	} else {
		f.wantHidden("codes-copy", "the Copy button shows without JavaScript, where it cannot work")
	}

	name, content := b.Download("codes-download")
	if name != "recovery-codes.txt" {
		f.t.Errorf("recovery codes download named %q, want recovery-codes.txt", name)
	}
	if got := strings.Fields(string(content)); !slices.Equal(got, f.codes) {
		f.t.Errorf("downloaded recovery codes:\n%s\nwant the 8 shown: %v", content, f.codes)
	}
}

// shownCodes reads the recovery codes on the page: 8 of them, each shown
// once.
func (f *flow) shownCodes() []string {
	b := f.b
	b.WaitFor("8 recovery codes", `document.querySelectorAll("#recovery-codes li").length === 8`)
	codes := Eval[[]string](b, `[...document.querySelectorAll("#recovery-codes li")].map(li => li.textContent)`)
	format := regexp.MustCompile(`^[0-9a-z]{8}-[0-9a-z]{8}$`)
	for _, c := range codes {
		if !format.MatchString(c) {
			f.t.Errorf("recovery code %q does not look like one", c)
		}
	}
	return codes
}

func (f *flow) loginWithRecoveryCode() {
	b := f.b
	f.logout()
	b.WaitText("notice", "You are signed out.")
	b.Shot("login")
	f.login(email, password)
	b.WaitPage("twofactor", "/2fa")
	b.Click("use-recovery")
	b.Fill("recovery-code", f.codes[0])
	b.Shot("2fa-recovery")
	b.Submit("recovery-form")
	b.WaitPage("dashboard", "/dashboard")
	b.WaitText("notice", "Recovery codes left: 7.")
	if c := b.Cookie("authkit_session"); c == nil || !c.Session {
		f.t.Errorf("after a login without remember: session cookie %+v, want a browser-session cookie", c)
	}
	b.Shot("dashboard-recovery-used")
}

// regenerateCodes replaces the recovery codes, which takes a confirmation:
// the settings page's button leads to a page that says what will happen,
// where Cancel changes nothing.
func (f *flow) regenerateCodes() {
	b := f.b
	b.Open(f.page("/settings/security"))
	b.WaitPage("security", "/settings/security")
	b.WaitText("twofa-state", "Recovery codes left: 7")
	b.Click("regenerate")
	b.WaitPage("codes", "/settings/recovery-codes")
	b.WaitText("codes-left", "Recovery codes left: 7.")
	f.wantHidden("codes-box", "recovery codes: new codes shown before the person confirmed")
	b.Shot("codes-confirm")
	b.Click("regenerate-cancel")
	b.WaitPage("security", "/settings/security")
	b.WaitText("twofa-state", "Recovery codes left: 7")

	b.Click("regenerate")
	b.WaitPage("codes", "/settings/recovery-codes")
	b.WaitText("codes-left", "Recovery codes left: 7.")
	b.Submit("regenerate-form")
	old := f.codes
	f.codes = f.shownCodes()
	for _, c := range f.codes {
		if slices.Contains(old, c) {
			f.t.Errorf("regenerated recovery code %s was already an old one", c)
		}
	}
	f.wantHidden("regenerate-form", "recovery codes: the Replace button is still offered after replacing them")
	b.Shot("codes-regenerated")
	b.Click("codes-back-link")
	b.WaitPage("security", "/settings/security")
	b.WaitText("twofa-state", "Recovery codes left: 8")
}

// loginWithCode logs out and back in with a code from the authenticator.
func (f *flow) loginWithCode() {
	b := f.b
	f.logout()
	b.Click("remember")
	f.login(email, password)
	b.WaitPage("twofactor", "/2fa")
	f.wantHidden("logout", "/2fa: the header offers Sign out before the sign-in is complete")
	if !Eval[bool](b, `(i => i.getAttribute("inputmode") === "numeric" && i.getAttribute("autocomplete") === "one-time-code")(document.getElementById("code"))`) {
		f.t.Error("/2fa: the code field lacks inputmode=numeric autocomplete=one-time-code")
	}
	b.Shot("2fa")

	// Confirming the setup used the code of its 30-second step, and a code
	// counts once: the login needs the code of a later step. This is real
	// time against a real server, so the test waits for the next step
	// boundary, exactly, and no longer.
	next := time.Unix((f.confirmed.Unix()/30+1)*30, 0)
	if d := time.Until(next); d > 0 {
		f.t.Logf("waiting %v for the next TOTP step", d.Round(time.Millisecond))
		time.Sleep(d)
	}
	// Typed as the app shows it, "123 456".
	c := f.code(time.Now())
	b.Fill("code", c[:3]+" "+c[3:])
	b.Submit("totp-form")
	b.WaitPage("dashboard", "/dashboard")
	b.WaitText("user-2fa", "on")
	// "Keep me signed in" on the login page carried through /2fa.
	if c := b.Cookie("authkit_session"); c == nil || c.Session || time.Until(time.Unix(int64(c.Expires), 0)) < 29*24*time.Hour {
		f.t.Errorf("after a remembered login: session cookie %+v, want one lasting 30 days", c)
	}
	b.Shot("dashboard-2fa")
}

func (f *flow) resetPassword() {
	b := f.b
	f.logout()
	// A link that is not a token: the page says so as it opens, with no
	// form to fill in, and offers a new link.
	b.Open(f.page("/reset-password/not-a-token"))
	b.WaitPage("reset", "/reset-password/not-a-token")
	f.summary("reset-form", "Invalid or expired reset link", 400)
	f.wantHidden("password", "reset: a bad link's page shows the password form")
	b.WaitText("reset-new-link", "Request a new reset link")
	b.Shot("reset-invalid")
	b.Click("reset-forgot-link")
	b.WaitPage("forgot", "/forgot-password")
	b.Fill("email", email)
	b.Submit("forgot-form")
	b.WaitPage("forgot", "/forgot-password")
	b.WaitText("notice", "If an account exists for that email, a password reset link has been sent.")
	b.Shot("forgot-sent")

	link := f.mailedLink("reset-password", 1)
	b.Open(link)
	b.WaitPage("reset", strings.TrimPrefix(link, f.s.URL))
	b.Shot("reset")
	b.Fill("password", password2)
	b.Fill("confirmPassword", password2+"x")
	b.Submit("reset-form")
	f.fieldError("confirmPassword", "Passwords do not match", 400)
	b.Shot("reset-mismatch")
	b.Fill("password", password2)
	b.Fill("confirmPassword", password2)
	b.Submit("reset-form")
	b.WaitPage("login", "/login")
	b.WaitText("notice", "Your password has been reset")
	b.Shot("reset-done")

	// The same link again: used, which the page says as it opens, offering
	// a new one.
	b.Open(link)
	b.WaitPage("reset", strings.TrimPrefix(link, f.s.URL))
	f.summary("reset-form", "This reset link has already been used", 400)
	b.WaitText("reset-new-link", "Request a new reset link")
	f.wantHidden("reset-form", "reset: a used link's page still offers the form")
	b.Shot("reset-used")
}

func (f *flow) wrongCodeThenRecovery() {
	b := f.b
	b.Open(f.page("/login"))
	f.login(email, password) // the old password no longer works
	f.fieldError("password", "Invalid credentials", 401)
	if got := Eval[string](b, `document.getElementById("email").value`); got != email {
		f.t.Errorf("after a failed login the email field holds %q, want %q", got, email)
	}
	b.Shot("login-old-password")

	f.login(email, password2)
	b.WaitPage("twofactor", "/2fa")
	b.Fill("code", f.wrongCode())
	b.Submit("totp-form")
	f.fieldError("code", "Invalid 2FA code", 400)
	b.Shot("2fa-wrong-code")

	b.Click("use-recovery")
	b.Fill("recovery-code", f.codes[0])
	b.Submit("recovery-form")
	b.WaitPage("dashboard", "/dashboard")
	b.WaitText("notice", "Recovery codes left: 7.")
}

func (f *flow) changeEmailAndDisable() {
	b := f.b
	b.Open(f.page("/settings/security"))
	b.WaitPage("security", "/settings/security")
	b.WaitText("twofa-state", "Two-factor authentication is on")

	b.Fill("newEmail", newEmail)
	b.Fill("email-password", password)
	b.Submit("email-form")
	f.fieldError("email-password", "Invalid password", 401)
	b.Shot("security-email-wrong-password")
	b.Fill("email-password", password2)
	b.Submit("email-form")
	b.WaitPage("security", "/settings/security")
	b.WaitText("notice", "Email updated")
	b.Shot("security-email-changed")

	b.Fill("disable-password", password2)
	b.Submit("disable-form")
	b.WaitPage("security", "/settings/security")
	b.WaitText("twofa-state", "Two-factor authentication is off")
	if !b.Visible("setup-start") {
		f.t.Error("after disabling: the settings do not offer to turn 2FA on")
	}
	b.Shot("security-disabled")

	b.Open(f.page("/dashboard"))
	b.WaitPage("dashboard", "/dashboard")
	b.WaitText("user-email", newEmail)
	b.WaitText("unverified-notice", "not verified")
	f.wantText("user-2fa", "off")
}

// changePassword changes the password back to the first one, after a
// wrong current password.
func (f *flow) changePassword() {
	b := f.b
	b.Open(f.page("/settings/security"))
	b.WaitPage("security", "/settings/security")
	b.Fill("currentPassword", password)
	b.Fill("newPassword", password)
	b.Submit("password-form")
	f.fieldError("currentPassword", "Invalid password", 401)
	b.Fill("currentPassword", password2)
	b.Fill("newPassword", password)
	b.Submit("password-form")
	b.WaitPage("security", "/settings/security")
	b.WaitText("notice", "Password changed.")
	b.Shot("security-password-changed")
}

// verifyLoggedOut opens the new address's verification link signed out,
// as on another device: the login page says it worked. Before it, a
// registration with the taken address shows its error beside the field.
func (f *flow) verifyLoggedOut() {
	b := f.b
	f.logout()
	b.Open(f.page("/register"))
	b.WaitPage("register", "/register")
	submitRegistration(b, "Someone Else", newEmail, "another password 3")
	f.fieldError("email", "Email already registered", 400)
	b.Shot("register-taken")

	b.Open(f.mailedLink("verify-email", 3))
	b.WaitPage("login", "/login")
	b.WaitText("notice", "Your email address is verified")
	b.Shot("login-verified")
	f.login(newEmail, password)
	b.WaitPage("dashboard", "/dashboard")
	b.WaitText("user-email", newEmail)
	f.wantHidden("unverified-notice", "dashboard: the new address is still shown as unverified")
}

// phone looks at the main pages at a phone's size (390x844 CSS pixels).
func (f *flow) phone() {
	b := f.b
	b.Viewport(390, 844)
	b.Open(f.page("/settings/security"))
	b.WaitPage("security", "/settings/security")
	b.WaitText("twofa-state", "off")
	b.Click("setup-start")
	b.WaitFor("the QR code image to load", `(i => i && i.complete && i.naturalWidth >= 100)(document.getElementById("qr-image"))`)
	if w := Eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
		f.t.Errorf("phone: the settings page is %dpx wide, wider than the 390px screen", w)
	}
	b.Shot("phone-security")
	f.logout()
	if w := Eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
		f.t.Errorf("phone: the login page is %dpx wide, wider than the 390px screen", w)
	}
	b.Shot("phone-login")
	b.Open(f.page("/2fa"))
	b.WaitPage("twofactor", "/2fa")
	b.Shot("phone-2fa")
	b.Viewport(1280, 900)
}

// signOutEverywhere signs in, then out everywhere from the settings: the
// session is dead, the dashboard sends to the login page.
func (f *flow) signOutEverywhere() {
	b := f.b
	b.Open(f.page("/login"))
	f.login(newEmail, password)
	b.WaitPage("dashboard", "/dashboard")
	b.Open(f.page("/settings/security"))
	b.WaitPage("security", "/settings/security")
	b.Submit("logout-all-form")
	b.WaitPage("login", "/login")
	b.WaitText("notice", "You are signed out on every device.")
	b.Open(f.page("/dashboard"))
	b.WaitPage("login", "/login")
}

// notFound opens an address where there is no page: a page in the
// layout says so, with status 404, and leads home.
func (f *flow) notFound() {
	b := f.b
	b.Open(f.page("/no/such-page"))
	b.WaitPage("notfound", "/no/such-page")
	b.WaitText("notfound-text", "There is no page at this address")
	if title := Eval[string](b, `document.title`); title != "Page not found · authkit" {
		f.t.Errorf("404 page title %q", title)
	}
	if status := Eval[int](b, `performance.getEntriesByType("navigation")[0].responseStatus`); status != 404 {
		f.t.Errorf("404 page answered %d", status)
	}
	b.Shot("not-found")
	b.Click("notfound-home")
	// Signed out: the dashboard sends on to /login.
	b.WaitPage("login", "/login")
}

// cspIsEnforced proves that the problem check can fail: an image from
// another origin is refused by the policy each framework sent, and an
// uncaught exception is reported, both as problems.
func (f *flow) cspIsEnforced() {
	b := f.b
	b.NoProblems()
	Eval[bool](b, `(() => {
		const i = document.createElement("img");
		i.src = "https://cdn.example.invalid/x.png";
		document.body.append(i);
		setTimeout(() => { throw new Error("browsertest probe") });
		return true;
	})()`)
	var seen []string
	deadline := time.Now().Add(Timeout)
	for {
		seen = append(seen, b.Problems()...)
		all := strings.Join(seen, "\n")
		if strings.Contains(all, "Content Security Policy") && strings.Contains(all, "cdn.example.invalid") &&
			strings.Contains(all, "uncaught exception") && strings.Contains(all, "browsertest probe") {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("a CSP violation and an exception were not both reported; problems: %q", seen)
		}
		time.Sleep(50 * time.Millisecond) // the reports are asynchronous
	}
}

// logout presses the header's Sign out button and waits for the login page.
func (f *flow) logout() {
	f.b.Click("logout")
	f.b.WaitPage("login", "/login")
}

// startWith starts the example server fw with env and fails the test
// unless its first log line says that feature is on.
func startWith(t *testing.T, fw, feature string, env ...string) *servertest.Server {
	t.Helper()
	s := servertest.Start(t, fw, env...)
	if !strings.Contains(s.FirstLine, feature) {
		t.Fatalf("first log line %q: want %q", s.FirstLine, feature)
	}
	return s
}

// submitRegistration fills the registration form open in b with name,
// addr and pass and submits it.
func submitRegistration(b *Browser, name, addr, pass string) {
	b.Fill("name", name)
	b.Fill("email", addr)
	b.Fill("password", pass)
	b.Submit("register-form")
}

// login fills the login form and submits it.
func (f *flow) login(email, password string) {
	b := f.b
	b.WaitPage("login", "/login")
	b.Fill("email", email)
	b.Fill("password", password)
	b.Submit("login-form")
}

// fieldError waits for the error beside the input id and checks what a
// person and a screen reader get: the input marked aria-invalid and
// described by the error, the focus on it, the error summary announced
// (role=alert) and linking to it, and, without JavaScript, the page's
// status.
func (f *flow) fieldError(id, want string, status int) {
	f.t.Helper()
	b := f.b
	b.WaitText(id+"-error", want)
	js := fmt.Sprintf(`(i => i.getAttribute("aria-invalid") === "true" && i.getAttribute("aria-describedby") === %s && document.activeElement === i)(document.getElementById(%s))`,
		jsString(id+"-error"), jsString(id))
	if !b.Eventually(js) {
		f.t.Errorf("#%s: not marked aria-invalid, described by its error and focused (focus on #%s)", id, b.Focused())
	}
	if !Eval[bool](b, fmt.Sprintf(`(s => !!s && s.getAttribute("role") === "alert" && !!s.querySelector("a[href='#%s']"))(document.querySelector(".error-summary"))`, id)) {
		f.t.Errorf("#%s: the error summary is not an alert linking to the field", id)
	}
	f.status(status)
}

// summary waits for the error summary of form (an error of no one field),
// announced (role=alert) and focused.
func (f *flow) summary(form, want string, status int) {
	f.t.Helper()
	b := f.b
	b.WaitText(form+"-summary", want)
	if !b.Eventually(fmt.Sprintf(`(s => s.getAttribute("role") === "alert" && document.activeElement === s)(document.getElementById(%s))`, jsString(form+"-summary"))) {
		f.t.Errorf("#%s-summary: not an alert with the focus (focus on #%s)", form, b.Focused())
	}
	f.status(status)
}

// status checks, without JavaScript, the status of the page the browser
// loaded (with it, the page came by fetch).
func (f *flow) status(want int) {
	f.t.Helper()
	if f.js {
		return
	}
	if got := Eval[int](f.b, `performance.getEntriesByType("navigation")[0].responseStatus`); got != want {
		f.t.Errorf("page answered %d, want %d (at %s)", got, want, f.b.Location())
	}
}

func (f *flow) wantText(id, want string) {
	f.t.Helper()
	if got := f.b.Text(id); got != want {
		f.t.Errorf("#%s shows %q, want %q", id, got, want)
	}
}

// wantHidden fails the test with why when the element id shows.
func (f *flow) wantHidden(id, why string) {
	f.t.Helper()
	if f.b.Visible(id) {
		f.t.Error(why)
	}
}

// code is the authenticator's code at the given time.
func (f *flow) code(at time.Time) string {
	f.t.Helper()
	tp, err := totp.New(totp.Config{})
	if err != nil {
		f.t.Fatal(err)
	}
	c, err := tp.Code(f.secret, at)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// wrongCode is a six-digit code that no step around now accepts.
func (f *flow) wrongCode() string {
	now := time.Now()
	valid := map[string]bool{}
	for _, d := range []time.Duration{-60, -30, 0, 30, 60} {
		valid[f.code(now.Add(d*time.Second))] = true
	}
	for _, c := range []string{"000000", "111111", "222222", "333333", "444444", "555555"} {
		if !valid[c] {
			return c
		}
	}
	f.t.Fatal("every candidate wrong code is valid now")
	return ""
}

// mailLink matches the links the console mailer prints; the servers run
// with the default APP_URL.
var mailLink = regexp.MustCompile(`http://localhost:8080/(verify-email|reset-password)/([A-Za-z0-9_-]+)`)

// verifyLink matches the token of a verification link in the console
// mailer's output, whatever the server's APP_URL.
var verifyLink = regexp.MustCompile(`/verify-email/([A-Za-z0-9_-]+)`)

// verifyFirstLink opens the first verification link the server mailed and
// waits for the notice that the address is verified.
func (f *flow) verifyFirstLink() {
	f.t.Helper()
	f.b.Open(f.s.URL + "/verify-email/" + f.s.WaitFor(f.t, verifyLink))
	f.b.WaitText("notice", "Your email address is verified")
}

// mailedLink waits until the server has mailed at least n links of the
// kind ("verify-email" or "reset-password") and returns the newest,
// pointed at the test's server.
func (f *flow) mailedLink(kind string, n int) string {
	f.t.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		var tokens []string
		for _, m := range mailLink.FindAllStringSubmatch(f.s.Stdout(), -1) {
			if m[1] == kind && !slices.Contains(tokens, m[2]) {
				tokens = append(tokens, m[2])
			}
		}
		if len(tokens) >= n {
			return f.s.URL + "/" + kind + "/" + url.PathEscape(tokens[len(tokens)-1])
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%d %s link(s) mailed after %v, want %d; stdout:\n%s", len(tokens), kind, Timeout, n, f.s.Stdout())
		}
		time.Sleep(50 * time.Millisecond) // the server mails asynchronously
	}
}
