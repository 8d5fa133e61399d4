package ginauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/clientip"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/ginauth"
	"github.com/authkit-go/authkit/store"
	"github.com/gin-gonic/gin"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // no [GIN-debug] route listing
	os.Exit(m.Run())
}

// serve runs h on 127.0.0.1:0 until the test ends and returns its base
// URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func TestFlows(t *testing.T) {
	authtest.Run(t, authtest.Harness{
		Start: func(t *testing.T, svc *auth.Service) string {
			return serve(t, ginauth.New(svc))
		},
		NewUsers: func(t *testing.T) user.Store {
			return store.NewMemory(store.MemoryConfig{})
		},
	})
}

// TestFlowsInGroup runs the suite on the routes of a group with a prefix,
// behind gin.Recovery, in an engine with gin's default settings.
func TestFlowsInGroup(t *testing.T) {
	authtest.Run(t, authtest.Harness{
		Start: func(t *testing.T, svc *auth.Service) string {
			r := gin.New()
			r.Use(gin.Recovery())
			ginauth.Register(r.Group("/auth"), svc)
			return serve(t, r) + "/auth"
		},
		NewUsers: func(t *testing.T) user.Store {
			return store.NewMemory(store.MemoryConfig{})
		},
	})
}

// newService returns a Service on a fresh memory store for the unit tests
// of this package.
func newService(t *testing.T, opts ...func(*auth.Config)) (*auth.Service, *mail.Capture) {
	t.Helper()
	keyText, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secretbox.ParseKeyring(keyText)
	if err != nil {
		t.Fatal(err)
	}
	mailer := &mail.Capture{}
	now := time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)
	cfg := auth.Config{
		Users:    store.NewMemory(store.MemoryConfig{}),
		Secrets:  []string{"ginauth-test-secret-0123456789abcdef"},
		Keys:     keys,
		AppURL:   "http://app.test",
		Mailer:   mailer,
		Hasher:   password.ForTesting(),
		Now:      func() time.Time { return now },
		Logger:   slog.New(slog.DiscardHandler),
		Insecure: true,
	}
	for _, o := range opts {
		o(&cfg)
	}
	svc, err := auth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := svc.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return svc, mailer
}

type result struct {
	status int
	header http.Header
	body   string
	json   map[string]any
}

func send(t *testing.T, c *http.Client, method, url, body string, header ...string) result {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := result{status: resp.StatusCode, header: resp.Header, body: string(b)}
	_ = json.Unmarshal(b, &r.json)
	return r
}

func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Redirects are answers too: gin's trailing-slash redirect must show.
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

