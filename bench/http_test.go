package bench_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/authkit-go/authkit/bench/internal/server"
	"github.com/authkit-go/authkit/core/password"
)

// newEnv returns the comparison app's Service with one signed-in user,
// closed when tb ends.
func newEnv(tb testing.TB, hasher password.Hasher) *server.Env {
	tb.Helper()
	env, err := server.NewEnv(context.Background(), hasher)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = env.Service.Close(context.Background()) })
	return env
}

// BenchmarkHTTP serves one GET in process, without a network: the same
// handler bare (route=bare), behind RequireUser with a valid session cookie
// (route=auth), on each framework (fw). Every
// request carries the cookie. cmd/loadbench measures the same app under
// load.
func BenchmarkHTTP(b *testing.B) {
	env := newEnv(b, password.ForTesting())
	for _, fw := range server.Frameworks {
		for _, route := range []string{"bare", "auth"} {
			b.Run("fw="+fw+"/route="+route, func(b *testing.B) {
				switch fw {
				case "nethttp":
					benchHandler(b, server.NetHTTP(env), env, route)
				case "gin":
					benchHandler(b, server.Gin(env), env, route)
				case "fiber":
					benchFiber(b, env, route)
				}
			})
		}
	}
}

// discardWriter is a reusable http.ResponseWriter that keeps the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(p), nil
}
func (w *discardWriter) WriteHeader(s int) { w.status = s }

func benchHandler(b *testing.B, h http.Handler, env *server.Env, route string) {
	r, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/"+route, nil)
	if err != nil {
		b.Fatal(err)
	}
	r.Header.Set("Cookie", env.CookieHeader())
	r.RemoteAddr = "127.0.0.1:40000"
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		w.status = 0
		h.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			b.Fatalf("GET /%s: status %d", route, w.status)
		}
	}
}

func benchFiber(b *testing.B, env *server.Env, route string) {
	h := server.Fiber(env).Handler()
	cookie := []byte(strings.TrimPrefix(env.CookieHeader(), "authkit_session="))
	var ctx fasthttp.RequestCtx
	b.ReportAllocs()
	for b.Loop() {
		// What fasthttp's server does between two requests of a
		// connection; RequireUser's user context lives in the user values.
		ctx.ResetUserValues()
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod(http.MethodGet)
		ctx.Request.SetRequestURI("/" + route)
		ctx.Request.Header.SetCookieBytesKV([]byte("authkit_session"), cookie)
		h(&ctx)
		if ctx.Response.StatusCode() != http.StatusOK {
			b.Fatalf("GET /%s: status %d %s", route, ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}
