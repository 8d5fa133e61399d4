package authtest

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/user"
)

// Passwords the suite's users have. They satisfy the default policy.
const (
	goodPassword  = "correct horse battery staple"
	newPassword   = "an entirely new passphrase"
	wrongPassword = "not the right password"
)

// The session cookie's name (docs/api.md, Cookies).
const sessionCookie = "authkit_session"

// rememberMaxAge is the Max-Age of a remembered session cookie: 30 days
// (docs/api.md, Cookies).
const rememberMaxAge = 30 * 24 * 60 * 60

// recoveryCodeFormat is the spec's xxxxxxxx-xxxxxxxx (authkit's alphabet:
// lowercase Crockford base32).
var recoveryCodeFormat = regexp.MustCompile(`^[0-9a-z]{8}-[0-9a-z]{8}$`)

// ctx returns a context for direct store calls.
func (e *env) ctx() context.Context { return e.t.Context() }

// Users.

// user returns the stored record of email.
func (e *env) user(t *testing.T, email string) *user.User {
	t.Helper()
	u, err := e.accounts.ByEmail(e.ctx(), email)
	if err != nil {
		t.Fatalf("store: ByEmail(%q): %v", email, err)
	}
	return u
}

// byID returns the stored record of id.
func (e *env) byID(t *testing.T, id string) *user.User {
	t.Helper()
	u, err := e.accounts.ByID(e.ctx(), id)
	if err != nil {
		t.Fatalf("store: ByID(%q): %v", id, err)
	}
	return u
}

// noUser checks that no user has email.
func (e *env) noUser(t *testing.T, email string) {
	t.Helper()
	if u, err := e.accounts.ByEmail(e.ctx(), email); err == nil {
		t.Errorf("store: user %q exists (id %s), want none", email, u.ID)
	}
}

// seed creates a user with goodPassword directly in the store, without
// registering (which is limited to 3 per hour and address): with Create,
// or on a store without user.Registration the way its app does.
func (e *env) seed(t *testing.T, email string) *user.User {
	t.Helper()
	var h string
	var err error
	if e.fast {
		h, err = fastHasher{}.Hash(e.ctx(), goodPassword)
	} else {
		h, err = password.ForTesting().Hash(e.ctx(), goodPassword)
	}
	if err != nil {
		t.Fatalf("hash: %v", err)
	}
	in := &user.User{Email: email, Name: "Seeded", PasswordHash: h}
	if e.seedFn != nil {
		return e.seedFn(t, e.accounts, in)
	}
	u, err := e.users.Create(e.ctx(), in)
	if err != nil {
		t.Fatalf("store: Create(%q): %v", email, err)
	}
	return u
}

// signup registers email with goodPassword on c, which is then logged in,
// and returns the stored record.
func (e *env) signup(t *testing.T, c *client, email string) *user.User {
	t.Helper()
	mustMessage(t, c.post("/api/auth/register", obj{"email": email, "password": goodPassword, "name": "Ada"}), msgRegistered)
	return e.user(t, strings.ToLower(email))
}

// login posts credentials to /api/login.
func (c *client) login(email, pw string, hdr ...string) *reply {
	c.t.Helper()
	return c.post("/api/login", obj{"email": email, "password": pw}, hdr...)
}

// verify posts a TOTP code to /api/2fa/verify.
func (c *client) verify(code string) *reply {
	c.t.Helper()
	return c.post("/api/2fa/verify", obj{"code": code})
}

// recover posts a recovery code to /api/2fa/recover.
func (c *client) recover(code string) *reply {
	c.t.Helper()
	return c.post("/api/2fa/recover", obj{"code": code})
}

// mustLogin logs c in as a user without 2FA.
func mustLogin(t *testing.T, c *client, email, pw string) {
	t.Helper()
	mustBody(t, c.login(email, pw), obj{"success": true})
}

// loggedIn returns a new browser logged in as email (no 2FA).
func (e *env) loggedIn(t *testing.T, email string) *client {
	t.Helper()
	c := e.client()
	mustLogin(t, c, email, goodPassword)
	return c
}

// me asks who c is.
func (c *client) me() *reply {
	c.t.Helper()
	return c.get("/api/auth/me")
}

// mustBeSignedIn checks that c's session works and is email's.
func mustBeSignedIn(t *testing.T, c *client, email string) {
	t.Helper()
	r := c.me()
	if r.Status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200 (signed in as %s)", r, r.Status, email)
	}
	if got := r.str("email"); got != email {
		t.Errorf("%s: email %q, want %q", r, got, email)
	}
}

