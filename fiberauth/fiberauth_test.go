package fiberauth_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/log"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/fiberauth"
)

// newApp returns a fiber app with authkit's settings and no banner.
func newApp(svc *auth.Service, cfg fiber.Config) *fiber.App {
	cfg.DisableStartupMessage = true
	return fiber.New(fiberauth.ApplyConfig(svc, cfg))
}

// serveRoutes serves fiberauth's routes, and nothing else, on a Service
// from newService and an app from newApp, and returns the base URL.
func serveRoutes(t *testing.T) string {
	t.Helper()
	svc, _ := newService(t)
	app := newApp(svc, fiber.Config{})
	fiberauth.Register(app, svc)
	return serve(t, app)
}

// serve runs app on 127.0.0.1:0 until the test ends and returns its base
// URL.
func serve(t *testing.T, app *fiber.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- app.Listener(ln) }()
	t.Cleanup(func() {
		if err := app.ShutdownWithTimeout(5 * time.Second); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		// A shutdown that came before Serve took the listener leaves it
		// open: closing it ends Serve either way.
		_ = ln.Close()
		<-done
	})
	return "http://" + ln.Addr().String()
}

// TestFlows runs the flow suite on fiber, the hashes at no cost
// (FastHashing): nethttpauth's run proves the flows with bcrypt.
func TestFlows(t *testing.T) {
	h := authtest.OnMemory(func(t *testing.T, svc *auth.Service) string {
		app := newApp(svc, fiber.Config{})
		fiberauth.Register(app, svc)
		return serve(t, app)
	})
	h.FastHashing = true
	authtest.Run(t, h)
}

// newService returns a Service on a fresh memory store for the unit tests
// of this package.
func newService(t testing.TB) (*auth.Service, *mail.Capture) {
	t.Helper()
	return authtest.NewService(t, store.NewMemory(store.MemoryConfig{}))
}

const register = `{"email":"ada@example.com","password":"correct horse battery staple","name":"Ada"}`

func hello(c *fiber.Ctx) error {
	u, ok := fiberauth.CurrentUser(c)
	if !ok {
		return c.Status(http.StatusInternalServerError).SendString("no user in context")
	}
	return c.SendString("hello " + u.Email)
}

// servePrivate serves svc's routes and hello at /private behind
// RequireUser, and returns the base URL.
func servePrivate(t *testing.T, svc *auth.Service) string {
	t.Helper()
	app := newApp(svc, fiber.Config{})
	fiberauth.Register(app, svc)
	app.Get("/private", fiberauth.RequireUser(svc), hello)
	return serve(t, app)
}

func TestRequireUser(t *testing.T) {
	svc, _ := newService(t)
	authtest.CheckRequireUser(t, servePrivate(t, svc), "/private", "hello ada@example.com")
}

// TestRequireUserWithTokens: in token mode RequireUser takes the access
// token of a client without cookies.
func TestRequireUserWithTokens(t *testing.T) {
	svc, _ := authtest.NewService(t, store.NewMemory(store.MemoryConfig{}), authtest.TokenMode)
	authtest.CheckRequireUserWithTokens(t, servePrivate(t, svc), "/private", "hello ada@example.com")
}

// TestRequireTwoFactor: with Config.RequireTwoFactor past its grace
// period, RequireUser refuses an account without 2FA with
// two_factor_required, and lets it through once 2FA is on.
func TestRequireTwoFactor(t *testing.T) {
	svc, _ := authtest.NewService(t, store.NewMemory(store.MemoryConfig{}), authtest.TwoFactorRequiredNow)
	authtest.CheckRequireTwoFactor(t, servePrivate(t, svc), "/private", "hello ada@example.com")
}

