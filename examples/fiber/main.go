// Command fiber serves authkit's reference API on fiber v2. Configure it
// with environment variables (see the repository README); with none it
// runs in development mode on localhost:8080.
package main

import (
	"context"
	"net"
	"os"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/authkit-go/authkit/examples/internal/app"
	"github.com/authkit-go/authkit/fiberauth"
)

func main() {
	os.Exit(app.Main("fiber", func(a *app.App) (app.Server, error) {
		f := fiber.New(fiberauth.ApplyConfig(a.Service, fiber.Config{
			// No banner: the first log line stays the one that says where
			// the server listens.
			DisableStartupMessage: true,
			// The timeouts of the net/http example server (fasthttp has no
			// separate header timeout: ReadTimeout covers the headers).
			ReadTimeout:  30 * time.Second,
			WriteTimeout: 30 * time.Second,
			IdleTimeout:  2 * time.Minute,
		}))
		f.Use(recover.New())
		// authkit's JSON routes, the passkeys module's among them (under
		// /api/passkeys, with its script, unless PASSKEYS=false).
		fiberauth.Register(f, a.Service)
		// The app's own routes: one protected by RequireUser.
		f.Get("/api/hello", fiberauth.RequireUser(a.Service), hello)
		// The OpenAPI document of the JSON routes above.
		doc, err := a.OpenAPI()
		if err != nil {
			return nil, err
		}
		f.Get(app.OpenAPIPath, fiberauth.HTTPHandler(doc))
		// A load balancer's probes: liveness and readiness.
		health := fiberauth.HTTPHandler(a.Health())
		for _, p := range app.HealthPaths {
			f.Get(p, health)
		}
		// The pages (github.com/authkit-go/authkit/pages, a net/http handler,
		// through fiberauth.HTTPHandler) at the root: every path no route answers,
		// its HTML 404 page included; unknown API paths go on to fiber's 404,
		// which fiberauth.ErrorHandler answers with JSON.
		pages := fiberauth.HTTPHandler(a.Pages)
		f.Use(func(c *fiber.Ctx) error {
			if strings.HasPrefix(c.Path(), "/api/") {
				return c.Next()
			}
			return pages(c)
		})
		return server{f}, nil
	}))
}

func hello(c *fiber.Ctx) error {
	u, _ := fiberauth.CurrentUser(c)
	return c.SendString("Hello, " + u.Name + "\n")
}

// server serves a fiber app as app.Main expects.
type server struct{ app *fiber.App }

func (s server) Serve(ln net.Listener) error        { return s.app.Listener(ln) }
func (s server) Shutdown(ctx context.Context) error { return s.app.ShutdownWithContext(ctx) }