// mustBeSignedOut checks that c has no working session.
func mustBeSignedOut(t *testing.T, c *client) {
	t.Helper()
	mustStatus(t, c.me(), http.StatusUnauthorized, errNotAuthenticated)
}

// mustBeAbsent sends body (JSON, or nil for none) to method path and
// checks the answer is 404: the route is not there, because why.
func mustBeAbsent(t *testing.T, c *client, method, path string, body []byte, why string) {
	t.Helper()
	ct := ""
	if body != nil {
		ct = "application/json"
	}
	r, err := c.try(method, path, ct, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if r.Status != http.StatusNotFound {
		t.Errorf("%s: status %d, want 404 (%s)", r, r.Status, why)
	}
}

// everyFieldBody is a JSON body with every field the account routes read,
// each valid: a route that is there would act on it.
func everyFieldBody() []byte {
	return []byte(`{"email":"bob@example.com","password":"correct horse battery","name":"Bob","newEmail":"x@example.com","currentPassword":"` + goodPassword + `","newPassword":"another password 1"}`)
}

// Mail.

// flush waits until the Service has handed every queued mail to the
// capture.
func (e *env) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx(), 10*time.Second)
	defer cancel()
	if err := e.svc.FlushMail(ctx); err != nil {
		t.Fatalf("FlushMail: %v", err)
	}
}

