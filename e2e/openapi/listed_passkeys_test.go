package openapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/e2e/internal/frameworks"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// The codes the passkey routes list as their own that the passkey flow
// suite never answers (a limit, a pending login that expired or whose
// account was deleted, a race the store reports, a counter gone back),
// each driven through the validating proxy as listedCodeCases are: the
// status, the code, the English text, and the accounts and passkeys as
// they were.

// pkCodeCase is one code a passkey route answers with, and how to get it.
type pkCodeCase struct {
	path   string                         // under passkeys.Prefix; every route is a POST
	as     string                         // "" a new browser, "session" Ada's, "pending" a login of hers waiting for the second step
	before func(e *pkCodesEnv, c jar) any // what happens first; it returns the body (nil: none)
	race   int32                          // what racedPasskeyUsers reports at the request
	keyUse bool                           // the answer may record the key's use (its counter), as a verified assertion does
	status int
	code   auth.Code
	text   string
}

const (
	raceNone    int32 = iota
	raceAdded         // another request added the same passkey first: AddPasskey reports user.ErrConflict
	raceDeleted       // another request deleted the account after the passkey's use was recorded: ByID finds none
)

var pkCodeCases = []pkCodeCase{
	{path: "/register/begin", as: "session",
		before: func(e *pkCodesEnv, c jar) any { e.useUpBegins(c, "/register/begin"); return nil },
		status: 429, code: "too_many_requests", text: "Too many requests. Try again later."},

	{path: "/register/finish", as: "session",
		before: func(e *pkCodesEnv, c jar) any {
			cred := e.created(c)
			e.want(c, "/api/auth/logout", nil, http.StatusOK)
			return cred
		},
		status: 401, code: "not_authenticated", text: "Not authenticated"},
	{path: "/register/finish", as: "session",
		before: func(e *pkCodesEnv, c jar) any {
			cred := e.created(c)
			cred["name"] = strings.Repeat("n", 65)
			return cred
		},
		status: 400, code: "name_too_long", text: "Name is too long"},
	{path: "/register/finish", as: "session",
		before: func(e *pkCodesEnv, c jar) any {
			cred := e.created(c)
			cred["name"] = "Lap\u0007top"
			return cred
		},
		status: 400, code: "invalid_characters", text: "Request body contains invalid characters"},
	{path: "/register/finish", as: "session", race: raceAdded,
		before: func(e *pkCodesEnv, c jar) any { return e.created(c) },
		status: 400, code: "passkey_already_registered", text: "This passkey is already registered"},

	{path: "/2fa/begin", as: "pending",
		before: func(e *pkCodesEnv, c jar) any { e.advance(auth.PendingLifetime + time.Second); return nil },
		status: 401, code: "two_factor_session_expired", text: "2FA session expired"},
	{path: "/2fa/begin", as: "pending",
		before: func(e *pkCodesEnv, c jar) any { e.deleteAda(); return nil },
		status: 401, code: "invalid_session", text: "Invalid session"},
	{path: "/2fa/begin", as: "pending",
		before: func(e *pkCodesEnv, c jar) any { e.useUpBegins(c, "/2fa/begin"); return nil },
		status: 429, code: "too_many_requests", text: "Too many requests. Try again later."},

	{path: "/2fa/finish", as: "pending",
		before: func(e *pkCodesEnv, c jar) any {
			assertion := e.asserted(c, "/2fa/begin", nil)
			e.advance(auth.PendingLifetime + time.Second)
			return assertion
		},
		status: 401, code: "two_factor_session_expired", text: "2FA session expired"},
	{path: "/2fa/finish", as: "pending",
		before: func(e *pkCodesEnv, c jar) any {
			assertion := e.asserted(c, "/2fa/begin", nil)
			e.deleteAda()
			return assertion
		},
		status: 401, code: "invalid_session", text: "Invalid session"},
	{path: "/2fa/finish", as: "pending",
		before: func(e *pkCodesEnv, c jar) any { return e.copyAsserted(c, "/2fa/begin") },
		status: 400, code: "passkey_sign_count_regressed", text: "Passkey refused: it may have been copied. Use another sign-in method."},

	{path: "/login/begin",
		before: func(e *pkCodesEnv, c jar) any { e.useUpBegins(c, "/login/begin"); return nil },
		status: 429, code: "too_many_requests", text: "Too many requests. Try again later."},

	{path: "/login/finish", race: raceDeleted, keyUse: true,
		before: func(e *pkCodesEnv, c jar) any { return e.asserted(c, "/login/begin", e.cred) },
		status: 401, code: "invalid_credentials", text: "Invalid credentials"},

	{path: "/reauth/begin", as: "session",
		before: func(e *pkCodesEnv, c jar) any { e.useUpBegins(c, "/reauth/begin"); return nil },
		status: 429, code: "too_many_requests", text: "Too many requests. Try again later."},

	{path: "/reauth/finish", as: "session", keyUse: true,
		before: func(e *pkCodesEnv, c jar) any {
			assertion := e.asserted(c, "/reauth/begin", e.cred)
			e.want(c, "/api/auth/logout", nil, http.StatusOK)
			return assertion
		},
		status: 401, code: "not_authenticated", text: "Not authenticated"},
	{path: "/reauth/finish", as: "session",
		before: func(e *pkCodesEnv, c jar) any { return e.copyAsserted(c, "/reauth/begin") },
		status: 400, code: "passkey_sign_count_regressed", text: "Passkey refused: it may have been copied. Use another sign-in method."},

	{path: "/rename", as: "session",
		before: func(e *pkCodesEnv, c jar) any {
			return map[string]string{"id": base64.RawURLEncoding.EncodeToString(e.cred.ID), "name": "Lap\u0007top"}
		},
		status: 400, code: "invalid_characters", text: "Request body contains invalid characters"},

	{path: "/delete",
		before: func(e *pkCodesEnv, c jar) any {
			return map[string]string{"id": base64.RawURLEncoding.EncodeToString(e.cred.ID)}
		},
		status: 401, code: "not_authenticated", text: "Not authenticated"},
}

