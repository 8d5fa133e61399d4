package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/nethttpauth"
)

func newService(t *testing.T) *auth.Service {
	t.Helper()
	return newServiceWith(t, func(*auth.Config) {})
}

// newServiceWith is a Service over the memory store with the test hasher
// and keys, as change leaves its Config.
func newServiceWith(t *testing.T, change func(*auth.Config)) *auth.Service {
	t.Helper()
	svc, err := newServiceErr(change)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	return svc
}

// newServiceErr is newServiceWith outside a test.
func newServiceErr(change func(*auth.Config)) (*auth.Service, error) {
	keys, err := secretbox.NewKeyring(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		return nil, err
	}
	cfg := auth.Config{Users: store.NewMemory(store.MemoryConfig{}), Secrets: []string{strings.Repeat("x", 32)}, Keys: keys,
		AppURL: "http://localhost", Insecure: true, Hasher: password.ForTesting(), Mailer: &mail.Capture{}}
	change(&cfg)
	return auth.New(cfg)
}

// document is svc's document with change applied to its JSON.
func document(t *testing.T, svc *auth.Service, change func(doc map[string]any)) []byte {
	t.Helper()
	b, err := svc.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if change == nil {
		return b
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	change(doc)
	b, err = json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func exchange(method, path, reqBody string, status int, header http.Header, respBody string) Exchange {
	req := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(reqBody))
	if reqBody != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "Cache-Control": {"no-store"}, "X-Content-Type-Options": {"nosniff"}}
	for k, v := range header {
		h[k] = v
	}
	return Exchange{Request: req, RequestBody: []byte(reqBody), Response: &http.Response{StatusCode: status, Header: h}, ResponseBody: []byte(respBody)}
}

