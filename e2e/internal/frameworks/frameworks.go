// Package frameworks serves an auth.Service on each framework module the
// way an app mounts it, for the e2e suites that run one suite on all three
// (matrix, passkeysflow, openapi): net/http (nethttpauth.Handler on a
// ServeMux), gin (ginauth.New, extra handlers through gin.WrapH) and fiber
// (fiberauth.Register, extra handlers through fiberauth.HTTPHandler).
package frameworks

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/fiberauth"
	"github.com/authkit-go/authkit/ginauth"
	"github.com/authkit-go/authkit/nethttpauth"
)

// Names are the frameworks, in the order the suites report them.
var Names = []string{"nethttp", "gin", "fiber"}

// Serve starts svc's routes (core's and those modules added, the passkeys
// module's) on the named framework on 127.0.0.1:0, with extra (if not
// nil; an app's own handler) mounted beside them at prefix and below, and returns
// the base URL ("http://127.0.0.1:PORT"). The server stops when t ends.
// Callers set gin's mode (gin.SetMode(gin.TestMode)) in their TestMain.
func Serve(t *testing.T, name string, svc *auth.Service, extra http.Handler, prefix string) string {
	t.Helper()
	switch name {
	case "nethttp":
		var h http.Handler = nethttpauth.Handler(svc) // JSON 404 for other paths
		if extra != nil {
			mux := http.NewServeMux()
			mux.Handle("/", h)
			mux.Handle(prefix, extra)
			mux.Handle(prefix+"/", extra)
			h = mux
		}
		return serveHTTP(t, h)
	case "gin":
		r := ginauth.New(svc)
		if extra != nil {
			r.Any(prefix, gin.WrapH(extra))
			r.Any(prefix+"/*path", gin.WrapH(extra))
		}
		return serveHTTP(t, r)
	case "fiber":
		app := fiber.New(fiberauth.ApplyConfig(svc, fiber.Config{DisableStartupMessage: true}))
		fiberauth.Register(app, svc)
		if extra != nil {
			app.All(prefix, fiberauth.HTTPHandler(extra))
			app.All(prefix+"/*", fiberauth.HTTPHandler(extra))
		}
		return ServeFiber(t, app)
	}
	t.Fatalf("no framework %q", name)
	return ""
}

// ServeFiber serves app on 127.0.0.1:0 and returns the base URL
// ("http://127.0.0.1:PORT"). The server stops when t ends.
func ServeFiber(t *testing.T, app *fiber.App) string {
	t.Helper()
	ln := listen(t)
	done := make(chan error, 1)
	go func() { done <- app.Listener(ln) }()
	t.Cleanup(func() {
		_ = app.ShutdownWithTimeout(5 * time.Second)
		_ = ln.Close()
		<-done
	})
	return "http://" + ln.Addr().String()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func serveHTTP(t *testing.T, h http.Handler) string {
	ln := listen(t)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String()
}
