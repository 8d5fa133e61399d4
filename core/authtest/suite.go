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
		name string
		run  func(*testing.T)
	}{
		{"TwoFactorSetup", s.twoFactorSetup},       // docs/api.md: 2FA setup and confirm
		{"TwoFactorLogin", s.twoFactorLogin},       // docs/api.md: Login, 2FA verify and recover
		{"EmailVerification", s.emailVerification}, // docs/api.md: Email verification
		{"ChangeEmail", s.changeEmail},             // docs/api.md: Change email
		{"PasswordReset", s.passwordReset},         // docs/api.md: Reset password
		{"RateLimits", s.rateLimits},               // docs/api.md: Rate limits
		{"FullLimitStores", s.fullLimitStores},     // docs/api.md: Rate limits; deviation 10
		{"ClientIP", s.clientIP},                   // the client address; deviation 3
		{"PurposeBinding", s.purposeBinding},       // ARCHITECTURE.md "Tokens"
		{"SpecErrors", s.specErrors},               // the spec's error table (docs/errors.md)
		{"CrossOrigin", s.crossOrigin},             // docs/api.md: Cross-origin requests
		{"AccountRoutes", s.accountRoutes},         // logout, logout-all, me, change-password
		{"Lockout", s.lockout},                     // Config.Lockout
		{"Cookies", s.cookies},                     // docs/api.md: Cookies
		{"BadInput", s.badInput},                   // docs/api.md: Request bodies
		{"NoStore", s.noStore},                     // Cache-Control on every route
		{"Races", s.races},                         // ARCHITECTURE.md "Stores": atomic conditions
		{"AttackRaces", s.attackRaces},             // issue 7: the races at full size
		{"AccountSafety", s.accountSafety},         // issue 7: lock-out defaults, sessions in a reset's second
		{"HostileInput", s.hostileInput},           // issue 7: a hostile corpus on every route
		{"Hardening", s.hardening},                 // issue 13: 405s, side-channel parity, interleaving
		{"Extending", s.extending},                 // issue 14: features off, optional name, hooks
		{"Languages", s.languages},                 // issue 14: a second language, opted into
	} {
		t.Run(g.name, g.run)
	}
}

// suite carries the harness to the subtests.
type suite struct{ h Harness }

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
