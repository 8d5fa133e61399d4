package passkeys_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// flows is an auth.Observer that writes down the flows and the store
// calls of the challenge store and the passkeys part, with the flow each
// ran in.
type flows struct {
	mu  sync.Mutex
	log []string
}

type flowKey struct{}

func (f *flows) add(s string) { f.mu.Lock(); f.log = append(f.log, s); f.mu.Unlock() }

func (f *flows) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.log
	f.log = nil
	return l
}

func (f *flows) StartFlow(ctx context.Context, fl auth.Flow) (context.Context, func(int)) {
	by := "call"
	if fl.Route.Pattern != "" {
		by = fl.Route.Method + " " + fl.Route.Pattern
	}
	f.add("flow " + fl.Name + " by " + by)
	return context.WithValue(ctx, flowKey{}, fl.Name), func(status int) { f.add(fmt.Sprintf("end %s %d", fl.Name, status)) }
}

func (f *flows) StartStoreCall(ctx context.Context, part, op string) (context.Context, func(error)) {
	in, _ := ctx.Value(flowKey{}).(string)
	return ctx, func(err error) {
		if part == "Challenges" || part == "Passkeys" {
			out := "ok"
			if errors.Is(err, user.ErrNotFound) || err != nil && strings.Contains(err.Error(), "not found") {
				out = "not found"
			} else if err != nil {
				out = "error"
			}
			f.add(fmt.Sprintf("store %s.%s in %s: %s", part, op, in, out))
		}
	}
}

func (f *flows) Event(context.Context, auth.Event) {}

// TestObserver: the passkey routes and typed ceremonies are flows for
// auth.Config.Observer, named as the routes (one per request: the typed
// method inside a route reports nothing of its own), the challenge store
// is observed as "Challenges" with its calls inside the flow, and a
// replayed finish ends as the 400 its route answers.
func TestObserver(t *testing.T) {
	obs := &flows{}
	e := newEnv(t, nil, func(c *auth.Config) { c.Observer = obs })
	a := passkeystest.NewAuthenticator(t)
	home, _ := e.signUp("ada@example.com")
	e.addPasskey(home, a, "Laptop")
	log := obs.take()
	var got []string
	for _, l := range log {
		if !strings.Contains(l, "passkeys/") {
			continue // the sign-up's own flows
		}
		got = append(got, l)
	}
	want := []string{
		"flow passkeys/register/begin by POST /api/passkeys/register/begin",
		"store Passkeys.PasskeyUserHandle in passkeys/register/begin: ok",
		"store Passkeys.ListPasskeys in passkeys/register/begin: ok",
		"store Challenges.Put in passkeys/register/begin: ok",
		"end passkeys/register/begin 200",
		"flow passkeys/register/finish by POST /api/passkeys/register/finish",
		"store Challenges.Take in passkeys/register/finish: ok",
		"store Passkeys.PasskeyUserHandle in passkeys/register/finish: ok",
		"store Passkeys.ListPasskeys in passkeys/register/finish: ok",
		"store Passkeys.AddPasskey in passkeys/register/finish: ok",
		"end passkeys/register/finish 200",
	}
	if !slices.Equal(got, want) {
		t.Errorf("observed\n%q\nwant\n%q", got, want)
	}

	// The typed ceremony, called directly: a flow of its own, by call.
	ctx := context.Background()
	away := e.client()
	v := away.visit()
	if _, err := e.h.BeginLogin(ctx, v); err != nil {
		t.Fatal(err)
	}
	away.keep(v)
	if got, want := obs.take(), []string{
		"flow passkeys/login/begin by call",
		"store Challenges.Put in passkeys/login/begin: ok",
		"end passkeys/login/begin 200",
	}; !slices.Equal(got, want) {
		t.Errorf("typed begin observed\n%q\nwant\n%q", got, want)
	}
	v = away.visit()
	if _, err := e.h.FinishLogin(ctx, v, passkeys.LoginInput{Assertion: []byte("{}")}); err == nil {
		t.Fatal("FinishLogin with an empty assertion succeeded")
	}
	away.keep(v)
	obs.take()
	// Replayed over the route: the challenge is gone (taken above).
	r := away.do(http.MethodPost, passkeys.Prefix+"/login/finish", map[string]any{"id": "x"})
	if r.status != http.StatusBadRequest {
		t.Fatalf("replayed finish: %d %s", r.status, r.body)
	}
	got = obs.take()
	if len(got) == 0 || got[0] != "flow passkeys/login/finish by POST /api/passkeys/login/finish" || got[len(got)-1] != "end passkeys/login/finish 400" {
		t.Errorf("replayed finish observed %q", got)
	}
}
