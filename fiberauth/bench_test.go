package fiberauth_test

import (
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/authkit-go/authkit/fiberauth"
)

// BenchmarkMe serves GET /api/auth/me for a signed-in user through fiber's
// handler, without a network: the module's translation plus core's session
// check and the store lookup.
func BenchmarkMe(b *testing.B) {
	svc, _ := newService(b)
	app := newApp(svc, fiber.Config{})
	fiberauth.Register(app, svc)
	h := app.Handler()

	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(http.MethodPost)
	ctx.Request.SetRequestURI("/api/auth/register")
	ctx.Request.Header.SetContentType("application/json")
	ctx.Request.SetBodyString(register)
	h(&ctx)
	if ctx.Response.StatusCode() != http.StatusOK {
		b.Fatalf("register: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	cookie := append([]byte(nil), ctx.Response.Header.PeekCookie("authkit_session")...)
	var sc fasthttp.Cookie
	if err := sc.ParseBytes(cookie); err != nil {
		b.Fatal(err)
	}
	value := append([]byte(nil), sc.Value()...)

	b.ReportAllocs()
	for b.Loop() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod(http.MethodGet)
		ctx.Request.SetRequestURI("/api/auth/me")
		ctx.Request.Header.SetCookieBytesKV([]byte("authkit_session"), value)
		h(&ctx)
		if ctx.Response.StatusCode() != http.StatusOK {
			b.Fatalf("me: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}
