package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/e2e/internal/frameworks"
)

// The codes core's routes list as their own that the flow suite never
// answers (a store that reports a concurrent change, a limit, an account
// deleted while its login waits for the second step, a field the suite
// sends well-formed): each case drives its route through the validating
// proxy and checks the status, the code, the English text and that the
// answer changed nothing in the store. With the flow suites they answer
// every code a route lists (TestMain).

// listedCodeCase is one code a route answers with, and how to get it.
type listedCodeCase struct {
	method, path string            // path: the route's pattern
	params       map[string]string // the pattern's parameters
	as           string            // the request's cookies: "" none, "session" Ada's session, "pending" her login waiting for the second step
	body         string            // JSON; {code} is the code before mailed
	raced        bool              // at the request, the store reports a concurrent change on every write of an address, a password, an email code
	before       func(e *codesEnv) // what happens before the request
	status       int
	code         auth.Code
	text         string
}

var (
	longPassword = strings.Repeat("p", 129)

	listedCodeCases = []listedCodeCase{
		{method: "POST", path: "/api/auth/login", body: `{"email":"ada@example.com","password":"wrong horse"}`,
			before: func(e *codesEnv) {
				for range 5 { // Limits.LoginEmail: 5 per 15 minutes
					if st, b := e.do("POST", "/api/auth/login", nil, nil, `{"email":"ada@example.com","password":"wrong horse"}`); st != http.StatusUnauthorized {
						e.t.Fatalf("wrong password: %d %s, want 401", st, b)
					}
				}
			},
			status: 429, code: "too_many_login_attempts", text: "Too many login attempts. Try again later."},

		{method: "POST", path: "/api/2fa/email-code", as: "pending", before: (*codesEnv).deleteAda,
			status: 401, code: "invalid_session", text: "Invalid session"},
		{method: "POST", path: "/api/2fa/email-code/verify", as: "pending", body: `{"code":"123456"}`, before: (*codesEnv).deleteAda,
			status: 401, code: "invalid_session", text: "Invalid session"},
		{method: "POST", path: "/api/2fa/email-code/verify", as: "pending", raced: true, body: `{"code":"{code}"}`,
			before: func(e *codesEnv) { e.emailCode = e.sendEmailCode(e.pending) },
			status: 400, code: "code_already_used", text: "Code already used"},

		{method: "DELETE", path: "/api/2fa/trusted-devices/{id}", params: map[string]string{"id": "d1"},
			status: 401, code: "not_authenticated", text: "Not authenticated"},

		{method: "POST", path: "/api/auth/register", body: `{"email":"bob@example.com","password":"correct horse battery staple"}`,
			status: 400, code: "name_required", text: "Name is required"},
		{method: "POST", path: "/api/auth/register", body: `{"email":"bob@example.com","password":"short","name":"Bob"}`,
			status: 400, code: "password_too_short", text: "Password must be at least 8 characters"},
		{method: "POST", path: "/api/auth/register", body: `{"email":"bob@example.com","password":"` + longPassword + `","name":"Bob"}`,
			status: 400, code: "password_too_long", text: "Password must be at most 128 characters"},

		{method: "POST", path: "/api/auth/change-email", as: "session", body: `{"newEmail":"   ","password":"correct horse battery staple"}`,
			status: 400, code: "email_required", text: "Email is required"},
		{method: "POST", path: "/api/auth/change-email", as: "session", body: `{"newEmail":"new@example.com","password":"correct horse battery staple"}`,
			before: func(e *codesEnv) {
				e.wrongPasswords("/api/auth/change-email", `{"newEmail":"new@example.com","password":"wrong horse"}`)
			},
			status: 429, code: "too_many_password_attempts", text: "Too many password attempts. Try again later."},
		{method: "POST", path: "/api/auth/change-email", as: "session", raced: true, body: `{"newEmail":"new@example.com","password":"correct horse battery staple"}`,
			status: 409, code: "email_changed_concurrently", text: "Your email address was changed by another request"},

		{method: "POST", path: "/api/auth/reset-password/{token}", params: map[string]string{"token": "not-a-token"},
			body:   `{"password":"` + longPassword + `","confirmPassword":"` + longPassword + `"}`,
			status: 400, code: "password_too_long", text: "Password must be at most 128 characters"},

		{method: "POST", path: "/api/auth/change-password", as: "session", body: `{"currentPassword":"correct horse battery staple","newPassword":"` + longPassword + `"}`,
			status: 400, code: "password_too_long", text: "Password must be at most 128 characters"},
		{method: "POST", path: "/api/auth/change-password", as: "session", body: `{"currentPassword":"correct horse battery staple","newPassword":"a new good password"}`,
			before: func(e *codesEnv) {
				e.wrongPasswords("/api/auth/change-password", `{"currentPassword":"wrong horse","newPassword":"a new good password"}`)
			},
			status: 429, code: "too_many_password_attempts", text: "Too many password attempts. Try again later."},
		{method: "POST", path: "/api/auth/confirm-password", as: "session", body: `{"password":"correct horse battery staple","code":"123456"}`,
			before: (*codesEnv).wrongSecondSteps,
			status: 429, code: "too_many_two_factor_attempts", text: "Too many 2FA attempts. Try again later."},
		{method: "POST", path: "/api/auth/change-password", as: "session", raced: true, body: `{"currentPassword":"correct horse battery staple","newPassword":"a new good password"}`,
			status: 409, code: "password_changed_concurrently", text: "Your password was changed by another request"},
	}
)

