package nethttpauth_test

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
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/nethttpauth"
	"github.com/authkit-go/authkit/store"
)

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
			return serve(t, nethttpauth.Handler(svc))
		},
		NewUsers: func(t *testing.T) user.Store {
			return store.NewMemory(store.MemoryConfig{})
		},
	})
}

// newService returns a Service on a fresh memory store for the unit tests
// of this package.
func newService(t *testing.T) (*auth.Service, *mail.Capture) {
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
	svc, err := auth.New(auth.Config{
		Users:    store.NewMemory(store.MemoryConfig{}),
		Secrets:  []string{"nethttpauth-test-secret-0123456789abcdef"},
		Keys:     keys,
		AppURL:   "http://app.test",
		Mailer:   mailer,
		Hasher:   password.ForTesting(),
		Now:      func() time.Time { return now },
		Logger:   slog.New(slog.DiscardHandler),
		Insecure: true,
	})
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

func send(t *testing.T, c *http.Client, method, url, body string) result {
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
	return &http.Client{Jar: jar}
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

func TestRequireUser(t *testing.T) {
	svc, _ := newService(t)
	mux := http.NewServeMux()
	nethttpauth.Mount(mux, svc, "")
	mux.Handle("GET /private", nethttpauth.RequireUser(svc)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := nethttpauth.CurrentUser(r)
		if !ok {
			http.Error(w, "no user in context", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "hello "+u.Email)
	})))
	base := serve(t, mux)
	c := browser(t)

	wantError(t, send(t, c, http.MethodGet, base+"/private", ""), http.StatusUnauthorized, "Not authenticated")
	if r := send(t, c, http.MethodPost, base+"/api/auth/register", register); r.status != http.StatusOK {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	r := send(t, c, http.MethodGet, base+"/private", "")
	if r.status != http.StatusOK || r.body != "hello ada@example.com" {
		t.Errorf("signed in: got %d %q, want 200 %q", r.status, r.body, "hello ada@example.com")
	}
}

func TestCurrentUserOutsideRequireUser(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if u, ok := nethttpauth.CurrentUser(r); ok || u != nil {
		t.Errorf("CurrentUser = %v, %v; want nil, false", u, ok)
	}
}

func TestRequireVerifiedEmail(t *testing.T) {
	svc, mailer := newService(t)
	mux := http.NewServeMux()
	nethttpauth.Mount(mux, svc, "")
	mux.Handle("GET /verified", nethttpauth.RequireVerifiedEmail(svc)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := nethttpauth.CurrentUser(r)
		_, _ = io.WriteString(w, "verified "+u.Email)
	})))
	base := serve(t, mux)
	c := browser(t)

	wantError(t, send(t, c, http.MethodGet, base+"/verified", ""), http.StatusUnauthorized, "Not authenticated")
	if r := send(t, c, http.MethodPost, base+"/api/auth/register", register); r.status != http.StatusOK {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	wantError(t, send(t, c, http.MethodGet, base+"/verified", ""), http.StatusForbidden, "Email not verified")

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
	h := nethttpauth.RateLimit(rl)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	base := serve(t, h)
	c := &http.Client{}
	for i, want := range []string{"1", "0"} {
		r := send(t, c, http.MethodGet, base+"/", "")
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
	r := send(t, c, http.MethodGet, base+"/", "")
	if r.status != http.StatusTooManyRequests || r.json["error"] != "Too many requests. Try again later." ||
		r.json["retryAfter"] != "2031-03-14T15:10:26.000Z" || len(r.json) != 2 {
		t.Errorf("third request: %d %s, want 429 {error, retryAfter}", r.status, r.body)
	}
	if got := r.header.Get("Retry-After"); got != "60" {
		t.Errorf("Retry-After %q, want 60", got)
	}
	if got := r.header.Get("X-RateLimit-Remaining"); got != "0" {
		t.Errorf("X-RateLimit-Remaining %q, want 0", got)
	}
}

func TestMountPrefix(t *testing.T) {
	svc, _ := newService(t)
	mux := http.NewServeMux()
	nethttpauth.Mount(mux, svc, "/auth/")
	base := serve(t, mux)
	c := browser(t)
	if r := send(t, c, http.MethodPost, base+"/auth/api/auth/register", register); r.status != http.StatusOK {
		t.Fatalf("register under /auth: %d %s", r.status, r.body)
	}
	r := send(t, c, http.MethodPost, base+"/auth/api/login", `{"email":"ada@example.com","password":"correct horse battery staple"}`)
	if r.status != http.StatusOK || r.json["success"] != true {
		t.Errorf("login under /auth: %d %s, want 200 {success:true}", r.status, r.body)
	}
	if r := send(t, c, http.MethodGet, base+"/auth/api/auth/me", ""); r.status != http.StatusOK || r.json["email"] != "ada@example.com" {
		t.Errorf("me under /auth: %d %s", r.status, r.body)
	}
	if r := send(t, c, http.MethodPost, base+"/api/login", `{}`); r.status != http.StatusNotFound {
		t.Errorf("/api/login without the prefix: %d, want 404", r.status)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	svc, _ := newService(t)
	base := serve(t, nethttpauth.Handler(svc))
	c := browser(t)
	for _, tc := range []struct{ method, path, allow string }{
		{http.MethodGet, "/api/login", "POST"},
		{http.MethodPut, "/api/auth/me", "GET"},
		{http.MethodDelete, "/api/auth/verify-email/abc", "GET"},
		{http.MethodGet, "/api/auth/reset-password/abc", "POST"},
	} {
		r := send(t, c, tc.method, base+tc.path, "")
		wantError(t, r, http.StatusMethodNotAllowed, "Method not allowed")
		if got := r.header.Get("Allow"); !strings.Contains(got, tc.allow) {
			t.Errorf("%s %s: Allow %q, want it to list %s", tc.method, tc.path, got, tc.allow)
		}
		if got := r.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s %s: Cache-Control %q, want no-store", tc.method, tc.path, got)
		}
	}
}

func TestNotFound(t *testing.T) {
	svc, _ := newService(t)
	base := serve(t, nethttpauth.Handler(svc))
	c := browser(t)
	for _, path := range []string{"/", "/api/nope", "/api/auth/verify-email/", "/api/auth/verify-email/a/b"} {
		wantError(t, send(t, c, http.MethodGet, base+path, ""), http.StatusNotFound, "Not found")
	}
}

func TestRequestBodyLimit(t *testing.T) {
	// The adapter hands core at most the limit and reports a longer body.
	svc, _ := newService(t)
	base := serve(t, nethttpauth.Handler(svc))
	body := `{"email":"` + strings.Repeat("a", 16<<10) + `@example.com","password":"x"}`
	wantError(t, send(t, browser(t), http.MethodPost, base+"/api/login", body), http.StatusRequestEntityTooLarge, "Request body too large")
}