func TestCurrentUserOutsideRequireUser(t *testing.T) {
	svc, _ := newService(t)
	app := newApp(svc, fiber.Config{})
	app.Get("/", hello)
	r := authtest.Send(t, &http.Client{}, http.MethodGet, serve(t, app)+"/", "")
	if r.Status != http.StatusInternalServerError || r.Body != "no user in context" {
		t.Errorf("got %d %q, want CurrentUser to report no user", r.Status, r.Body)
	}
}

func TestRequireVerifiedEmail(t *testing.T) {
	svc, mailer := newService(t)
	app := newApp(svc, fiber.Config{})
	fiberauth.Register(app, svc)
	app.Get("/verified", fiberauth.RequireVerifiedEmail(svc), hello)
	authtest.CheckRequireVerifiedEmail(t, svc, mailer, serve(t, app), "/verified", "hello ada@example.com")
}

func TestRateLimit(t *testing.T) {
	svc, _ := newService(t)
	rl := authtest.NewRateLimit(t, svc, "search", 2)
	app := newApp(svc, fiber.Config{})
	app.Get("/", fiberauth.RateLimit(rl), func(c *fiber.Ctx) error { return c.SendString("ok") })
	authtest.CheckRateLimit(t, serve(t, app)+"/", "ok")
}

// TestRateLimitWithoutService: the middleware over a ratelimit.Limiter
// alone, in an app with no Service, answers as over a Service's limit.
func TestRateLimitWithoutService(t *testing.T) {
	app := fiber.New()
	app.Get("/", fiberauth.RateLimit(authtest.NewRequestLimiter(t, "search", 2)), func(c *fiber.Ctx) error { return c.SendString("ok") })
	authtest.CheckRateLimit(t, serve(t, app)+"/", "ok")
}

// TestRateLimitKeysOnTheSocketPeer: X-Forwarded-For from an untrusted peer
// does not give a client a fresh limit (fiber's c.IP() is not used).
func TestRateLimitKeysOnTheSocketPeer(t *testing.T) {
	svc, _ := newService(t)
	rl := authtest.NewRateLimit(t, svc, "search", 1)
	app := newApp(svc, fiber.Config{ProxyHeader: fiber.HeaderXForwardedFor})
	app.Get("/", fiberauth.RateLimit(rl), func(c *fiber.Ctx) error { return c.SendString("ok") })
	base := serve(t, app)
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		req, err := http.NewRequest(http.MethodGet, base+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i+1))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("request %d: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
}

func TestRegisterUnderGroup(t *testing.T) {
	svc, _ := newService(t)
	app := newApp(svc, fiber.Config{})
	auth := app.Group("/auth")
	fiberauth.Register(auth, svc)
	auth.Get("/hello", fiberauth.RequireUser(svc), hello) // the app's own route in the same group
	base := serve(t, app)
	c := authtest.CheckMountedAt(t, base, "/auth")
	if r := authtest.Send(t, c, http.MethodGet, base+"/auth/hello", ""); r.Status != http.StatusOK || r.Body != "hello ada@example.com" {
		t.Errorf("the app's route under /auth: %d %q", r.Status, r.Body)
	}
	// fiber's 404 outside the group is core's JSON error.
	authtest.WantError(t, authtest.Send(t, c, http.MethodPost, base+"/api/login", `{}`), http.StatusNotFound, "Not found")
}

