package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/password"
)

func newTestEnv(t *testing.T) *Env {
	t.Helper()
	env, err := NewEnv(context.Background(), password.ForTesting())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Service.Close(context.Background()) })
	return env
}

// serve returns a base URL serving fw's app on the loopback.
func serve(t *testing.T, env *Env, fw string) string {
	t.Helper()
	switch fw {
	case "nethttp":
		s := httptest.NewServer(NetHTTP(env))
		t.Cleanup(s.Close)
		return s.URL
	case "gin":
		s := httptest.NewServer(Gin(env))
		t.Cleanup(s.Close)
		return s.URL
	}
	app := Fiber(env)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String()
}

func do(t *testing.T, method, url, cookie, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestApp checks what the load runs rely on, on every framework: /bare and
// /auth answer the same body, /auth only with the session cookie, and the
// login body signs in.
func TestApp(t *testing.T) {
	env := newTestEnv(t)
	for _, fw := range Frameworks {
		t.Run(fw, func(t *testing.T) {
			base := serve(t, env, fw)
			for _, c := range []struct {
				method, path, cookie, body string
				status                     int
				want                       string
			}{
				{"GET", "/bare", "", "", 200, Body},
				{"GET", "/auth", env.CookieHeader(), "", 200, Body},
				{"GET", "/auth", "", "", 401, `{"error":"Not authenticated","code":"not_authenticated"}`},
				{"GET", "/auth", "a=1; " + env.CookieHeader() + "; b=2", "", 200, Body},
				{"GET", "/auth", "authkit_session=" + env.Cookie[:len(env.Cookie)-2] + "AA", "", 401, `{"error":"Not authenticated","code":"not_authenticated"}`},
				{"POST", "/api/login", "", env.LoginBody, 200, `{"success":true}`},
				{"POST", "/hash", "", env.LoginBody, 204, ""},
				{"POST", "/api/login", "", strings.Replace(env.LoginBody, "staple", "stapler", 1), 401, `{"error":"Invalid credentials","code":"invalid_credentials"}`},
			} {
				if c.path == "/hash" && fw != "nethttp" {
					continue
				}
				status, body := do(t, c.method, base+c.path, c.cookie, c.body)
				if status != c.status || body != c.want {
					t.Errorf("%s %s (cookie %t): %d %q, want %d %q", c.method, c.path, c.cookie != "", status, body, c.status, c.want)
				}
			}
		})
	}
}
