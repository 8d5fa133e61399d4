package sqlxstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/internal/tcpproxy"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/recovery"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
)

// The answer of every flow while the database is unreachable.
const (
	unavailableStatus = http.StatusServiceUnavailable
	unavailableBody   = `{"error":"Service temporarily unavailable. Try again later.","code":"service_unavailable"}`
)

// cutEnv is a database reached through a proxy that can cut the path,
// plus a direct view of the same tables for checking what was written.
type cutEnv struct {
	proxy  *tcpproxy.Proxy
	db     *sqlxstore.DB // through the proxy
	direct *sqlxstore.DB // the same tables, straight to the server
	now    time.Time
}

func init() {
	// The MySQL driver logs every connection the cuts break; the tests
	// check the errors themselves.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
}

func newCutEnv(t *testing.T, b backend) *cutEnv {
	t.Helper()
	raw := serviceURL(t, b.env)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), map[string]string{envPostgres: "5432", envMySQL: "3306"}[b.env])
	}
	proxy, err := tcpproxy.Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	u.Host = proxy.Addr()

	now := time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)
	cfg := sqlxstore.Config{TablePrefix: randomPrefix(), Now: func() time.Time { return now }}
	db, err := sqlxopen.Open(context.Background(), u.String(), cfg)
	if err != nil {
		t.Fatalf("Open through the proxy: %v", err)
	}
	db.SQLX().SetMaxOpenConns(maxTestConns)
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	direct, err := sqlxstore.New(openPool(t, b).SQLX(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := direct.DropTables(context.Background()); err != nil {
			t.Errorf("drop tables: %v", err)
		}
	})
	return &cutEnv{proxy: proxy, db: db, direct: direct, now: now}
}

// restore ends a cut, failing the test if the proxy cannot listen again.
func (e *cutEnv) restore(t *testing.T) {
	t.Helper()
	if err := e.proxy.Restore(); err != nil {
		t.Fatalf("Restore: %v", err)
	}
}

// afterCut checks that what, a request cut mid-statement, answered r
// unavailable, waits until the server has closed the cut connection, ends
// the cut and returns user id as the database then has it.
func (e *cutEnv) afterCut(t *testing.T, what string, r auth.Response, id string) *user.User {
	t.Helper()
	if r.Status != unavailableStatus || string(r.Body) != unavailableBody {
		t.Fatalf("%s cut mid-statement: %d %s, want %d %s", what, r.Status, r.Body, unavailableStatus, unavailableBody)
	}
	if !e.proxy.Settle() {
		t.Fatal("the server did not close the cut connection")
	}
	e.restore(t)
	return e.read(t, id)
}

// read returns user id as the database has it now.
func (e *cutEnv) read(t *testing.T, id string) *user.User {
	t.Helper()
	u, err := e.direct.Users().ByID(context.Background(), id)
	if err != nil {
		t.Fatalf("ByID(%s) straight to the server: %v", id, err)
	}
	return u
}

// TestBackendUnreachable cuts the connection to the database (never the
// server itself) through a TCP proxy: store calls fail with
// user.ErrUnavailable, flows answer 503 and recover when the path comes
// back, and an operation whose connection breaks mid-statement has either
// been applied whole or not at all.
func TestBackendUnreachable(t *testing.T) {
	for _, b := range backends {
		if b.env == "" {
			continue // SQLite has no connection to cut
		}
		t.Run(b.name, func(t *testing.T) {
			serviceURL(t, b.env) // skip here, not once per subtest
			t.Run("StoreCalls", func(t *testing.T) { testStoreCallsDuringCut(t, newCutEnv(t, b)) })
			t.Run("Login", func(t *testing.T) { testLoginDuringCut(t, newCutEnv(t, b)) })
			t.Run("ConfirmTwoFactor", func(t *testing.T) { testConfirmCutMidStatement(t, newCutEnv(t, b)) })
			t.Run("ResetPassword", func(t *testing.T) { testResetCutMidStatement(t, newCutEnv(t, b)) })
		})
	}
}