func TestMethodNotAllowed(t *testing.T) {
	svc, _ := newService(t)
	app := newApp(svc, fiber.Config{})
	fiberauth.Register(app, svc)
	app.Post("/app/only-post", func(c *fiber.Ctx) error { return c.SendString("ok") })
	base := serve(t, app)
	c := authtest.Browser(t)
	for _, tc := range []struct{ method, path, allow string }{
		{http.MethodGet, "/api/login", "POST"},
		{http.MethodPut, "/api/auth/me", "GET, HEAD"}, // GET routes answer HEAD: the same Allow as net/http and gin
		{http.MethodDelete, "/api/auth/verify-email/abc", "GET, HEAD"},
		{http.MethodGet, "/api/auth/reset-password/abc", "POST"},
		{http.MethodOptions, "/api/2fa/setup", "POST"},
		{http.MethodGet, "/app/only-post", "POST"}, // fiber's own 405 (and Allow), through ErrorHandler
	} {
		r := authtest.Send(t, c, tc.method, base+tc.path, "")
		authtest.WantError(t, r, http.StatusMethodNotAllowed, "Method not allowed")
		if got := r.Header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
}

func TestHead(t *testing.T) {
	svc, _ := newService(t)
	app := newApp(svc, fiber.Config{})
	fiberauth.Register(app, svc)
	r := authtest.Send(t, authtest.Browser(t), http.MethodHead, serve(t, app)+"/api/auth/me", "")
	if r.Status != http.StatusUnauthorized || r.Body != "" {
		t.Errorf("HEAD /api/auth/me: %d %q, want 401 without a body", r.Status, r.Body)
	}
	authtest.WantJSONHeaders(t, r.Header)
}

func TestNotFound(t *testing.T) {
	base := serveRoutes(t)
	c := authtest.Browser(t)
	for _, path := range []string{"/", "/api/nope", "/api/auth/verify-email/", "/api/auth/verify-email/a/b"} {
		authtest.WantError(t, authtest.Send(t, c, http.MethodGet, base+path, ""), http.StatusNotFound, "Not found")
	}
}

func TestErrorHandler(t *testing.T) {
	svc, _ := newService(t)
	app := newApp(svc, fiber.Config{})
	app.Get("/teapot", func(c *fiber.Ctx) error { return fiber.NewError(http.StatusTeapot, "short and stout") })
	app.Get("/bare", func(c *fiber.Ctx) error { return &fiber.Error{Code: http.StatusConflict} })
	app.Get("/plain", func(c *fiber.Ctx) error { return io.ErrUnexpectedEOF })
	base := serve(t, app)
	var logged bytes.Buffer
	log.SetOutput(&logged)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	c := &http.Client{}
	authtest.WantError(t, authtest.Send(t, c, http.MethodGet, base+"/teapot", ""), http.StatusTeapot, "short and stout")
	authtest.WantError(t, authtest.Send(t, c, http.MethodGet, base+"/bare", ""), http.StatusConflict, "Conflict")
	authtest.WantError(t, authtest.Send(t, c, http.MethodGet, base+"/plain", ""), http.StatusInternalServerError, "Internal server error")
	if want := "fiberauth: GET /plain: unexpected EOF"; !strings.Contains(logged.String(), want) {
		t.Errorf("log %q lacks %q", logged.String(), want)
	}
}

func TestApplyConfigKeepsTheAppsSettings(t *testing.T) {
	svc, _ := newService(t)
	own := func(c *fiber.Ctx, err error) error { return c.Status(599).SendString("own") }
	cfg := fiberauth.ApplyConfig(svc, fiber.Config{ReadBufferSize: 8192, ErrorHandler: own, BodyLimit: 1 << 20})
	if cfg.ReadBufferSize != 8192 || cfg.BodyLimit != 1<<20 || cfg.ErrorHandler == nil {
		t.Fatalf("ApplyConfig changed the app's settings: %+v", cfg)
	}
	cfg.DisableStartupMessage = true
	app := fiber.New(cfg)
	r := authtest.Send(t, &http.Client{}, http.MethodGet, serve(t, app)+"/nope", "")
	if r.Status != 599 || r.Body != "own" {
		t.Errorf("the app's ErrorHandler was replaced: %d %q", r.Status, r.Body)
	}
	cfg = fiberauth.ApplyConfig(svc, fiber.Config{})
	if cfg.ReadBufferSize != fiberauth.ReadBufferSize || cfg.ErrorHandler == nil || cfg.BodyLimit != 0 {
		t.Errorf("ApplyConfig on a zero Config: ReadBufferSize %d, ErrorHandler set %v, BodyLimit %d",
			cfg.ReadBufferSize, cfg.ErrorHandler != nil, cfg.BodyLimit)
	}
}

func TestRequestBodyLimit(t *testing.T) {
	// A body under fiber's BodyLimit reaches core, which reads at most its
	// own limit and answers 413.
	base := serveRoutes(t)
	body := `{"email":"` + strings.Repeat("a", 16<<10) + `@example.com","password":"x"}`
	authtest.WantError(t, authtest.Send(t, authtest.Browser(t), http.MethodPost, base+"/api/login", body), http.StatusRequestEntityTooLarge, "Request body too large")
}

// rawRequest writes req on a fresh connection to base and reads one
// response.
func rawRequest(t *testing.T, base, req string) authtest.Reply {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := authtest.ReadReply(resp)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMalformedRequest(t *testing.T) {
	base := serveRoutes(t)
	for _, req := range []string{
		"GARBAGE\r\n\r\n",
		"POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
	} {
		authtest.WantError(t, rawRequest(t, base, req), http.StatusBadRequest, "Bad Request")
	}
}

func TestBodyOverFibersLimit(t *testing.T) {
	// fasthttp refuses a body over BodyLimit before any handler runs: the
	// ErrorHandler answers it like core.
	svc, _ := newService(t)
	app := newApp(svc, fiber.Config{})
	fiberauth.Register(app, svc)
	base := serve(t, app)
	// The announced length is over fiber's default 4 MiB; the body itself
	// is never sent, as a client waiting for 100-continue would.
	req := "POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n"
	authtest.WantError(t, rawRequest(t, base, req), http.StatusRequestEntityTooLarge, "Request body too large")

	// A smaller BodyLimit, with the body sent.
	app = newApp(svc, fiber.Config{BodyLimit: 1024})
	fiberauth.Register(app, svc)
	body := `{"email":"` + strings.Repeat("a", 2048) + `"}`
	authtest.WantError(t, authtest.Send(t, &http.Client{}, http.MethodPost, serve(t, app)+"/api/login", body),
		http.StatusRequestEntityTooLarge, "Request body too large")
}

func TestStreamRequestBody(t *testing.T) {
	// With StreamRequestBody, a body over BodyLimit reaches the handler as
	// a stream: the module reads at most core's limit of it.
	svc, _ := newService(t)
	app := newApp(svc, fiber.Config{StreamRequestBody: true, BodyLimit: 1024})
	fiberauth.Register(app, svc)
	base := serve(t, app)
	c := authtest.Browser(t)
	reg := `{"email":"ada@example.com","password":"correct horse battery staple","name":"` + strings.Repeat("A", 150) + `"}` +
		strings.Repeat(" ", 2048) // over BodyLimit, under core's 16 KiB
	if r := authtest.Send(t, c, http.MethodPost, base+"/api/auth/register", reg); r.Status != http.StatusOK {
		t.Fatalf("register with a streamed body: %d %s", r.Status, r.Body)
	}
	if r := authtest.Send(t, c, http.MethodGet, base+"/api/auth/me", ""); r.JSON["name"] != strings.Repeat("A", 150) {
		t.Errorf("me: %d %s", r.Status, r.Body)
	}
	body := `{"email":"` + strings.Repeat("a", 100<<10) + `@example.com","password":"x"}`
	authtest.WantError(t, authtest.Send(t, c, http.MethodPost, base+"/api/login", body), http.StatusRequestEntityTooLarge, "Request body too large")
}

// TestPathValue: a parameter is unescaped once, as net/http's ServeMux
// does, whether or not fiber unescaped the path itself.
func TestPathValue(t *testing.T) {
	svc, _ := newService(t)
	for _, unescape := range []bool{false, true} {
		app := newApp(svc, fiber.Config{UnescapePath: unescape})
		app.Get("/p/:v", func(c *fiber.Ctx) error { return c.SendString(fiberauth.Request(c).PathValue("v")) })
		base := serve(t, app)
		for path, want := range map[string]string{
			"/p/abc-_~": "abc-_~",
			"/p/%41b":   "Ab",
			"/p/%2541":  "%41",
			"/p/%zz":    "%zz", // not an escape: kept as sent
		} {
			if unescape && path == "/p/%zz" {
				continue // fiber's own unescaping decides
			}
			r := rawRequest(t, base, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n") // Go's client refuses %zz
			if r.Status != http.StatusOK || r.Body != want {
				t.Errorf("UnescapePath %v: %s: %d %q, want %q", unescape, path, r.Status, r.Body, want)
			}
		}
	}
}

func TestLargeHeaders(t *testing.T) {
	base := serveRoutes(t)
	c := &http.Client{}
	// A 5 KB token in the URL (over fiber's default buffer) reaches core.
	authtest.WantError(t, authtest.Send(t, c, http.MethodGet, base+"/api/auth/verify-email/"+strings.Repeat("A", 5000), ""),
		http.StatusBadRequest, "Invalid or expired verification link")
	// A 100 KB one is over ReadBufferSize: JSON 431, not fasthttp's text.
	authtest.WantError(t, authtest.Send(t, c, http.MethodGet, base+"/api/auth/verify-email/"+strings.Repeat("A", 100_000), ""),
		http.StatusRequestHeaderFieldsTooLarge, "Request Header Fields Too Large")
}

// TestSetCookieLines checks that the cookies go out as net/http formats
// them: each raw line is exactly what net/http writes for the cookie it
// holds.
func TestSetCookieLines(t *testing.T) {
	base := serveRoutes(t)
	c := authtest.Browser(t)
	r := authtest.Send(t, c, http.MethodPost, base+"/api/auth/register", register)
	lines := r.Header.Values("Set-Cookie")
	r2 := authtest.Send(t, c, http.MethodPost, base+"/api/auth/logout", "")
	lines = append(lines, r2.Header.Values("Set-Cookie")...)
	if len(lines) != 4 { // the session and the device cookie on register; session and 2fa_pending cleared on logout
		t.Fatalf("Set-Cookie lines %q, want 4", lines)
	}
	for _, line := range lines {
		ck, err := http.ParseSetCookie(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if ck.String() != line {
			t.Errorf("Set-Cookie %q, net/http writes %q", line, ck.String())
		}
	}
	if !strings.HasPrefix(lines[0], "authkit_session=") || !strings.HasSuffix(lines[0], "; Path=/; HttpOnly; SameSite=Lax") {
		t.Errorf("session cookie %q", lines[0])
	}
}

// TestRequestCopies reads requests through fiberauth.Request, keeps what
// it got past each handler, and checks it only after later requests on the
// same connection had fasthttp and fiber reuse their buffers.
func TestRequestCopies(t *testing.T) {
	svc, _ := newService(t)
	app := newApp(svc, fiber.Config{})
	type seen struct {
		method, host, header, param, cookie, remote string
		body                                        []byte
	}
	const n = 24
	kept := make(chan seen, n)
	app.All("/echo/:token", func(c *fiber.Ctx) error {
		r := fiberauth.Request(c)
		ck, _ := r.Cookie("k")
		body, err := r.Body(1 << 10)
		if err != nil {
			return err
		}
		kept <- seen{r.Method(), r.Host(), r.Header("X-Test"), r.PathValue("token"), ck, r.RemoteAddr(), body}
		return c.SendStatus(http.StatusNoContent)
	})
	base := serve(t, app)
	c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer c.CloseIdleConnections()
	methods := []string{http.MethodPost, http.MethodPatch, http.MethodPut}
	// Values of other lengths and bytes each time; every third one
	// escaped, which PathValue unescapes as net/http does.
	value := func(i int) string {
		v := fmt.Sprintf("%d-%s", i, strings.Repeat(string(rune('a'+i)), 1+i%5))
		if i%3 == 1 {
			v += "-%41"
		}
		return v
	}
	for i := range n {
		req, err := http.NewRequest(methods[i%3], base+"/echo/"+value(i), strings.NewReader("body-"+value(i)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Add("X-Test", "a-"+value(i))
		req.Header.Add("x-test", "b")
		req.AddCookie(&http.Cookie{Name: "k", Value: "cookie-" + value(i)})
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("request %d: %d", i+1, resp.StatusCode)
		}
	}
	close(kept)
	host := strings.TrimPrefix(base, "http://")
	i := 0
	for got := range kept {
		want := seen{methods[i%3], host, "a-" + value(i) + ", b", strings.ReplaceAll(value(i), "%41", "A"),
			"cookie-" + value(i), "", []byte("body-" + value(i))}
		if !strings.HasPrefix(got.remote, "127.0.0.1:") {
			t.Errorf("request %d: RemoteAddr %q, want 127.0.0.1:port", i+1, got.remote)
		}
		got.remote = ""
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("request %d: kept %q, want %q", i+1, got, want)
		}
		i++
	}
	if i != n {
		t.Errorf("%d requests seen, want %d", i, n)
	}
}

// TestWriteHeaders: an app's own fiber handler calls the typed API and
// puts the visit's cookies and rate-limit headers on its response; the
// session it sets then opens RequireUser.
func TestWriteHeaders(t *testing.T) {
	svc, _ := newService(t)
	app := newApp(svc, fiber.Config{})
	fiberauth.Register(app, svc)
	app.Post("/my-login", func(c *fiber.Ctx) error {
		v := svc.Visit(fiberauth.Request(c))
		_, err := svc.Login(c.UserContext(), v, auth.LoginInput{Email: c.FormValue("email"), Password: c.FormValue("password")})
		fiberauth.WriteHeaders(c, v)
		if err != nil {
			e := auth.AsError(err)
			return c.Status(e.Status).SendString(string(e.Code))
		}
		return c.SendString("welcome")
	})
	app.Get("/hello", fiberauth.RequireUser(svc), hello)
	base := serve(t, app)
	reg := authtest.Browser(t)
	if r := authtest.Send(t, reg, http.MethodPost, base+"/api/auth/register", register); r.Status != http.StatusOK {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	c := authtest.Browser(t)
	form := "application/x-www-form-urlencoded"
	r := authtest.Send(t, c, http.MethodPost, base+"/my-login", "email=ada%40example.com&password=wrong+password+123", "Content-Type", form)
	if r.Status != http.StatusUnauthorized || r.Body != "invalid_credentials" || r.Header.Get("X-RateLimit-Remaining") == "" {
		t.Fatalf("wrong password: %d %q, X-RateLimit-Remaining %q; want 401 invalid_credentials and the limit's headers",
			r.Status, r.Body, r.Header.Get("X-RateLimit-Remaining"))
	}
	r = authtest.Send(t, c, http.MethodPost, base+"/my-login", "email=ada%40example.com&password=correct+horse+battery+staple", "Content-Type", form)
	if r.Status != http.StatusOK || r.Body != "welcome" || len(r.Header.Values("Set-Cookie")) != 2 ||
		!strings.HasPrefix(r.Header.Values("Set-Cookie")[1], auth.DeviceCookie+"=") {
		t.Fatalf("login: %d %q, Set-Cookie %q; want 200 welcome, a session cookie and the device cookie", r.Status, r.Body, r.Header.Values("Set-Cookie"))
	}
	if r := authtest.Send(t, c, http.MethodGet, base+"/hello", ""); r.Status != http.StatusOK || r.Body != "hello ada@example.com" {
		t.Fatalf("RequireUser after the app's own login: %d %q", r.Status, r.Body)
	}
}

type ctxKey struct{}

// TestHTTPHandler: a net/http handler mounted through HTTPHandler gets
// the request as sent (method, path, query, header, body, cookie) and
// fiber's UserContext as its context, and its status, headers, cookies
// and body reach the client.
func TestHTTPHandler(t *testing.T) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(func(c *fiber.Ctx) error {
		c.SetUserContext(context.WithValue(c.UserContext(), ctxKey{}, "from fiber"))
		return c.Next()
	})
	app.All("/x/*", fiberauth.HTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ck, _ := r.Cookie("c")
		if _, ok := r.Context().(interface{ IsTLS() bool }); ok {
			t.Error("the handler's context is fasthttp's RequestCtx, not the UserContext")
		}
		http.SetCookie(w, &http.Cookie{Name: "set", Value: "1", HttpOnly: true})
		w.Header().Set("X-Seen", fmt.Sprintf("%s %s %s %s %s %v", r.Method, r.URL.Path, r.URL.Query().Get("q"), r.Header.Get("X-In"), ck.Value, r.Context().Value(ctxKey{})))
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write(append([]byte("got "), body...))
	})))
	req := httptest.NewRequest(http.MethodPost, "/x/y?q=1", strings.NewReader("body"))
	req.Header.Set("X-In", "in")
	req.AddCookie(&http.Cookie{Name: "c", Value: "v"})
	resp, err := app.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTeapot || string(got) != "got body" ||
		resp.Header.Get("X-Seen") != "POST /x/y 1 in v from fiber" || !strings.Contains(resp.Header.Get("Set-Cookie"), "set=1") {
		t.Fatalf("%d %q %q %q", resp.StatusCode, got, resp.Header.Get("X-Seen"), resp.Header.Get("Set-Cookie"))
	}
}

// TestAppHandlers: an app's own handlers written with Visit, WriteHeaders
// and WriteError answer as the JSON routes do.
func TestAppHandlers(t *testing.T) {
	authtest.CheckAppHandlers(t, store.NewMemory(store.MemoryConfig{}), func(t *testing.T, svc *auth.Service) string {
		app := newApp(svc, fiber.Config{})
		fiberauth.Register(app, svc)
		app.Post("/app/login", func(c *fiber.Ctx) error {
			var in authtest.AppLogin
			_ = json.Unmarshal(c.Body(), &in)
			v := fiberauth.Visit(c, svc)
			if _, err := svc.Login(c.UserContext(), v, auth.LoginInput{Email: in.Email, Password: in.Password}); err != nil {
				return fiberauth.WriteError(c, svc, v, err)
			}
			fiberauth.WriteHeaders(c, v)
			return c.SendString("ok")
		})
		app.Get("/app/me", func(c *fiber.Ctx) error {
			v := fiberauth.Visit(c, svc)
			u, err := svc.CurrentUser(c.UserContext(), v)
			if err != nil {
				return fiberauth.WriteError(c, svc, v, err)
			}
			fiberauth.WriteHeaders(c, v)
			return c.SendString(u.Email)
		})
		return serve(t, app)
	})
}

// TestAPIKeys: RequireUser lets a personal API key through with its
// credential in the user context, RequireScope refuses one without the
// scope (403 insufficient_scope).
func TestAPIKeys(t *testing.T) {
	svc, _ := authtest.NewService(t, store.NewMemory(store.MemoryConfig{}), authtest.APIKeys)
	app := newApp(svc, fiber.Config{})
	fiberauth.Register(app, svc)
	credential := func(c *fiber.Ctx) error { return c.SendString(authtest.Credential(c.UserContext())) }
	app.Get("/private", fiberauth.RequireUser(svc), credential)
	app.Get("/write", fiberauth.RequireUser(svc), fiberauth.RequireScope(svc, "write"), credential)
	authtest.CheckAPIKeys(t, serve(t, app), "/private", "/write")
}
