package auth

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// TestOpenAPIListedCodesAnswered proves by behaviour what
// TestOpenAPIRowsAreTheFlowsConditions proves from the source: every code
// a row of apiOps lists (its errs) is one its route answers with.
//
// Each pair (route, status, code) is answered by one of two runs:
//
//   - the e2e drift test (e2e/openapi), which sends the flow suite through
//     a proxy that checks each answer against the document: the pairs it
//     answers are listed in testdata/openapi_e2e_answered.txt, and
//     e2e/openapi fails when a full run of it no longer answers one of
//     them (so the list cannot claim what the suite stopped doing);
//   - the cases below, for the pairs the suite never reaches (a store
//     that reports a concurrent change, a limit, an account deleted
//     while its login waits for the second step, a field the suite sends
//     well-formed): each drives the route through Service.Handle and
//     checks the status, the code, the English text and that the answer
//     changed nothing in the store.
//
// A row that lists a code neither covers fails here, in-process, as does
// a line of the list or a case whose code the route's row does not list.
// The list is a file rather than a re-run of the suite so that this test
// stays fast and core's tests need nothing of the e2e module; the e2e side
// keeps the file honest.
func TestOpenAPIListedCodesAnswered(t *testing.T) {
	listed := map[string]bool{} // "POST /api/login 401 invalid_credentials"
	for _, op := range apiOps {
		for _, e := range op.errs {
			listed[pairKey(op.method, op.path, e.Status, e.Code)] = true
		}
	}
	answered := map[string]string{} // pair -> who answers it
	for _, p := range readAnsweredList(t, "testdata/openapi_e2e_answered.txt") {
		if !listed[p] {
			t.Errorf("testdata/openapi_e2e_answered.txt: %s is not a code its route's row lists", p)
		}
		answered[p] = "e2e/openapi"
	}
	for _, tc := range listedCodeCases {
		key := pairKey(tc.method, tc.path, tc.status, tc.code)
		t.Run(key, func(t *testing.T) {
			if !listed[key] {
				t.Fatalf("the row of %s %s does not list %d %s", tc.method, tc.path, tc.status, tc.code)
			}
			if answered[key] != "" {
				t.Errorf("answered by %s too: one of the two is enough", answered[key])
			}
			e := newCodesEnv(t)
			if tc.before != nil {
				tc.before(e)
			}
			e.raced.Store(tc.raced)
			before := e.state()
			resp := e.handle(tc.method, tc.path, e.cookies(tc.as), tc.params, strings.ReplaceAll(tc.body, "{code}", e.emailCode))
			var body struct{ Error, Code string }
			if err := json.Unmarshal(resp.Body, &body); err != nil {
				t.Fatalf("answer %d %s: %v", resp.Status, resp.Body, err)
			}
			if resp.Status != tc.status || body.Code != string(tc.code) || body.Error != tc.text {
				t.Fatalf("answer %d %s, want %d {%q, %q}", resp.Status, resp.Body, tc.status, tc.text, tc.code)
			}
			if after := e.state(); after != before {
				t.Errorf("the store changed:\nbefore %s\nafter  %s", before, after)
			}
		})
		answered[key] = "TestOpenAPIListedCodesAnswered"
	}
	for _, op := range apiOps {
		for _, e := range op.errs {
			if key := pairKey(op.method, op.path, e.Status, e.Code); answered[key] == "" {
				t.Errorf("%s: listed in apiOps, answered by no test: add a case to listedCodeCases, or the line to testdata/openapi_e2e_answered.txt when the e2e flow suite answers it", key)
			}
		}
	}
}

// pairKey names one code of one route: "POST /api/login 401 invalid_credentials".
func pairKey(method, path string, status int, code Code) string {
	return method + " " + path + " " + strconv.Itoa(status) + " " + string(code)
}

