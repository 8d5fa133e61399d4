package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clock"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/recovery"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/totp"
)

// The test drives the app only through its pages, as a browser without
// JavaScript would: GETs, form posts, redirects followed, cookies kept in
// a jar. What it reads, it reads from the HTML (and the links from the
// captured mail).

// env is one running app and what the test controls of it.
type env struct {
	app   *app
	srv   *httptest.Server
	mails *mail.Capture
	clock *clock.Clock
	totp  *totp.TOTP
}

func start(t *testing.T) *env {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	keys, err := secretbox.NewKeyring(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	// bcrypt at its lowest cost: the test hashes a dozen passwords under
	// the race detector. Never in production.
	hasher := password.ForTesting()
	e := &env{srv: srv, mails: &mail.Capture{}, clock: clock.New(time.Now())}
	e.app, err = newApp(auth.Config{
		Users:    store.NewMemory(store.MemoryConfig{Now: e.clock.Now}),
		Secrets:  []string{"a-test-session-secret-of-at-least-32-bytes"},
		Keys:     keys,
		AppURL:   base,
		Mailer:   e.mails,
		Hasher:   hasher,
		Insecure: true, // plain HTTP: the jar would keep Secure cookies from it
		Now:      e.clock.Now,
		Logger:   slog.New(slog.NewTextHandler(t.Output(), nil)), // audit events, shown with -v or on failure
	}, directory{
		"ada":   {email: "ada@example.com", password: "ada's directory password"},
		"bob":   {email: "bob@example.com", password: "bob's directory password"},
		"carol": {email: "carol@example.com", password: "carol's directory password"}, // no account in authkit
	})
	if err != nil {
		t.Fatal(err)
	}
	if e.totp, err = totp.New(totp.Config{}); err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = e.app
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // t.Context is done by now
		defer cancel()
		if err := e.app.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return e
}

// link returns the action link of the latest mail of kind sent to addr.
func (e *env) link(t *testing.T, addr string, kind mail.Kind) string {
	t.Helper()
	if err := e.app.svc.FlushMail(t.Context()); err != nil { // mail is sent off the request path
		t.Fatal(err)
	}
	var link string
	for _, m := range e.mails.To(addr) {
		if m.Kind == kind {
			link = m.Link
		}
	}
	if link == "" {
		t.Fatalf("no %s mail to %s", kind, addr)
	}
	return link
}

// code returns the TOTP code of secret at the app's current time.
func (e *env) code(t *testing.T, secret string) string {
	t.Helper()
	return e.codeAt(t, secret, e.clock.Now())
}

// codeAt returns the TOTP code of secret at at.
func (e *env) codeAt(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := e.totp.Code(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// browser is one visitor: a cookie jar, and the redirects of its last
// request.
type browser struct {
	t         *testing.T
	e         *env
	c         *http.Client
	redirects []int
}

func (e *env) browser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, e: e}
	b.c = &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		b.redirects = append(b.redirects, req.Response.StatusCode)
		return nil
	}}
	return b
}

// answer is an answer, after its redirects.
type answer struct {
	status    int
	path      string // of the final URL, with its query
	redirects []int
	header    http.Header
	body      string
}

func (b *browser) do(req *http.Request) answer {
	b.t.Helper()
	b.redirects = nil
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return answer{status: res.StatusCode, path: res.Request.URL.RequestURI(), redirects: b.redirects,
		header: res.Header, body: string(body)}
}

