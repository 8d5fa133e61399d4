package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The served document has the routes the server registers: core's, the
// passkeys module's when it is on, and none of them when it is off.
func TestOpenAPI(t *testing.T) {
	for _, tc := range []struct {
		passkeys string
		want     bool
	}{{"", true}, {"false", false}} {
		t.Run("PASSKEYS="+tc.passkeys, func(t *testing.T) {
			a := loadOrRefuse(t, map[string]string{"AUTHKIT_DATA_DIR": t.TempDir(), "PASSKEYS": tc.passkeys}, "")
			defer a.Close(t.Context())
			h, err := a.OpenAPI()
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, OpenAPIPath, nil))
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
				t.Fatalf("GET %s: %d %q", OpenAPIPath, rec.Code, rec.Header().Get("Content-Type"))
			}
			var doc struct {
				OpenAPI string         `json:"openapi"`
				Paths   map[string]any `json:"paths"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.OpenAPI != "3.1.0" || doc.Paths["/api/login"] == nil {
				t.Errorf("openapi %q, /api/login %v", doc.OpenAPI, doc.Paths["/api/login"])
			}
			if got := doc.Paths["/api/passkeys/login/begin"] != nil; got != tc.want {
				t.Errorf("passkey routes in the document: %v, want %v", got, tc.want)
			}
		})
	}
}