func testStoreCallsDuringCut(t *testing.T, e *cutEnv) {
	s := e.db.Users()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := s.Create(ctx, &user.User{Email: "cut@example.com", Name: "Cut", PasswordHash: "h0"})
	if err != nil {
		t.Fatal(err)
	}
	before := e.read(t, u.ID)

	e.proxy.Cut()
	at := e.now
	calls := map[string]func() error{
		"ByID":                 func() error { _, err := s.ByID(ctx, u.ID); return err },
		"ByEmail":              func() error { _, err := s.ByEmail(ctx, u.Email); return err },
		"Create":               func() error { _, err := s.Create(ctx, &user.User{Email: "new@example.com"}); return err },
		"Delete":               func() error { return s.Delete(ctx, u.ID) },
		"BeginTOTPSetup":       func() error { return s.BeginTOTPSetup(ctx, u.ID, "pending") },
		"EnableTOTP":           func() error { return s.EnableTOTP(ctx, u.ID, user.EnableTOTP{Pending: "pending", Secret: "s"}) },
		"AcceptTOTPStep":       func() error { return s.AcceptTOTPStep(ctx, u.ID, 5, 5) },
		"ConsumeRecoveryCode":  func() error { return s.ConsumeRecoveryCode(ctx, u.ID, []string{"a"}, nil) },
		"ReplaceRecoveryCodes": func() error { return s.ReplaceRecoveryCodes(ctx, u.ID, []string{"a"}) },
		"DisableTOTP":          func() error { return s.DisableTOTP(ctx, u.ID) },
		"VerifyEmail":          func() error { return s.VerifyEmail(ctx, u.ID, u.Email, at) },
		"ChangeEmail":          func() error { return s.ChangeEmail(ctx, u.ID, u.Email, "other@example.com", at) },
		"ChangePassword":       func() error { return s.ChangePassword(ctx, u.ID, u.PasswordHash, "h1", at) },
		"BumpSessionVersion":   func() error { _, err := s.BumpSessionVersion(ctx, u.ID); return err },
		"RecordLoginFailure": func() error {
			_, _, err := s.RecordLoginFailure(ctx, u.ID, 3, time.Hour, at)
			return err
		},
		"ClearLoginFailures": func() error { return s.ClearLoginFailures(ctx, u.ID) },
		"Migrate":            func() error { return e.db.Migrate(ctx) },
		"PasskeyUserHandle": func() error {
			_, err := s.PasskeyUserHandle(ctx, u.ID, []byte("handle"))
			return err
		},
		"ByPasskeyUserHandle": func() error { _, err := s.ByPasskeyUserHandle(ctx, []byte("handle")); return err },
		"AddPasskey": func() error {
			return s.AddPasskey(ctx, &user.Passkey{ID: []byte("cred"), UserID: u.ID, UserHandle: []byte("handle"), CreatedAt: at})
		},
		"ListPasskeys":  func() error { _, err := s.ListPasskeys(ctx, u.ID); return err },
		"PasskeyByID":   func() error { _, err := s.PasskeyByID(ctx, []byte("cred")); return err },
		"RenamePasskey": func() error { return s.RenamePasskey(ctx, u.ID, []byte("cred"), "n") },
		"DeletePasskey": func() error { return s.DeletePasskey(ctx, u.ID, []byte("cred")) },
		"UsePasskey": func() error {
			return s.UsePasskey(ctx, u.ID, []byte("cred"), user.PasskeyUse{SignCount: 1, At: at})
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, user.ErrUnavailable) {
			t.Errorf("%s during the cut: %v, want an error wrapping user.ErrUnavailable", name, err)
		}
	}
	if _, _, err := e.db.Limits().Increment(ctx, "k", time.Minute); err == nil {
		t.Error("Increment during the cut succeeded")
	}
	if err := e.db.Limits().Reset(ctx, "k"); err == nil {
		t.Error("Reset during the cut succeeded")
	}

	e.restore(t)
	got, err := s.ByID(ctx, u.ID)
	if err != nil {
		t.Fatalf("ByID after Restore: %v", err)
	}
	if got.Email != before.Email || got.PasswordHash != before.PasswordHash || got.SessionVersion != before.SessionVersion ||
		got.FailedLogins != before.FailedLogins || got.PendingTOTPSecret != "" || !got.EmailVerifiedAt.IsZero() {
		t.Errorf("calls that failed during the cut changed the record: %+v, was %+v", got, before)
	}
	if n, _, err := e.db.Limits().Increment(ctx, "k", time.Minute); err != nil || n != 1 {
		t.Errorf("Increment after Restore = %d, %v; want 1", n, err)
	}
}

