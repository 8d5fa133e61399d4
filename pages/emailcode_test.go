package pages

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/store"
)

// emailCodes turns the mailed code on (the memory store holds codes).
func emailCodes(c *auth.Config, _ *Config) { c.EmailCode.Enabled = true }

// emailCodeTrust turns the mailed code and trusted browsers on.
func emailCodeTrust(c *auth.Config, p *Config) {
	emailCodes(c, p)
	c.TrustedDevices = store.NewMemorySessions(store.MemoryConfig{Now: c.Now})
}

// atSecondStep registers Ada, verifies her address when verified is set,
// turns 2FA on and signs in again with the password: the returned
// browser is at the 2FA page with a pending login.
func atSecondStep(t *testing.T, e *env, verified bool) *browser {
	t.Helper()
	b := e.registered()
	if verified {
		links := e.mailed("verify-email")
		if len(links) == 0 {
			t.Fatal("no verification link mailed")
		}
		b.get(links[0])
	}
	b.enableTwoFactor()
	b.post("/logout", nil).wantRedirect(t, "/login?done=logged-out")
	b.post("/login", form("email", adaEmail, "password", adaPass, "remember", "on")).wantRedirect(t, "/2fa")
	return b
}

// mailedCode returns the code of the last sign-in code mailed to addr.
func (e *env) mailedCode(addr string) string {
	e.t.Helper()
	e.flushMail()
	re := regexp.MustCompile(`(?m): ([0-9]{6})$`) // "Your code: 123456", "Ihr Code: 123456"
	code := ""
	for _, m := range e.mail.To(addr) {
		if c := re.FindStringSubmatch(m.Text); c != nil {
			code = c[1]
		}
	}
	if code == "" {
		e.t.Fatalf("no sign-in code mailed to %s", addr)
	}
	return code
}

// otherCode is a 6-digit code that is not code.
func otherCode(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}

// sendCode presses "Email me a code instead" and opens the page it leads to.
func (b *browser) sendCode() *page {
	b.e.t.Helper()
	b.post("/2fa/email-code", nil).wantRedirect(b.e.t, "/2fa?done=email-code-sent")
	p := b.get("/2fa?done=email-code-sent")
	p.wantPage(b.e.t, http.StatusOK, "twofactor")
	return p
}

// TestEmailCodeSignIn: the 2FA page offers the mailed code as a plain
// form; sending it shows the field with where the code went, and the
// mailed code signs in like a TOTP code: the session, "keep me signed in"
// from the password step, the trusted browser, AfterLogin.
func TestEmailCodeSignIn(t *testing.T) {
	e := setup(t, emailCodeTrust)
	b := atSecondStep(t, e, true)
	p := b.get("/2fa")
	if !strings.Contains(p.Body, `<form id="email-send-form" method="post" action="/2fa/email-code">`) ||
		p.text(t, "email-code-send") != "Email me a code instead" {
		t.Fatalf("the 2FA page offers no mailed code\n%s", p.Body)
	}
	if strings.Contains(p.Body, `id="email-code"`) {
		t.Error("the code field shows before a code was sent")
	}
	before := len(e.mail.To(adaEmail))

	p = b.sendCode()
	p.wantText(t, "email-code-sent", "We mailed a 6-digit code to ada@example.com. Enter it here.")
	if !regexp.MustCompile(`<input id="email-code" name="code" type="text" inputmode="numeric"[^>]*autocomplete="one-time-code"[^>]* autofocus>`).MatchString(p.Body) {
		t.Errorf("no focused one-time-code field for the mailed code\n%s", p.Body)
	}
	if p.text(t, "email-code-send") != "Send a new code" {
		t.Error("no way to send a new code")
	}
	code := e.mailedCode(adaEmail)
	if n := len(e.mail.To(adaEmail)); n != before+1 {
		t.Errorf("%d mails sent, want 1", n-before)
	}

	b.post("/2fa/email-code/verify", form("code", code, "trustDevice", "on")).wantRedirect(t, "/dashboard")
	if b.cookie("authkit_session") == "" || b.cookie("2fa_pending") != "" {
		t.Fatal("after the code: want a session and no pending cookie")
	}
	b.get("/dashboard").wantPage(t, http.StatusOK, "dashboard")
	p = b.get("/settings/security")
	if !strings.Contains(p.Body, "This browser") {
		t.Error("trust this browser was not applied")
	}
	// The code works once.
	b2 := e.loggedIn("/2fa")
	p = b2.post("/2fa/email-code/verify", form("code", code))
	p.wantPage(t, http.StatusBadRequest, "twofactor")
	p.wantFieldError(t, "email-code", "Invalid 2FA code")
}

