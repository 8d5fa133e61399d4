package auth

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/store"
)

// served is the part of a served document the tests read.
type served struct {
	OpenAPI    string                               `json:"openapi"`
	Paths      map[string]map[string]map[string]any `json:"paths"`
	Components struct {
		SecuritySchemes map[string]struct {
			Name string `json:"name"`
		} `json:"securitySchemes"`
		Schemas map[string]any `json:"schemas"`
	} `json:"components"`
}

func openAPIOf(t *testing.T, s *Service, parts ...[]byte) served {
	t.Helper()
	b, err := s.OpenAPI(parts...)
	if err != nil {
		t.Fatal(err)
	}
	var d served
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// operations lists "METHOD path" of d, sorted.
func operations(d served) []string {
	var out []string
	for p, item := range d.Paths {
		for m := range item {
			out = append(out, strings.ToUpper(m)+" "+p)
		}
	}
	slices.Sort(out)
	return out
}

// routeList lists "METHOD pattern" of s.Routes(), sorted.
func routeList(s *Service) []string {
	var out []string
	for _, rt := range s.Routes() {
		out = append(out, rt.Method+" "+rt.Pattern)
	}
	slices.Sort(out)
	return out
}

func TestOpenAPIHasTheRoutesTheServiceRegisters(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		has    []string
		hasNot []string
	}{
		{"defaults", nil,
			[]string{"POST /api/login", "POST /api/auth/register", "GET /api/auth/me", "POST /api/2fa/setup"},
			[]string{"GET /api/auth/sessions", "GET /api/2fa/trusted-devices", "POST /api/2fa/email-code"}},
		{"every store", func(c *Config) {
			c.Sessions = store.NewMemorySessions(store.MemoryConfig{})
			c.TrustedDevices = store.NewMemorySessions(store.MemoryConfig{})
			c.EmailCode.Enabled = true
		},
			[]string{"GET /api/auth/sessions", "DELETE /api/auth/sessions/{id}", "GET /api/2fa/trusted-devices", "DELETE /api/2fa/trusted-devices/{id}", "POST /api/2fa/email-code", "POST /api/2fa/email-code/verify"},
			nil},
		{"features off", func(c *Config) {
			c.Disable = []Feature{FeatureRegistration, FeatureTwoFactor, FeaturePasswordReset, FeatureEmailChange, FeaturePasswordChange}
		},
			[]string{"POST /api/login", "POST /api/2fa/verify", "POST /api/2fa/disable"},
			[]string{"POST /api/auth/register", "POST /api/2fa/setup", "POST /api/2fa/confirm", "POST /api/2fa/regenerate-codes",
				"POST /api/auth/forgot-password", "POST /api/auth/reset-password/{token}", "POST /api/auth/change-email", "POST /api/auth/change-password"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFlow(t, tc.change).s
			d := openAPIOf(t, s)
			got := operations(d)
			if want := routeList(s); !slices.Equal(got, want) {
				t.Fatalf("document has\n%q\nthe Service registers\n%q", got, want)
			}
			for _, op := range tc.has {
				if !slices.Contains(got, op) {
					t.Errorf("%s missing", op)
				}
			}
			for _, op := range tc.hasNot {
				if slices.Contains(got, op) {
					t.Errorf("%s served, the Service does not register it", op)
				}
			}
			if d.OpenAPI != "3.1.0" {
				t.Errorf("openapi = %q", d.OpenAPI)
			}
		})
	}
}

func TestOpenAPINamesTheSessionCookie(t *testing.T) {
	d := openAPIOf(t, newFlow(t, nil).s)
	if got := d.Components.SecuritySchemes["session"].Name; got != "authkit_session" {
		t.Errorf("default session cookie = %q, want authkit_session", got)
	}
	d = openAPIOf(t, newFlow(t, func(c *Config) { c.SessionCookie = "__Host-sid" }).s)
	if got := d.Components.SecuritySchemes["session"].Name; got != "__Host-sid" {
		t.Errorf("session cookie = %q, want __Host-sid", got)
	}
	if got := d.Paths["/api/auth/logout"]["post"]["x-set-cookies"]; !slices.Equal(toStrings(got), []string{"__Host-sid", PendingCookie}) {
		t.Errorf("logout's x-set-cookies = %v, want [__Host-sid 2fa_pending]", got)
	}
	if got := d.Components.SecuritySchemes["pending"].Name; got != PendingCookie {
		t.Errorf("pending cookie = %q, want %s", got, PendingCookie)
	}
}

func TestOpenAPIAddsParts(t *testing.T) {
	s := newFlow(t, nil).s
	part := []byte(`{"openapi": "3.1.0", "paths": {"/api/extra": {"get": {"responses": {"500": {"$ref": "#/components/responses/Error500"}}}}},
		"components": {"schemas": {"Extra": {"type": "object"}, "Message": {"type": "null"}}}}`)
	d := openAPIOf(t, s, part)
	if _, ok := d.Paths["/api/extra"]["get"]; !ok {
		t.Error("the part's path is missing")
	}
	if _, ok := d.Components.Schemas["Extra"]; !ok {
		t.Error("the part's schema is missing")
	}
	if m, _ := d.Components.Schemas["Message"].(map[string]any); m["type"] != "object" {
		t.Errorf("a part replaced core's Message schema: %v", m)
	}
	custom := newFlow(t, func(c *Config) { c.SessionCookie = "sid" }).s
	d = openAPIOf(t, custom, []byte(`{"paths": {"/api/extra": {"post": {"x-set-cookies": ["authkit_session", "other"]}}}}`))
	if got := toStrings(d.Paths["/api/extra"]["post"]["x-set-cookies"]); !slices.Equal(got, []string{"sid", "other"}) {
		t.Errorf("a part's x-set-cookies = %q, want [sid other]", got)
	}
	if _, err := s.OpenAPI([]byte(`{"paths": {"/api/odd": 1, "/api/odder": {"get": 2}}}`)); err != nil {
		t.Errorf("a part with odd path items: %v", err) // passed on as they are, no panic
	}
	if _, err := s.OpenAPI([]byte(`{"paths": {"/api/login": {}}}`)); err == nil || !strings.Contains(err.Error(), "/api/login is core's") {
		t.Errorf("a part repeating a core path: err = %v", err)
	}
	if _, err := s.OpenAPI([]byte(`not json`)); err == nil {
		t.Error("a part that is not JSON: no error")
	}
}

// The document lists every code of Codes under its status, so a new
// condition cannot be left out of it.
func TestOpenAPIListsEveryCode(t *testing.T) {
	d := openAPIOf(t, newFlow(t, nil).s)
	for _, e := range Codes() {
		schema, _ := json.Marshal(d.Components.Schemas["Error"+itoa(e.Status)])
		if !strings.Contains(string(schema), `"`+string(e.Code)+`"`) {
			t.Errorf("Error%d does not list %s", e.Status, e.Code)
		}
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
