package otelauth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/recovery"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/otelauth"
)

// downOn is a memory store whose ByEmail fails for one address, as a
// database that went away would.
type downOn struct {
	*store.Memory
	email string
}

func (s downOn) ByEmail(ctx context.Context, email string) (*user.User, error) {
	if email == s.email {
		return nil, fmt.Errorf("test: dial tcp 10.0.0.1:5432 for %s: %w", email, user.ErrUnavailable)
	}
	return s.Memory.ByEmail(ctx, email)
}

type harness struct {
	t       *testing.T
	svc     *auth.Service
	users   *store.Memory
	mails   *mail.Capture
	reader  *sdkmetric.ManualReader
	spans   *tracetest.SpanRecorder
	srv     *httptest.Server
	clients map[string]*http.Client
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, users: store.NewMemory(store.MemoryConfig{}), mails: &mail.Capture{},
		reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder(), clients: map[string]*http.Client{}}
	obs, err := otelauth.New(otelauth.Config{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader)),
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans)),
	})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	h.svc, err = auth.New(auth.Config{
		Users: downOn{h.users, "down@example.com"}, Secrets: []string{strings.Repeat("s", 32)}, Keys: keys,
		AppURL: "http://app.test", Hasher: password.ForTesting(), Logger: slog.New(slog.DiscardHandler),
		Mailer: obs.Mailer(h.mails), Observer: obs,
		Limits:    auth.Limits{Register: auth.Limit{Max: 1}},
		EmailCode: auth.EmailCodeConfig{Enabled: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.svc.Close(context.Background()) })
	mux := http.NewServeMux()
	for _, rt := range h.svc.Modules().Routes() {
		mux.HandleFunc(rt.Method+" "+rt.Pattern, func(w http.ResponseWriter, r *http.Request) {
			resp := h.svc.Modules().Handle(rt, auth.HTTPRequest(r, r.PathValue))
			resp.Write(w)
		})
	}
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	return h
}

// post sends body to path as the named browser (its own cookies) and
// checks the status.
func (h *harness) post(who, path, body string, want int) {
	h.t.Helper()
	c, ok := h.clients[who]
	if !ok {
		jar, _ := cookiejar.New(nil)
		c = &http.Client{Jar: jar}
		h.clients[who] = c
	}
	resp, err := c.Post(h.srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		h.t.Fatalf("POST %s %s: %d %s, want %d", path, body, resp.StatusCode, b, want)
	}
}

// addTwoFactorUser stores bob with 2FA on and one recovery code, returned.
func (h *harness) addTwoFactorUser() string {
	h.t.Helper()
	ctx := context.Background()
	pw, _ := password.ForTesting().Hash(ctx, "bob's long password")
	codes, hashes, err := recovery.Generate(ctx, password.ForTesting(), 1)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.users.Create(ctx, &user.User{Email: "bob@example.com", Name: "Bob", PasswordHash: pw,
		TwoFactorEnabled: true, RecoveryCodeHashes: hashes}); err != nil {
		h.t.Fatal(err)
	}
	return codes[0]
}

