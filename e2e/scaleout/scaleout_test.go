// Package scaleout proves that two example server processes sharing one
// PostgreSQL database and one Redis behave as one service, also behind a
// round-robin load balancer.
package scaleout

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/authkit-go/authkit/e2e/servertest"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

type reply struct {
	status int
	body   map[string]any
}

func post(t *testing.T, base, path, body string) reply {
	t.Helper()
	resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r reply
	r.status = resp.StatusCode
	_ = json.NewDecoder(resp.Body).Decode(&r.body)
	return r
}

// startPair starts two processes of the net/http example as one service:
// they share the secrets, a PostgreSQL schema and a Redis key prefix of
// their own (named for name, and removed when t ends).
func startPair(t *testing.T, name string) (a, b *servertest.Server) {
	t.Helper()
	pgURL := servertest.Need(t, "AUTHKIT_TEST_POSTGRES")
	redisURL := servertest.Need(t, "AUTHKIT_TEST_REDIS")
	_, _, databaseURL := servertest.PostgresSchema(t, pgURL, name)
	prefix := servertest.RedisPrefix(t, redisURL, name)
	env := append(servertest.Secrets(t), "DATABASE_URL="+databaseURL, "REDIS_URL="+redisURL, "REDIS_PREFIX="+prefix)
	return servertest.Start(t, "nethttp", env...), servertest.Start(t, "nethttp", env...)
}

// TestTwoServersShareLimitsAndLinks runs two processes of the net/http
// example on one PostgreSQL schema and one Redis key prefix: login attempts
// sent alternately to both meet one limit, and a reset link used on one is
// dead on the other.
func TestTwoServersShareLimitsAndLinks(t *testing.T) {
	a, b := startPair(t, "scaleout")
	for _, s := range []*servertest.Server{a, b} {
		if !strings.Contains(s.FirstLine, "users: postgres") || !strings.Contains(s.FirstLine, "rate limits: redis") {
			t.Fatalf("first log line %q: want users on postgres and limits on redis", s.FirstLine)
		}
	}

	if r := post(t, a.URL, "/api/auth/register", `{"email":"ada@example.com","password":"correct horse","name":"Ada"}`); r.status != 200 {
		t.Fatalf("register on A: %d %v", r.status, r.body)
	}
	// The per-email login limit is 5 per 15 minutes: five wrong passwords
	// spread over both servers use it up, and the sixth is refused on
	// either.
	servers := []*servertest.Server{a, b, a, b, a}
	for i, s := range servers {
		if r := post(t, s.URL, "/api/login", `{"email":"ada@example.com","password":"wrong password"}`); r.status != 401 {
			t.Fatalf("wrong password %d: %d %v", i+1, r.status, r.body)
		}
	}
	for name, s := range map[string]*servertest.Server{"A": a, "B": b} {
		r := post(t, s.URL, "/api/login", `{"email":"ada@example.com","password":"correct horse"}`)
		if r.status != 429 || r.body["error"] != "Too many login attempts. Try again later." {
			t.Fatalf("sixth attempt on %s: %d %v, want 429", name, r.status, r.body)
		}
	}

	// A reset link mailed by A, used on B, is dead on A.
	if r := post(t, a.URL, "/api/auth/forgot-password", `{"email":"ada@example.com"}`); r.status != 200 {
		t.Fatalf("forgot on A: %d %v", r.status, r.body)
	}
	tok := a.WaitFor(t, regexp.MustCompile(`/reset-password/([A-Za-z0-9_-]+)`))
	body := `{"password":"a new password","confirmPassword":"a new password"}`
	if r := post(t, b.URL, "/api/auth/reset-password/"+tok, body); r.status != 200 {
		t.Fatalf("reset on B: %d %v", r.status, r.body)
	}
	if r := post(t, a.URL, "/api/auth/reset-password/"+tok, body); r.status != 400 || r.body["error"] != "This reset link has already been used" {
		t.Fatalf("same link on A: %d %v", r.status, r.body)
	}
	if err := a.Stop(t); err != nil {
		t.Errorf("A exit: %v", err)
	}
	if err := b.Stop(t); err != nil {
		t.Errorf("B exit: %v", err)
	}
}

