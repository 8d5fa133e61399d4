package passkeys_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// secondInstance returns the mux of another instance of e's app: the same
// Service (users, secrets) and a passkeys handler of its own on cfg's
// challenge store.
func secondInstance(t *testing.T, e *env, challenges passkeys.ChallengeStore) *http.ServeMux {
	t.Helper()
	h, err := passkeys.New(e.svc, passkeys.Config{RPID: "localhost", RPDisplayName: "Test", Origins: []string{origin},
		Now: e.clock, Challenges: challenges})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	mux := http.NewServeMux()
	for _, rt := range e.svc.Routes() {
		mux.HandleFunc(rt.Method+" "+rt.Pattern, func(w http.ResponseWriter, r *http.Request) {
			resp := e.svc.Handle(rt, auth.HTTPRequest(r, nil))
			resp.Write(w)
		})
	}
	mux.Handle(passkeys.Prefix, h)
	mux.Handle(passkeys.Prefix+"/", h)
	return mux
}

// TestChallengesSharedBetweenInstances: a ceremony begun on one instance
// finishes on another when both have one Config.Challenges, once; with
// the default per-process store it does not.
func TestChallengesSharedBetweenInstances(t *testing.T) {
	shared := onetime.NewMemoryStore(onetime.MemoryConfig{}) // stands in for Redis or SQL
	e := newEnv(t, func(c *passkeys.Config) { c.Challenges = shared }, nil)
	home, u := e.signUp("ada@example.com")
	a := passkeystest.NewAuthenticator(t)
	e.addPasskey(home, a, "Laptop")
	first, second := e.mux, secondInstance(t, e, shared)

	c := e.client()
	begin := c.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	body := a.Get(begin.body, origin, nil)
	if n := shared.Len(); n != 1 {
		t.Fatalf("the shared store holds %d challenges after begin, want 1", n)
	}
	e.mux = second
	thief := c.clone()
	want(t, "finish on the second instance", c.do(http.MethodPost, passkeys.Prefix+"/login/finish", body), http.StatusOK, "")
	if c.signedInAs() != u.ID {
		t.Fatal("the finish on the second instance did not sign in")
	}
	e.mux = first
	want(t, "the same finish replayed on the first", thief.do(http.MethodPost, passkeys.Prefix+"/login/finish", body), http.StatusBadRequest, "passkey_challenge_invalid")
	if n := shared.Len(); n != 0 {
		t.Fatalf("the shared store holds %d challenges after the finish, want 0", n)
	}

	// Each instance on its default store: the second knows nothing of
	// the first's ceremony.
	e.mux = secondInstance(t, e, nil)
	c = e.client()
	begin = c.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	e.mux = secondInstance(t, e, nil)
	want(t, "finish on an instance with a store of its own", c.do(http.MethodPost, passkeys.Prefix+"/login/finish", a.Get(begin.body, origin, nil)),
		http.StatusBadRequest, "passkey_challenge_invalid")
}

// TestChallengeFloodStarvesNobody: more anonymous passwordless begins than
// the default store holds (Config.ChallengeCapacity) (a flood from many addresses, each under the
// begin limit: here the limit is off) neither refuse a begin nor touch the
// ceremonies of known users. A registration begun before the flood still
// finishes, the 2FA step and a new passwordless sign-in work after it;
// only the oldest anonymous ceremonies were dropped, and the store said
// so in one log line.
func TestChallengeFloodStarvesNobody(t *testing.T) {
	var logs bytes.Buffer
	var logsMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logsMu}, nil))
	const capacity = 1000 // DefaultChallengeCapacity behaves the same, a hundred times slower to fill
	e := newEnv(t, func(c *passkeys.Config) {
		c.BeginLimit = auth.Limit{Max: -1, Window: time.Minute}
		c.ChallengeCapacity = capacity
		c.Logger = logger
	}, func(c *auth.Config) { c.Logger = logger })
	ctx := context.Background()
	ada, adaUser := e.signUp("ada@example.com")
	a := passkeystest.NewAuthenticator(t)
	k, _ := e.addPasskey(ada, a, "Laptop")
	bob, _ := e.signUp("bob@example.com")
	bobsKey := passkeystest.NewAuthenticator(t)

	early := e.client()
	earlyBegin := early.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	want(t, "anonymous begin before the flood", earlyBegin, http.StatusOK, "")
	regBegin := bob.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	want(t, "bob's register/begin before the flood", regBegin, http.StatusOK, "")

	const flood = 2*capacity + 500
	attacker := e.client()
	for i := range flood {
		if _, err := e.h.BeginLogin(ctx, attacker.visit()); err != nil {
			t.Fatalf("anonymous begin %d of the flood: %v, want every begin answered", i+1, err)
		}
	}
	if anon, bound := passkeys.ChallengeCounts(e.h); anon != capacity || bound != 1 {
		t.Errorf("the store holds %d anonymous and %d users' ceremonies, want %d and 1 (bob's)", anon, bound, capacity)
	}

	cred, _ := bobsKey.Create(regBegin.body, origin)
	want(t, "bob's registration begun before the flood, finished after", bob.do(http.MethodPost, passkeys.Prefix+"/register/finish", cred), http.StatusOK, "")
	want(t, "the anonymous ceremony begun before the flood", early.do(http.MethodPost, passkeys.Prefix+"/login/finish", a.Get(earlyBegin.body, origin, k)),
		http.StatusBadRequest, "passkey_challenge_invalid")
	c := e.client()
	want(t, "a passwordless sign-in after the flood", e.passwordless(c, a, k, origin), http.StatusOK, "")
	if c.signedInAs() != adaUser.ID {
		t.Error("the passwordless sign-in after the flood did not sign in")
	}
	pending := e.twoFactorLogin(adaUser)
	want(t, "2fa/begin after the flood", pending.do(http.MethodPost, passkeys.Prefix+"/2fa/begin", nil), http.StatusOK, "")

	logsMu.Lock()
	defer logsMu.Unlock()
	if n := strings.Count(logs.String(), "challenge store full"); n != 1 {
		t.Errorf("%d log lines about the full store, want 1:\n%.3000s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\"passkeys: challenge store full") || strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("log:\n%.3000s\nwant one WARN line and no ERROR", logs.String())
	}
}

