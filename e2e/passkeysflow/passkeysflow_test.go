// Package passkeysflow runs the passkey flow suite (passkeys/passkeystest)
// on each framework, with the passkeys handler mounted beside the
// framework module's routes as passkeys' package docs show: net/http
// (nethttpauth.Mount and the handler on one ServeMux), gin (gin.WrapH) and
// fiber (adaptor.HTTPHandler), over the memory store; and over each SQL
// database (sqlxstore's user.Passkeys part), each on one framework.
package passkeysflow

import (
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
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/e2e/internal/sqltest"
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

// frameworks serve a Service and its passkeys handler on 127.0.0.1:0 and
// return the base URL.
var frameworks = map[string]func(t *testing.T, svc *auth.Service, pk *passkeys.Handler) string{
	"nethttp": func(t *testing.T, svc *auth.Service, pk *passkeys.Handler) string {
		mux := http.NewServeMux()
		nethttpauth.Mount(mux, svc, "")
		mux.Handle(passkeys.Prefix, pk)
		mux.Handle(passkeys.Prefix+"/", pk)
		return authtest.Serve(t, mux)
	},
	"gin": func(t *testing.T, svc *auth.Service, pk *passkeys.Handler) string {
		r := ginauth.New(svc)
		r.Any(passkeys.Prefix, gin.WrapH(pk))
		r.Any(passkeys.Prefix+"/*path", gin.WrapH(pk))
		return authtest.Serve(t, r)
	},
	"fiber": func(t *testing.T, svc *auth.Service, pk *passkeys.Handler) string {
		app := fiber.New(fiberauth.ApplyConfig(svc, fiber.Config{DisableStartupMessage: true}))
		fiberauth.Register(app, svc)
		app.All(passkeys.Prefix, adaptor.HTTPHandler(pk))
		app.All(passkeys.Prefix+"/*", adaptor.HTTPHandler(pk))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
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

func TestPasskeyFlows(t *testing.T) {
	for name, start := range frameworks {
		t.Run(name, func(t *testing.T) {
			passkeystest.Run(t, passkeystest.Harness{
				Start:    start,
				NewUsers: func(t *testing.T) user.Store { return store.NewMemory(store.MemoryConfig{}) },
			})
		})
	}
}

// TestPasskeyFlowsSQL runs the suite over sqlxstore on each database, each
// on one framework (the frameworks ran it on memory above, and the store
// is behind the Service whatever serves it): SQLite on gin, PostgreSQL on
// net/http, MySQL/MariaDB on fiber.
func TestPasskeyFlowsSQL(t *testing.T) {
	on := map[string]string{"sqlite": "gin", "postgres": "nethttp", "mysql": "fiber"}
	for _, d := range sqltest.Databases {
		t.Run(d.Name+"/"+on[d.Name], func(t *testing.T) {
			db := sqltest.Open(t, d.URL(t))
			passkeystest.Run(t, passkeystest.Harness{Start: frameworks[on[d.Name]], NewUsers: db.Users})
		})
	}
}
