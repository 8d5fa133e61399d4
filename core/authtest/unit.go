package authtest

// Helpers for a framework module's own unit tests: the middleware, the
// mounting and the framework's edge cases that the flow suite does not
// reach.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/user"
)

// Serve runs h on 127.0.0.1:0 until the test ends and returns its base URL
// ("http://127.0.0.1:PORT"). The server is shut down gracefully at
// cleanup; a failed shutdown fails the test.
func Serve(t testing.TB, h http.Handler) string {
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

// unitNow is the time on the clock of every Service NewService builds.
var unitNow = time.Date(2031, time.March, 14, 15, 9, 26, 0, time.UTC)

// NewService returns a Service on users for a unit test, and the mailer it
// sends through. Its clock stands still at 2031-03-14T15:09:26Z, so a
// one-minute rate-limit window ends at 15:10:26. It hashes with
// password.ForTesting, logs nowhere, sets cookies without Secure (the
// tests' servers speak plain http) and links mails to http://app.test.
// opts change that Config before auth.New. The Service is closed when the
// test ends.
func NewService(t testing.TB, users user.Store, opts ...func(*auth.Config)) (*auth.Service, *mail.Capture) {
	t.Helper()
	mailer := &mail.Capture{}
	cfg := baseConfig(t, users, mailer, func() time.Time { return unitNow })
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

// baseConfig is the Config every Service of this package starts from, the
// suite's and NewService's: a fresh encryption key, the test secret,
// minimum-cost hashing, no log, cookies without Secure (the tests' servers
// speak plain http, and a cookie jar sends no Secure cookie over it), and
// mail links to http://app.test.
func baseConfig(t testing.TB, users user.Accounts, mailer mail.Mailer, now func() time.Time) auth.Config {
	t.Helper()
	keyText, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatalf("authtest: encryption key: %v", err)
	}
	keys, err := secretbox.ParseKeyring(keyText)
	if err != nil {
		t.Fatalf("authtest: encryption key: %v", err)
	}
	return auth.Config{
		Users:    users,
		Secrets:  []string{testSecret},
		Keys:     keys,
		AppURL:   appURL,
		Mailer:   mailer,
		Hasher:   password.ForTesting(),
		Now:      now,
		Logger:   slog.New(slog.DiscardHandler),
		Insecure: true,
	}
}

// Reply is one response of Send or Fetch, read whole. The flow suite's
// browsers read theirs the same way.
type Reply struct {
	Status int
	Header http.Header
	Body   string
	JSON   map[string]any // the body as a JSON object; nil when it is not one
}

// String returns the status and the body, trimmed, for failure messages.
func (r Reply) String() string { return fmt.Sprintf("%d %s", r.Status, strings.TrimSpace(r.Body)) }

// Send sends one request with c and reads the reply. A non-empty body goes
// as application/json; header holds extra header name, value pairs. A
// transport error fails the test at once.
func Send(t testing.TB, c *http.Client, method, url, body string, header ...string) Reply {
	t.Helper()
	r, err := Fetch(c, method, url, body, header...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Fetch is Send for goroutines other than the test's: it returns errors
// instead of failing the test.
func Fetch(c *http.Client, method, url, body string, header ...string) (Reply, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return Reply{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := setHeaders(req, header); err != nil {
		return Reply{}, err
	}
	return roundTrip(c, req)
}

// setHeaders sets the header name, value pairs of hdr on req.
func setHeaders(req *http.Request, hdr []string) error {
	if len(hdr)%2 != 0 {
		return fmt.Errorf("authtest: odd header list %q", hdr)
	}
	for i := 0; i < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return nil
}

// roundTrip sends req with c and reads the reply whole: the one request
// path of Send, Fetch and the flow suite's browsers.
func roundTrip(c *http.Client, req *http.Request) (Reply, error) {
	resp, err := c.Do(req)
	if err != nil {
		return Reply{}, err
	}
	return ReadReply(resp)
}

// ReadReply reads resp whole into a Reply and closes its body: for a
// response a test got another way than Send (a raw connection, say).
func ReadReply(resp *http.Response) (Reply, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Reply{}, fmt.Errorf("authtest: reading the reply: %w", err)
	}
	r := Reply{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		r.JSON = m
	}
	return r, nil
}

// Browser returns a client with its own cookie jar. It does not follow
// redirects: a redirect is an answer the test sees (gin's trailing-slash
// redirect, for one).
func Browser(t testing.TB) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// WantError checks an error reply as core writes it: exactly status, a
// body of exactly {"error": text, "code"} with a lower snake_case code,
// the one of auth.Codes() when status and text are one of its conditions
// (the flow suite's check of every error reply), and the headers of
// WantJSONHeaders.
func WantError(t testing.TB, r Reply, status int, text string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("got %s, want %d {\"error\":%q, \"code\"}", r, status, text)
	}
	wantErrorBody(t, "got "+r.String(), r, text)
	WantJSONHeaders(t, r.Header)
}

// WantJSONHeaders checks that the headers core sets on every JSON reply
// are there exactly once, with nothing of the framework's in their place:
// Content-Type application/json; charset=utf-8, Cache-Control no-store and
// X-Content-Type-Options nosniff.
func WantJSONHeaders(t testing.TB, h http.Header) {
	t.Helper()
	for _, hv := range [][2]string{
		{"Content-Type", "application/json; charset=utf-8"},
		{"Cache-Control", "no-store"},
		{"X-Content-Type-Options", "nosniff"},
	} {
		if got := h.Values(hv[0]); len(got) != 1 || got[0] != hv[1] {
			t.Errorf("%s %q, want exactly %q", hv[0], got, hv[1])
		}
	}
}

// The account the checks below register.
const (
	unitEmail    = "ada@example.com"
	unitRegister = `{"email":"ada@example.com","password":"correct horse battery staple","name":"Ada"}`
)

// CheckRequireUser checks a route behind a framework module's RequireUser.
// base serves the module's authkit routes and, at base+path, a GET handler
// that answers want to a signed-in user. A browser without a session gets
// 401 {"error":"Not authenticated"}; after it registers ada@example.com at
// base+"/api/auth/register" it gets 200 and exactly want.
func CheckRequireUser(t testing.TB, base, path, want string) {
	t.Helper()
	c := Browser(t)
	WantError(t, Send(t, c, http.MethodGet, base+path, ""), http.StatusUnauthorized, errNotAuthenticated)
	if r := Send(t, c, http.MethodPost, base+"/api/auth/register", unitRegister); r.Status != http.StatusOK {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	r := Send(t, c, http.MethodGet, base+path, "")
	if r.Status != http.StatusOK || r.Body != want {
		t.Errorf("signed in: got %d %q, want 200 %q", r.Status, r.Body, want)
	}
}

// CheckRequireVerifiedEmail checks a route behind a framework module's
// RequireVerifiedEmail, as CheckRequireUser does for RequireUser. svc and
// mailer are the Service base serves and its mailer (from NewService). A
// browser without a session gets 401 {"error":"Not authenticated"}; signed
// in as the newly registered ada@example.com, 403 {"error":"Email not
// verified"}; after it follows the link of the verification mail, 200 and
// exactly want.
func CheckRequireVerifiedEmail(t testing.TB, svc *auth.Service, mailer *mail.Capture, base, path, want string) {
	t.Helper()
	c := Browser(t)
	WantError(t, Send(t, c, http.MethodGet, base+path, ""), http.StatusUnauthorized, errNotAuthenticated)
	if r := Send(t, c, http.MethodPost, base+"/api/auth/register", unitRegister); r.Status != http.StatusOK {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	WantError(t, Send(t, c, http.MethodGet, base+path, ""), http.StatusForbidden, "Email not verified")

	if err := svc.FlushMail(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, ok := mailer.Last()
	if !ok || m.Kind != mail.KindVerifyEmail || m.To != unitEmail {
		t.Fatalf("no verification mail to %s: %+v", unitEmail, m)
	}
	tok := strings.TrimPrefix(m.Link, appURL+"/verify-email/")
	if r := Send(t, c, http.MethodGet, base+"/api/auth/verify-email/"+tok, ""); r.Status != http.StatusOK {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}
	r := Send(t, c, http.MethodGet, base+path, "")
	if r.Status != http.StatusOK || r.Body != want {
		t.Errorf("verified: got %d %q, want 200 %q", r.Status, r.Body, want)
	}
}

// NewRateLimit returns svc's rate limit called name, of max requests a
// minute keyed by the client address core chooses and answering core's 429
// text, for a route behind a framework module's RateLimit middleware. It is
// closed when the test ends; an error creating it fails the test.
// CheckRateLimit wants a limit of 2.
func NewRateLimit(t testing.TB, svc *auth.Service, name string, max int) *auth.RateLimit {
	t.Helper()
	rl, err := svc.NewRateLimit(name, auth.Limit{Max: max, Window: time.Minute}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rl.Close() })
	return rl
}

// NewRequestLimiter returns a limit of max requests a minute over a
// ratelimit.Limiter alone (no Service), on a memory store whose clock
// stands still where NewService's does, so that CheckRateLimit checks a
// framework module's RateLimit middleware over it as over NewRateLimit's.
func NewRequestLimiter(t testing.TB, name string, max int) *auth.RequestLimiter {
	t.Helper()
	now := func() time.Time { return unitNow }
	store := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{Now: now})
	t.Cleanup(func() { _ = store.Close() })
	lim, err := ratelimit.New(ratelimit.Config{MaxAttempts: max, Window: time.Minute, Store: store, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	rl, err := auth.NewRequestLimiter(auth.RequestLimiterConfig{Limiter: lim, Name: name, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return rl
}

// CheckRateLimit checks a route behind a framework module's RateLimit
// middleware, on a limit of 2 requests a minute of a Service from
// NewService (its clock stands still). GET url answers 200 and exactly
// want twice, with X-RateLimit-Remaining 1 then 0 and X-RateLimit-Reset
// the window's end, 2031-03-14T15:10:26.000Z. The third request gets core's
// 429: {"error":"Too many requests. Try again later.", "retryAfter": the
// same instant}, Retry-After 60, X-RateLimit-Remaining 0 and the headers
// of WantJSONHeaders.
func CheckRateLimit(t testing.TB, url, want string) {
	t.Helper()
	const reset = "2031-03-14T15:10:26.000Z"
	c := &http.Client{}
	for i, remaining := range []string{"1", "0"} {
		r := Send(t, c, http.MethodGet, url, "")
		if r.Status != http.StatusOK || r.Body != want {
			t.Fatalf("request %d: %d %q, want 200 %q", i+1, r.Status, r.Body, want)
		}
		if got := r.Header.Get("X-RateLimit-Remaining"); got != remaining {
			t.Errorf("request %d: X-RateLimit-Remaining %q, want %q", i+1, got, remaining)
		}
		if got := r.Header.Get("X-RateLimit-Reset"); got != reset {
			t.Errorf("request %d: X-RateLimit-Reset %q, want %s", i+1, got, reset)
		}
	}
	r := Send(t, c, http.MethodGet, url, "")
	if r.Status != http.StatusTooManyRequests || r.JSON["error"] != "Too many requests. Try again later." ||
		r.JSON["retryAfter"] != reset || r.JSON["code"] != "too_many_requests" || len(r.JSON) != 3 {
		t.Errorf("third request: %d %s, want 429 {error, code too_many_requests, retryAfter}", r.Status, r.Body)
	}
	WantJSONHeaders(t, r.Header)
	if got := r.Header.Get("Retry-After"); got != "60" {
		t.Errorf("Retry-After %q, want 60", got)
	}
	if got := r.Header.Get("X-RateLimit-Remaining"); got != "0" {
		t.Errorf("X-RateLimit-Remaining %q, want 0", got)
	}
}

// CheckMountedAt checks a framework module's routes served under
// base+prefix (prefix "/auth", say): a new browser registers
// ada@example.com, logs in ({"success": true}) and asks who it is (her
// address) there, with 200 each time, while POST /api/login without the
// prefix gets 404. It returns the browser, signed in, for the caller's own
// checks.
func CheckMountedAt(t testing.TB, base, prefix string) *http.Client {
	t.Helper()
	c := Browser(t)
	at := base + prefix
	if r := Send(t, c, http.MethodPost, at+"/api/auth/register", unitRegister); r.Status != http.StatusOK {
		t.Fatalf("register under %s: %d %s", prefix, r.Status, r.Body)
	}
	r := Send(t, c, http.MethodPost, at+"/api/login", `{"email":"ada@example.com","password":"correct horse battery staple"}`)
	if r.Status != http.StatusOK || r.JSON["success"] != true {
		t.Errorf("login under %s: %d %s, want 200 {success:true}", prefix, r.Status, r.Body)
	}
	if r := Send(t, c, http.MethodGet, at+"/api/auth/me", ""); r.Status != http.StatusOK || r.JSON["email"] != unitEmail {
		t.Errorf("me under %s: %d %s, want 200 with email %s", prefix, r.Status, r.Body, unitEmail)
	}
	if r := Send(t, c, http.MethodPost, base+"/api/login", `{}`); r.Status != http.StatusNotFound {
		t.Errorf("/api/login without the prefix: %d, want 404", r.Status)
	}
	return c
}