// TestPasskeyListedCodes runs pkCodeCases through the validating proxy.
func TestPasskeyListedCodes(t *testing.T) {
	for _, tc := range pkCodeCases {
		t.Run(fmt.Sprintf("POST %s%s %d %s", passkeys.Prefix, tc.path, tc.status, tc.code), func(t *testing.T) {
			t.Parallel()
			e := newPKCodesEnv(t)
			c := jar{}
			switch tc.as {
			case "session":
				c = e.home
			case "pending":
				c = e.twoFactorLogin()
			}
			var body any
			if tc.before != nil {
				body = tc.before(e, c)
			}
			e.race.Store(tc.race)
			accounts, keys := e.state()
			status, b := send(t, http.MethodPost, e.base+passkeys.Prefix+tc.path, c, e.json(body))
			wantError(t, status, b, tc.status, tc.code, tc.text)
			e.race.Store(raceNone)
			accountsAfter, keysAfter := e.state()
			if accountsAfter != accounts {
				t.Errorf("the accounts changed:\nbefore %s\nafter  %s", accounts, accountsAfter)
			}
			if keysAfter != keys && !tc.keyUse {
				t.Errorf("the passkeys changed:\nbefore %s\nafter  %s", keys, keysAfter)
			}
		})
	}
}

// racedPasskeyUsers is a memory store that, as race says, reports what a
// concurrent request did first.
type racedPasskeyUsers struct {
	*store.Memory
	race *atomic.Int32
}

func (r racedPasskeyUsers) AddPasskey(ctx context.Context, p *user.Passkey) error {
	if r.race.Load() == raceAdded {
		return fmt.Errorf("test: %w", user.ErrConflict)
	}
	return r.Memory.AddPasskey(ctx, p)
}

func (r racedPasskeyUsers) ByID(ctx context.Context, id string) (*user.User, error) {
	if r.race.Load() == raceDeleted {
		return nil, fmt.Errorf("test: %w", user.ErrNotFound)
	}
	return r.Memory.ByID(ctx, id)
}

// pkCodesEnv is a Service with the passkeys module behind the validating
// proxy on net/http, on a settable clock, with challenges that outlive a
// pending login and counters that must not go back; Ada signed in
// (home) with one passkey.
type pkCodesEnv struct {
	t    *testing.T
	base string
	mem  *store.Memory
	race atomic.Int32 // racedPasskeyUsers' race
	mu   sync.Mutex
	now  time.Time
	ada  *user.User
	home jar
	key  *passkeystest.Authenticator
	cred *passkeystest.Credential
}

// origin is the site of the passkeys' ceremonies (Config.Origins): the
// proxy's requests carry no Origin, which the cross-origin check lets
// pass, and the authenticator signs for it.
const origin = "http://localhost"

func newPKCodesEnv(t *testing.T) *pkCodesEnv {
	t.Helper()
	e := &pkCodesEnv{t: t, mem: store.NewMemory(store.MemoryConfig{}), now: time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)}
	svc := newServiceWith(t, func(c *auth.Config) {
		c.Users = racedPasskeyUsers{e.mem, &e.race}
		c.Now = e.clock
		c.Logger = slog.New(slog.DiscardHandler)
	})
	pk, err := passkeys.New(svc, passkeys.Config{RPID: "localhost", Origins: []string{origin}, Now: e.clock,
		ChallengeLifetime: time.Hour, RefuseCounterRegression: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pk.Close() })
	doc, err := svc.OpenAPI()
	e.base = checked(t, doc, err, frameworks.Serve(t, "nethttp", svc, nil, ""), seen)
	e.home = jar{}
	e.want(e.home, "/api/auth/register", map[string]string{"email": "ada@example.com", "password": goodPW, "name": "Ada"}, http.StatusOK)
	if e.ada, err = e.mem.ByEmail(context.Background(), "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	// A passkey needs a verified address.
	if err := e.mem.VerifyEmail(context.Background(), e.ada.ID, e.ada.Email, e.now); err != nil {
		t.Fatal(err)
	}
	if e.ada, err = e.mem.ByID(context.Background(), e.ada.ID); err != nil {
		t.Fatal(err)
	}
	e.key = passkeystest.NewAuthenticator(t)
	begin := e.want(e.home, passkeys.Prefix+"/register/begin", nil, http.StatusOK)
	cred, k := e.key.Create(begin, origin)
	cred["name"] = "Laptop"
	e.want(e.home, passkeys.Prefix+"/register/finish", cred, http.StatusOK)
	e.cred = k
	return e
}