// TestChallengesPerUser: the default store holds at most 8 ceremonies of
// one user; their ninth drops their first, not another user's.
func TestChallengesPerUser(t *testing.T) {
	e := newEnv(t, func(c *passkeys.Config) { c.BeginLimit = auth.Limit{Max: -1, Window: time.Minute} }, nil)
	ada, _ := e.signUp("ada@example.com")
	bob, _ := e.signUp("bob@example.com")
	bobBegin := bob.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	want(t, "bob's register/begin", bobBegin, http.StatusOK, "")
	var tabs []*client
	var begins []reply
	for i := range 9 {
		tab := ada.clone()
		r := tab.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
		want(t, fmt.Sprintf("ada's register/begin %d", i+1), r, http.StatusOK, "")
		tabs, begins = append(tabs, tab), append(begins, r)
	}
	if anon, bound := passkeys.ChallengeCounts(e.h); anon != 0 || bound != 9 {
		t.Fatalf("the store holds %d anonymous and %d users' ceremonies, want 0 and 9 (8 of ada's, bob's)", anon, bound)
	}
	cred, _ := passkeystest.NewAuthenticator(t).Create(begins[0].body, origin)
	want(t, "ada's first ceremony, dropped by her ninth", tabs[0].do(http.MethodPost, passkeys.Prefix+"/register/finish", cred),
		http.StatusBadRequest, "passkey_challenge_invalid")
	cred, _ = passkeystest.NewAuthenticator(t).Create(begins[8].body, origin)
	want(t, "ada's ninth ceremony", tabs[8].do(http.MethodPost, passkeys.Prefix+"/register/finish", cred), http.StatusOK, "")
	cred, _ = passkeystest.NewAuthenticator(t).Create(bobBegin.body, origin)
	want(t, "bob's ceremony", bob.do(http.MethodPost, passkeys.Prefix+"/register/finish", cred), http.StatusOK, "")
}

// TestChallengeStoreFullOfApps: a store of the app's that refuses a
// ceremony with onetime.ErrFull answers 503 service_unavailable, and the
// full store is logged once, not once per refused begin.
func TestChallengeStoreFullOfApps(t *testing.T) {
	var logs bytes.Buffer
	var logsMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logsMu}, nil))
	full := onetime.NewMemoryStore(onetime.MemoryConfig{Capacity: 1})
	e := newEnv(t, func(c *passkeys.Config) {
		c.Challenges = full
		c.BeginLimit = auth.Limit{Max: -1, Window: time.Minute}
		c.Logger = logger
	}, func(c *auth.Config) { c.Logger = logger })
	want(t, "the begin that fills the store", e.client().do(http.MethodPost, passkeys.Prefix+"/login/begin", nil), http.StatusOK, "")
	for i := range 20 {
		want(t, fmt.Sprintf("begin %d into the full store", i+1), e.client().do(http.MethodPost, passkeys.Prefix+"/login/begin", nil),
			http.StatusServiceUnavailable, "service_unavailable")
	}
	logsMu.Lock()
	defer logsMu.Unlock()
	if n := strings.Count(logs.String(), "\n"); n != 1 || !strings.Contains(logs.String(), "challenge store is full") {
		t.Errorf("log:\n%s\nwant one line about the full store", logs.String())
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
