package auth

import (
	"context"
	"encoding/json"
	"net/http"
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

func openAPIOf(t *testing.T, s *Service) served {
	t.Helper()
	b, err := s.OpenAPI()
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
	for _, rt := range s.Modules().Routes() {
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
		{"defaults", nil, // the memory store offers session records: on by default
			[]string{"POST /api/login", "POST /api/auth/register", "GET /api/auth/me", "POST /api/2fa/setup", "GET /api/auth/sessions", "DELETE /api/auth/sessions/{id}"},
			[]string{"GET /api/2fa/trusted-devices", "POST /api/2fa/email-code"}},
		{"stateless sessions", func(c *Config) { c.StatelessSessions = true },
			[]string{"POST /api/login", "GET /api/auth/me"},
			[]string{"GET /api/auth/sessions", "DELETE /api/auth/sessions/{id}"}},
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
	if got := d.Components.SecuritySchemes["session"].Name; got != SecureSessionCookie {
		t.Errorf("default session cookie = %q, want %s", got, SecureSessionCookie)
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

// A module's route is in the document with what its Operation says, its
// schemas beside core's and the session cookie under the Service's name;
// a static route is not.
func TestOpenAPIHasAModulesRoutes(t *testing.T) {
	s := newFlow(t, func(c *Config) { c.SessionCookie = "sid" }).s
	extra := NewRoute(http.MethodPost, "/api/extra/{id}", func(context.Context, *Visit, Request) (any, error) { return nil, nil }, Operation{
		ID: "extra", Summary: "An extra route", Auth: "session", Param: "the thing's id",
		OK:         oaRef("Extra"),
		SetCookies: []string{"authkit_session", "other"},
		Errors:     []*Error{ErrNotAuthenticated},
		Schemas:    obj{"Extra": obj{"type": "object"}, "Message": obj{"type": "null"}},
	})
	if err := s.Modules().AddRoutes(extra, StaticRoute("/api/extra/script.js", "text/javascript", []byte("1"))); err != nil {
		t.Fatal(err)
	}
	d := openAPIOf(t, s)
	op, ok := d.Paths["/api/extra/{id}"]["post"]
	if !ok {
		t.Fatalf("the module's route is missing: %q", operations(d))
	}
	if op["operationId"] != "extra" || op["description"] != "No body: any body is ignored." {
		t.Errorf("operation = %v", op)
	}
	if got := toStrings(op["x-set-cookies"]); !slices.Equal(got, []string{"sid", "other"}) {
		t.Errorf("x-set-cookies = %q, want [sid other]", got)
	}
	if _, ok := d.Paths["/api/extra/script.js"]; ok {
		t.Error("the static route is in the document")
	}
	if _, ok := d.Components.Schemas["Extra"]; !ok {
		t.Error("the route's schema is missing")
	}
	if m, _ := d.Components.Schemas["Message"].(map[string]any); m["type"] != "object" {
		t.Errorf("a module's schema replaced core's Message: %v", m)
	}
	b, err := s.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	got := operationCodes(t, b)["POST /api/extra/{id}"]
	want := []string{"401 not_authenticated", "403 cross_origin_blocked", "404 not_found", "413 body_too_large", "431 request_rejected", "500 internal_error", "503 service_unavailable"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the module's route lists\n%q\nwant\n%q", got, want)
	}
}

// The conditions no operation of core's document answers with: those of
// the paths and methods it does not have, of the app's own middleware, of
// the typed methods only, and of the passkeys module's document.
var notCoreOperations = map[Code]string{
	ErrMethodNotAllowed.Code:          "a known path with another method (405 with Allow)",
	ErrFeatureDisabled.Code:           "a typed method of a switched-off feature; its route is not registered",
	ErrTooManyRequests.Code:           "Service.NewRateLimit, the app's own limits and the passkeys begin limit",
	ErrEmailNotVerified.Code:          "the RequireVerifiedEmail middleware",
	ErrInvalidAPIKey.Code:             "the RequireUser middleware (an API key authenticates the app's API, not authkit's routes)",
	ErrInsufficientScope.Code:         "the RequireScope middleware",
	ErrTooManyAPIKeyRequests.Code:     "the RequireUser middleware, per API key",
	ErrTwoFactorRequired.Code:         "the RequireUser and RequireVerifiedEmail middleware under Config.RequireTwoFactor",
	ErrRequestRejected.Code:           "a request a framework refuses before any route runs, with the status it chose (the 431 of a long token is listed)",
	ErrPasskeyChallengeInvalid.Code:   "the passkeys module's routes",
	ErrPasskeyInvalid.Code:            "the passkeys module's routes",
	ErrPasskeyAlreadyRegistered.Code:  "the passkeys module's routes",
	ErrPasskeyCountRegressed.Code:     "the passkeys module's routes",
	ErrPasskeyNotFound.Code:           "the passkeys module's routes",
	ErrPasswordInvalid.Code:           "no route: every flow of a new password refuses its invalid characters first (checkText: invalid_characters)",
	ErrSocialProviderUnknown.Code:     "the social module's routes",
	ErrSocialStateInvalid.Code:        "the social module's routes",
	ErrSocialFailed.Code:              "the social module's routes",
	ErrSocialProviderUnavailable.Code: "the social module's routes",
	ErrSocialEmailUnverified.Code:     "the social module's routes",
	ErrSocialLinkRequired.Code:        "the social module's routes",
	ErrSocialSignUpClosed.Code:        "the social module's routes",
	ErrSocialIdentityTaken.Code:       "the social module's routes",
	ErrSocialAppRedirectInvalid.Code:  "the social module's routes",
	ErrIdentityNotFound.Code:          "the social module's routes",
	ErrLastSignInMethod.Code:          "the social module's routes",
	ErrUnknownUser.Code:               "Service.StartSecondStep, a typed method an app calls from its own login",
}

// operationCodes returns "STATUS code" of every code the operations of
// doc (a served document) list, resolving the shared responses.
func operationCodes(t *testing.T, doc []byte) map[string][]string {
	t.Helper()
	var d struct {
		Paths      map[string]map[string]struct{ Responses map[string]json.RawMessage } `json:"paths"`
		Components struct{ Responses map[string]json.RawMessage }                       `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	type response struct {
		Ref     string `json:"$ref"`
		Content map[string]struct {
			Schema struct {
				Properties struct {
					Code struct {
						Enum  []string `json:"enum"`
						AnyOf []struct {
							Enum []string `json:"enum"`
						} `json:"anyOf"`
					} `json:"code"`
				} `json:"properties"`
			} `json:"schema"`
			Examples map[string]struct {
				Value struct{ Error, Code string } `json:"value"`
			} `json:"examples"`
		} `json:"content"`
	}
	out := map[string][]string{}
	for p, item := range d.Paths {
		for m, op := range item {
			for st, raw := range op.Responses {
				var r response
				if err := json.Unmarshal(raw, &r); err != nil {
					t.Fatal(err)
				}
				if name, ok := strings.CutPrefix(r.Ref, "#/components/responses/"); ok {
					if err := json.Unmarshal(d.Components.Responses[name], &r); err != nil {
						t.Fatalf("%s %s %s: %s: %v", m, p, st, r.Ref, err)
					}
				}
				body, ok := r.Content["application/json"]
				if st[0] == '2' || !ok { // a success: 200, or 201 for a create
					continue
				}
				code := body.Schema.Properties.Code
				enum := code.Enum
				if len(code.AnyOf) > 0 {
					enum = code.AnyOf[0].Enum
				}
				if len(enum) == 0 {
					t.Errorf("%s %s %s: no codes", m, p, st)
				}
				for _, c := range enum {
					if ex := body.Examples[c].Value; ex.Code != c || ex.Error == "" {
						t.Errorf("%s %s %s: the example of %s is %+v", m, p, st, c, ex)
					}
				}
				out[strings.ToUpper(m)+" "+p] = append(out[strings.ToUpper(m)+" "+p], prefixed(st+" ", enum)...)
			}
		}
	}
	return out
}

func prefixed(p string, s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = p + x
	}
	return out
}

// Every condition of Codes is one some operation answers with, under its
// own status, but for those answered elsewhere (notCoreOperations): a new
// condition cannot be left out of the document.
func TestOpenAPIListsEveryCode(t *testing.T) {
	b, err := newFlow(t, func(c *Config) {
		c.Sessions = store.NewMemorySessions(store.MemoryConfig{})
		c.TrustedDevices = store.NewMemorySessions(store.MemoryConfig{})
		c.EmailCode.Enabled = true
		c.EmailSignIn.Enabled = true
		c.Tokens.Enabled = true
		c.APIKeys.Enabled = true
	}).s.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, cs := range operationCodes(t, b) {
		for _, c := range cs {
			listed[c] = true
		}
	}
	for _, e := range Codes() {
		st := itoa(e.Status) + " " + string(e.Code)
		switch why, elsewhere := notCoreOperations[e.Code]; {
		case elsewhere && listed[st]:
			t.Errorf("%s: an operation lists it, notCoreOperations says %s", st, why)
		case !elsewhere && !listed[st]:
			t.Errorf("%s: no operation lists it", st)
		}
	}
}

// Each operation lists exactly the conditions of its row and of its
// shape: a route's own, those of its body, its path parameter, its
// method, and the 500 and 503 of every route that reads a store.
func TestOpenAPIListsTheCodesOfEachRoute(t *testing.T) {
	b, err := newFlow(t, nil).s.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	got := operationCodes(t, b)
	for _, tc := range []struct {
		op   string
		want []string
	}{
		{"POST /api/auth/logout", []string{"403 cross_origin_blocked", "413 body_too_large", "500 internal_error"}},
		{"GET /api/auth/me", []string{"401 not_authenticated", "500 internal_error", "503 service_unavailable"}},
		{"POST /api/2fa/setup", []string{"400 two_factor_already_enabled", "401 not_authenticated", "403 reauthentication_required", "403 cross_origin_blocked",
			"413 body_too_large", "500 internal_error", "503 service_unavailable"}},
		{"GET /api/auth/verify-email/{token}", []string{"400 verification_link_invalid", "400 verification_link_user_missing", "400 verification_link_stale",
			"404 not_found", "431 request_rejected", "500 internal_error", "503 service_unavailable"}},
		{"POST /api/auth/confirm-password", []string{"400 invalid_json", "400 invalid_form", "400 duplicate_field", "400 wrong_field_type", "400 invalid_characters", "400 unreadable_body",
			"400 invalid_two_factor_code", "400 code_already_used", "401 invalid_password", "401 not_authenticated", "403 cross_origin_blocked",
			"403 two_factor_code_required", "413 body_too_large", "415 unsupported_content_type",
			"429 too_many_password_attempts", "429 too_many_two_factor_attempts", "500 internal_error", "503 service_unavailable"}},
	} {
		have := got[tc.op]
		slices.Sort(have)
		slices.Sort(tc.want)
		if !slices.Equal(have, tc.want) {
			t.Errorf("%s lists\n%q\nwant\n%q", tc.op, have, tc.want)
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
