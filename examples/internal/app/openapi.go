package app

import (
	"net/http"
)

// OpenAPIPath is where the example servers serve the OpenAPI document of
// their JSON routes.
const OpenAPIPath = "/api/openapi.json"

// OpenAPI returns the handler of OpenAPIPath: the OpenAPI 3.1 document of
// the routes this server registers (auth.Service.OpenAPI: the passkeys
// module's among them when it is on), built once here. It is public, as the routes it describes are; an app
// that would rather not publish it does not mount it.
func (a *App) OpenAPI() (http.Handler, error) {
	doc, err := a.Service.OpenAPI()
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(doc)
	}), nil
}
