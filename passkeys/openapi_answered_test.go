package passkeys_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// TestOpenAPIListedCodesAnswered proves by behaviour what
// TestOpenAPIRowsAreTheRoutesConditions proves from the source: every code
// a row of pkOps lists is one its route answers with, as core/auth's test
// of the same name does for core's rows.
//
// Each pair (route, status, code) is answered by the e2e drift test
// (e2e/openapi, the passkey flow suite through the validating proxy: the
// pairs listed in testdata/openapi_e2e_answered.txt, which a full run of
// it checks it still answers) or by a case below, which drives the route
// on the test environment (env) and checks the status, the code, the
// English text and that the answer changed nothing in the store. A row
// listing a code neither covers fails here, as does a line of the list or
// a case whose code the row does not list.
func TestOpenAPIListedCodesAnswered(t *testing.T) {
	listed := map[string]bool{}
	for _, p := range passkeys.OpenAPIListedCodes() {
		listed[p] = true
	}
	answered := map[string]string{}
	for _, p := range readAnsweredList(t, "testdata/openapi_e2e_answered.txt") {
		if !listed[p] {
			t.Errorf("testdata/openapi_e2e_answered.txt: %s is not a code its route's row lists", p)
		}
		answered[p] = "e2e/openapi"
	}
	for _, tc := range pkCodeCases {
		key := tc.method + " " + tc.path + " " + strconv.Itoa(tc.status) + " " + string(tc.code)
		t.Run(key, func(t *testing.T) {
			if !listed[key] {
				t.Fatalf("the row of %s %s does not list %d %s", tc.method, tc.path, tc.status, tc.code)
			}
			if answered[key] != "" {
				t.Errorf("answered by %s too: one of the two is enough", answered[key])
			}
			e := newCodesEnv(t)
			c := e.client()
			switch tc.as {
			case "session":
				c = e.home
			case "pending":
				c = e.twoFactorLogin(e.ada)
			}
			var body any
			if tc.before != nil {
				body = tc.before(e, c)
			}
			e.race.Store(tc.race)
			accounts, keys := e.state()
			r := c.do(tc.method, tc.path, body)
			var got struct{ Error, Code string }
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatalf("answer %d %s: %v", r.status, r.body, err)
			}
			if r.status != tc.status || got.Code != string(tc.code) || got.Error != tc.text {
				t.Fatalf("answer %d %s, want %d {%q, %q}", r.status, r.body, tc.status, tc.text, tc.code)
			}
			accountsAfter, keysAfter := e.state()
			if accountsAfter != accounts {
				t.Errorf("the accounts changed:\nbefore %s\nafter  %s", accounts, accountsAfter)
			}
			if keysAfter != keys && !tc.recordsUse {
				t.Errorf("the passkeys changed:\nbefore %s\nafter  %s", keys, keysAfter)
			}
		})
		answered[key] = "TestOpenAPIListedCodesAnswered"
	}
	for _, p := range passkeys.OpenAPIListedCodes() {
		if answered[p] == "" {
			t.Errorf("%s: listed in pkOps, answered by no test: add a case to pkCodeCases, or the line to testdata/openapi_e2e_answered.txt when the e2e passkey flow suite answers it", p)
		}
	}
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
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if slices.Contains(out, line) {
			t.Errorf("%s: %s twice", name, line)
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// pkCodeCase is one code a route answers with, and how to get it.
type pkCodeCase struct {
	method, path string
	// as is whose cookies the request carries: "" none, "session" Ada's
	// recent session, "pending" a new login of hers waiting for the
	// second step.
	as string
	// before runs after the cookies are set, on the client that sends
	// the request; it returns the request's body (nil: none).
	before func(e *codesEnv, c *client) any
	// race is the race the store loses at the request (racedUsers).
	race int32
	// recordsUse: the answer comes after the passkey's use was recorded
	// (its counter), which the passkeys' state then shows.
	recordsUse bool
	status     int
	code       auth.Code
	text       string
}

var pkCodeCases = []pkCodeCase{
	{method: "POST", path: passkeys.Prefix + "/register/begin", as: "session",
		before: func(e *codesEnv, c *client) any { e.useUpBegins(c, "/register/begin"); return nil },
		status: 429, code: "too_many_requests", text: "Too many requests. Try again later."},

	{method: "POST", path: passkeys.Prefix + "/register/finish", as: "session",
		before: func(e *codesEnv, c *client) any {
			cred := e.created(c)
			want(e.t, "logout", c.do(http.MethodPost, "/api/auth/logout", nil), http.StatusOK, "")
			return cred
		},
		status: 401, code: "not_authenticated", text: "Not authenticated"},
	{method: "POST", path: passkeys.Prefix + "/register/finish", as: "session",
		before: func(e *codesEnv, c *client) any {
			cred := e.created(c)
			cred["name"] = strings.Repeat("n", 65)
			return cred
		},
		status: 400, code: "name_too_long", text: "Name is too long"},
	{method: "POST", path: passkeys.Prefix + "/register/finish", as: "session",
		before: func(e *codesEnv, c *client) any {
			cred := e.created(c)
			cred["name"] = "Lap\u0007top"
			return cred
		},
		status: 400, code: "invalid_characters", text: "Request body contains invalid characters"},
	{method: "POST", path: passkeys.Prefix + "/register/finish", as: "session", race: raceAdded,
		before: func(e *codesEnv, c *client) any { return e.created(c) },
		status: 400, code: "passkey_already_registered", text: "This passkey is already registered"},

	{method: "POST", path: passkeys.Prefix + "/2fa/begin", as: "pending",
		before: func(e *codesEnv, c *client) any { e.advance(auth.PendingLifetime + time.Second); return nil },
		status: 401, code: "two_factor_session_expired", text: "2FA session expired"},
	{method: "POST", path: passkeys.Prefix + "/2fa/begin", as: "pending",
		before: func(e *codesEnv, c *client) any { e.deleteAda(); return nil },
		status: 401, code: "invalid_session", text: "Invalid session"},
	{method: "POST", path: passkeys.Prefix + "/2fa/begin", as: "pending",
		before: func(e *codesEnv, c *client) any { e.useUpBegins(c, "/2fa/begin"); return nil },
		status: 429, code: "too_many_requests", text: "Too many requests. Try again later."},

	{method: "POST", path: passkeys.Prefix + "/2fa/finish", as: "pending",
		before: func(e *codesEnv, c *client) any {
			assertion := e.asserted(c, "/2fa/begin", nil)
			e.advance(auth.PendingLifetime + time.Second)
			return assertion
		},
		status: 401, code: "two_factor_session_expired", text: "2FA session expired"},
	{method: "POST", path: passkeys.Prefix + "/2fa/finish", as: "pending",
		before: func(e *codesEnv, c *client) any {
			assertion := e.asserted(c, "/2fa/begin", nil)
			e.deleteAda()
			return assertion
		},
		status: 401, code: "invalid_session", text: "Invalid session"},
	{method: "POST", path: passkeys.Prefix + "/2fa/finish", as: "pending",
		before: func(e *codesEnv, c *client) any {
			// A passwordless sign-in takes the stored count to 1; a
			// clone of the key then signs with 1 again.
			want(e.t, "passwordless", e.passwordless(e.client(), e.key, e.cred, origin), http.StatusOK, "")
			e.cred.Counter = 0
			return e.asserted(c, "/2fa/begin", e.cred)
		},
		status: 400, code: "passkey_sign_count_regressed", text: "Passkey refused: it may have been copied. Use another sign-in method."},

	{method: "POST", path: passkeys.Prefix + "/login/begin",
		before: func(e *codesEnv, c *client) any { e.useUpBegins(c, "/login/begin"); return nil },
		status: 429, code: "too_many_requests", text: "Too many requests. Try again later."},

	{method: "POST", path: passkeys.Prefix + "/login/finish", race: raceDeleted, recordsUse: true,
		before: func(e *codesEnv, c *client) any { return e.asserted(c, "/login/begin", e.cred) },
		status: 401, code: "invalid_credentials", text: "Invalid credentials"},

	{method: "POST", path: passkeys.Prefix + "/rename", as: "session",
		before: func(e *codesEnv, c *client) any {
			return map[string]string{"id": b64(e.cred.ID), "name": "Lap\u0007top"}
		},
		status: 400, code: "invalid_characters", text: "Request body contains invalid characters"},

	{method: "POST", path: passkeys.Prefix + "/delete",
		before: func(e *codesEnv, c *client) any { return map[string]string{"id": b64(e.cred.ID)} },
		status: 401, code: "not_authenticated", text: "Not authenticated"},
}

// The races racedUsers plays.
const (
	raceNone    int32 = iota
	raceAdded         // another request added the same passkey first: AddPasskey reports user.ErrConflict
	raceDeleted       // another request deleted the account after the passkey's use was recorded: ByID finds none
)

// racedUsers is a memory store that loses the race race names.
type racedUsers struct {
	*store.Memory
	race *atomic.Int32
}

func (r racedUsers) AddPasskey(ctx context.Context, p *user.Passkey) error {
	if r.race.Load() == raceAdded {
		return fmt.Errorf("test: %w", user.ErrConflict)
	}
	return r.Memory.AddPasskey(ctx, p)
}

func (r racedUsers) ByID(ctx context.Context, id string) (*user.User, error) {
	if r.race.Load() == raceDeleted {
		return nil, fmt.Errorf("test: %w", user.ErrNotFound)
	}
	return r.Memory.ByID(ctx, id)
}

// codesEnv is an env over racedUsers where Ada has one passkey (key's
// cred) and a recent session (home), the ceremonies last an hour (so that
// a pending login expires first) and a counter that goes backwards is
// refused.
type codesEnv struct {
	*env
	race atomic.Int32 // racedUsers' race
	ada  *user.User
	home *client
	key  *passkeystest.Authenticator
	cred *passkeystest.Credential
}

func newCodesEnv(t *testing.T) *codesEnv {
	t.Helper()
	e := &codesEnv{}
	e.env = newEnv(t, func(c *passkeys.Config) {
		c.ChallengeLifetime = time.Hour
		c.RefuseCounterRegression = true
	}, func(c *auth.Config) {
		c.Users = racedUsers{c.Users.(*store.Memory), &e.race}
	})
	e.home, e.ada = e.signUp("ada@example.com")
	e.key = passkeystest.NewAuthenticator(t)
	e.cred, _ = e.addPasskey(e.home, e.key, "Laptop")
	return e
}

// useUpBegins begins on c at path (under passkeys.Prefix) until
// Config.BeginLimit answers 429.
func (e *codesEnv) useUpBegins(c *client, path string) {
	e.t.Helper()
	for range 100 {
		if r := c.do(http.MethodPost, passkeys.Prefix+path, nil); r.status == http.StatusTooManyRequests {
			return
		}
	}
	e.t.Fatalf("%s: no 429 in 100 begins", path)
}

// created begins a registration on c and returns a new key's answer.
func (e *codesEnv) created(c *client) map[string]any {
	e.t.Helper()
	begin := c.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	want(e.t, "register/begin", begin, http.StatusOK, "")
	cred, _ := passkeystest.NewAuthenticator(e.t).Create(begin.body, origin)
	return cred
}

// asserted begins at path on c and returns the assertion of Ada's key
// (k, nil: the one the options allow).
func (e *codesEnv) asserted(c *client, path string, k *passkeystest.Credential) map[string]any {
	e.t.Helper()
	begin := c.do(http.MethodPost, passkeys.Prefix+path, nil)
	want(e.t, path, begin, http.StatusOK, "")
	return e.key.Get(begin.body, origin, k)
}

// deleteAda deletes the account (and its passkeys).
func (e *codesEnv) deleteAda() {
	if err := e.users.Delete(context.Background(), e.ada.ID); err != nil {
		e.t.Fatal(err)
	}
}

// state is what the store holds of the accounts (Ada's, by address and
// id) and of Ada's passkeys.
func (e *codesEnv) state() (accounts, keys string) {
	ctx := context.Background()
	u, err := e.users.ByEmail(ctx, "ada@example.com")
	if err == nil {
		accounts = fmt.Sprintf("%+v", *u)
	} else {
		accounts = err.Error()
	}
	ps, err := e.users.ListPasskeys(ctx, e.ada.ID)
	keys = fmt.Sprintf("%v", err)
	for _, p := range ps {
		keys += fmt.Sprintf("; %+v", *p)
	}
	return accounts, keys
}