// TestListedCodes runs listedCodeCases through the validating proxy.
func TestListedCodes(t *testing.T) {
	for _, tc := range listedCodeCases {
		t.Run(fmt.Sprintf("%s %s %d %s", tc.method, tc.path, tc.status, tc.code), func(t *testing.T) {
			t.Parallel()
			e := newCodesEnv(t)
			if tc.before != nil {
				tc.before(e)
			}
			e.raced.Store(tc.raced)
			before := e.state()
			status, body := e.do(tc.method, tc.path, e.browser(tc.as), tc.params, strings.ReplaceAll(tc.body, "{code}", e.emailCode))
			wantError(t, status, body, tc.status, tc.code, tc.text)
			if after := e.state(); after != before {
				t.Errorf("the store changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// wantError fails t unless the answer of status and body is the error
// of status want, code and English text.
func wantError(t *testing.T, status int, body []byte, want int, code auth.Code, text string) {
	t.Helper()
	var got struct{ Error, Code string }
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("answer %d %s: %v", status, body, err)
	}
	if status != want || got.Code != string(code) || got.Error != text {
		t.Fatalf("answer %d %s, want %d {%q, %q}", status, body, want, text, code)
	}
}

// racedUsers is a memory store where, once raced is set, another request
// always changed the row first: its writes of an address, a password and
// an email code report user.ErrConflict, as the memory and SQL stores do
// when the row's old value is gone.
type racedUsers struct {
	*store.Memory
	raced *atomic.Bool
}

func (r racedUsers) ChangeEmail(ctx context.Context, id, oldEmail, newEmail string, at time.Time) error {
	if r.raced.Load() {
		return fmt.Errorf("test: %w", user.ErrConflict)
	}
	return r.Memory.ChangeEmail(ctx, id, oldEmail, newEmail, at)
}

func (r racedUsers) ChangePassword(ctx context.Context, id, oldHash, newHash string, at time.Time) error {
	if r.raced.Load() {
		return fmt.Errorf("test: %w", user.ErrConflict)
	}
	return r.Memory.ChangePassword(ctx, id, oldHash, newHash, at)
}

func (r racedUsers) TakeEmailCode(ctx context.Context, userID string, hash []byte, now time.Time) error {
	if r.raced.Load() {
		return fmt.Errorf("test: %w", user.ErrConflict)
	}
	return r.Memory.TakeEmailCode(ctx, userID, hash, now)
}

// jar is one browser's cookies, by name.
type jar map[string]string

// codesEnv is a Service with every route on, behind the validating proxy
// on net/http, and Ada, verified, with 2FA on: a browser signed in as
// her, one whose login waits for the second step.
type codesEnv struct {
	t         *testing.T
	svc       *auth.Service
	base      string
	mem       *store.Memory
	raced     atomic.Bool // racedUsers reports conflicts
	trusted   *store.MemorySessions
	mail      *mail.Capture
	ada       *user.User
	signedIn  jar
	pending   jar
	emailCode string // the code a case's before mailed: its body's {code}
}

const goodPW = "correct horse battery staple"

func newCodesEnv(t *testing.T) *codesEnv {
	t.Helper()
	e := &codesEnv{t: t, mem: store.NewMemory(store.MemoryConfig{}), trusted: store.NewMemorySessions(store.MemoryConfig{}), mail: &mail.Capture{}}
	e.svc = newServiceWith(t, func(c *auth.Config) {
		c.Users = racedUsers{e.mem, &e.raced}
		c.TrustedDevices = e.trusted
		c.EmailCode.Enabled = true
		c.Mailer = e.mail
		c.Logger = slog.New(slog.DiscardHandler)
	})
	doc, err := e.svc.OpenAPI()
	e.base = checked(t, doc, err, frameworks.Serve(t, "nethttp", e.svc, nil, ""), seen)
	e.signedIn = jar{}
	if st, b := e.do("POST", "/api/auth/register", e.signedIn, nil, `{"email":"ada@example.com","password":"`+goodPW+`","name":"Ada"}`); st != http.StatusOK {
		t.Fatalf("register: %d %s", st, b)
	}
	ctx := context.Background()
	if e.ada, err = e.mem.ByEmail(ctx, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := e.mem.VerifyEmail(ctx, e.ada.ID, e.ada.Email, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := e.mem.BeginTOTPSetup(ctx, e.ada.ID, "pending"); err != nil {
		t.Fatal(err)
	}
	if err := e.mem.EnableTOTP(ctx, e.ada.ID, user.EnableTOTP{Pending: "pending", Secret: "sealed", RecoveryCodeHashes: []string{"h1"}}); err != nil {
		t.Fatal(err)
	}
	// Turning 2FA on in the store raised her session version: two new
	// logins wait for their second step; one finishes it with a mailed
	// code (the other stays pending).
	e.signedIn, e.pending = jar{}, jar{}
	for _, b := range []jar{e.signedIn, e.pending} {
		if st, body := e.do("POST", "/api/login", b, nil, `{"email":"ada@example.com","password":"`+goodPW+`"}`); st != http.StatusOK || b[auth.PendingCookie] == "" {
			t.Fatalf("login: %d %s, want a pending 2FA login", st, body)
		}
	}
	if st, b := e.do("POST", "/api/2fa/email-code/verify", e.signedIn, nil, `{"code":"`+e.sendEmailCode(e.signedIn)+`"}`); st != http.StatusOK || e.signedIn[auth.PendingCookie] != "" {
		t.Fatalf("finishing with the mailed code: %d %s", st, b)
	}
	return e
}

// browser is the cookie jar of as ("" a new one).
func (e *codesEnv) browser(as string) jar {
	switch as {
	case "session":
		return e.signedIn
	case "pending":
		return e.pending
	case "":
		return jar{}
	}
	e.t.Fatalf("as %q", as)
	return nil
}

// do sends a request to the route of method and pattern (params filled
// in) with b's cookies (nil: none) through the proxy, keeps the cookies of
// its answer in b, and returns the answer's status and body.
func (e *codesEnv) do(method, pattern string, b jar, params map[string]string, body string) (int, []byte) {
	e.t.Helper()
	path := pattern
	for k, v := range params {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	return send(e.t, method, e.base+path, b, []byte(body))
}

// send sends a request to url with b's cookies (nil: none) and body as
// JSON, without Origin (a same-origin request of a client that sends
// none), keeps the cookies of the answer in b, and returns the answer's
// status and body.
func send(t *testing.T, method, url string, b jar, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range b {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b != nil {
		for _, c := range resp.Cookies() {
			if c.MaxAge < 0 {
				delete(b, c.Name)
			} else {
				b[c.Name] = c.Value
			}
		}
	}
	return resp.StatusCode, out
}

// sendEmailCode mails a code for the login b waits in and returns it.
func (e *codesEnv) sendEmailCode(b jar) string {
	e.t.Helper()
	if st, body := e.do("POST", "/api/2fa/email-code", b, nil, ""); st != http.StatusOK {
		e.t.Fatalf("send email code: %d %s", st, body)
	}
	if err := e.svc.FlushMail(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	var last mail.Message
	for _, m := range e.mail.Messages() {
		if m.Kind == mail.KindTwoFactorEmailCode {
			last = m
		}
	}
	m := regexp.MustCompile(`(?m)^Your code: ([0-9]{6})$`).FindStringSubmatch(last.Text)
	if m == nil {
		e.t.Fatalf("no code in %q", last.Text)
	}
	return m[1]
}

// deleteAda deletes the account while its second login waits.
func (e *codesEnv) deleteAda() {
	if err := e.mem.Delete(context.Background(), e.ada.ID); err != nil {
		e.t.Fatal(err)
	}
}

// wrongPasswords sends body, a wrong current password, to the route at
// path until Limits.Password (5 per 15 minutes) is used up.
func (e *codesEnv) wrongPasswords(path, body string) {
	e.t.Helper()
	for range 5 {
		if st, b := e.do("POST", path, e.signedIn, nil, body); st != http.StatusUnauthorized {
			e.t.Fatalf("wrong password: %d %s, want 401", st, b)
		}
	}
}

// wrongSecondSteps sends codes too long to be any code to the second
// step of Ada's pending login until Limits.TwoFactor (5 per 5 minutes),
// which her re-authentication's second factor counts against too, is used
// up.
func (e *codesEnv) wrongSecondSteps() {
	e.t.Helper()
	for range 5 {
		if st, b := e.do("POST", "/api/2fa/verify", e.pending, nil, `{"code":"`+strings.Repeat("1", 200)+`"}`); st != http.StatusBadRequest {
			e.t.Fatalf("wrong code: %d %s, want 400", st, b)
		}
	}
}

// state is what the store holds of the accounts the cases name: the
// users, Ada's email code, her trusted devices.
func (e *codesEnv) state() string {
	ctx := context.Background()
	var b strings.Builder
	for _, email := range []string{"ada@example.com", "bob@example.com", "new@example.com"} {
		if u, err := e.mem.ByEmail(ctx, email); err == nil {
			fmt.Fprintf(&b, "%s: %+v; ", email, *u)
		} else {
			fmt.Fprintf(&b, "%s: %v; ", email, err)
		}
	}
	if u, err := e.mem.ByID(ctx, e.ada.ID); err == nil {
		fmt.Fprintf(&b, "id %s: %s; ", u.ID, u.Email)
	} else {
		fmt.Fprintf(&b, "id: %v; ", err)
	}
	code, err := e.mem.EmailCode(ctx, e.ada.ID)
	fmt.Fprintf(&b, "email code: %+v %v; ", code, err)
	devices, err := e.trusted.List(ctx, e.ada.ID)
	fmt.Fprintf(&b, "trusted: %+v %v", devices, err)
	return b.String()
}