func testLoginDuringCut(t *testing.T, e *cutEnv) {
	f := newFlows(t, e)
	f.createUser(t, "login@example.com", "correct horse battery")

	e.proxy.Cut()
	r := f.do(t, "POST /api/login", "", `{"email":"login@example.com","password":"correct horse battery"}`)
	if r.Status != unavailableStatus || string(r.Body) != unavailableBody {
		t.Fatalf("login during the cut: %d %s, want %d %s", r.Status, r.Body, unavailableStatus, unavailableBody)
	}
	if len(r.Cookies) != 0 {
		t.Errorf("login during the cut set cookies: %v", r.Cookies)
	}

	e.restore(t)
	r = f.do(t, "POST /api/login", "", `{"email":"login@example.com","password":"correct horse battery"}`)
	if r.Status != http.StatusOK || string(r.Body) != `{"success":true}` {
		t.Fatalf("login after Restore: %d %s", r.Status, r.Body)
	}
}

// testConfirmCutMidStatement breaks the connection right after the UPDATE
// that enables 2FA reaches the server: the flow answers 503, and the row is
// either fully enabled or exactly as before, never half-enabled.
func testConfirmCutMidStatement(t *testing.T, e *cutEnv) {
	f := newFlows(t, e)
	u := f.createUser(t, "confirm@example.com", "correct horse battery")
	f.login(t, "confirm@example.com", "correct horse battery")
	r := f.do(t, "POST /api/2fa/setup", "", "")
	if r.Status != http.StatusOK {
		t.Fatalf("setup: %d %s", r.Status, r.Body)
	}
	var setup struct{ QRURI string }
	if err := json.Unmarshal(r.Body, &setup); err != nil {
		t.Fatal(err)
	}
	qr, err := url.Parse(setup.QRURI)
	if err != nil {
		t.Fatal(err)
	}
	tt, _ := totp.New(totp.Config{})
	code, err := tt.Code(qr.Query().Get("secret"), e.now)
	if err != nil {
		t.Fatal(err)
	}
	before := e.read(t, u.ID)
	if before.PendingTOTPSecret == "" {
		t.Fatal("setup stored no pending secret")
	}

	// Only EnableTOTP sends the pending secret to the server.
	e.proxy.CutWhen(func(b []byte) bool { return bytes.Contains(b, []byte(before.PendingTOTPSecret)) })
	r = f.do(t, "POST /api/2fa/confirm", "", `{"code":"`+code+`"}`)
	got := e.afterCut(t, "confirm", r, u.ID)
	switch {
	case got.TwoFactorEnabled:
		if got.TOTPSecret == "" || got.PendingTOTPSecret != "" || len(got.RecoveryCodeHashes) != recovery.DefaultCount ||
			got.LastTOTPStep != tt.Step(e.now) {
			t.Fatalf("2FA half-enabled: %+v", got)
		}
		t.Log("the server committed the UPDATE before the cut: 2FA fully enabled")
	default:
		if got.TOTPSecret != "" || got.PendingTOTPSecret != before.PendingTOTPSecret || got.RecoveryCodeHashes != nil ||
			got.LastTOTPStep != 0 {
			t.Fatalf("2FA off but the row changed: %+v, was %+v", got, before)
		}
		t.Log("the UPDATE did not run: row unchanged")
	}
}

