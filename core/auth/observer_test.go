package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

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

// TestEventFactor: the events of the second step carry the factor, TOTP
// and recovery code alike, failed and accepted (FinishTwoFactor's factors:
// TestFinishTwoFactor's events, and otelauth's email-code test).
func TestEventFactor(t *testing.T) {
	f := newFlow(t, nil)
	b, _ := f.register("ada@example.com", goodPW)
	ctx := context.Background()
	var setup TwoFactorSetup
	if err := f.do(b, func(v *Visit) (err error) { setup, err = f.s.SetupTwoFactor(ctx, v); return err }); err != nil {
		t.Fatal(err)
	}
	uri, _ := url.Parse(setup.URI)
	secret := uri.Query().Get("secret")
	code := func() string {
		c, err := f.s.totp.Code(secret, f.now)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var codes []string
	if err := f.do(b, func(v *Visit) (err error) {
		codes, err = f.s.ConfirmTwoFactor(ctx, v, ConfirmTwoFactorInput{Code: code()})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Minute) // past the step the confirmation used
	second := func(name string, call func(*Visit, TwoFactorInput) (TwoFactorResult, error), in string, ok bool, typ EventType, want LoginMethod) {
		t.Helper()
		nb := newBrowser()
		if err := f.do(nb, func(v *Visit) error {
			_, err := f.s.Login(ctx, v, LoginInput{Email: "ada@example.com", Password: goodPW})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		err := f.do(nb, func(v *Visit) error { _, err := call(v, TwoFactorInput{Code: in}); return err })
		if (err == nil) != ok {
			t.Fatalf("%s: %v", name, err)
		}
		if ev, found := f.event(typ); !found || ev.Factor != want {
			t.Errorf("%s: %s event %+v, want Factor %q", name, typ, ev, want)
		}
	}
	verify := func(v *Visit, in TwoFactorInput) (TwoFactorResult, error) { return f.s.VerifyTwoFactor(ctx, v, in) }
	recoverCode := func(v *Visit, in TwoFactorInput) (TwoFactorResult, error) { return f.s.RecoverTwoFactor(ctx, v, in) }
	second("wrong TOTP code", verify, "000000", false, EventTwoFactorFailed, LoginTOTP)
	second("TOTP code", verify, code(), true, EventLoginSucceeded, LoginTOTP)
	second("wrong recovery code", recoverCode, "aaaaaaaa-aaaaaaaa", false, EventTwoFactorFailed, LoginRecoveryCode)
	second("recovery code", recoverCode, codes[0], true, EventRecoveryCodeUsed, LoginRecoveryCode)
}
