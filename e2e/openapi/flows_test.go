package openapi

import (
	"context"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/fiberauth"
	"github.com/authkit-go/authkit/ginauth"
	"github.com/authkit-go/authkit/nethttpauth"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

// frameworks serve h (a framework's handler of svc's routes, plus extra
// routes mounted beside) on 127.0.0.1:0 and return the base URL.
var frameworks = map[string]func(t *testing.T, svc *auth.Service, extra http.Handler, prefix string) string{
	"nethttp": func(t *testing.T, svc *auth.Service, extra http.Handler, prefix string) string {
		mux := http.NewServeMux()
		mux.Handle("/", nethttpauth.Handler(svc)) // JSON 404 for other paths
		if extra != nil {
			mux.Handle(prefix, extra)
			mux.Handle(prefix+"/", extra)
		}
		return serveHTTP(t, mux)
	},
	"gin": func(t *testing.T, svc *auth.Service, extra http.Handler, prefix string) string {
		r := ginauth.New(svc)
		if extra != nil {
			r.Any(prefix, gin.WrapH(extra))
			r.Any(prefix+"/*path", gin.WrapH(extra))
		}
		return serveHTTP(t, r)
	},
	"fiber": func(t *testing.T, svc *auth.Service, extra http.Handler, prefix string) string {
		app := fiber.New(fiberauth.ApplyConfig(svc, fiber.Config{DisableStartupMessage: true}))
		fiberauth.Register(app, svc)
		if extra != nil {
			app.All(prefix, adaptor.HTTPHandler(extra))
			app.All(prefix+"/*", adaptor.HTTPHandler(extra))
		}
		ln := listen(t)
		done := make(chan error, 1)
		go func() { done <- app.Listener(ln) }()
		t.Cleanup(func() {
			_ = app.ShutdownWithTimeout(5 * time.Second)
			_ = ln.Close()
			<-done
		})
		return "http://" + ln.Addr().String()
	},
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

// checked puts the validating proxy of doc in front of base.
func checked(t *testing.T, doc []byte, err error, base string) string {
	t.Helper()
	if err != nil {
		t.Fatalf("OpenAPI: %v", err)
	}
	c, err := New(doc)
	if err != nil {
		t.Fatalf("the served document: %v", err)
	}
	return c.Proxy(t, base)
}

// TestFlowSuite runs the HTTP flow suite on each framework with every
// exchange checked against the document the suite's Service serves: with
// session records, so the session routes are in it, and every feature
// the suite switches off gone from it.
func TestFlowSuite(t *testing.T) {
	for name, start := range frameworks {
		t.Run(name, func(t *testing.T) {
			authtest.Run(t, authtest.Harness{
				Start: func(t *testing.T, svc *auth.Service) string {
					doc, err := svc.OpenAPI()
					return checked(t, doc, err, start(t, svc, nil, ""))
				},
				NewUsers: func(t *testing.T) user.Store { return store.NewMemory(store.MemoryConfig{}) },
				NewSessions: func(t *testing.T, now func() time.Time) session.Store {
					return store.NewMemorySessions(store.MemoryConfig{Now: now})
				},
			})
		})
	}
}

// TestPasskeyFlowSuite runs the passkey flow suite on each framework, the
// passkeys handler mounted beside the framework's routes, with every
// exchange checked against passkeys.Handler.OpenAPI.
func TestPasskeyFlowSuite(t *testing.T) {
	for name, start := range frameworks {
		t.Run(name, func(t *testing.T) {
			passkeystest.Run(t, passkeystest.Harness{
				Start: func(t *testing.T, svc *auth.Service, pk *passkeys.Handler) string {
					doc, err := pk.OpenAPI()
					return checked(t, doc, err, start(t, svc, pk, passkeys.Prefix))
				},
				NewUsers: func(t *testing.T) user.Store { return store.NewMemory(store.MemoryConfig{}) },
			})
		})
	}
}
