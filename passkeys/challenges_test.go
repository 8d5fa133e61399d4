package passkeys_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// secondInstance returns the mux of another instance of e's app: a
// Service of the same configuration (users, secrets) and a passkeys
// handler of its own on the challenge store challenges.
func secondInstance(t *testing.T, e *env, challenges passkeys.ChallengeStore) *http.ServeMux {
	t.Helper()
	svc, err := auth.New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	h, err := passkeys.New(svc, passkeys.Config{RPID: "localhost", RPDisplayName: "Test", Origins: []string{origin},
		Now: e.clock, Challenges: challenges})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return serve(svc)
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
