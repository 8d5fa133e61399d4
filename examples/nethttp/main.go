// Command nethttp serves authkit's reference API on net/http. Configure it
// with environment variables (see the repository README); with none it
// runs in development mode on localhost:8080.
package main

import (
	"fmt"
	"net/http"
	"os"

	"github.com/authkit-go/authkit/examples/internal/app"
	"github.com/authkit-go/authkit/nethttpauth"
)

func main() {
	os.Exit(app.Main("net/http", func(a *app.App) (app.Server, error) {
		mux := http.NewServeMux()
		// authkit's JSON routes, the passkeys module's among them (under
		// /api/passkeys, with its script, unless PASSKEYS=false).
		nethttpauth.Mount(mux, a.Service, "")
		// The app's own routes: one protected by RequireUser.
		mux.Handle("GET /api/hello", nethttpauth.RequireUser(a.Service)(http.HandlerFunc(hello)))
		// The OpenAPI document of the JSON routes above.
		doc, err := a.OpenAPI()
		if err != nil {
			return nil, err
		}
		mux.Handle("GET "+app.OpenAPIPath, doc)
		// Unknown API paths answer JSON.
		mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
			resp := a.Service.Modules().NotFound(nethttpauth.Request(r))
			resp.Write(w)
		})
		// A load balancer's probes: liveness and readiness.
		health := a.Health()
		for _, p := range app.HealthPaths {
			mux.Handle("GET "+p, health)
		}
		// The pages (github.com/authkit-go/authkit/pages) at the root: every
		// path no route above answers, its HTML 404 page included.
		mux.Handle("/", a.Pages)
		return app.HTTPServer(mux), nil
	}))
}

func hello(w http.ResponseWriter, r *http.Request) {
	u, _ := nethttpauth.CurrentUser(r)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "Hello, %s\n", u.Name)
}