// readAnsweredList reads a list of pairs, one a line; # starts a comment.
func readAnsweredList(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if seen[line] {
			t.Errorf("%s: %s twice", name, line)
		}
		seen[line] = true
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// listedCodeCase is one code a route answers with, and how to get it.
type listedCodeCase struct {
	method, path string
	params       map[string]string // the path's parameters
	as           string            // the request's cookies: "" none, "session" Ada's session, "pending" her login waiting for the second step
	body         string            // JSON; {code} is the code before mailed
	raced        bool              // at the request (after before), the store reports a concurrent change on every write of an address, a password, an email code
	before       func(e *codesEnv) // what happens before the request
	status       int
	code         Code
	text         string
}

var (
	longPassword = strings.Repeat("p", 129)

	listedCodeCases = []listedCodeCase{
		{method: "POST", path: "/api/auth/login", body: `{"email":"ada@example.com","password":"wrong horse"}`,
			before: func(e *codesEnv) {
				for range 5 { // Limits.LoginEmail: 5 per 15 minutes
					if r := e.handle("POST", "/api/auth/login", nil, nil, `{"email":"ada@example.com","password":"wrong horse"}`); r.Status != http.StatusUnauthorized {
						e.t.Fatalf("wrong password: %d %s, want 401", r.Status, r.Body)
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
		{method: "POST", path: "/api/auth/change-password", as: "session", raced: true, body: `{"currentPassword":"correct horse battery staple","newPassword":"a new good password"}`,
			status: 409, code: "password_changed_concurrently", text: "Your password was changed by another request"},
	}
)

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

// codesEnv is a flow with every route on and Ada, verified, with 2FA on:
// a browser signed in as her, one whose login waits for the second step.
type codesEnv struct {
	*flow
	mem       *store.Memory
	raced     atomic.Bool // racedUsers reports conflicts
	trusted   *store.MemorySessions
	ada       *user.User
	signedIn  *browser
	pending   *browser
	emailCode string // the code a case's before mailed: its body's {code}
}

func newCodesEnv(t *testing.T) *codesEnv {
	t.Helper()
	e := &codesEnv{mem: store.NewMemory(store.MemoryConfig{}), trusted: store.NewMemorySessions(store.MemoryConfig{})}
	e.flow = newFlow(t, func(c *Config) {
		c.Users = racedUsers{e.mem, &e.raced}
		c.TrustedDevices = e.trusted
		c.EmailCode.Enabled = true
	})
	e.signedIn, e.ada = e.register("ada@example.com", goodPW)
	ctx := context.Background()
	if err := e.mem.VerifyEmail(ctx, e.ada.ID, e.ada.Email, e.now); err != nil {
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
	e.signedIn, e.pending = newBrowser(), newBrowser()
	for _, b := range []*browser{e.signedIn, e.pending} {
		if r := e.handle("POST", "/api/login", b, nil, `{"email":"ada@example.com","password":"`+goodPW+`"}`); r.Status != http.StatusOK || b.cookies[PendingCookie] == "" {
			t.Fatalf("login: %d %s, want a pending 2FA login", r.Status, r.Body)
		}
	}
	if r := e.handle("POST", "/api/2fa/email-code/verify", e.signedIn, nil, `{"code":"`+e.sendEmailCode(e.signedIn)+`"}`); r.Status != http.StatusOK || e.signedIn.cookies[PendingCookie] != "" {
		t.Fatalf("finishing with the mailed code: %d %s", r.Status, r.Body)
	}
	return e
}

// cookies are the browser of as ("" a new one).
func (e *codesEnv) cookies(as string) *browser {
	switch as {
	case "session":
		return e.signedIn
	case "pending":
		return e.pending
	case "":
		return newBrowser()
	}
	e.t.Fatalf("as %q", as)
	return nil
}

// handle runs the route of method and pattern for a request of b (nil: a
// new browser) and keeps the cookies of its answer in b.
func (e *codesEnv) handle(method, pattern string, b *browser, params map[string]string, body string) Response {
	e.t.Helper()
	if b == nil {
		b = newBrowser()
	}
	for _, rt := range e.s.Routes() {
		if rt.Method != method || rt.Pattern != pattern {
			continue
		}
		req := &fakeRequest{method: method, remote: "192.0.2.7:4711", headers: b.headers, params: params, cookies: map[string]string{}, body: []byte(body)}
		for k, v := range b.cookies {
			req.cookies[k] = v
		}
		resp := e.s.Handle(rt, req)
		for _, c := range resp.Cookies {
			if c.MaxAge < 0 {
				delete(b.cookies, c.Name)
			} else {
				b.cookies[c.Name] = c.Value
			}
		}
		return resp
	}
	e.t.Fatalf("no route %s %s", method, pattern)
	return Response{}
}

// sendEmailCode mails a code for the login b waits in and returns it.
func (e *codesEnv) sendEmailCode(b *browser) string {
	e.t.Helper()
	if r := e.handle("POST", "/api/2fa/email-code", b, nil, ""); r.Status != http.StatusOK {
		e.t.Fatalf("send email code: %d %s", r.Status, r.Body)
	}
	ms := e.mails(mail.KindTwoFactorEmailCode)
	if len(ms) == 0 {
		e.t.Fatal("no email-code mail")
	}
	m := regexp.MustCompile(`(?m)^Your code: ([0-9]{6})$`).FindStringSubmatch(ms[len(ms)-1].Text)
	if m == nil {
		e.t.Fatalf("no code in %q", ms[len(ms)-1].Text)
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
		if r := e.handle("POST", path, e.signedIn, nil, body); r.Status != http.StatusUnauthorized {
			e.t.Fatalf("wrong password: %d %s, want 401", r.Status, r.Body)
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
