package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/session"
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

func (r *recorder) StartFlow(ctx context.Context, f Flow) (context.Context, func(int)) {
	entry := "call"
	if f.Route.Pattern != "" {
		entry = f.Route.Method + " " + f.Route.Pattern
		if f.Route.Flow() != f.Name {
			r.add(fmt.Sprintf("route %s named %q", f.Route.Pattern, f.Name))
		}
	}
	r.add("flow " + f.Name + " by " + entry)
	return context.WithValue(ctx, ctxKey{}, f.Name), func(status int) { r.add(fmt.Sprintf("end %s %d", f.Name, status)) }
}

func (r *recorder) StartStoreCall(ctx context.Context, part, op string) (context.Context, func(error)) {
	in, _ := ctx.Value(ctxKey{}).(string)
	return ctx, func(err error) {
		out := "ok"
		switch {
		case errors.Is(err, user.ErrNotFound):
			out = "not found"
		case err != nil:
			out = "error"
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
	for _, rt := range s.Modules().Routes() {
		if rt.Pattern == "/api/auth/login" {
			login = rt
		}
	}
	for _, email := range []string{"nobody@example.com", "ada@example.com"} {
		if resp := s.Modules().Handle(login, jsonReq(`{"email":"`+email+`","password":"wrong horse"}`)); resp.Status != 401 {
			t.Fatalf("%s: status %d, want 401", email, resp.Status)
		}
	}
	want := []string{
		"flow login by POST /api/auth/login",
		"store Limits.Increment in login: ok",
		"store Limits.Increment in login: ok",
		"store Accounts.ByEmail in login: not found",
		`event login_failed in login factor ""`,
		"end login 401",
		"flow login by POST /api/auth/login",
		"store Limits.Increment in login: ok",
		"store Limits.Increment in login: ok",
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
	rt := Route{Method: "POST", Pattern: "/api/auth/boom", handle: func(context.Context, *Service, *Visit) Response { panic("boom") }}
	if resp := s.Modules().Handle(rt, &fakeRequest{method: "GET"}); resp.Status != 500 {
		t.Fatalf("status %d, want 500", resp.Status)
	}
	if want := []string{"flow boom by POST /api/auth/boom", "end boom 500"}; !slices.Equal(rec.log, want) {
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
	code, codes := f.enableTOTP(b)
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

// observedFlow is a flow (the test harness of flow_test.go) whose Service
// has every optional store, and an Observer.
func observedFlow(t *testing.T, change func(*Config)) (*flow, *recorder) {
	t.Helper()
	rec := &recorder{}
	f := newFlow(t, func(c *Config) {
		c.Observer = rec
		c.Sessions = store.NewMemorySessions(store.MemoryConfig{})
		c.TrustedDevices = store.NewMemorySessions(store.MemoryConfig{})
		c.EmailCode.Enabled = true
		c.APIKeys.Enabled = true
		if change != nil {
			change(c)
		}
	})
	return f, rec
}

// TestObserverTypedCall: a typed method called directly (the pages
// module, an app's handler) is a flow of its own, named as its route's,
// with its store calls and events in it; the flow's context is the
// caller's (its values reach the audit hook), and a second call on the
// same visit is a second flow.
func TestObserverTypedCall(t *testing.T) {
	type mark struct{}
	var marks []any
	f, rec := observedFlow(t, func(c *Config) {
		c.Audit = func(ctx context.Context, e Event) {
			if e.Type == EventLoginFailed {
				marks = append(marks, ctx.Value(mark{}), ctx.Value(ctxKey{}))
			}
		}
	})
	f.register("ada@example.com", goodPW)
	rec.log = nil
	ctx := context.WithValue(context.Background(), mark{}, "caller")
	v := f.visit(newBrowser())
	if _, err := f.s.Login(ctx, v, LoginInput{Email: "ada@example.com", Password: "wrong horse"}); !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("login: %v", err)
	}
	if want := []any{"caller", "login"}; !slices.Equal(marks, want) {
		t.Errorf("the audit hook's context holds %q, want the caller's value and the flow's %q", marks, want)
	}
	if _, err := f.s.Login(ctx, v, LoginInput{Email: "ada@example.com", Password: goodPW}); err != nil {
		t.Fatalf("login: %v", err)
	}
	want := []string{
		"flow login by call",
		"store Limits.Increment in login: ok",
		"store Limits.Increment in login: ok",
		"store Accounts.ByEmail in login: ok",
		"store Lockout.RecordLoginFailure in login: ok",
		`event login_failed in login factor ""`,
		"end login 401",
		"flow login by call",
		"store Limits.Increment in login: ok",
		"store Limits.Increment in login: ok",
		"store Accounts.ByEmail in login: ok",
		"store Lockout.RecordLoginFailure in login: ok",
		"store Lockout.ClearLoginFailures in login: ok",
		"store Limits.Reset in login: ok",
		"store Limits.Refund in login: ok",
		"store Sessions.CreateBounded in login: ok",
		`event login_succeeded in login factor ""`,
		"store SignIns.MarkSignedIn in login: ok",
		`event new_device_sign_in in login factor ""`,
		"store Limits.Increment in login: ok",
		"end login 200",
	}
	if !slices.Equal(rec.log, want) {
		t.Errorf("observed\n%q\nwant\n%q", rec.log, want)
	}
}

// TestObserverNestedFlows: a typed method that calls another
// (ResendVerification asks CurrentUser) is one flow, and a route that
// calls its typed method too: the outermost entry reports it, and the
// store calls of the inner method are in it.
func TestObserverNestedFlows(t *testing.T) {
	f, rec := observedFlow(t, nil)
	b, _ := f.register("ada@example.com", goodPW)
	f.mail.Reset()
	rec.log = nil
	if err := f.do(b, func(v *Visit) error { _, err := f.s.ResendVerification(context.Background(), v); return err }); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"flow resend-verification by call",
		"store Sessions.Get in resend-verification: ok",
		"store Accounts.ByID in resend-verification: ok",
		"store Limits.Increment in resend-verification: ok",
		"end resend-verification 200",
	}
	if !slices.Equal(rec.log, want) {
		t.Errorf("typed call observed\n%q\nwant\n%q", rec.log, want)
	}
	rec.log = nil
	var resend Route
	for _, rt := range f.s.Modules().Routes() {
		if rt.Pattern == "/api/auth/resend-verification" {
			resend = rt
		}
	}
	v := f.visit(b)
	if resp := f.s.Modules().Handle(resend, v.req); resp.Status != 200 {
		t.Fatalf("route: status %d", resp.Status)
	}
	want[0] = "flow resend-verification by POST /api/auth/resend-verification"
	if !slices.Equal(rec.log, want) {
		t.Errorf("route observed\n%q\nwant\n%q", rec.log, want)
	}
}

// TestObserverFlowNames: each route's typed method, called directly,
// reports the flow under the route's name (so a dashboard shows one flow
// whichever way it ran), and the typed methods without a route under the
// names Flow documents. Every registered route must have its row here.
func TestObserverFlowNames(t *testing.T) {
	f, rec := observedFlow(t, nil)
	ctx := context.Background()
	s := f.s
	calls := map[string]func(v *Visit) error{
		"POST /api/2fa/setup": func(v *Visit) error { _, err := s.SetupTwoFactor(ctx, v); return err },
		"POST /api/2fa/confirm": func(v *Visit) error {
			_, err := s.ConfirmTwoFactor(ctx, v, ConfirmTwoFactorInput{Code: "1"})
			return err
		},
		"POST /api/login":      func(v *Visit) error { _, err := s.Login(ctx, v, LoginInput{}); return err },
		"POST /api/auth/login": func(v *Visit) error { _, err := s.Login(ctx, v, LoginInput{}); return err },
		"POST /api/auth/api-keys": func(v *Visit) error {
			_, err := s.CreateAPIKey(ctx, v, APIKeyInput{Name: "k"})
			return err
		},
		"GET /api/auth/api-keys":         func(v *Visit) error { _, err := s.ListAPIKeys(ctx, v); return err },
		"DELETE /api/auth/api-keys/{id}": func(v *Visit) error { return s.RevokeAPIKey(ctx, v, "x") },
		"POST /api/2fa/verify":           func(v *Visit) error { _, err := s.VerifyTwoFactor(ctx, v, TwoFactorInput{Code: "1"}); return err },
		"POST /api/2fa/recover":          func(v *Visit) error { _, err := s.RecoverTwoFactor(ctx, v, TwoFactorInput{Code: "1"}); return err },
		"POST /api/2fa/regenerate-codes": func(v *Visit) error { _, err := s.RegenerateRecoveryCodes(ctx, v); return err },
		"POST /api/2fa/disable":          func(v *Visit) error { return s.DisableTwoFactor(ctx, v, DisableTwoFactorInput{}) },
		"POST /api/auth/register":        func(v *Visit) error { _, err := s.Register(ctx, v, RegisterInput{}); return err },
		"GET /api/auth/verify-email/{token}": func(v *Visit) error {
			_, err := s.VerifyEmail(ctx, v, VerifyEmailInput{Token: "x"})
			return err
		},
		"POST /api/auth/resend-verification": func(v *Visit) error { _, err := s.ResendVerification(ctx, v); return err },
		"POST /api/auth/change-email":        func(v *Visit) error { return s.ChangeEmail(ctx, v, ChangeEmailInput{}) },
		"POST /api/auth/forgot-password":     func(v *Visit) error { return s.ForgotPassword(ctx, v, ForgotPasswordInput{}) },
		"POST /api/auth/reset-password/{token}": func(v *Visit) error {
			return s.ResetPassword(ctx, v, ResetPasswordInput{Token: "x"})
		},
		"POST /api/auth/logout":           func(v *Visit) error { s.Logout(ctx, v); return nil },
		"POST /api/auth/logout-all":       func(v *Visit) error { return s.LogoutEverywhere(ctx, v) },
		"GET /api/auth/me":                func(v *Visit) error { _, err := s.CurrentUser(ctx, v); return err },
		"POST /api/auth/change-password":  func(v *Visit) error { return s.ChangePassword(ctx, v, ChangePasswordInput{}) },
		"POST /api/auth/confirm-password": func(v *Visit) error { _, err := s.ConfirmPassword(ctx, v, ConfirmPasswordInput{}); return err },
		"POST /api/auth/delete-account":   func(v *Visit) error { return s.DeleteAccount(ctx, v, DeleteAccountInput{}) },
		"GET /api/auth/export":            func(v *Visit) error { _, err := s.ExportAccount(ctx, v); return err },
		"GET /api/auth/sessions":          func(v *Visit) error { _, err := s.ListSessions(ctx, v); return err },
		"DELETE /api/auth/sessions/{id}":  func(v *Visit) error { return s.EndSession(ctx, v, EndSessionInput{ID: "x"}) },
		"GET /api/2fa/trusted-devices":    func(v *Visit) error { _, err := s.TrustedDevices(ctx, v); return err },
		"DELETE /api/2fa/trusted-devices/{id}": func(v *Visit) error {
			return s.ForgetTrustedDevice(ctx, v, ForgetTrustedDeviceInput{ID: "x"})
		},
		"POST /api/2fa/email-code": func(v *Visit) error { return s.SendTwoFactorEmailCode(ctx, v) },
		"POST /api/2fa/email-code/verify": func(v *Visit) error {
			_, err := s.VerifyTwoFactorEmailCode(ctx, v, TwoFactorInput{Code: "1"})
			return err
		},
	}
	// The typed methods without a route of their own, and the passkey
	// routes of the passkeys module (its Prefix), whose management core
	// does.
	others := map[string]func(v *Visit) error{
		"2fa/pending":          func(v *Visit) error { _, err := s.Modules().PendingTwoFactorUser(ctx, v); return err },
		"reset-password/check": func(v *Visit) error { return s.CheckResetLink(ctx, v, "x") },
		"me/recent":            func(v *Visit) error { _, err := s.RecentUser(ctx, v); return err },
		"api-keys/delete-all":  func(v *Visit) error { _, err := s.RevokeAllAPIKeys(ctx, v); return err },
		"2fa/finish": func(v *Visit) error {
			_, err := s.Modules().FinishTwoFactor(ctx, v, SecondFactorInput{Method: LoginPasskey})
			return err
		},
		"login/passwordless": func(v *Visit) error {
			_, err := s.Modules().SignInWithoutPassword(ctx, v, PasswordlessInput{Method: LoginPasskey})
			return err
		},
		Route{Method: "GET", Pattern: "/api/passkeys"}.Flow():         func(v *Visit) error { _, err := s.ListPasskeys(ctx, v); return err },
		Route{Method: "POST", Pattern: "/api/passkeys/rename"}.Flow(): func(v *Visit) error { _, err := s.RenamePasskey(ctx, v, RenamePasskeyInput{}); return err },
		Route{Method: "POST", Pattern: "/api/passkeys/delete"}.Flow(): func(v *Visit) error { return s.DeletePasskey(ctx, v, DeletePasskeyInput{}) },
	}
	check := func(label, name string, call func(v *Visit) error) {
		t.Helper()
		rec.log = nil
		_ = call(f.visit(newBrowser())) // the outcome does not matter: the name does
		if len(rec.log) < 2 || rec.log[0] != "flow "+name+" by call" || !strings.HasPrefix(rec.log[len(rec.log)-1], "end "+name+" ") {
			t.Errorf("%s: observed %q, want one flow %q", label, rec.log, name)
		}
	}
	routes := f.s.Modules().Routes()
	if len(routes) != len(calls) {
		t.Errorf("%d routes registered, %d in the table: add the new route's typed method", len(routes), len(calls))
	}
	for _, rt := range routes {
		call, ok := calls[rt.Method+" "+rt.Pattern]
		if !ok {
			t.Errorf("route %s %s: no row", rt.Method, rt.Pattern)
			continue
		}
		check(rt.Method+" "+rt.Pattern, rt.Flow(), call)
	}
	for name, call := range others {
		check(name, name, call)
	}
}

// flakyRecords is a session.Store whose Get fails while down is set.
type flakyRecords struct {
	session.Store
	down *bool
}

func (r flakyRecords) Get(ctx context.Context, id string) (session.Record, error) {
	if *r.down {
		return session.Record{}, errors.New("records down")
	}
	return r.Store.Get(ctx, id)
}

// plainLimits hides the memory store's Refund: a limit store without
// ratelimit.Refunder.
type plainLimits struct{ st ratelimit.Store }

func (p plainLimits) Increment(ctx context.Context, key string, window time.Duration) (int64, time.Time, error) {
	return p.st.Increment(ctx, key, window)
}

func (p plainLimits) Reset(ctx context.Context, key string) error { return p.st.Reset(ctx, key) }

// TestObserverStoreKinds: the limit stores (keeping ratelimit.Refunder
// only where the store has it), the session records and the trusted
// devices are observed under their parts, and a failing call reaches the
// Observer with its error.
func TestObserverStoreKinds(t *testing.T) {
	t.Run("refunder kept or not", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			store   func() ratelimit.Store
			refunds bool
		}{
			{"memory, with Refund", func() ratelimit.Store { return ratelimit.NewMemoryStore(ratelimit.MemoryConfig{}) }, true},
			{"without Refund", func() ratelimit.Store { return plainLimits{ratelimit.NewMemoryStore(ratelimit.MemoryConfig{})} }, false},
		} {
			f, rec := observedFlow(t, func(c *Config) { c.LimitStore = func(string) ratelimit.Store { return tc.store() } })
			if f.s.lim.loginIP.refunds != tc.refunds {
				t.Errorf("%s: refunds %v, want %v", tc.name, f.s.lim.loginIP.refunds, tc.refunds)
			}
			f.register("ada@example.com", goodPW)
			rec.log = nil
			if err := f.do(newBrowser(), func(v *Visit) error {
				_, err := f.s.Login(context.Background(), v, LoginInput{Email: "ada@example.com", Password: goodPW})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			incr := slices.Contains(rec.log, "store Limits.Increment in login: ok")
			refund := slices.Contains(rec.log, "store Limits.Refund in login: ok")
			if !incr || refund != tc.refunds {
				t.Errorf("%s: observed %q, want Increment and Refund %v", tc.name, rec.log, tc.refunds)
			}
		}
	})
	t.Run("trusted devices", func(t *testing.T) {
		f, rec := observedFlow(t, nil)
		b, _ := f.register("ada@example.com", goodPW)
		rec.log = nil
		if err := f.do(b, func(v *Visit) error { _, err := f.s.TrustedDevices(context.Background(), v); return err }); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(rec.log, "store TrustedDevices.List in 2fa/trusted-devices: ok") {
			t.Errorf("observed %q, want the trusted-device list", rec.log)
		}
	})
	t.Run("a failing session store", func(t *testing.T) {
		down := false
		f, rec := observedFlow(t, func(c *Config) {
			c.Sessions = flakyRecords{store.NewMemorySessions(store.MemoryConfig{}), &down}
		})
		b, _ := f.register("ada@example.com", goodPW)
		down = true
		rec.log = nil
		err := f.do(b, func(v *Visit) error { _, err := f.s.CurrentUser(context.Background(), v); return err })
		if st := statusOf(err); st != 500 {
			t.Errorf("CurrentUser with the records down: %v (status %d), want 500", err, st)
		}
		want := []string{"flow me by call", "store Sessions.Get in me: error", "end me 500"}
		if !slices.Equal(rec.log, want) {
			t.Errorf("observed %q, want %q", rec.log, want)
		}
	})
}

// TestObserveOneTime: a module's store is observed under the part it
// names, its errors passed on; without an Observer it is returned as is.
func TestObserveOneTime(t *testing.T) {
	mem := onetime.NewMemoryStore(onetime.MemoryConfig{})
	if got := mustNewWith(t, func(*Config) {}).Modules().ObserveOneTime("Challenges", mem); got != onetime.Store(mem) {
		t.Errorf("without an Observer: %T, want the store itself", got)
	}
	rec := &recorder{}
	st := mustNewWith(t, func(c *Config) { c.Observer = rec }).Modules().ObserveOneTime("Challenges", mem)
	ctx := context.Background()
	now := time.Now()
	if err := st.Put(ctx, "k", []byte("v"), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if b, err := st.Take(ctx, "k", now); err != nil || string(b) != "v" {
		t.Fatalf("take: %q, %v", b, err)
	}
	if _, err := st.Take(ctx, "k", now); !errors.Is(err, onetime.ErrNotFound) {
		t.Fatalf("second take: %v, want onetime.ErrNotFound", err)
	}
	want := []string{"store Challenges.Put in : ok", "store Challenges.Take in : ok", "store Challenges.Take in : error"}
	if !slices.Equal(rec.log, want) {
		t.Errorf("observed %q, want %q", rec.log, want)
	}
}