// TestEmailCodeRemember: the password step's "keep me signed in" holds
// for a login finished by a mailed code, as for a TOTP code.
func TestEmailCodeRemember(t *testing.T) {
	e := setup(t, emailCodes)
	b := atSecondStep(t, e, true) // logged in with remember=on
	b.sendCode()
	req, _ := http.NewRequest("POST", e.srv.URL+"/2fa/email-code/verify", strings.NewReader(form("code", e.mailedCode(adaEmail)).Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, c := range res.Cookies() {
		if c.Name == "authkit_session" {
			if c.MaxAge <= 0 && c.Expires.IsZero() {
				t.Errorf("the session cookie is a browser-session cookie despite keep me signed in: %+v", c)
			}
			return
		}
	}
	t.Fatalf("no session cookie: %d %v", res.StatusCode, res.Header)
}

// TestEmailCodeWrong: a wrong code is shown beside the field, keeps the
// pending login and the field, and the right code still works.
func TestEmailCodeWrong(t *testing.T) {
	e := setup(t, emailCodes)
	b := atSecondStep(t, e, true)
	b.sendCode()
	code := e.mailedCode(adaEmail)
	p := b.post("/2fa/email-code/verify", form("code", otherCode(code)))
	p.wantPage(t, http.StatusBadRequest, "twofactor")
	p.wantFieldError(t, "email-code", "Invalid 2FA code")
	if regexp.MustCompile(`<input id="email-code"[^>]*value=`).MatchString(p.Body) {
		t.Error("the wrong code is shown again")
	}
	if b.cookie("2fa_pending") == "" || b.cookie("authkit_session") != "" {
		t.Fatal("a wrong code dropped the pending login or signed in")
	}
	if p.text(t, "email-code-sent") != "We mailed a 6-digit code to ada@example.com. Enter it here." {
		t.Error("the field's explanation is gone after an error")
	}
	b.post("/2fa/email-code/verify", form("code", code)).wantRedirect(t, "/dashboard")
}

// TestEmailCodeExpired: the right code after its lifetime says so beside
// the field; a new one sent then works.
func TestEmailCodeExpired(t *testing.T) {
	e := setup(t, func(c *auth.Config, p *Config) { emailCodes(c, p); c.EmailCode.Lifetime = time.Minute })
	b := atSecondStep(t, e, true)
	b.sendCode()
	code := e.mailedCode(adaEmail)
	e.clock.Advance(2 * time.Minute)
	p := b.post("/2fa/email-code/verify", form("code", code))
	p.wantPage(t, http.StatusBadRequest, "twofactor")
	p.wantFieldError(t, "email-code", "Code expired. Request a new one.")
	if !strings.Contains(p.Body, `name="again" value="on"`) || p.text(t, "email-code-send") != "Send a new code" {
		t.Error("no way to send a new code beside the expired one")
	}
	b.post("/2fa/email-code", form("again", "on")).wantRedirect(t, "/2fa?done=email-code-sent")
	b.post("/2fa/email-code/verify", form("code", e.mailedCode(adaEmail))).wantRedirect(t, "/dashboard")
}

// TestEmailCodeTooMany: Limits.EmailCode refuses a fourth mail; the
// refusal belongs to the send form (its summary), and the field of the
// code already sent stays.
func TestEmailCodeTooMany(t *testing.T) {
	e := setup(t, emailCodes)
	b := atSecondStep(t, e, true)
	for range 3 {
		b.sendCode()
	}
	p := b.post("/2fa/email-code", form("again", "on"))
	p.wantPage(t, http.StatusTooManyRequests, "twofactor")
	p.wantSummary(t, "Too many codes requested. Try again later.")
	if !strings.Contains(p.Body, `id="email-send-form-summary"`) || !strings.Contains(p.Body, `id="email-code"`) {
		t.Errorf("the refusal is not on the send form, or the code field is gone\n%s", p.Body)
	}
}

// TestEmailCodeNoPendingLogin: without a pending login the page offers no
// code, and a post of either form says why on the form it came from.
func TestEmailCodeNoPendingLogin(t *testing.T) {
	e := setup(t, emailCodes)
	b := e.browser()
	if p := b.get("/2fa"); strings.Contains(p.Body, `id="email-code-box"`) {
		t.Error("a code is offered without a pending login")
	}
	p := b.post("/2fa/email-code", nil)
	p.wantPage(t, http.StatusUnauthorized, "twofactor")
	if got := p.summary(t); len(got) != 1 || got[0] != "No pending 2FA session" || !strings.Contains(p.Body, `id="email-send-form-summary"`) {
		t.Errorf("send: summary %q", got)
	}
	p = b.post("/2fa/email-code/verify", form("code", "123456"))
	p.wantPage(t, http.StatusUnauthorized, "twofactor")
	if got := p.summary(t); len(got) != 1 || got[0] != "No pending 2FA session" || !strings.Contains(p.Body, `id="email-code-form-summary"`) {
		t.Errorf("verify: summary %q", got)
	}
	if p.text(t, "email-code-sent") != "We mailed a 6-digit code to your address. Enter it here." {
		t.Error("without a pending login the page names an address")
	}
}

// TestEmailCodeNotOffered: with the feature off the 2FA page offers no
// code and its routes answer the 404 page; with it on, an account whose
// address is not verified is offered none, and a post anyway answers 403
// with the reason on the send form, mailing nothing.
func TestEmailCodeNotOffered(t *testing.T) {
	t.Run("off", func(t *testing.T) {
		e := setup(t, nil)
		b := atSecondStep(t, e, true)
		if p := b.get("/2fa"); strings.Contains(p.Body, "email-code") || strings.Contains(p.Body, "Email me a code") {
			t.Errorf("a code is offered with the feature off\n%s", p.Body)
		}
		b.post("/2fa/email-code", nil).wantPage(t, http.StatusNotFound, "notfound")
		b.post("/2fa/email-code/verify", form("code", "123456")).wantPage(t, http.StatusNotFound, "notfound")
	})
	t.Run("unverified", func(t *testing.T) {
		e := setup(t, emailCodes)
		b := atSecondStep(t, e, false)
		if p := b.get("/2fa"); strings.Contains(p.Body, `id="email-code-box"`) {
			t.Errorf("a code is offered for an unverified address\n%s", p.Body)
		}
		before := len(e.mail.To(adaEmail))
		p := b.post("/2fa/email-code", nil)
		p.wantPage(t, http.StatusForbidden, "twofactor")
		p.wantSummary(t, "A code can only be sent to a verified email address. Use another method.")
		e.flushMail()
		if n := len(e.mail.To(adaEmail)); n != before {
			t.Errorf("%d mails sent to an unverified address", n-before)
		}
		if b.cookie("2fa_pending") == "" {
			t.Error("the refusal dropped the pending login")
		}
	})
}

// TestEmailCodeWithoutJavaScript: every step is a form that posts to a
// page route and nothing of it is hidden for a script to show.
func TestEmailCodeWithoutJavaScript(t *testing.T) {
	e := setup(t, emailCodes)
	b := atSecondStep(t, e, true)
	p := b.sendCode()
	box := regexp.MustCompile(`(?s)<div id="email-code-box">.*?<details`).FindString(p.Body)
	if box == "" {
		t.Fatalf("no email-code box\n%s", p.Body)
	}
	for _, want := range []string{`<form id="email-code-form" method="post" action="/2fa/email-code/verify">`,
		`<form id="email-send-form" method="post" action="/2fa/email-code">`, `<button type="submit" id="email-code-submit">`} {
		if !strings.Contains(box, want) {
			t.Errorf("the box lacks %s\n%s", want, box)
		}
	}
	if strings.Contains(box, " hidden") || strings.Contains(box, "<template") || strings.Contains(box, "data-passkey") {
		t.Errorf("part of the box waits for a script\n%s", box)
	}
}

// TestEmailCodeGerman: the page's texts and the errors beside the field
// are in the visit's language.
func TestEmailCodeGerman(t *testing.T) {
	e := setup(t, func(c *auth.Config, p *Config) { german(c, p); emailCodes(c, p) })
	b := atSecondStep(t, e, true)
	b.header.Set("Accept-Language", "de")
	if got := b.get("/2fa").text(t, "email-code-send"); got != "Stattdessen einen Code per E-Mail senden" {
		t.Errorf("offer %q", got)
	}
	p := b.sendCode()
	p.wantText(t, "email-code-sent", "Wir haben einen sechsstelligen Code an ada@example.com gesendet. Geben Sie ihn hier ein.")
	p = b.post("/2fa/email-code/verify", form("code", otherCode(e.mailedCode(adaEmail))))
	p.wantFieldError(t, "email-code", "Ungültiger Zwei-Faktor-Code")
}

// TestEmailCodeCrossOriginPost: both email-code forms refuse a cross-site
// post, as every form does, and mail nothing.
func TestEmailCodeCrossOriginPost(t *testing.T) {
	e := setup(t, emailCodes)
	b := atSecondStep(t, e, true)
	e.flushMail()
	before := len(e.mail.To(adaEmail))
	b.header.Set("Sec-Fetch-Site", "cross-site")
	for _, path := range []string{"/2fa/email-code", "/2fa/email-code/verify"} {
		p := b.post(path, form("code", "123456"))
		p.wantPage(t, http.StatusForbidden, "problem")
		p.wantSummary(t, "Cross-origin request blocked")
	}
	e.flushMail()
	if n := len(e.mail.To(adaEmail)); n != before {
		t.Errorf("a cross-site post mailed %d codes", n-before)
	}
}