// testResetCutMidStatement breaks the connection right after the UPDATE
// that resets the password reaches the server: the flow answers 503, and
// the password never changes without PasswordChangedAt (and the session
// version) changing with it.
func testResetCutMidStatement(t *testing.T, e *cutEnv) {
	f := newFlows(t, e)
	u := f.createUser(t, "reset@example.com", "correct horse battery")
	r := f.do(t, "POST /api/auth/forgot-password", "", `{"email":"reset@example.com"}`)
	if r.Status != http.StatusOK {
		t.Fatalf("forgot-password: %d %s", r.Status, r.Body)
	}
	if err := f.svc.FlushMail(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, ok := f.mail.Last()
	tok := regexp.MustCompile(`/reset-password/([A-Za-z0-9_.-]+)`).FindStringSubmatch(m.Text)
	if !ok || tok == nil {
		t.Fatalf("no reset link mailed: %+v", m)
	}
	before := e.read(t, u.ID)

	// Only a password update sends a password hash to the server.
	e.proxy.CutWhen(func(b []byte) bool { return bytes.Contains(b, []byte("$2a$04$")) })
	r = f.do(t, "POST /api/auth/reset-password/{token}", tok[1],
		`{"password":"a new horse staple","confirmPassword":"a new horse staple"}`)
	got := e.afterCut(t, "reset", r, u.ID)
	switch {
	case got.PasswordHash != before.PasswordHash:
		if !got.PasswordChangedAt.Equal(e.now) || got.SessionVersion != before.SessionVersion+1 {
			t.Fatalf("password changed without PasswordChangedAt and SessionVersion: %+v", got)
		}
		t.Log("the server committed the UPDATE before the cut: password reset")
	default:
		if !got.PasswordChangedAt.IsZero() || got.SessionVersion != before.SessionVersion {
			t.Fatalf("password kept but the row changed: %+v, was %+v", got, before)
		}
		t.Log("the UPDATE did not run: row unchanged")
	}
}

// flows drives auth.Modules.Handle directly with fakeRequest: no HTTP
// server, no framework module.
type flows struct {
	svc    *auth.Service
	e      *cutEnv
	hasher password.Hasher
	mail   *mail.Capture
	routes map[string]auth.Route
	jar    map[string]string // the browser's cookies
}

func newFlows(t *testing.T, e *cutEnv) *flows {
	t.Helper()
	keys, err := secretbox.NewKeyring(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	hasher := password.ForTesting()
	f := &flows{e: e, hasher: hasher, mail: &mail.Capture{}, routes: map[string]auth.Route{}, jar: map[string]string{}}
	f.svc, err = auth.New(auth.Config{
		Users:   e.db.Users(),
		Secrets: []string{"sqlxstore-failure-test-secret-0123456789"},
		Keys:    keys,
		AppURL:  "http://app.test",
		Mailer:  f.mail,
		Hasher:  hasher,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:     func() time.Time { return e.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.svc.Close(context.Background()) })
	for _, rt := range f.svc.Modules().Routes() {
		f.routes[rt.Method+" "+rt.Pattern] = rt
	}
	return f
}

func (f *flows) createUser(t *testing.T, email, pw string) *user.User {
	t.Helper()
	h, err := f.hasher.Hash(context.Background(), pw)
	if err != nil {
		t.Fatal(err)
	}
	u, err := f.e.db.Users().Create(context.Background(), &user.User{Email: email, Name: "Test", PasswordHash: h})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (f *flows) login(t *testing.T, email, pw string) {
	t.Helper()
	r := f.do(t, "POST /api/login", "", `{"email":"`+email+`","password":"`+pw+`"}`)
	if r.Status != http.StatusOK {
		t.Fatalf("login: %d %s", r.Status, r.Body)
	}
}

// do runs route ("METHOD pattern") with a JSON body, keeping cookies like a
// browser.
func (f *flows) do(t *testing.T, route, token, body string) auth.Response {
	t.Helper()
	rt, ok := f.routes[route]
	if !ok {
		t.Fatalf("no route %s", route)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := f.svc.Modules().Handle(rt, &fakeRequest{ctx: ctx, method: rt.Method, token: token, body: body, cookies: f.jar})
	for _, c := range r.Cookies {
		if c.MaxAge < 0 {
			delete(f.jar, c.Name)
		} else {
			f.jar[c.Name] = c.Value
		}
	}
	return r
}

// fakeRequest is an auth.Request with a JSON body, as a framework module
// would hand it to the flows.
type fakeRequest struct {
	ctx     context.Context
	method  string
	token   string
	body    string
	cookies map[string]string
}

func (r *fakeRequest) Context() context.Context { return r.ctx }
func (r *fakeRequest) Method() string           { return r.method }
func (r *fakeRequest) Host() string             { return "app.test" }
func (r *fakeRequest) RemoteAddr() string       { return "192.0.2.1:40000" }

func (r *fakeRequest) Header(name string) string {
	if http.CanonicalHeaderKey(name) == "Content-Type" && r.body != "" {
		return "application/json"
	}
	return ""
}

func (r *fakeRequest) PathValue(name string) string {
	if name == "token" {
		return r.token
	}
	return ""
}

func (r *fakeRequest) Cookie(name string) (string, bool) {
	v, ok := r.cookies[name]
	return v, ok
}

func (r *fakeRequest) Body(limit int64) ([]byte, error) {
	if int64(len(r.body)) > limit {
		return nil, auth.ErrBodyTooLarge
	}
	return []byte(r.body), nil
}