// get opens path, or an absolute URL (a mailed link).
func (b *browser) get(path string) answer {
	b.t.Helper()
	if !strings.HasPrefix(path, "http") {
		path = b.e.srv.URL + path
	}
	req, err := http.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// post submits a form to path, with the headers given as name, value pairs.
func (b *browser) post(path string, form url.Values, header ...string) answer {
	b.t.Helper()
	if !strings.HasPrefix(path, "http") {
		path = b.e.srv.URL + path
	}
	req, err := http.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

// expect checks the status, the final path and the redirects on the way
// (none, or one 303 for a form that succeeded).
func (p answer) expect(t *testing.T, status int, path string, redirects ...int) answer {
	t.Helper()
	if p.status != status || p.path != path || !slices.Equal(p.redirects, redirects) {
		t.Fatalf("got %d at %s after redirects %v, want %d at %s after %v\n%s",
			p.status, p.path, p.redirects, status, path, redirects, p.body)
	}
	if got := p.header.Get("Content-Security-Policy"); got != contentSecurityPolicy {
		t.Fatalf("Content-Security-Policy %q", got)
	}
	return p
}

// text returns the text of the element with id, or "" when there is none.
func (p answer) text(id string) string {
	m := regexp.MustCompile(`id="` + regexp.QuoteMeta(id) + `"[^>]*>([^<]*)<`).FindStringSubmatch(p.body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// has checks that the element with id says want.
func (p answer) has(t *testing.T, id, want string) answer {
	t.Helper()
	if got := p.text(id); got != want {
		t.Fatalf("#%s says %q, want %q\n%s", id, got, want, p.body)
	}
	return p
}

// value returns the value attribute of the input with id.
func (p answer) value(id string) string {
	m := regexp.MustCompile(`id="` + regexp.QuoteMeta(id) + `"[^>]* value="([^"]*)"`).FindStringSubmatch(p.body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

var (
	recoveryCodeRE = regexp.MustCompile(`<li class="recovery-code"><code>([^<]+)</code></li>`)
	qrRE           = regexp.MustCompile(`<img id="qr" src="([^"]+)"`)
)

func TestEveryFlowThroughThePages(t *testing.T) {
	e := start(t)
	b := e.browser(t)
	const email, oldPassword, newPassword = "ada@example.com", "correct horse battery", "staple and more staple"

	// Signed out, the account page sends to the login form.
	b.get("/account").expect(t, 200, "/login", 303)

	// Register: signed in at once, the address not verified yet.
	p := b.post("/register", url.Values{"email": {email}, "password": {oldPassword}, "name": {"Ada"}})
	p.expect(t, 200, "/account?notice=registered", 303).
		has(t, "notice", notices["registered"]).has(t, "email", email).
		has(t, "verified", "not verified").has(t, "two-factor", "off")

	// The same address again, from another browser: the form again, the
	// error beside the email field, the typed values kept.
	other := e.browser(t)
	p = other.post("/register", url.Values{"email": {email}, "password": {oldPassword}, "name": {"Ada again"}})
	p.expect(t, 400, "/register").has(t, "error-email", "Email already registered")
	if p.value("email") != email || p.value("name") != "Ada again" {
		t.Fatalf("the form lost its values:\n%s", p.body)
	}

	// What authkit's JSON routes refuse before a flow runs, the app's
	// forms refuse too: a right-to-left override in a name.
	other.post("/register", url.Values{"email": {"eve@example.com"}, "password": {oldPassword}, "name": {"Eve\u202egnp.exe"}}).
		expect(t, 400, "/register").has(t, "error", "name contains invalid characters")

	// Ask for the verification mail again, and follow the newer link.
	b.post("/account/resend-verification", nil).
		expect(t, 200, "/account?notice=verification-sent", 303).has(t, "notice", notices["verification-sent"])
	if err := e.app.svc.FlushMail(t.Context()); err != nil { // mail is sent off the request path
		t.Fatal(err)
	}
	if n := len(e.mails.To(email)); n != 2 {
		t.Fatalf("%d mails to %s, want 2 (registration, resend)", n, email)
	}

	// Verify the address from the mailed link.
	link := e.link(t, email, mail.KindVerifyEmail)
	if !strings.HasPrefix(link, e.srv.URL+"/verify-email/") {
		t.Fatalf("verification link %q", link)
	}
	b.get(link).expect(t, 200, strings.TrimPrefix(link, e.srv.URL)).has(t, "notice", "Your email address is verified.")
	p = b.get("/account").expect(t, 200, "/account").has(t, "verified", "verified")
	if strings.Contains(p.body, "/account/resend-verification") {
		t.Fatalf("a verified account is offered another verification mail:\n%s", p.body)
	}

	// Set up 2FA: the QR image and the key URI, then a code of its secret.
	p = b.post("/account/2fa/setup", nil).expect(t, 200, "/account/2fa/setup")
	if m := qrRE.FindStringSubmatch(p.body); m == nil {
		t.Fatalf("no QR image:\n%s", p.body)
	} else if png, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(html.UnescapeString(m[1]), "data:image/png;base64,")); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("QR image %.40q...: not a PNG data URL (%v)", m[1], err)
	}
	uri, err := url.Parse(p.text("otpauth"))
	if err != nil || uri.Scheme != "otpauth" || uri.Query().Get("secret") == "" {
		t.Fatalf("key URI %q: %v", p.text("otpauth"), err)
	}
	secret := uri.Query().Get("secret")
	if wrong := e.codeAt(t, secret, e.clock.Now().Add(-time.Hour)); wrong != e.code(t, secret) {
		b.post("/account/2fa/confirm", url.Values{"code": {wrong}}).
			expect(t, 400, "/account/2fa/confirm").has(t, "error-code", "Invalid code")
	}
	p = b.post("/account/2fa/confirm", url.Values{"code": {e.code(t, secret)}}).expect(t, 200, "/account/2fa/confirm")
	var codes []string
	for _, m := range recoveryCodeRE.FindAllStringSubmatch(p.body, -1) {
		codes = append(codes, html.UnescapeString(m[1]))
	}
	if len(codes) != recovery.DefaultCount {
		t.Fatalf("%d recovery codes shown, want %d:\n%s", len(codes), recovery.DefaultCount, p.body)
	}
	b.get("/account").expect(t, 200, "/account").has(t, "two-factor", "on").has(t, "recovery-left", strconv.Itoa(recovery.DefaultCount))

	// Log out; the account page is closed again.
	b.post("/logout", nil).expect(t, 200, "/login?notice=signed-out", 303).has(t, "notice", "You are signed out.")
	b.get("/account").expect(t, 200, "/login", 303)

	// A wrong password: the login form again, 401, the error beside the
	// password field.
	b.post("/login", url.Values{"email": {email}, "password": {"not the password"}}).
		expect(t, 401, "/login").has(t, "error-password", "Invalid credentials")

	// Log in with a TOTP code, of the step after the confirming one.
	b.post("/login", url.Values{"email": {email}, "password": {oldPassword}}).expect(t, 200, "/2fa", 303)
	b.get("/account").expect(t, 200, "/login", 303) // not signed in before the second step
	b.post("/login", url.Values{"email": {email}, "password": {oldPassword}}).expect(t, 200, "/2fa", 303)
	b.post("/2fa", url.Values{"code": {"12"}}).expect(t, 400, "/2fa").has(t, "error-code", "Invalid 2FA code")
	e.clock.Advance(30 * time.Second)
	b.post("/2fa", url.Values{"code": {e.code(t, secret)}}).expect(t, 200, "/account", 303).has(t, "email", email)
	b.post("/logout", nil).expect(t, 200, "/login?notice=signed-out", 303)

	// Log in with a recovery code instead.
	b.post("/login", url.Values{"email": {email}, "password": {oldPassword}, "remember": {"on"}}).expect(t, 200, "/2fa", 303)
	b.get("/2fa/recover").expect(t, 200, "/2fa/recover")
	b.post("/2fa/recover", url.Values{"code": {codes[0]}}).expect(t, 200, "/account", 303).
		has(t, "email", email).has(t, "recovery-left", strconv.Itoa(recovery.DefaultCount-1))
	b.post("/logout", nil).expect(t, 200, "/login?notice=signed-out", 303)

	// Forgot the password: a link by mail, a new password.
	b.post("/forgot-password", url.Values{"email": {email}}).
		expect(t, 200, "/forgot-password?notice=reset-sent", 303).has(t, "notice", notices["reset-sent"])
	link = e.link(t, email, mail.KindResetPassword)
	path := strings.TrimPrefix(link, e.srv.URL)
	if !strings.HasPrefix(path, "/reset-password/") {
		t.Fatalf("reset link %q", link)
	}
	b.get(link).expect(t, 200, path)
	b.post(link, url.Values{"password": {newPassword}, "confirm": {"something else"}}).
		expect(t, 400, path).has(t, "error-confirm", "Passwords do not match")
	b.post(link, url.Values{"password": {newPassword}, "confirm": {newPassword}}).
		expect(t, 200, "/login?notice=password-reset", 303).has(t, "notice", notices["password-reset"])
	b.post(link, url.Values{"password": {newPassword}, "confirm": {newPassword}}).
		expect(t, 400, path).has(t, "error", "This reset link has already been used")

	// The old password is dead, the new one works (up to the second step).
	b.post("/login", url.Values{"email": {email}, "password": {oldPassword}}).
		expect(t, 401, "/login").has(t, "error-password", "Invalid credentials")
	b.post("/login", url.Values{"email": {email}, "password": {newPassword}}).expect(t, 200, "/2fa", 303)
	e.clock.Advance(30 * time.Second)
	b.post("/2fa", url.Values{"code": {e.code(t, secret)}}).expect(t, 200, "/account", 303).has(t, "email", email)

	// Log out everywhere.
	b.post("/logout-everywhere", nil).expect(t, 200, "/login?notice=signed-out-everywhere", 303)
	b.get("/account").expect(t, 200, "/login", 303)
}

func TestCrossOriginPostIsRefused(t *testing.T) {
	e := start(t)
	b := e.browser(t)
	form := url.Values{"email": {"ada@example.com"}, "password": {"whatever it is"}}
	b.post("/login", form, "Origin", "https://evil.example").
		expect(t, 403, "/login").has(t, "error", "Cross-origin request blocked")
	b.post("/login", form, "Sec-Fetch-Site", "cross-site").expect(t, 403, "/login")
	// The app's own origin passes, to the login itself.
	b.post("/login", form, "Origin", e.srv.URL).expect(t, 401, "/login")
}

func TestTooManyLogins(t *testing.T) {
	e := start(t)
	b := e.browser(t)
	form := url.Values{"email": {"ada@example.com"}, "password": {"not the password"}}
	for range 5 { // Limits.LoginEmail: 5 per 15 minutes
		p := b.post("/login", form).expect(t, 401, "/login").has(t, "error-password", "Invalid credentials")
		if p.value("email") != "ada@example.com" {
			t.Fatalf("the login form lost the email:\n%s", p.body)
		}
	}
	p := b.post("/login", form).expect(t, 429, "/login").has(t, "error", "Too many login attempts. Try again later.")
	if secs, err := strconv.Atoi(p.header.Get("Retry-After")); err != nil || secs < 1 || secs > 15*60+1 {
		t.Fatalf("Retry-After %q", p.header.Get("Retry-After"))
	}
}

// TestConfirmPasswordStep: a session that signed in more than 15 minutes
// ago is sent from 2FA setup to the password confirmation; a wrong password
// is shown beside the field, the right one lets setup through.
func TestConfirmPasswordStep(t *testing.T) {
	e := start(t)
	b := e.browser(t)
	const email, password = "ada@example.com", "correct horse battery"
	b.post("/register", url.Values{"email": {email}, "password": {password}, "name": {"Ada"}}).
		expect(t, 200, "/account?notice=registered", 303)
	e.clock.Advance(15 * time.Minute)
	b.post("/account/2fa/setup", nil).expect(t, 200, "/account/confirm-password", 303)
	b.post("/account/confirm-password", url.Values{"password": {"not the password"}}).
		expect(t, 401, "/account/confirm-password").has(t, "error-password", "Invalid password")
	b.post("/account/confirm-password", url.Values{"password": {password}}).
		expect(t, 200, "/account?notice=password-confirmed", 303).has(t, "notice", notices["password-confirmed"])
	p := b.post("/account/2fa/setup", nil).expect(t, 200, "/account/2fa/setup")
	if !strings.Contains(p.body, `id="otpauth"`) {
		t.Fatalf("setup after the confirmation shows no key:\n%s", p.body)
	}
}

// TestStaffSignIn: the app's own check of a name and password, then
// authkit's second step (StartSecondStep): a member with 2FA goes on to the
// same /2fa page as a password login and is signed in only after it; one
// without is signed in at once; a wrong password, an unknown name and a
// member without an account get one answer; the app's own limit holds.
func TestStaffSignIn(t *testing.T) {
	e := start(t)
	ada := e.browser(t)
	ada.post("/register", url.Values{"email": {"ada@example.com"}, "password": {"correct horse battery"}, "name": {"Ada"}}).
		expect(t, 200, "/account?notice=registered", 303)
	p := ada.post("/account/2fa/setup", nil).expect(t, 200, "/account/2fa/setup")
	uri, err := url.Parse(p.text("otpauth"))
	if err != nil {
		t.Fatal(err)
	}
	secret := uri.Query().Get("secret")
	ada.post("/account/2fa/confirm", url.Values{"code": {e.code(t, secret)}}).expect(t, 200, "/account/2fa/confirm")
	ada.post("/logout", nil).expect(t, 200, "/login?notice=signed-out", 303)
	bob := e.browser(t)
	bob.post("/register", url.Values{"email": {"bob@example.com"}, "password": {"another fine password"}, "name": {"Bob"}}).
		expect(t, 200, "/account?notice=registered", 303)
	bob.post("/logout", nil).expect(t, 200, "/login?notice=signed-out", 303)

	ada.get("/login").expect(t, 200, "/login")
	ada.get("/staff-login").expect(t, 200, "/staff-login")
	for _, bad := range []url.Values{
		{"name": {"ada"}, "password": {"correct horse battery"}}, // authkit's password is not the directory's
		{"name": {"mallory"}, "password": {"anything at all"}},
		{"name": {"carol"}, "password": {"carol's directory password"}},
	} {
		ada.post("/staff-login", bad).expect(t, 401, "/staff-login").has(t, "error-password", "Unknown name or wrong password")
	}
	ada.get("/account").expect(t, 200, "/login", 303)

	// Ada has 2FA on: the directory's yes is only the first step.
	ada.post("/staff-login", url.Values{"name": {"ada"}, "password": {"ada's directory password"}}).expect(t, 200, "/2fa", 303)
	ada.get("/account").expect(t, 200, "/login", 303)
	ada.post("/staff-login", url.Values{"name": {"ada"}, "password": {"ada's directory password"}}).expect(t, 200, "/2fa", 303)
	e.clock.Advance(30 * time.Second)
	ada.post("/2fa", url.Values{"code": {e.code(t, secret)}}).expect(t, 200, "/account", 303).has(t, "email", "ada@example.com")

	// Bob has none: signed in at once.
	bob.post("/staff-login", url.Values{"name": {"bob"}, "password": {"bob's directory password"}}).
		expect(t, 200, "/account", 303).has(t, "email", "bob@example.com")

	// Six attempts so far from this address; the app allows ten in 15
	// minutes, then answers authkit's 429.
	for range 4 {
		e.browser(t).post("/staff-login", url.Values{"name": {"mallory"}, "password": {"guess"}}).expect(t, 401, "/staff-login")
	}
	p = e.browser(t).post("/staff-login", url.Values{"name": {"bob"}, "password": {"bob's directory password"}}).
		expect(t, 429, "/staff-login").has(t, "error", "Too many requests. Try again later.")
	if p.header.Get("Retry-After") == "" {
		t.Error("the 429 has no Retry-After")
	}
}

// TestParseDirectory: STAFF_DIRECTORY's form, and its errors naming it.
func TestParseDirectory(t *testing.T) {
	d, err := parseDirectory(" ada:Ada@Example.com:pw:with:colons , bob:bob@example.com:x,")
	if err != nil || len(d) != 2 || d["ada"] != (staffMember{email: "ada@example.com", password: "pw:with:colons"}) ||
		d["bob"] != (staffMember{email: "bob@example.com", password: "x"}) {
		t.Fatalf("parseDirectory = %+v, %v", d, err)
	}
	for _, bad := range []string{"ada", "ada:ada@example.com", ":ada@example.com:pw", "ada:ada@example.com:", "ada:nobody:pw"} {
		if _, err := parseDirectory(bad); err == nil || !strings.HasPrefix(err.Error(), "STAFF_DIRECTORY: ") {
			t.Errorf("parseDirectory(%q) = %v, want an error naming STAFF_DIRECTORY", bad, err)
		}
	}
}