// TestCheckFails proves the drift test can fail: each exchange breaks the
// document in one way and Check names the route and the reason.
func TestCheckFails(t *testing.T) {
	c, err := New(document(t, newService(t), nil))
	if err != nil {
		t.Fatal(err)
	}
	retry := http.Header{"Retry-After": {"60"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"2031-03-14T15:24:26.535Z"}}
	for _, tc := range []struct {
		name string
		x    Exchange
		want string // "" for a match
	}{
		{"a documented answer", exchange("POST", "/api/login", `{"email":"a@example.com","password":"x"}`, 401, nil, `{"error":"Invalid credentials","code":"invalid_credentials"}`), ""},
		{"a documented 429", exchange("POST", "/api/login", `{}`, 429, retry, `{"error":"Too many login attempts. Try again later.","code":"too_many_login_attempts","retryAfter":"2031-03-14T15:24:26.535Z"}`), ""},
		{"an unknown status", exchange("POST", "/api/login", `{}`, http.StatusTeapot, nil, `{"error":"Teapot","code":"request_rejected"}`),
			"POST /api/login -> 418"},
		{"a status the route does not list", exchange("GET", "/api/auth/me", ``, http.StatusConflict, nil, `{"error":"x","code":"email_changed_concurrently"}`),
			"GET /api/auth/me -> 409 {\"error\":\"x\",\"code\":\"email_changed_concurrently\"}: status is not supported"},
		{"a body off the schema", exchange("POST", "/api/auth/logout", ``, 200, nil, `{"message":"Logged out","extra":1}`),
			"POST /api/auth/logout -> 200 {\"message\":\"Logged out\",\"extra\":1}: response body doesn't match schema"},
		{"a 429 without Retry-After", exchange("POST", "/api/login", `{}`, 429, http.Header{"X-Ratelimit-Remaining": {"0"}}, `{"error":"Too many login attempts. Try again later.","code":"too_many_login_attempts","retryAfter":"2031-03-14T15:24:26.535Z"}`),
			`response header "Retry-After" missing`},
		{"an answer without Cache-Control", func() Exchange {
			x := exchange("POST", "/api/auth/logout", ``, 200, nil, `{"message":"Logged out"}`)
			x.Response.Header.Del("Cache-Control")
			return x
		}(), `POST /api/auth/logout -> 200 {"message":"Logged out"}: response header "Cache-Control" missing`},
		{"a code of another status", exchange("POST", "/api/login", `{}`, 400, nil, `{"error":"Invalid credentials","code":"invalid_credentials"}`),
			`POST /api/login -> 400 {"error":"Invalid credentials","code":"invalid_credentials"}: code "invalid_credentials" answers 401, not 400`},
		{"a code authkit does not have", exchange("POST", "/api/login", `{}`, 400, nil, `{"error":"x","code":"made_up"}`),
			`code "made_up" is not authkit's`},
		{"a code of the status, not of the route", exchange("GET", "/api/auth/me", ``, 401, nil, `{"error":"Invalid credentials","code":"invalid_credentials"}`),
			`GET /api/auth/me -> 401 {"error":"Invalid credentials","code":"invalid_credentials"}: code "invalid_credentials" is not one GET /api/auth/me answers 401 with: [not_authenticated]`},
		{"a limit of another route", exchange("POST", "/api/login", `{}`, 429, retry, `{"error":"Too many registration attempts. Try again later.","code":"too_many_registrations","retryAfter":"2031-03-14T15:24:26.535Z"}`),
			`code "too_many_registrations" is not one POST /api/login answers 429 with: [too_many_login_attempts]`},
		{"a body condition of a route without a body", exchange("POST", "/api/2fa/setup", `{}`, 400, nil, `{"error":"Invalid JSON body","code":"invalid_json"}`),
			`code "invalid_json" is not one POST /api/2fa/setup answers 400 with: [two_factor_already_enabled]`},
		{"an app's code where the route's hooks may refuse", exchange("POST", "/api/login", `{}`, 403, nil, `{"error":"Account suspended","code":"account_suspended"}`), ""},
		{"an app's code where no hook runs", exchange("POST", "/api/auth/logout", ``, 403, nil, `{"error":"An invitation is required","code":"invitation_required"}`),
			`code "invitation_required" is not one POST /api/auth/logout answers 403 with: [cross_origin_blocked]`},
		{"an app's code under another status", exchange("POST", "/api/login", `{}`, 400, nil, `{"error":"Account suspended","code":"account_suspended"}`),
			`code "account_suspended" answers 403, not 400`},
		{"a translated answer", exchange("POST", "/api/auth/logout", ``, 200, http.Header{"Content-Language": {"de"}, "Vary": {"Accept-Language"}}, `{"message":"Abgemeldet"}`), ""},
		{"a Content-Language that is no language tag", exchange("POST", "/api/auth/logout", ``, 200, http.Header{"Content-Language": {"de_DE"}, "Vary": {"Accept-Language"}}, `{"message":"Abgemeldet"}`),
			`response header "Content-Language" doesn't match schema`},
		{"a Vary without Accept-Language", exchange("POST", "/api/auth/logout", ``, 200, http.Header{"Vary": {"Cookie"}}, `{"message":"Logged out"}`),
			`response header "Vary" doesn't match schema`},
		{"a translated error with a wrong Content-Language", exchange("GET", "/api/auth/me", ``, 401, http.Header{"Content-Language": {"?"}}, `{"error":"Nicht angemeldet","code":"not_authenticated"}`),
			`response header "Content-Language" doesn't match schema`},
		{"a request the document refuses, taken", exchange("POST", "/api/login", `{"email":1,"password":"x"}`, 200, nil, `{"success":true}`),
			"POST /api/login -> 200 {\"success\":true}: the document refuses the request"},
		{"a request the document refuses, refused", exchange("POST", "/api/login", `{"email":1,"password":"x"}`, 400, nil, `{"error":"email must be a string","code":"wrong_field_type"}`), ""},
		{"an unknown path answered", exchange("GET", "/api/auth/secret", ``, 200, nil, `{}`),
			"GET /api/auth/secret -> 200 {}: not in the document: want 404 not_found"},
		{"an unknown path refused", exchange("GET", "/api/auth/secret", ``, 404, nil, `{"error":"Not found","code":"not_found"}`), ""},
		{"another method answered", exchange("PUT", "/api/auth/me", ``, 200, nil, `{}`),
			"PUT /api/auth/me -> 200 {}: the document has the path, not the method"},
		{"another method refused", exchange("PUT", "/api/auth/me", ``, 405, http.Header{"Allow": {"GET, HEAD"}}, `{"error":"Method not allowed","code":"method_not_allowed"}`), ""},
		{"a cookie the operation does not list", func() Exchange {
			x := exchange("POST", "/api/auth/forgot-password", `{"email":"a@example.com"}`, 200, http.Header{"Set-Cookie": {"authkit_session=x; Path=/"}},
				`{"message":"If an account exists for that email, a password reset link has been sent."}`)
			return x
		}(), "sets cookie authkit_session, which x-set-cookies [] does not list"},
		{"a cookie the operation lists", exchange("POST", "/api/auth/logout", ``, 200, http.Header{"Set-Cookie": {"authkit_session=; Path=/; Max-Age=0"}}, `{"message":"Logged out"}`), ""},
		{"a session route without its cookie, taken", exchange("GET", "/api/auth/me", ``, 200, nil, `{"id":"1","email":"a@example.com","name":"A","emailVerified":false,"emailVerifiedAt":null,"twoFactorEnabled":false,"recoveryCodesRemaining":0}`),
			"the document refuses the request (security requirement"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Check(tc.x)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Check = %v, want nil", err)
			case tc.want != "" && err == nil:
				t.Fatalf("Check = nil, want an error with %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("Check = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// TestProxyReportsAWrongSchema runs a real server behind the proxy with a
// deliberately wrong document (logout's answer made to need a field it
// does not have): the proxy reports the route, and passes the answer on.
func TestProxyReportsAWrongSchema(t *testing.T) {
	svc := newService(t)
	wrong := document(t, svc, func(doc map[string]any) {
		schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
		schemas["Message"] = map[string]any{"type": "object", "required": []string{"text"}}
	})
	c, err := New(wrong)
	if err != nil {
		t.Fatal(err)
	}
	backend := httptest.NewServer(nethttpauth.Handler(svc))
	defer backend.Close()
	var mu sync.Mutex
	var reports []string
	proxy := httptest.NewServer(c.handler(backend.URL, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, err.Error())
	}, nil))
	defer proxy.Close()

	resp, err := http.Post(proxy.URL+"/api/auth/logout", "application/json", bytes.NewReader(nil))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"message":"Logged out"}` {
		t.Errorf("through the proxy: %d %s, want the server's 200 {\"message\":\"Logged out\"}", resp.StatusCode, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 || !strings.HasPrefix(reports[0], `POST /api/auth/logout -> 200 {"message":"Logged out"}: response body doesn't match schema`) {
		t.Fatalf("reports = %q, want one naming POST /api/auth/logout", reports)
	}
}

// TestNewRefusesAnInvalidDocument: the document itself is validated.
func TestNewRefusesAnInvalidDocument(t *testing.T) {
	for name, doc := range map[string]string{
		"not 3.1":     `{"openapi": "3.0.3", "info": {"title": "x", "version": "1"}, "paths": {}}`,
		"a wrong ref": `{"openapi": "3.1.0", "info": {"title": "x", "version": "1"}, "paths": {"/a": {"get": {"responses": {"200": {"$ref": "#/components/responses/Nope"}}}}}}`,
		"no info":     `{"openapi": "3.1.0", "paths": {}}`,
	} {
		if _, err := New([]byte(doc)); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}
