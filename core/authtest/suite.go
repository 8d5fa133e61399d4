package authtest

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clock"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
)

// start is the instant every subtest's clock starts at. Its sub-second
// digits (below the millisecond too) catch code that compares times of
// different precision.
var start = time.Date(2031, time.March, 14, 15, 9, 26, 535_897_932, time.UTC)

// appURL is the base of the links in mails.
const appURL = "http://app.test"

// testSecret signs tokens and cookies in every subtest.
const testSecret = "authtest-session-secret-0123456789abcdef"

// Run runs the whole flow suite against h. Every subtest builds its own
// Service on fresh stores and starts it with h.Start.
func Run(t *testing.T, h Harness) {
	if h.Start == nil || h.NewUsers == nil {
		t.Fatal("authtest: Harness.Start and Harness.NewUsers are required")
	}
	s := suite{h: h}
	for _, g := range []struct {
		name  string
		tests []test
	}{
		{"TwoFactorSetup", twoFactorSetupTests},       // twofactor.go; docs/api.md: 2FA setup and confirm
		{"TwoFactorLogin", loginTests},                // login.go; docs/api.md: Login, 2FA verify and recover
		{"EmailVerification", emailVerificationTests}, // email.go; docs/api.md: Email verification
		{"ChangeEmail", changeEmailTests},             // changeemail.go; docs/api.md: Change email
		{"PasswordReset", passwordResetTests},         // reset.go; docs/api.md: Reset password
		{"AccountRoutes", accountTests},               // account.go; logout, logout-all, me, change-password
		{"RateLimits", rateLimitTests},                // limits.go; docs/api.md: Rate limits
		{"FullLimitStores", fullLimitStoreTests},      // limitfull.go; docs/api.md: Rate limits; deviation 10
		{"ClientIP", clientIPTests},                   // clientip.go; the client address; deviation 3
		{"Lockout", lockoutTests},                     // lockout.go; Config.Lockout, small and default
		{"PurposeBinding", purposeBindingTests},       // tokens.go; ARCHITECTURE.md "Tokens"
		{"CrossOrigin", crossOriginTests},             // crossorigin.go; docs/api.md: Cross-origin requests
		{"Cookies", cookieTests},                      // cookies.go; docs/api.md: Cookies
		{"SpecErrors", specErrorTests},                // errors.go; the spec's error table (docs/errors.md)
		{"Input", inputTests},                         // input.go; docs/api.md: Request bodies; a hostile corpus on every route
		{"Races", raceTests},                          // races.go; ARCHITECTURE.md "Stores": atomic conditions, at full size
		{"Hardening", hardeningTests},                 // hardening.go; 405s, no-store, side-channel parity, interleaving
		{"Extending", extendingTests},                 // extend.go; features off, optional name, hooks
		{"Languages", languageTests},                  // language.go; a second language, opted into
	} {
		t.Run(g.name, s.topic(g.tests))
	}
}

// suite carries the harness to the subtests.
type suite struct{ h Harness }

// test is one behaviour of a topic: a name that says what it checks, and
// the check, which runs in parallel with the others on a fresh env.
type test struct {
	name string
	run  func(suite, *testing.T)
}

// topic returns the subtest that runs tests, one parallel subtest each.
func (s suite) topic(tests []test) func(*testing.T) {
	return func(t *testing.T) {
		t.Parallel()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				tt.run(s, t)
			})
		}
	}
}

// option changes the Config of one subtest's Service.
type option func(*auth.Config)

// relaxed raises every rate limit far above what a subtest uses, for
// subtests about something else that log in more often than the spec's
// limits allow.
func relaxed(c *auth.Config) {
	big := auth.Limit{Max: 1000, Window: time.Hour}
	c.Limits = auth.Limits{LoginIP: big, LoginEmail: big, Register: big, ResetIP: big,
		ResetEmail: big, Resend: big, TwoFactor: big, Password: big}
}

// env is one subtest's world: a Service on fresh stores, served by the
// harness, with the clock, store, mailer and audit log it uses.
type env struct {
	t     *testing.T
	h     Harness
	clock *Clock
	users user.Store
	mail  *mail.Capture
	audit *auditLog
	svc   *auth.Service
	base  string
	totp  *totp.TOTP
	tr    *http.Transport // shared by the env's browsers
}

// env builds and starts a Service with the suite's defaults changed by
// opts.
func (s suite) env(t *testing.T, opts ...option) *env {
	t.Helper()
	e := &env{t: t, h: s.h, clock: clock.New(start), mail: &mail.Capture{}, audit: &auditLog{}}
	e.users = s.h.NewUsers(t)
	cfg := baseConfig(t, e.users, e.mail, e.clock.Now)
	cfg.Audit = e.audit.record
	if s.h.NewLimitStore != nil {
		cfg.LimitStore = func(name string) ratelimit.Store { return s.h.NewLimitStore(t, e.clock.Now, name) }
	}
	for _, o := range opts {
		o(&cfg)
	}
	var err error
	e.svc, err = auth.New(cfg)
	if err != nil {
		t.Fatalf("authtest: auth.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.svc.Close(ctx); err != nil {
			t.Errorf("authtest: Service.Close: %v", err)
		}
	})
	if e.totp, err = totp.New(totp.Config{Now: e.clock.Now}); err != nil {
		t.Fatalf("authtest: totp: %v", err)
	}
	e.base = s.h.Start(t, e.svc)
	// Registered after Start, so it runs before the server stops: a
	// graceful shutdown then has no idle or never-used connection of ours
	// to wait for.
	e.tr = http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(e.tr.CloseIdleConnections)
	return e
}

// skipRealTime skips a subtest that moves the clock past a rate-limit
// window when the limit store keeps its own time.
func (e *env) skipRealTime() {
	e.t.Helper()
	if e.h.RealTimeLimits {
		e.t.Skip("authtest: the rate-limit store keeps its own time (Harness.RealTimeLimits)")
	}
}

// auditLog records the Service's security events.
type auditLog struct {
	mu     sync.Mutex
	events []auth.Event
}

func (a *auditLog) record(_ context.Context, e auth.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, e)
}

// last returns the most recent event of type typ.
func (a *auditLog) last(typ auth.EventType) (auth.Event, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.events) - 1; i >= 0; i-- {
		if a.events[i].Type == typ {
			return a.events[i], true
		}
	}
	return auth.Event{}, false
}
