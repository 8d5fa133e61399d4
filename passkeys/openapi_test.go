package passkeys_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The Service's document has core's routes and every JSON route of the
// handler (not the script), each of which the Service serves (neither 404
// nor 405).
func TestOpenAPIHasTheHandlersRoutes(t *testing.T) {
	e := newEnv(t, nil, nil)
	b, err := e.svc.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}
	var ours []string
	for p, item := range doc.Paths {
		if !strings.HasPrefix(p, "/api/passkeys") {
			continue
		}
		for m := range item {
			ours = append(ours, strings.ToUpper(m)+" "+p)
		}
	}
	slices.Sort(ours)
	want := []string{
		"GET /api/passkeys",
		"POST /api/passkeys/2fa/begin", "POST /api/passkeys/2fa/finish",
		"POST /api/passkeys/delete",
		"POST /api/passkeys/login/begin", "POST /api/passkeys/login/finish",
		"POST /api/passkeys/reauth/begin", "POST /api/passkeys/reauth/finish",
		"POST /api/passkeys/register/begin", "POST /api/passkeys/register/finish",
		"POST /api/passkeys/rename",
		"POST /api/passkeys/signup/begin", "POST /api/passkeys/signup/finish",
	}
	if !slices.Equal(ours, want) {
		t.Fatalf("passkey operations\n%q\nwant\n%q", ours, want)
	}
	for _, op := range ours {
		method, path, _ := strings.Cut(op, " ")
		r := e.client().do(method, path, nil)
		if r.status == http.StatusNotFound && strings.Contains(string(r.body), `"not_found"`) || r.status == http.StatusMethodNotAllowed {
			t.Errorf("%s: %d %s, the handler does not serve it", op, r.status, r.body)
		}
	}
	if _, ok := doc.Paths["/api/login"]["post"]; !ok {
		t.Error("core's POST /api/login is missing")
	}
}
