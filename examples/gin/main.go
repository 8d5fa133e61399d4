// Command gin serves authkit's reference API on gin. Configure it with
// environment variables (see the repository README); with none it runs in
// development mode on localhost:8080.
package main

import (
	"net/http"
	"os"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/authkit-go/authkit/examples/internal/app"
	"github.com/authkit-go/authkit/ginauth"
)

func main() {
	// Release mode: no [GIN-debug] route listing; the first log line stays
	// the one that says where the server listens.
	gin.SetMode(gin.ReleaseMode)
	os.Exit(app.Main("gin", func(a *app.App) (app.Server, error) {
		r := gin.New()
		r.Use(gin.Recovery())
		// authkit's JSON routes, the passkeys module's among them (under
		// /api/passkeys, with its script, unless PASSKEYS=false).
		ginauth.Register(r, a.Service)
		// The app's own routes: one protected by RequireUser.
		r.GET("/api/hello", ginauth.RequireUser(a.Service), hello)
		// The OpenAPI document of the JSON routes above.
		doc, err := a.OpenAPI()
		if err != nil {
			return nil, err
		}
		r.GET(app.OpenAPIPath, gin.WrapH(doc))
		r.HEAD(app.OpenAPIPath, gin.WrapH(doc)) // as net/http and fiber do
		// The pages (github.com/authkit-go/authkit/pages) at the root: every
		// path no route answers, its HTML 404 page included; unknown API
		// paths answer JSON, as on the other two servers.
		pages := gin.WrapH(a.Pages)
		r.NoRoute(func(c *gin.Context) {
			if strings.HasPrefix(c.Request.URL.Path, "/api/") {
				resp := a.Service.Modules().NotFound(ginauth.Request(c))
				resp.Write(c.Writer)
				return
			}
			pages(c)
		})
		// A load balancer's probes: liveness and readiness.
		health := gin.WrapH(a.Health())
		for _, p := range app.HealthPaths {
			r.GET(p, health)
			r.HEAD(p, health) // as net/http and fiber do
		}
		return app.HTTPServer(r), nil
	}))
}

func hello(c *gin.Context) {
	u, _ := ginauth.CurrentUser(c)
	c.String(http.StatusOK, "Hello, %s\n", u.Name)
}