// TestPasskeysBehindRoundRobin runs two processes of the net/http example
// on one PostgreSQL schema and one Redis behind a proxy that sends each
// request to the next one in turn, as a round-robin load balancer does: a
// passkey registered and used to sign in, every ceremony begun on one
// process and finished on the other. The servers keep the ceremonies in
// the Redis of their limits.
func TestPasskeysBehindRoundRobin(t *testing.T) {
	a, b := startPair(t, "scaleout_passkeys")
	for _, s := range []*servertest.Server{a, b} {
		if !strings.Contains(s.FirstLine, "passkeys: on for http://localhost:8080 (challenges: redis)") {
			t.Fatalf("first log line %q: want passkeys on with the challenges in redis", s.FirstLine)
		}
	}
	lb := roundRobin(t, a.URL, b.URL)
	// The pages' origin is APP_URL's (http://localhost:8080, the default):
	// the authenticator signs it into the client data, whichever address
	// the requests go to.
	const origin = "http://localhost:8080"

	// Registered on a, whose console mailer logs the verification link: a
	// passkey needs a verified address.
	first := newBrowser(t, a.URL)
	if r := first.post("/api/auth/register", `{"email":"ada@example.com","password":"correct horse","name":"Ada"}`); r.status != 200 {
		t.Fatalf("register: %d %s", r.status, r.raw)
	}
	tok := a.WaitFor(t, regexp.MustCompile(`http://localhost:8080/verify-email/([A-Za-z0-9_-]+)`))
	if r := first.get("/api/auth/verify-email/" + tok); r.status != 200 {
		t.Fatalf("verify-email: %d %s", r.status, r.raw)
	}
	ada := newBrowser(t, lb.URL)
	if r := ada.post("/api/login", `{"email":"ada@example.com","password":"correct horse"}`); r.status != 200 {
		t.Fatalf("login: %d %s", r.status, r.raw)
	}
	key := passkeystest.NewAuthenticator(t)
	begin := ada.post("/api/passkeys/register/begin", "")
	if begin.status != 200 {
		t.Fatalf("register/begin: %d %s", begin.status, begin.raw)
	}
	cred, _ := key.Create([]byte(begin.raw), origin)
	cred["name"] = "Laptop"
	fin := ada.post("/api/passkeys/register/finish", servertest.JSON(t, cred))
	if fin.status != 200 || fin.body["name"] != "Laptop" {
		t.Fatalf("register/finish on the other process: %d %s, want 200 and the passkey", fin.status, fin.raw)
	}
	lb.mustAlternate(t, begin, fin)

	// Passwordless, on a browser of its own.
	other := newBrowser(t, lb.URL)
	begin = other.post("/api/passkeys/login/begin", "")
	if begin.status != 200 {
		t.Fatalf("login/begin: %d %s", begin.status, begin.raw)
	}
	fin = other.post("/api/passkeys/login/finish", servertest.JSON(t, key.Get([]byte(begin.raw), origin, nil)))
	if fin.status != 200 {
		t.Fatalf("login/finish on the other process: %d %s, want 200", fin.status, fin.raw)
	}
	lb.mustAlternate(t, begin, fin)
	// Signed in on both processes.
	for range 2 {
		if r := other.get("/api/auth/me"); r.status != 200 || !strings.Contains(r.raw, `"ada@example.com"`) {
			t.Fatalf("/api/auth/me after the passkey sign-in: %d %s", r.status, r.raw)
		}
	}
	// A finish replayed with its challenge cookie on the other process:
	// the ceremony was taken by the first.
	carol := newBrowser(t, lb.URL)
	begin = carol.post("/api/passkeys/login/begin", "")
	passkeysURL := mustURL(t, lb.URL+"/api/passkeys/login/finish")
	cookies := carol.jar.Cookies(passkeysURL)
	assertion := servertest.JSON(t, key.Get([]byte(begin.raw), origin, nil))
	fin = carol.post("/api/passkeys/login/finish", assertion)
	if fin.status != 200 || len(cookies) != 1 {
		t.Fatalf("second sign-in: %d %s (challenge cookies %v)", fin.status, fin.raw, cookies)
	}
	thief := newBrowser(t, lb.URL)
	thief.jar.SetCookies(passkeysURL, cookies)
	replay := thief.post("/api/passkeys/login/finish", assertion)
	if replay.status != 400 || replay.body["code"] != "passkey_challenge_invalid" {
		t.Fatalf("the finish replayed with its cookie: %d %s, want 400 passkey_challenge_invalid", replay.status, replay.raw)
	}
	lb.mustAlternate(t, fin, replay)
	for _, s := range []*servertest.Server{a, b} {
		if err := s.Stop(t); err != nil {
			t.Errorf("exit: %v", err)
		}
	}
}

// balancer is a reverse proxy that sends each request to the next backend
// in turn, and remembers which one answered each.
type balancer struct {
	URL      string
	mu       sync.Mutex
	next     int
	backends []*url.URL
}

func roundRobin(t *testing.T, backends ...string) *balancer {
	t.Helper()
	lb := &balancer{}
	for _, b := range backends {
		lb.backends = append(lb.backends, mustURL(t, b))
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		lb.mu.Lock()
		i := lb.next
		lb.next = (lb.next + 1) % len(lb.backends)
		lb.mu.Unlock()
		r.SetURL(lb.backends[i])
		r.Out.Host = r.In.Host
		r.Out.Header.Set("X-Backend", strconv.Itoa(i))
	}, ModifyResponse: func(resp *http.Response) error {
		resp.Header.Set("X-Backend", resp.Request.Header.Get("X-Backend"))
		return nil
	}}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	lb.URL = srv.URL
	return lb
}

// mustAlternate fails unless first and second were answered by different
// backends.
func (lb *balancer) mustAlternate(t *testing.T, first, second answer) {
	t.Helper()
	if first.backend == "" || first.backend == second.backend {
		t.Fatalf("answered by backend %q, then by %q: want two", first.backend, second.backend)
	}
}

// browser is a client with a cookie jar.
type browser struct {
	t    *testing.T
	base string
	jar  http.CookieJar
	c    *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: base, jar: jar, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

type answer struct {
	status  int
	raw     string
	body    map[string]any
	backend string
}

func (b *browser) do(method, path, body string) answer {
	b.t.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, raw: string(raw), backend: resp.Header.Get("X-Backend")}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func (b *browser) post(path, body string) answer {
	b.t.Helper()
	return b.do(http.MethodPost, path, body)
}
func (b *browser) get(path string) answer { b.t.Helper(); return b.do(http.MethodGet, path, "") }

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
