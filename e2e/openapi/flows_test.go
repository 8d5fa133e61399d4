package openapi

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/e2e/internal/frameworks"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && wholeRun() {
		code = checkListedAnswered()
	}
	os.Exit(code)
}

// errorsSeen are the error answers of every exchange of the run, as
// "METHOD PATH STATUS CODE" (the operation's path).
var errorsSeen = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

// seen records an exchange's error answer in errorsSeen.
func seen(a Answer) {
	if a.Status >= 400 {
		errorsSeen.Lock()
		errorsSeen.m[fmt.Sprintf("%s %d %s", a.Op, a.Status, a.Code)] = true
		errorsSeen.Unlock()
	}
}

// wholeRun reports whether every test of the package ran: no -run or
// -skip pattern left one out.
func wholeRun() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// listedCodes are the codes every route of a Service with every route
// lists as its own (auth.Operation.Errors; the document adds those of its
// shape), as "METHOD PATH STATUS CODE".
func listedCodes() ([]string, error) {
	svc, err := newServiceErr(func(c *auth.Config) {
		c.Sessions = store.NewMemorySessions(store.MemoryConfig{})
		c.TrustedDevices = store.NewMemorySessions(store.MemoryConfig{})
		c.EmailCode = auth.EmailCodeConfig{Enabled: true}
		c.Tokens.Enabled = true
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = svc.Close(context.Background()) }()
	pk, err := passkeys.New(svc, passkeys.Config{RPID: "localhost", Origins: []string{"http://localhost"}})
	if err != nil {
		return nil, err
	}
	defer func() { _ = pk.Close() }()
	var out []string
	for _, rt := range svc.Modules().Routes() {
		op, ok := rt.Operation()
		if !ok {
			continue
		}
		for _, e := range op.Errors {
			out = append(out, fmt.Sprintf("%s %s %d %s", rt.Method, rt.Pattern, e.Status, e.Code))
		}
	}
	return out, nil
}

// checkListedAnswered returns 1, naming them, when a code a route lists
// as its own is one no exchange of the run answered: the document would
// claim what no test shows.
func checkListedAnswered() int {
	listed, err := listedCodes()
	if err != nil {
		fmt.Fprintf(os.Stderr, "openapi: %v\nFAIL\n", err)
		return 1
	}
	errorsSeen.Lock()
	defer errorsSeen.Unlock()
	missing := unanswered(listed, errorsSeen.m)
	for _, m := range missing {
		fmt.Fprintf(os.Stderr, "--- FAIL: %s: listed by its route (auth.Operation.Errors), answered by no exchange of the run: add a case to listedCodeCases or pkCodeCases\n", m)
	}
	if len(missing) > 0 {
		fmt.Fprintln(os.Stderr, "FAIL")
		return 1
	}
	return 0
}

// unanswered returns the pairs of listed that seen does not hold.
func unanswered(listed []string, seen map[string]bool) []string {
	var missing []string
	for _, p := range listed {
		if !seen[p] {
			missing = append(missing, p)
		}
	}
	return missing
}

// TestUnanswered: a listed answer the run did not give is named; one it
// gave is not. And every route with every feature lists some code.
func TestUnanswered(t *testing.T) {
	got := unanswered([]string{"POST /api/login 401 invalid_credentials", "POST /api/login 429 too_many_login_attempts"},
		map[string]bool{"POST /api/login 401 invalid_credentials": true})
	if want := []string{"POST /api/login 429 too_many_login_attempts"}; !slices.Equal(got, want) {
		t.Errorf("unanswered = %q; want %q", got, want)
	}
	listed, err := listedCodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"POST /api/login 401 invalid_credentials", "POST /api/passkeys/login/finish 400 passkey_sign_count_regressed"} {
		if !slices.Contains(listed, p) {
			t.Errorf("listedCodes has no %s", p)
		}
	}
}

// checked puts the validating proxy of doc in front of base; answered
// gets each exchange of an operation that matched the document.
func checked(t *testing.T, doc []byte, err error, base string, answered func(Answer)) string {
	t.Helper()
	if err != nil {
		t.Fatalf("OpenAPI: %v", err)
	}
	c, err := New(doc)
	if err != nil {
		t.Fatalf("the served document: %v", err)
	}
	return c.Proxy(t, base, answered)
}