// run is the scripted run: a registration (a mail), a second one refused
// by the register limit, a failed and a good login, a login from a second
// browser (a new-sign-in mail), a login whose store
// is down, a 2FA login with a wrong and then a right recovery code (a
// mail), and a reset request whose mail fails.
func (h *harness) run() {
	h.t.Helper()
	code := h.addTwoFactorUser()
	h.post("ada", "/api/auth/register", `{"email":"ada@example.com","password":"correct horse battery","name":"Ada"}`, 200)
	h.post("eve", "/api/auth/register", `{"email":"eve@example.com","password":"correct horse battery","name":"Eve"}`, 429)
	h.post("ada", "/api/login", `{"email":"ada@example.com","password":"wrong horse battery"}`, 401)
	h.post("ada", "/api/login", `{"email":"ada@example.com","password":"correct horse battery"}`, 200)
	h.post("ada2", "/api/login", `{"email":"ada@example.com","password":"correct horse battery"}`, 200)
	h.post("ada", "/api/login", `{"email":"down@example.com","password":"correct horse battery"}`, 503)
	h.post("bob", "/api/auth/login", `{"email":"bob@example.com","password":"bob's long password"}`, 200)
	h.post("bob", "/api/2fa/recover", `{"code":"aaaaaaaa-aaaaaaaa"}`, 400)
	h.post("bob", "/api/2fa/recover", `{"code":"`+code+`"}`, 200)
	if err := h.svc.FlushMail(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.mails.FailNext(1, fmt.Errorf("test: %w", mail.ErrInvalidConfig)) // permanent: no retry
	h.post("ada", "/api/auth/forgot-password", `{"email":"ada@example.com"}`, 200)
	if err := h.svc.FlushMail(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// counts reads every sum and histogram as "name{k=v,...}" → value (the
// histogram's count).
func (h *harness) counts() map[string]int64 {
	h.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		h.t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelauth.ScopeName {
			h.t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[m.Name+set(p.Attributes)] = p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[m.Name+set(p.Attributes)] = int64(p.Count)
				}
			default:
				h.t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return out
}

func set(s attribute.Set) string {
	var kv []string
	for _, a := range s.ToSlice() {
		kv = append(kv, string(a.Key)+"="+a.Value.String())
	}
	return "{" + strings.Join(kv, ",") + "}"
}

// TestMetrics: the scripted run's counts, exactly.
func TestMetrics(t *testing.T) {
	h := newHarness(t)
	h.run()
	want := map[string]int64{
		"authkit.logins{authkit.outcome=failure}":                                                            1,
		"authkit.logins{authkit.outcome=success}":                                                            3, // ada in two browsers, bob by recovery code
		"authkit.logins{authkit.outcome=pending_2fa}":                                                        1,
		"authkit.2fa.verifications{authkit.2fa.method=recovery_code,authkit.outcome=failure}":                1,
		"authkit.2fa.verifications{authkit.2fa.method=recovery_code,authkit.outcome=success}":                1,
		"authkit.limit.hits{authkit.limit.name=register:ip}":                                                 1,
		"authkit.mails{authkit.mail.kind=verify_email,authkit.outcome=sent}":                                 1,
		"authkit.mails{authkit.mail.kind=recovery_code_used,authkit.outcome=sent}":                           1,
		"authkit.mails{authkit.mail.kind=new_sign_in,authkit.outcome=sent}":                                  1, // ada's second browser (bob's first sign-in under authkit mails none)
		"authkit.mails{authkit.mail.kind=reset_password,authkit.outcome=failed}":                             1,
		"authkit.store.errors{authkit.store.part=Accounts,db.operation.name=ByEmail,error.type=unavailable}": 1,
		"authkit.flow.duration{authkit.flow=register,authkit.outcome=success}":                               1,
		"authkit.flow.duration{authkit.flow=register,authkit.outcome=failure}":                               1,
		"authkit.flow.duration{authkit.flow=login,authkit.outcome=failure}":                                  1,
		"authkit.flow.duration{authkit.flow=login,authkit.outcome=success}":                                  3,
		"authkit.flow.duration{authkit.flow=login,authkit.outcome=error}":                                    1,
		"authkit.flow.duration{authkit.flow=2fa/recover,authkit.outcome=failure}":                            1,
		"authkit.flow.duration{authkit.flow=2fa/recover,authkit.outcome=success}":                            1,
		"authkit.flow.duration{authkit.flow=forgot-password,authkit.outcome=success}":                        1,
	}
	got := h.counts()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s = %d", k, v)
		}
	}
}

// TestSpans: a failed login's trace: the flow's span with the store call
// as its child and the event on it.
func TestSpans(t *testing.T) {
	h := newHarness(t)
	h.post("ada", "/api/login", `{"email":"nobody@example.com","password":"wrong horse battery"}`, 401)
	ended := h.spans.Ended()
	var names []string
	for _, s := range ended {
		names = append(names, s.Name())
	}
	// The two limits (address, then email), the account lookup, the flow.
	if want := []string{"authkit.store Limits.Increment", "authkit.store Limits.Increment", "authkit.store Accounts.ByEmail", "authkit login"}; !slices.Equal(names, want) {
		t.Fatalf("spans %q, want %q", names, want)
	}
	st, flow := ended[2], ended[3]
	for _, s := range ended[:3] {
		if s.Parent().SpanID() != flow.SpanContext().SpanID() {
			t.Errorf("the parent of %s is %v, want the flow's span", s.Name(), s.Parent().SpanID())
		}
	}
	if got, want := set(attribute.NewSet(ended[0].Attributes()...)), "{authkit.store.part=Limits,db.operation.name=Increment}"; got != want {
		t.Errorf("limit store attributes %s, want %s", got, want)
	}
	if got, want := set(attribute.NewSet(flow.Attributes()...)), "{authkit.flow=login,authkit.outcome=failure,http.request.method=POST,http.response.status_code=401,http.route=/api/login}"; got != want {
		t.Errorf("flow attributes %s, want %s", got, want)
	}
	if got, want := set(attribute.NewSet(st.Attributes()...)), "{authkit.store.part=Accounts,db.operation.name=ByEmail}"; got != want {
		t.Errorf("store attributes %s, want %s", got, want)
	}
	var events []string
	for _, e := range flow.Events() {
		events = append(events, e.Name+set(attribute.NewSet(e.Attributes...)))
	}
	if want := []string{"authkit.login_failed{authkit.event=login_failed}"}; !slices.Equal(events, want) {
		t.Errorf("events %q, want %q", events, want)
	}
}

// TestNothingSecret: after the scripted run, no attribute of any metric,
// span or span event holds an address, a password, a code, a token or a
// client address, nor the text of the store's error; user ids are off by
// default.
func TestNothingSecret(t *testing.T) {
	h := newHarness(t)
	h.run()
	var values []string
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			values = append(values, fmt.Sprintf("%v", m.Data))
		}
	}
	for _, s := range h.spans.Ended() {
		values = append(values, s.Name(), s.Status().Description, fmt.Sprint(s.Attributes()))
		for _, e := range s.Events() {
			values = append(values, e.Name, fmt.Sprint(e.Attributes))
		}
	}
	all := strings.Join(values, "\n")
	for _, secret := range []string{"@example.com", "horse", "password\"", "127.0.0.1", "10.0.0.1", "dial", "enduser.id"} {
		if strings.Contains(all, secret) {
			t.Errorf("telemetry holds %q", secret)
		}
	}
	for _, m := range h.mails.Messages() {
		if m.Link != "" && strings.Contains(all, m.Link) {
			t.Errorf("telemetry holds a mailed link")
		}
	}
}

