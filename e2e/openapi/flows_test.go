package openapi

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

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
	gin.SetMode(gin.TestMode)
	code := m.Run()
	if code == 0 && wholeRun() {
		code = checkAnsweredLists()
	}
	os.Exit(code)
}

// The lists of the codes the rows of the documents' tables list that this
// package's run answers: core/auth's and passkeys' TestOpenAPIListedCodesAnswered
// take them as answered here instead of answering them in-process.
var answeredLists = []string{
	"../../core/auth/testdata/openapi_e2e_answered.txt",
	"../../passkeys/testdata/openapi_e2e_answered.txt",
}

// errorsSeen are the error answers of every suite of the run, as
// "METHOD PATH STATUS CODE" (the operation's path).
var errorsSeen = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

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

// checkAnsweredLists returns 1, naming them, when a line of answeredLists
// is an answer no exchange of the run gave: the suite no longer answers
// it, and the module's in-process test must (a case of its own).
func checkAnsweredLists() int {
	errorsSeen.Lock()
	defer errorsSeen.Unlock()
	missing, err := unanswered(answeredLists, errorsSeen.m)
	if err != nil {
		fmt.Fprintf(os.Stderr, "openapi: %v\nFAIL\n", err)
		return 1
	}
	for _, m := range missing {
		fmt.Fprintf(os.Stderr, "--- FAIL: %s: no exchange of the flow suites answered it: answer it in-process (the module's TestOpenAPIListedCodesAnswered) and drop the line\n", m)
	}
	if len(missing) > 0 {
		fmt.Fprintln(os.Stderr, "FAIL")
		return 1
	}
	return 0
}

// unanswered returns the lines of the files lists ("file: line") that
// seen does not hold; blank lines and # comments aside.
func unanswered(lists []string, seen map[string]bool) ([]string, error) {
	var missing []string
	for _, name := range lists {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(string(b)) {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "#") && !seen[line] {
				missing = append(missing, name+": "+line)
			}
		}
	}
	return missing, nil
}

// TestUnanswered: a listed answer the run did not give is named; one it
// gave, a comment and a blank line are not.
func TestUnanswered(t *testing.T) {
	list := filepath.Join(t.TempDir(), "answered.txt")
	if err := os.WriteFile(list, []byte("# a comment\n\nPOST /api/login 401 invalid_credentials\nPOST /api/login 429 too_many_login_attempts\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := unanswered([]string{list}, map[string]bool{"POST /api/login 401 invalid_credentials": true})
	if want := []string{list + ": POST /api/login 429 too_many_login_attempts"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("unanswered = %q, %v; want %q", got, err, want)
	}
	if _, err := unanswered([]string{filepath.Join(t.TempDir(), "none.txt")}, nil); err == nil {
		t.Error("a missing list: no error")
	}
	for _, name := range answeredLists {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("answeredLists: %v", err)
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
		errorsSeen.Lock()
		errorsSeen.m[fmt.Sprintf("%s %d %s", a.Op, a.Status, a.Code)] = true
		errorsSeen.Unlock()
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
	})
}

// TestFlowSuite runs the HTTP flow suite on each framework with every
// exchange checked against the document the suite's Service serves (with
// session records, so the session routes are in it; every feature the
// suite switches off gone from it), and every route reached with a 2xx.
func TestFlowSuite(t *testing.T) {
	for _, name := range frameworks.Names {
		t.Run(name, func(t *testing.T) {
			var cov coverage
			t.Cleanup(func() { doc, err := everything(t).OpenAPI(); cov.check(t, doc, err) }) // after the suite's parallel subtests
			authtest.Run(t, authtest.Harness{
				Start: func(t *testing.T, svc *auth.Service) string {
					doc, err := svc.OpenAPI()
					return checked(t, doc, err, frameworks.Serve(t, name, svc, nil, ""), cov.add)
				},
				NewUsers: func(t *testing.T) user.Store { return store.NewMemory(store.MemoryConfig{}) },
				NewSessions: func(t *testing.T, now func() time.Time) session.Store {
					return store.NewMemorySessions(store.MemoryConfig{Now: now})
				},
			})
			// The suite signs in on the spec's /api/login; authkit's
			// second path of the same handler, through the proxy too.
			t.Run("POST /api/auth/login", func(t *testing.T) {
				svc := everything(t)
				doc, err := svc.OpenAPI()
				base := checked(t, doc, err, frameworks.Serve(t, name, svc, nil, ""), cov.add)
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
		})
	}
}

// TestPasskeyFlowSuite runs the passkey flow suite on each framework, the
// passkeys handler mounted beside the framework's routes, with every
// exchange checked against passkeys.Handler.OpenAPI and every passkey
// route reached with a 2xx.
func TestPasskeyFlowSuite(t *testing.T) {
	for _, name := range frameworks.Names {
		t.Run(name, func(t *testing.T) {
			var cov coverage
			t.Cleanup(func() { cov.check(t, passkeysPart(t), nil) }) // after the suite's parallel subtests
			passkeystest.Run(t, passkeystest.Harness{
				Start: func(t *testing.T, svc *auth.Service, pk *passkeys.Handler) string {
					doc, err := pk.OpenAPI()
					return checked(t, doc, err, frameworks.Serve(t, name, svc, pk, passkeys.Prefix), cov.add)
				},
				NewUsers: func(t *testing.T) user.Store { return store.NewMemory(store.MemoryConfig{}) },
			})
		})
	}
}

// passkeysPart is the passkey routes of a Handler's document.
func passkeysPart(t *testing.T) []byte {
	t.Helper()
	pk, err := passkeys.New(everything(t), passkeys.Config{RPID: "localhost", Origins: []string{"http://localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := pk.OpenAPI()
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