// coverage collects the operations a suite reached with a 2xx answer;
// the error answers go to errorsSeen.
type coverage struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (c *coverage) add(a Answer) {
	if a.Status >= 400 {
		seen(a)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[a.Op] = true
}

// check fails t for each operation of doc (a document with every route)
// that no exchange reached with a 2xx: the suite ran past it unchecked.
func (c *coverage) check(t *testing.T, doc []byte, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, item := range d.Paths {
		for m := range item {
			if op := strings.ToUpper(m) + " " + p; !c.seen[op] {
				t.Errorf("%s: no exchange of the suite reached it with a 2xx", op)
			}
		}
	}
}

// everything is a Service with every route on: the routes a suite must
// reach.
func everything(t *testing.T) *auth.Service {
	t.Helper()
	return newServiceWith(t, func(c *auth.Config) {
		c.Logger = slog.New(slog.DiscardHandler)
		c.Sessions = store.NewMemorySessions(store.MemoryConfig{})
		c.TrustedDevices = store.NewMemorySessions(store.MemoryConfig{})
		c.EmailCode = auth.EmailCodeConfig{Enabled: true}
		c.Tokens.Enabled = true
	})
}

// TestFlowSuite runs the HTTP flow suite on net/http (the frameworks are
// proven identical on the wire by their own runs of it) with every
// exchange checked against the document the suite's Service serves (with
// session records, so the session routes are in it; every feature the
// suite switches off gone from it), and every route reached with a 2xx.
func TestFlowSuite(t *testing.T) {
	var cov coverage
	t.Cleanup(func() { doc, err := everything(t).OpenAPI(); cov.check(t, doc, err) }) // after the suite's parallel subtests
	authtest.Run(t, authtest.Harness{
		Start: func(t *testing.T, svc *auth.Service) string {
			doc, err := svc.OpenAPI()
			return checked(t, doc, err, frameworks.Serve(t, "nethttp", svc, nil, ""), cov.add)
		},
		NewUsers: func(t *testing.T) user.Store { return store.NewMemory(store.MemoryConfig{}) },
		NewSessions: func(t *testing.T, now func() time.Time) session.Store {
			return store.NewMemorySessions(store.MemoryConfig{Now: now})
		},
	})
	// The suite signs in on the spec's /api/login; authkit's second path
	// of the same handler, through the proxy too.
	t.Run("POST /api/auth/login", func(t *testing.T) {
		svc := everything(t)
		doc, err := svc.OpenAPI()
		base := checked(t, doc, err, frameworks.Serve(t, "nethttp", svc, nil, ""), cov.add)
		for _, step := range []struct{ path, body, want string }{
			{"/api/auth/register", `{"email":"ada@example.com","password":"correct horse","name":"Ada"}`,
				`200 {"message":"Registration successful. Check your email to verify your address."}`},
			{"/api/auth/login", `{"email":"ada@example.com","password":"correct horse"}`, `200 {"success":true}`},
		} {
			resp, err := http.Post(base+step.path, "application/json", strings.NewReader(step.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if got := fmt.Sprintf("%d %s", resp.StatusCode, b); got != step.want {
				t.Fatalf("POST %s: %s, want %s", step.path, got, step.want)
			}
		}
	})
}

// TestPasskeyFlowSuite runs the passkey flow suite on net/http, the
// passkey routes among the Service's, with every exchange checked against
// the Service's document and every passkey route reached with a 2xx.
func TestPasskeyFlowSuite(t *testing.T) {
	var cov coverage
	t.Cleanup(func() { cov.check(t, passkeysPart(t), nil) }) // after the suite's parallel subtests
	passkeystest.Run(t, passkeystest.Harness{
		Start: func(t *testing.T, svc *auth.Service, _ *passkeys.Handler) string {
			doc, err := svc.OpenAPI()
			return checked(t, doc, err, frameworks.Serve(t, "nethttp", svc, nil, ""), cov.add)
		},
		NewUsers: func(t *testing.T) user.Store { return store.NewMemory(store.MemoryConfig{}) },
	})
}

// passkeysPart is the passkey routes of the document of a Service with
// the passkeys module.
func passkeysPart(t *testing.T) []byte {
	t.Helper()
	svc := everything(t)
	pk, err := passkeys.New(svc, passkeys.Config{RPID: "localhost", Origins: []string{"http://localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pk.Close() })
	doc, err := svc.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	paths := d["paths"].(map[string]any)
	for p := range paths {
		if !strings.HasPrefix(p, passkeys.Prefix) {
			delete(paths, p)
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