func wantError(t *testing.T, r result, status int, text string) {
	t.Helper()
	if r.status != status || r.json["error"] != text || len(r.json) != 1 {
		t.Errorf("got %d %s, want %d {\"error\":%q}", r.status, r.body, status, text)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
}

const register = `{"email":"ada@example.com","password":"correct horse battery staple","name":"Ada"}`

// app is an engine with authkit's routes and the app's own: /private
// behind RequireUser, /verified behind RequireVerifiedEmail. calls counts
// the app handlers that ran.
func app(t *testing.T, svc *auth.Service, calls *int) string {
	t.Helper()
	r := gin.New()
	ginauth.Register(r, svc)
	r.GET("/private", ginauth.RequireUser(svc), func(c *gin.Context) {
		*calls++
		u, ok := ginauth.CurrentUser(c)
		if !ok {
			c.String(http.StatusInternalServerError, "no user on the gin.Context")
			return
		}
		// Handlers that only see the request's context find it too.
		if cu, ok := auth.UserFromContext(c.Request.Context()); !ok || cu.ID != u.ID {
			c.String(http.StatusInternalServerError, "no user in the request context")
			return
		}
		c.String(http.StatusOK, "hello %s", u.Email)
	})
	r.GET("/verified", ginauth.RequireVerifiedEmail(svc), func(c *gin.Context) {
		*calls++
		u, _ := ginauth.CurrentUser(c)
		c.String(http.StatusOK, "verified %s", u.Email)
	})
	return serve(t, r)
}

func TestRequireUser(t *testing.T) {
	svc, _ := newService(t)
	var calls int
	base := app(t, svc, &calls)
	c := browser(t)

	wantError(t, send(t, c, http.MethodGet, base+"/private", ""), http.StatusUnauthorized, "Not authenticated")
	if calls != 0 {
		t.Fatalf("the handler ran %d times behind a 401", calls)
	}
	if r := send(t, c, http.MethodPost, base+"/api/auth/register", register); r.status != http.StatusOK {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	r := send(t, c, http.MethodGet, base+"/private", "")
	if r.status != http.StatusOK || r.body != "hello ada@example.com" {
		t.Errorf("signed in: got %d %q, want 200 %q", r.status, r.body, "hello ada@example.com")
	}
	if calls != 1 {
		t.Errorf("handler ran %d times, want 1", calls)
	}
}

func TestCurrentUserOutsideRequireUser(t *testing.T) {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	if u, ok := ginauth.CurrentUser(c); ok || u != nil {
		t.Errorf("CurrentUser without a request = %v, %v; want nil, false", u, ok)
	}
	c.Request = httptest.NewRequest(http.MethodGet, "/", nil)
	if u, ok := ginauth.CurrentUser(c); ok || u != nil {
		t.Errorf("CurrentUser = %v, %v; want nil, false", u, ok)
	}
	if u, ok := ginauth.CurrentUser(nil); ok || u != nil {
		t.Errorf("CurrentUser(nil) = %v, %v; want nil, false", u, ok)
	}
}

func TestCurrentUserFromRequestContext(t *testing.T) {
	// A user put in the request's context by other middleware is found.
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	want := &user.User{ID: "u1", Email: "ada@example.com"}
	c.Request = httptest.NewRequest(http.MethodGet, "/", nil)
	c.Request = c.Request.WithContext(auth.ContextWithUser(c.Request.Context(), want))
	if u, ok := ginauth.CurrentUser(c); !ok || u != want {
		t.Errorf("CurrentUser = %v, %v; want %v, true", u, ok, want)
	}
}

func TestRequireVerifiedEmail(t *testing.T) {
	svc, mailer := newService(t)
	var calls int
	base := app(t, svc, &calls)
	c := browser(t)

	wantError(t, send(t, c, http.MethodGet, base+"/verified", ""), http.StatusUnauthorized, "Not authenticated")
	if r := send(t, c, http.MethodPost, base+"/api/auth/register", register); r.status != http.StatusOK {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	wantError(t, send(t, c, http.MethodGet, base+"/verified", ""), http.StatusForbidden, "Email not verified")
	if calls != 0 {
		t.Fatalf("the handler ran %d times behind a 401/403", calls)
	}

	if err := svc.FlushMail(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, ok := mailer.Last()
	if !ok || m.Kind != mail.KindVerifyEmail {
		t.Fatalf("no verification mail: %+v", m)
	}
	tok := strings.TrimPrefix(m.Link, "http://app.test/verify-email/")
	if r := send(t, c, http.MethodGet, base+"/api/auth/verify-email/"+tok, ""); r.status != http.StatusOK {
		t.Fatalf("verify: %d %s", r.status, r.body)
	}
	r := send(t, c, http.MethodGet, base+"/verified", "")
	if r.status != http.StatusOK || r.body != "verified ada@example.com" {
		t.Errorf("verified: got %d %q", r.status, r.body)
	}
}

func TestRateLimit(t *testing.T) {
	svc, _ := newService(t)
	rl, err := svc.NewRateLimit("search", auth.Limit{Max: 2, Window: time.Minute}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rl.Close() })
	r := gin.New()
	var calls int
	r.GET("/search", ginauth.RateLimit(rl), func(c *gin.Context) {
		calls++
		c.String(http.StatusOK, "ok")
	})
	base := serve(t, r)
	c := &http.Client{}
	for i, want := range []string{"1", "0"} {
		r := send(t, c, http.MethodGet, base+"/search", "")
		if r.status != http.StatusOK || r.body != "ok" {
			t.Fatalf("request %d: %d %q, want 200 ok", i+1, r.status, r.body)
		}
		if got := r.header.Get("X-RateLimit-Remaining"); got != want {
			t.Errorf("request %d: X-RateLimit-Remaining %q, want %q", i+1, got, want)
		}
		if got := r.header.Get("X-RateLimit-Reset"); got != "2031-03-14T15:10:26.000Z" {
			t.Errorf("request %d: X-RateLimit-Reset %q, want 2031-03-14T15:10:26.000Z", i+1, got)
		}
	}
	res := send(t, c, http.MethodGet, base+"/search", "")
	if res.status != http.StatusTooManyRequests || res.json["error"] != "Too many requests. Try again later." ||
		res.json["retryAfter"] != "2031-03-14T15:10:26.000Z" || len(res.json) != 2 {
		t.Errorf("third request: %d %s, want 429 {error, retryAfter}", res.status, res.body)
	}
	if got := res.header.Get("Retry-After"); got != "60" {
		t.Errorf("Retry-After %q, want 60", got)
	}
	if got := res.header.Get("X-RateLimit-Remaining"); got != "0" {
		t.Errorf("X-RateLimit-Remaining %q, want 0", got)
	}
	if calls != 2 {
		t.Errorf("handler ran %d times, want 2 (not behind the 429)", calls)
	}
}

// limitedEngine serves GET / behind a limit of one request per minute,
// keyed by the client address that core chooses.
func limitedEngine(t *testing.T, svc *auth.Service) string {
	t.Helper()
	rl, err := svc.NewRateLimit("one", auth.Limit{Max: 1, Window: time.Minute}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rl.Close() })
	r := gin.New()
	r.GET("/", ginauth.RateLimit(rl), func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	return serve(t, r)
}

func TestClientIPIsCoreDecision(t *testing.T) {
	// gin's ClientIP trusts X-Forwarded-For from any peer by default; the
	// limit must key on core's choice, the socket peer, instead.
	t.Run("untrusted peer", func(t *testing.T) {
		svc, _ := newService(t)
		base := limitedEngine(t, svc)
		c := &http.Client{}
		if r := send(t, c, http.MethodGet, base+"/", "", "X-Forwarded-For", "192.0.2.1"); r.status != http.StatusOK {
			t.Fatalf("first request: %d %s", r.status, r.body)
		}
		r := send(t, c, http.MethodGet, base+"/", "", "X-Forwarded-For", "192.0.2.2")
		if r.status != http.StatusTooManyRequests {
			t.Errorf("second request with another X-Forwarded-For: %d, want 429 (same socket peer)", r.status)
		}
	})
	t.Run("trusted proxy", func(t *testing.T) {
		svc, _ := newService(t, func(c *auth.Config) {
			c.Proxies = clientip.New(netip.MustParsePrefix("127.0.0.0/8"))
		})
		base := limitedEngine(t, svc)
		c := &http.Client{}
		for _, xff := range []string{"192.0.2.1", "192.0.2.2"} {
			if r := send(t, c, http.MethodGet, base+"/", "", "X-Forwarded-For", xff); r.status != http.StatusOK {
				t.Errorf("first request from %s behind a trusted proxy: %d, want 200", xff, r.status)
			}
		}
		if r := send(t, c, http.MethodGet, base+"/", "", "X-Forwarded-For", "192.0.2.1"); r.status != http.StatusTooManyRequests {
			t.Errorf("second request from 192.0.2.1: %d, want 429", r.status)
		}
	})
}

// TestNewTrustsNoProxy: the engine New makes does not let a client pick
// gin's ClientIP with X-Forwarded-For (gin's default trusts every peer).
func TestNewTrustsNoProxy(t *testing.T) {
	svc, _ := newService(t)
	e := ginauth.New(svc)
	e.GET("/ip", func(c *gin.Context) { c.String(http.StatusOK, c.ClientIP()) })
	w := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/ip", nil)
	req.RemoteAddr = "198.51.100.7:4000"
	req.Header.Set("X-Forwarded-For", "192.0.2.1")
	e.ServeHTTP(w, req)
	if got := w.Body.String(); got != "198.51.100.7" {
		t.Fatalf("ClientIP = %q, want the socket peer 198.51.100.7", got)
	}
}

func TestRegisterGroup(t *testing.T) {
	svc, _ := newService(t)
	r := gin.New()
	ginauth.Register(r.Group("/auth"), svc)
	base := serve(t, r)
	c := browser(t)
	if r := send(t, c, http.MethodPost, base+"/auth/api/auth/register", register); r.status != http.StatusOK {
		t.Fatalf("register under /auth: %d %s", r.status, r.body)
	}
	res := send(t, c, http.MethodPost, base+"/auth/api/login", `{"email":"ada@example.com","password":"correct horse battery staple"}`)
	if res.status != http.StatusOK || res.json["success"] != true {
		t.Errorf("login under /auth: %d %s, want 200 {success:true}", res.status, res.body)
	}
	if r := send(t, c, http.MethodGet, base+"/auth/api/auth/me", ""); r.status != http.StatusOK || r.json["email"] != "ada@example.com" {
		t.Errorf("me under /auth: %d %s", r.status, r.body)
	}
	wantError(t, send(t, c, http.MethodGet, base+"/auth/api/login", ""), http.StatusMethodNotAllowed, "Method not allowed")
	if r := send(t, c, http.MethodPost, base+"/api/login", `{}`); r.status != http.StatusNotFound {
		t.Errorf("/api/login without the prefix: %d, want 404", r.status)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	svc, _ := newService(t)
	base := serve(t, ginauth.New(svc))
	c := browser(t)
	for _, tc := range []struct{ method, path, allow string }{
		{http.MethodGet, "/api/login", "POST"},
		{http.MethodHead, "/api/login", "POST"},
		{http.MethodOptions, "/api/2fa/setup", "POST"},
		{http.MethodPut, "/api/auth/me", "GET, HEAD"},
		{http.MethodPatch, "/api/auth/change-password", "POST"},
		{http.MethodDelete, "/api/auth/verify-email/abc", "GET, HEAD"},
		{http.MethodGet, "/api/auth/reset-password/abc", "POST"},
		{http.MethodTrace, "/api/auth/logout", "POST"},
	} {
		r := send(t, c, tc.method, base+tc.path, "")
		if r.status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d, want 405", tc.method, tc.path, r.status)
		}
		if tc.method != http.MethodHead {
			wantError(t, r, http.StatusMethodNotAllowed, "Method not allowed")
		}
		if got := r.header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
		if got := r.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s %s: Cache-Control %q, want no-store", tc.method, tc.path, got)
		}
	}
}

func TestHeadOnGetRoute(t *testing.T) {
	// net/http serves HEAD with a GET pattern; so does Register.
	svc, _ := newService(t)
	base := serve(t, ginauth.New(svc))
	r := send(t, browser(t), http.MethodHead, base+"/api/auth/me", "")
	if r.status != http.StatusUnauthorized || r.body != "" {
		t.Errorf("HEAD /api/auth/me: %d %q, want 401 and no body", r.status, r.body)
	}
	if got := r.header.Get("Content-Type"); got != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", got)
	}
}

func TestNotFound(t *testing.T) {
	svc, _ := newService(t)
	base := serve(t, ginauth.New(svc))
	c := browser(t)
	for _, path := range []string{"/", "/api/nope", "/api/auth/me/", "/api/auth/verify-email/", "/api/auth/verify-email/a/b"} {
		wantError(t, send(t, c, http.MethodGet, base+path, ""), http.StatusNotFound, "Not found")
	}
	wantError(t, send(t, c, http.MethodPost, base+"/api/nope", `{}`), http.StatusNotFound, "Not found")
}

func TestRequestBodyLimit(t *testing.T) {
	// The adapter hands core at most the limit and reports a longer body.
	svc, _ := newService(t)
	base := serve(t, ginauth.New(svc))
	body := `{"email":"` + strings.Repeat("a", 16<<10) + `@example.com","password":"x"}`
	wantError(t, send(t, browser(t), http.MethodPost, base+"/api/login", body), http.StatusRequestEntityTooLarge, "Request body too large")
}

func TestRequestBodyMaxBytesError(t *testing.T) {
	// An app that caps bodies itself with http.MaxBytesReader gets the
	// same 413.
	svc, _ := newService(t)
	r := gin.New()
	r.Use(func(c *gin.Context) {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, 10)
		c.Next()
	})
	ginauth.Register(r, svc)
	base := serve(t, r)
	wantError(t, send(t, browser(t), http.MethodPost, base+"/api/login", `{"email":"ada@example.com","password":"x"}`),
		http.StatusRequestEntityTooLarge, "Request body too large")
}