// TestUserIDs: with Config.UserIDs, span events carry enduser.id.
func TestUserIDs(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	obs, err := otelauth.New(otelauth.Config{UserIDs: true,
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, end := obs.StartFlow(context.Background(), auth.Flow{Name: "logout-all"})
	obs.Event(ctx, auth.Event{Type: auth.EventLoggedOutEverywhere, UserID: "u-42", Email: "ada@example.com", IP: "192.0.2.1", Detail: "free text"})
	end(200)
	ev := spans.Ended()[0].Events()
	if len(ev) != 1 {
		t.Fatalf("events %v", ev)
	}
	if got, want := set(attribute.NewSet(ev[0].Attributes...)), "{authkit.event=logged_out_everywhere,enduser.id=u-42}"; got != want {
		t.Errorf("attributes %s, want %s", got, want)
	}
}

// TestTwoFactorByEmailCode: the email code, a factor checked through
// Modules.FinishTwoFactor (the passkeys module's path too), counted by its
// method: a wrong code, then the mailed one.
func TestTwoFactorByEmailCode(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	pw, _ := password.ForTesting().Hash(ctx, "cy's long password")
	if _, err := h.users.Create(ctx, &user.User{Email: "cy@example.com", Name: "Cy", PasswordHash: pw,
		TwoFactorEnabled: true, EmailVerifiedAt: time.Unix(1700000000, 0)}); err != nil {
		t.Fatal(err)
	}
	h.post("cy", "/api/login", `{"email":"cy@example.com","password":"cy's long password"}`, 200)
	h.post("cy", "/api/2fa/email-code", `{}`, 200)
	if err := h.svc.FlushMail(ctx); err != nil {
		t.Fatal(err)
	}
	msg, _ := h.mails.Last()
	code := regexp.MustCompile(`\b\d{6}\b`).FindString(msg.Text)
	wrong := "000000"
	if code == wrong {
		wrong = "000001"
	}
	h.post("cy", "/api/2fa/email-code/verify", `{"code":"`+wrong+`"}`, 400)
	h.post("cy", "/api/2fa/email-code/verify", `{"code":"`+code+`"}`, 200)
	if err := h.svc.FlushMail(ctx); err != nil {
		t.Fatal(err)
	}
	got := h.counts()
	for k, v := range map[string]int64{
		"authkit.2fa.verifications{authkit.2fa.method=email_code,authkit.outcome=failure}":  1,
		"authkit.2fa.verifications{authkit.2fa.method=email_code,authkit.outcome=success}":  1,
		"authkit.logins{authkit.outcome=pending_2fa}":                                       1,
		"authkit.logins{authkit.outcome=success}":                                           1,
		"authkit.mails{authkit.mail.kind=two_factor_email_code,authkit.outcome=sent}":       1,
		"authkit.flow.duration{authkit.flow=2fa/email-code/verify,authkit.outcome=failure}": 1,
		"authkit.flow.duration{authkit.flow=2fa/email-code/verify,authkit.outcome=success}": 1,
	} {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
}

// TestTypedFlow: a flow run by calling its typed method (the pages
// module's way, an app's own handler) has its span, named as the route's
// but without the HTTP attributes, its store calls as children, and its
// duration under the same flow name.
func TestTypedFlow(t *testing.T) {
	h := newHarness(t)
	v := h.svc.Visit(auth.HTTPRequest(httptest.NewRequest("POST", "/login", nil), nil))
	_, err := h.svc.Login(context.Background(), v, auth.LoginInput{Email: "nobody@example.com", Password: "wrong horse battery"})
	if !errors.Is(err, auth.ErrInvalidCredentials) {
		t.Fatalf("login: %v", err)
	}
	ended := h.spans.Ended()
	if len(ended) != 4 {
		t.Fatalf("%d spans, want 4 (two limits, the lookup, the flow)", len(ended))
	}
	flow := ended[3]
	if got, want := set(attribute.NewSet(flow.Attributes()...)), "{authkit.flow=login,authkit.outcome=failure,http.response.status_code=401}"; flow.Name() != "authkit login" || got != want {
		t.Errorf("flow span %q %s, want \"authkit login\" %s", flow.Name(), got, want)
	}
	for _, s := range ended[:3] {
		if s.Parent().SpanID() != flow.SpanContext().SpanID() {
			t.Errorf("the parent of %s is %v, want the flow's span", s.Name(), s.Parent().SpanID())
		}
	}
	if got := h.counts()["authkit.flow.duration{authkit.flow=login,authkit.outcome=failure}"]; got != 1 {
		t.Errorf("login failures timed %d, want 1", got)
	}
}

// failingLimits is a limit store that is down.
type failingLimits struct{}

func (failingLimits) Increment(context.Context, string, time.Duration) (int64, time.Time, error) {
	return 0, time.Time{}, errors.New("test: limits down")
}

func (failingLimits) Reset(context.Context, string) error { return errors.New("test: limits down") }

// TestStoreErrorsBeyondUsers: a limit store that is down counts as a store
// error of part Limits; a challenge taken twice (onetime.ErrNotFound) is
// an outcome, not an error.
func TestStoreErrorsBeyondUsers(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	obs, err := otelauth.New(otelauth.Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{
		Users: store.NewMemory(store.MemoryConfig{}), Secrets: []string{strings.Repeat("s", 32)}, Keys: keys,
		AppURL: "http://app.test", Hasher: password.ForTesting(), Logger: slog.New(slog.DiscardHandler),
		Observer: obs, LimitStore: func(string) ratelimit.Store { return failingLimits{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	v := svc.Visit(auth.HTTPRequest(httptest.NewRequest("POST", "/login", nil), nil))
	if _, err := svc.Login(context.Background(), v, auth.LoginInput{Email: "ada@example.com", Password: "correct horse battery"}); auth.AsError(err).Status != 503 {
		t.Fatalf("login with the limits down: %v, want 503", err)
	}
	ch := svc.Modules().ObserveOneTime("Challenges", onetime.NewMemoryStore(onetime.MemoryConfig{}))
	if _, err := ch.Take(context.Background(), "never put", time.Now()); !errors.Is(err, onetime.ErrNotFound) {
		t.Fatalf("take: %v", err)
	}
	h := &harness{t: t, reader: reader}
	got := h.counts()
	want := map[string]int64{
		"authkit.store.errors{authkit.store.part=Limits,db.operation.name=Increment,error.type=other}": 1,
		"authkit.flow.duration{authkit.flow=login,authkit.outcome=error}":                              1,
	}
	if !maps.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
}