func (e *pkCodesEnv) clock() time.Time { e.mu.Lock(); defer e.mu.Unlock(); return e.now }

func (e *pkCodesEnv) advance(d time.Duration) { e.mu.Lock(); e.now = e.now.Add(d); e.mu.Unlock() }

// json is body as JSON; nil is no body.
func (e *pkCodesEnv) json(body any) []byte {
	if body == nil {
		return nil
	}
	b, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// want POSTs body from c to path, fails unless the answer has status
// status, and returns its body.
func (e *pkCodesEnv) want(c jar, path string, body any, status int) []byte {
	e.t.Helper()
	st, b := send(e.t, http.MethodPost, e.base+path, c, e.json(body))
	if st != status {
		e.t.Fatalf("POST %s: %d %s, want %d", path, st, b, status)
	}
	return b
}

// useUpBegins begins on c at path (under passkeys.Prefix) until
// passkeys.Config.BeginLimit answers 429.
func (e *pkCodesEnv) useUpBegins(c jar, path string) {
	e.t.Helper()
	for range 100 {
		if st, _ := send(e.t, http.MethodPost, e.base+passkeys.Prefix+path, c, nil); st == http.StatusTooManyRequests {
			return
		}
	}
	e.t.Fatalf("%s: no 429 in 100 begins", path)
}

// created begins a registration on c and returns a new key's answer.
func (e *pkCodesEnv) created(c jar) map[string]any {
	e.t.Helper()
	begin := e.want(c, passkeys.Prefix+"/register/begin", nil, http.StatusOK)
	cred, _ := passkeystest.NewAuthenticator(e.t).Create(begin, origin)
	return cred
}

// asserted begins at path on c and returns the assertion of Ada's key
// (k; nil: the one the options allow).
func (e *pkCodesEnv) asserted(c jar, path string, k *passkeystest.Credential) map[string]any {
	e.t.Helper()
	begin := e.want(c, passkeys.Prefix+path, nil, http.StatusOK)
	return e.key.Get(begin, origin, k)
}

// copyAsserted is asserted by a copy of Ada's key: a passwordless sign-in
// moves the key's counter on, then the copy, at the old counter, signs.
func (e *pkCodesEnv) copyAsserted(c jar, path string) map[string]any {
	e.t.Helper()
	other := jar{}
	e.want(other, passkeys.Prefix+"/login/finish", e.asserted(other, "/login/begin", e.cred), http.StatusOK)
	e.cred.Counter = 0
	return e.asserted(c, path, e.cred)
}

// twoFactorLogin turns 2FA on for Ada in the store and returns a new
// browser whose login waits for the second step.
func (e *pkCodesEnv) twoFactorLogin() jar {
	e.t.Helper()
	ctx := context.Background()
	if err := e.mem.BeginTOTPSetup(ctx, e.ada.ID, "pending"); err != nil {
		e.t.Fatal(err)
	}
	if err := e.mem.EnableTOTP(ctx, e.ada.ID, user.EnableTOTP{Pending: "pending", Secret: "sealed", RecoveryCodeHashes: []string{"h"}}); err != nil {
		e.t.Fatal(err)
	}
	c := jar{}
	if b := e.want(c, "/api/auth/login", map[string]string{"email": "ada@example.com", "password": goodPW}, http.StatusOK); !strings.Contains(string(b), `"requiresTwoFactor":true`) || c[auth.PendingCookie] == "" {
		e.t.Fatalf("login: %s, want a pending 2FA login", b)
	}
	return c
}

// deleteAda deletes the account (and its passkeys).
func (e *pkCodesEnv) deleteAda() {
	if err := e.mem.Delete(context.Background(), e.ada.ID); err != nil {
		e.t.Fatal(err)
	}
}

// state is what the store holds of Ada's account (by address) and of her
// passkeys.
func (e *pkCodesEnv) state() (accounts, keys string) {
	ctx := context.Background()
	if u, err := e.mem.ByEmail(ctx, "ada@example.com"); err == nil {
		accounts = fmt.Sprintf("%+v", *u)
	} else {
		accounts = err.Error()
	}
	ps, err := e.mem.ListPasskeys(ctx, e.ada.ID)
	keys = fmt.Sprintf("%v", err)
	for _, p := range ps {
		keys += fmt.Sprintf("; %+v", *p)
	}
	return accounts, keys
}
