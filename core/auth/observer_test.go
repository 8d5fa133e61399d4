package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// recorder is an Observer that writes down what it is told, in order.
type recorder struct {
	mu  sync.Mutex
	log []string
}

type ctxKey struct{}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func (r *recorder) StartFlow(ctx context.Context, rt Route) (context.Context, func(int)) {
	r.add("flow " + rt.Flow())
	return context.WithValue(ctx, ctxKey{}, rt.Flow()), func(status int) { r.add(fmt.Sprintf("end %s %d", rt.Flow(), status)) }
}

func (r *recorder) StartStoreCall(ctx context.Context, part, op string) (context.Context, func(error)) {
	in, _ := ctx.Value(ctxKey{}).(string)
	return ctx, func(err error) {
		out := "ok"
		if errors.Is(err, user.ErrNotFound) {
			out = "not found"
		}
		r.add(fmt.Sprintf("store %s.%s in %s: %s", part, op, in, out))
	}
}

func (r *recorder) Event(ctx context.Context, e Event) {
	in, _ := ctx.Value(ctxKey{}).(string)
	r.add(fmt.Sprintf("event %s in %s factor %q", e.Type, in, e.Factor))
}

// TestObserverLogin: a login with an unknown address and one with a wrong
// password, as the Observer sees them: the flow around its store calls and
// events, each with the flow's context, and the status at the end.
func TestObserverLogin(t *testing.T) {
	rec := &recorder{}
	users := store.NewMemory(store.MemoryConfig{})
	s := mustNewWith(t, func(c *Config) { c.Users = users; c.Observer = rec })
	hash, err := password.ForTesting().Hash(context.Background(), "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := users.Create(context.Background(), &user.User{Email: "ada@example.com", PasswordHash: hash, Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	var login Route
	for _, rt := range s.Routes() {
		if rt.Pattern == "/api/auth/login" {
			login = rt
		}
	}
	for _, email := range []string{"nobody@example.com", "ada@example.com"} {
		if resp := s.Handle(login, jsonReq(`{"email":"`+email+`","password":"wrong horse"}`)); resp.Status != 401 {
			t.Fatalf("%s: status %d, want 401", email, resp.Status)
		}
	}
	want := []string{
		"flow login",
		"store Accounts.ByEmail in login: not found",
		`event login_failed in login factor ""`,
		"end login 401",
		"flow login",
		"store Accounts.ByEmail in login: ok",
		"store Lockout.RecordLoginFailure in login: ok",
		`event login_failed in login factor ""`,
		"end login 401",
	}
	if !slices.Equal(rec.log, want) {
		t.Errorf("observed\n%q\nwant\n%q", rec.log, want)
	}
}

// TestObserverPanic: a flow that panics ends for the Observer with 500.
func TestObserverPanic(t *testing.T) {
	rec := &recorder{}
	s := mustNewWith(t, func(c *Config) { c.Observer = rec })
	rt := Route{Method: "POST", Pattern: "/api/auth/boom", handle: func(*Service, *Visit) Response { panic("boom") }}
	if resp := s.Handle(rt, &fakeRequest{method: "GET"}); resp.Status != 500 {
		t.Fatalf("status %d, want 500", resp.Status)
	}
	if want := []string{"flow boom", "end boom 500"}; !slices.Equal(rec.log, want) {
		t.Errorf("observed %q, want %q", rec.log, want)
	}
}

// TestObserverKeepsMissingParts: a store without an optional part keeps
// it missing when wrapped, so the flows still tell it.
func TestObserverKeepsMissingParts(t *testing.T) {
	s := mustNewWith(t, func(c *Config) { c.Observer = &recorder{} })
	if s.users.passkeys != nil {
		t.Errorf("noUsers has no Passkeys, the wrapped store has %T", s.users.passkeys)
	}
	if _, ok := s.users.Accounts.(obsAccounts); !ok {
		t.Errorf("Accounts is %T, want it observed", s.users.Accounts)
	}
}

func TestRouteFlow(t *testing.T) {
	got := map[string]bool{}
	for _, rt := range routes {
		f := rt.Flow()
		got[f] = true
	}
	for _, want := range []string{"login", "2fa/verify", "verify-email", "reset-password", "sessions/delete", "2fa/trusted-devices/delete", "2fa/email-code/verify", "me"} {
		if !got[want] {
			t.Errorf("no route has flow %q; flows: %v", want, got)
		}
	}
}
