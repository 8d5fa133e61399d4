package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPI: the document has every route of core/auth, the optional
// stores' included, and names the session cookie as told; -o writes it
// to a file.
func TestOpenAPI(t *testing.T) {
	var out, errOut bytes.Buffer
	if exit := run([]string{"openapi", "-session-cookie", "sid"}, &out, &errOut); exit != 0 {
		t.Fatalf("exit %d: %s", exit, errOut.String())
	}
	var doc struct {
		OpenAPI    string                    `json:"openapi"`
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			SecuritySchemes map[string]struct{ Name string } `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for p, item := range doc.Paths {
		for m := range item {
			ops = append(ops, strings.ToUpper(m)+" "+p)
		}
	}
	for _, op := range []string{"POST /api/login", "GET /api/auth/sessions", "DELETE /api/2fa/trusted-devices/{id}", "POST /api/2fa/email-code/verify", "POST /api/auth/register", "POST /api/auth/delete-account", "GET /api/auth/export"} {
		if !slices.Contains(ops, op) {
			t.Errorf("%s missing", op)
		}
	}
	if len(ops) != 27 || doc.OpenAPI != "3.1.0" || doc.Components.SecuritySchemes["session"].Name != "sid" {
		t.Errorf("%d operations, openapi %q, session cookie %q; want 27, 3.1.0, sid", len(ops), doc.OpenAPI, doc.Components.SecuritySchemes["session"].Name)
	}

	file := filepath.Join(t.TempDir(), "openapi.json")
	out.Reset()
	if exit := run([]string{"openapi", "-o", file}, &out, &errOut); exit != 0 || out.Len() != 0 {
		t.Fatalf("-o: exit %d, stdout %q: %s", exit, out.String(), errOut.String())
	}
	if b, err := os.ReadFile(file); err != nil || !bytes.Contains(b, []byte(`"name": "__Host-authkit_session"`)) {
		t.Errorf("-o wrote %.100q, %v", b, err)
	}
	if exit := run([]string{"openapi", "extra"}, &out, &errOut); exit != 2 {
		t.Errorf("an argument: exit %d, want 2", exit)
	}
}