// mails returns every mail of kind sent to addr so far.
func (e *env) mails(t *testing.T, addr string, kind mail.Kind) []mail.Message {
	t.Helper()
	e.flush(t)
	var out []mail.Message
	for _, m := range e.mail.To(addr) {
		if m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

// mailCount returns how many mails were sent so far, to any address.
func (e *env) mailCount(t *testing.T) int {
	t.Helper()
	e.flush(t)
	return e.mail.Len()
}

// lastMail returns the latest mail of kind sent to addr.
func (e *env) lastMail(t *testing.T, addr string, kind mail.Kind) mail.Message {
	t.Helper()
	ms := e.mails(t, addr, kind)
	if len(ms) == 0 {
		var got []string
		for _, m := range e.mail.Messages() {
			got = append(got, string(m.Kind)+" to "+m.To)
		}
		t.Fatalf("no %s mail to %s; mails sent: %q", kind, addr, got)
	}
	return ms[len(ms)-1]
}

// linkToken checks that m carries a link {appURL}{page}{token} (spec rules
// 8 and 11) stated in its text along with the expiry, and returns the
// token.
func linkToken(t *testing.T, m mail.Message, page, expiry string) string {
	t.Helper()
	prefix := appURL + page
	rest, ok := strings.CutPrefix(m.Link, prefix)
	if !ok || rest == "" || strings.ContainsAny(rest, "/?#") {
		t.Fatalf("%s mail: link %q, want %s<token>", m.Kind, m.Link, prefix)
	}
	if !strings.Contains(m.Text, m.Link) {
		t.Errorf("%s mail: text does not state the link %q:\n%s", m.Kind, m.Link, m.Text)
	}
	if !strings.Contains(m.Text, expiry) {
		t.Errorf("%s mail: text does not state the expiry %q:\n%s", m.Kind, expiry, m.Text)
	}
	if !strings.Contains(m.Subject, expiry) {
		t.Errorf("%s mail: subject %q does not state the expiry %q", m.Kind, m.Subject, expiry)
	}
	tok, err := url.PathUnescape(rest)
	if err != nil {
		t.Fatalf("%s mail: link %q: %v", m.Kind, m.Link, err)
	}
	return tok
}

// mustOnlyLinkMail checks that the one mail sent so far is a mail of kind
// to addr, spelled as addr is, whose link and text linkToken accepts.
func (e *env) mustOnlyLinkMail(t *testing.T, addr string, kind mail.Kind, page, expiry string) {
	t.Helper()
	m := e.lastMail(t, addr, kind)
	if m.To != addr {
		t.Errorf("%s mail to %q, want %s", kind, m.To, addr)
	}
	linkToken(t, m, page, expiry)
	if n := e.mailCount(t); n != 1 {
		t.Errorf("%d mails, want only the %s mail", n, kind)
	}
}

// verifyToken returns the token of the latest verification mail to addr.
func (e *env) verifyToken(t *testing.T, addr string) string {
	t.Helper()
	return linkToken(t, e.lastMail(t, addr, mail.KindVerifyEmail), "/verify-email/", "24 hours")
}

// resetToken asks for a reset link for addr and returns its token.
func (e *env) resetToken(t *testing.T, addr string) string {
	t.Helper()
	mustMessage(t, e.client().post("/api/auth/forgot-password", obj{"email": addr}), msgForgotSent)
	return linkToken(t, e.lastMail(t, addr, mail.KindResetPassword), "/reset-password/", "1 hour")
}

// verifyEmailFromMail follows the latest verification link mailed to addr.
func (e *env) verifyEmailFromMail(t *testing.T, c *client, addr string) {
	t.Helper()
	mustMessage(t, c.get("/api/auth/verify-email/"+e.verifyToken(t, addr)), msgEmailVerified)
}

// TOTP.

// code returns the TOTP code of secret at at.
func (e *env) code(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := e.totp.Code(secret, at)
	if err != nil {
		t.Fatalf("totp code: %v", err)
	}
	return c
}

// now returns the current code of secret.
func (e *env) now(t *testing.T, secret string) string {
	t.Helper()
	return e.code(t, secret, e.clock.Now())
}

// nextStep moves the clock one TOTP period on, so that a fresh code is
// not a replay of the last one used.
func (e *env) nextStep() { e.clock.Advance(30 * time.Second) }

// setup2FA starts setup on c and returns the secret read from qrUri.
func (e *env) setup2FA(t *testing.T, c *client) string {
	t.Helper()
	r := c.post("/api/2fa/setup", nil)
	if r.Status != http.StatusOK || len(r.JSON) != 2 || r.str("qrImage") == "" {
		t.Fatalf("%s: want 200 {qrUri, qrImage}", r)
	}
	return qrSecret(t, r)
}

// qrSecret returns the secret in the qrUri of a setup reply.
func qrSecret(t *testing.T, r *reply) string {
	t.Helper()
	u, err := url.Parse(r.str("qrUri"))
	if err != nil || u.Scheme != "otpauth" || u.Host != "totp" {
		t.Fatalf("%s: qrUri is not an otpauth://totp/ URI", r)
	}
	secret := u.Query().Get("secret")
	if secret == "" {
		t.Fatalf("%s: qrUri has no secret", r)
	}
	return secret
}

// enable2FA sets up and confirms 2FA for c's user with the current code.
// It returns the secret and the recovery codes.
func (e *env) enable2FA(t *testing.T, c *client) (secret string, codes []string) {
	t.Helper()
	return e.enable2FAWith(t, c, e.setup2FA(t, c))
}

// enable2FAWith confirms the pending secret of c's user with its current
// code. It returns the secret and the recovery codes.
func (e *env) enable2FAWith(t *testing.T, c *client, secret string) (_ string, codes []string) {
	t.Helper()
	r := c.post("/api/2fa/confirm", obj{"code": e.now(t, secret)})
	if r.Status != http.StatusOK || r.str("message") != msg2FAEnabled || len(r.JSON) != 2 {
		t.Fatalf("%s: want 200 {message %q, recoveryCodes}", r, msg2FAEnabled)
	}
	raw, _ := r.JSON["recoveryCodes"].([]any)
	for _, v := range raw {
		s, _ := v.(string)
		codes = append(codes, s)
	}
	return secret, codes
}

// pendingLogin logs c in with the password of a 2FA user: the reply must
// be {requiresTwoFactor: true}.
func pendingLogin(t *testing.T, c *client, email string) *reply {
	t.Helper()
	r := c.login(email, goodPassword)
	mustBody(t, r, obj{"requiresTwoFactor": true})
	if c.cookie(auth.PendingCookie) == nil {
		t.Fatalf("%s: no %s cookie", r, auth.PendingCookie)
	}
	return r
}

// pending returns a new browser that has passed ada's password step: it
// holds her pending cookie (pendingLogin).
func (e *env) pending(t *testing.T) *client {
	t.Helper()
	c := e.client()
	pendingLogin(t, c, "ada@example.com")
	return c
}

// loginWith2FA logs c in as a 2FA user: password, then a code of the next
// TOTP step (the clock moves one period on).
func (e *env) loginWith2FA(t *testing.T, c *client, email, secret string) {
	t.Helper()
	pendingLogin(t, c, email)
	e.nextStep()
	mustBody(t, c.verify(e.now(t, secret)), obj{"success": true})
	mustBeSignedIn(t, c, email)
}

// Times.

// mustTime checks that a stored timestamp is at, to the millisecond every
// store keeps.
func mustTime(t *testing.T, field string, got, at time.Time) {
	t.Helper()
	if !got.Truncate(time.Millisecond).Equal(at.Truncate(time.Millisecond)) || got.After(at) {
		t.Errorf("store: %s = %s, want %s", field, got.Format(time.RFC3339Nano), at.Format(time.RFC3339Nano))
	}
}
