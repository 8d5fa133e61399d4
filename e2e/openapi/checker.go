// Package openapi is the drift test of authkit's OpenAPI document: every
// request and answer of the flow suites (core/authtest and
// passkeys/passkeystest, on net/http: the frameworks are proven identical
// by their own runs of the suites) passes through a validating reverse
// proxy that checks it against the document the Service builds
// (auth.Service.OpenAPI, from its route table, the passkeys module's
// routes among them), so the document cannot drift from the code. The
// cases of listed_test.go and listed_passkeys_test.go answer, through the
// same proxy, the codes the suites never reach (a race the store reports,
// a limit, an account deleted meanwhile); after a whole run TestMain fails
// for any code a route lists as its own (auth.Operation.Errors) that no
// exchange answered.
//
// The document is loaded and validated with getkin/kin-openapi, whose
// openapi3 package reads OpenAPI 3.1 with JSON Schema 2020-12 (since its
// 3.1 support was merged in 2026) and whose openapi3filter checks a
// request and a response against an operation. pb33f/libopenapi-validator
// does the same, but its releases that read 3.1 fully need Go 1.26, and
// authkit's modules stay on go 1.25.
//
// What the proxy refuses, naming the route:
//
//   - an answer whose status the operation does not list, whose body does
//     not match the status's schema, or that lacks a required header
//     (Retry-After on 429 and 503, Allow on 405);
//   - an error code that is not authkit's for that status ([auth.Codes]),
//     but for the apps' own codes of the suite's hooks ([AppCodes]), or
//     not one the route lists for that status (the enum of the code in
//     its operation's response; the app codes only where the operation
//     allows an app's own);
//   - a Content-Language or Vary header off its schema (a language tag;
//     Accept-Language);
//   - a request the document refuses (a field of the wrong type, a missing
//     required field or cookie, an unknown content type) answered with
//     anything but a 4xx;
//   - a cookie set or expired that the operation's x-set-cookies does not
//     list;
//   - a path or a method the document does not have, answered with
//     anything but authkit's 404 not_found or 405 method_not_allowed.
//
// Run: cd e2e && go test -count=1 ./openapi/
package openapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/authkit-go/authkit/core/auth"
)

// AppCodes are the codes the flow suite's own hooks answer with
// (core/authtest, extend.go and deletion.go), by status: an app's hooks may add codes, and
// the document allows any lower snake_case code beside authkit's.
var AppCodes = map[string]int{
	"invitation_required": http.StatusForbidden,
	"company_required":    http.StatusBadRequest,
	"account_suspended":   http.StatusForbidden,
	"open_invoices":       http.StatusForbidden,
}

// Checker checks requests and answers against one document.
type Checker struct {
	doc    *openapi3.T
	router routers.Router
	codes  map[string]int // code -> status
}

var (
	loadedMu sync.Mutex
	loaded   = map[[32]byte]*Checker{} // the suites build hundreds of Services with a few documents
)

// New loads and validates doc (OpenAPI 3.1, JSON) and returns its Checker.
func New(doc []byte) (*Checker, error) {
	key := sha256.Sum256(doc)
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if c, ok := loaded[key]; ok {
		return c, nil
	}
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if !d.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("openapi %q, want 3.1", d.OpenAPI)
	}
	if err := d.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	r, err := gorillamux.NewRouter(d)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	c := &Checker{doc: d, router: r, codes: map[string]int{}}
	for _, e := range auth.Codes() {
		c.codes[string(e.Code)] = e.Status
	}
	for code, st := range AppCodes {
		c.codes[code] = st
	}
	loaded[key] = c
	return c, nil
}

// Exchange is one request and its answer, bodies read.
type Exchange struct {
	Request      *http.Request
	RequestBody  []byte
	Response     *http.Response
	ResponseBody []byte
}

// Check returns why x does not match the document, naming the route, or
// nil.
func (c *Checker) Check(x Exchange) error {
	_, err := c.check(x)
	return err
}

// check is Check, also returning the operation ("POST /api/login") x
// matched, "" for none.
func (c *Checker) check(x Exchange) (string, error) {
	req, resp := x.Request, x.Response
	name := req.Method + " " + req.URL.Path
	op := ""
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s -> %d %s: %s", name, resp.StatusCode, bytes.TrimSpace(x.ResponseBody), fmt.Sprintf(format, args...))
	}
	body, err := c.errorBody(resp.StatusCode, x.ResponseBody)
	if err != nil {
		return op, fail("%v", err)
	}

	// Route lookup; HEAD is a GET without a body.
	look := req.Clone(context.Background())
	// The path as ServeMux matches it, each segment unescaped on its own: a
	// spelling such as /api/%6Cogin reaches the login route there, while an
	// escaped slash (/api%2Flogin) stays inside its segment and matches
	// nothing.
	if !strings.Contains(strings.ToLower(req.URL.EscapedPath()), "%2f") {
		look.URL.RawPath = ""
	}
	if look.Method == http.MethodHead {
		look.Method = http.MethodGet
	}
	route, params, err := c.router.FindRoute(look)
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed):
		if resp.StatusCode != http.StatusMethodNotAllowed || body.Code != "method_not_allowed" || resp.Header.Get("Allow") == "" {
			return op, fail("the document has the path, not the method: want 405 method_not_allowed with Allow")
		}
		return op, nil
	case err != nil:
		if resp.StatusCode != http.StatusNotFound || body.Code != "not_found" {
			return op, fail("not in the document: want 404 not_found")
		}
		return op, nil
	}
	name = req.Method + " " + route.Path
	op = name
	if err := routeCode(route, resp.StatusCode, body.Code); err != nil {
		return op, fail("%v", err)
	}

	// The request.
	vreq := req.Clone(context.Background())
	if len(x.RequestBody) > 0 && vreq.Header.Get("Content-Type") == "" {
		vreq.Header.Set("Content-Type", "application/json") // authkit reads a body without a type as JSON
	}
	vreq.Body = io.NopCloser(bytes.NewReader(x.RequestBody))
	in := &openapi3filter.RequestValidationInput{
		Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: cookieAuth, MultiError: false},
	}
	// A request the server refused (4xx) may be anything; one it took
	// must be one the document takes. (Checking only those keeps the
	// hostile corpus cheap: kin-openapi renders a refused value whole.)
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return op, fail("the document refuses the request (%v), the server did not", err)
		}
	}

	// The cookies: only those the operation lists in x-set-cookies.
	listed, _ := route.Operation.Extensions["x-set-cookies"].([]any)
	for _, ck := range resp.Cookies() {
		if !slices.Contains(listed, any(ck.Name)) {
			return op, fail("sets cookie %s, which x-set-cookies %v does not list", ck.Name, listed)
		}
	}

	// The answer.
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	out.SetBodyBytes(x.ResponseBody)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return op, fail("%v", err)
	}
	return op, nil
}

// errorBody checks the code of an error answer: one authkit (or the
// suite's hooks) answers with that status.
func (c *Checker) errorBody(status int, b []byte) (errBody, error) {
	var e errBody
	if status < 400 {
		return e, nil
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("error body is not JSON: %v", err)
	}
	want, ok := c.codes[e.Code]
	switch {
	case !ok:
		return e, fmt.Errorf("code %q is not authkit's", e.Code)
	case want != status && e.Code != "request_rejected" && e.Code != "internal_error":
		// request_rejected carries a framework's status, internal_error
		// every 5xx but 503 service_unavailable's.
		return e, fmt.Errorf("code %q answers %d, not %d", e.Code, want, status)
	}
	return e, nil
}

// routeCode checks the code of an error answer of route against the
// codes its operation lists for the status (the code property's enum):
// a code authkit has, but not for this route, fails. Where the operation
// allows an app's own codes too (the routes whose hooks may refuse),
// those of the suite's hooks ([AppCodes]) pass. A status the operation
// does not list is left to the response validation, which names it.
func routeCode(route *routers.Route, status int, code string) error {
	if status < 400 {
		return nil
	}
	r := route.Operation.Responses.Status(status)
	if r == nil || r.Value == nil {
		return nil
	}
	mt := r.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil || mt.Schema.Value.Properties["code"] == nil {
		return fmt.Errorf("the %d response has no code", status)
	}
	s := mt.Schema.Value.Properties["code"].Value
	enum, appCodes := s.Enum, false
	if len(s.AnyOf) > 0 && s.AnyOf[0].Value != nil {
		enum, appCodes = s.AnyOf[0].Value.Enum, true
	}
	if slices.Contains(enum, any(code)) {
		return nil
	}
	if st, ok := AppCodes[code]; ok && appCodes && st == status {
		return nil
	}
	return fmt.Errorf("code %q is not one %s %s answers %d with: %v", code, route.Method, route.Path, status, enum)
}

type errBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// cookieAuth checks the security of an operation as authkit does first:
// its cookie is there, or in token mode its bearer token (whether either
// is valid is the server's to say).
func cookieAuth(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s := in.SecurityScheme
	req := in.RequestValidationInput.Request
	switch {
	case s != nil && s.Type == "apiKey" && s.In == "cookie":
		if _, err := req.Cookie(s.Name); err != nil {
			return fmt.Errorf("no %s cookie", s.Name)
		}
	case s != nil && s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		if h := req.Header.Get("Authorization"); len(h) < 8 || !strings.EqualFold(h[:7], "bearer ") {
			return errors.New("no Authorization: Bearer header")
		}
	default:
		return fmt.Errorf("security scheme %s is neither a cookie nor a bearer token", in.SecuritySchemeName)
	}
	return nil
}

// Answer is an exchange that matched the document: its operation
// ("POST /api/login"), its status and, for an error, its code.
type Answer struct {
	Op     string
	Status int
	Code   string
}

// Proxy serves a validating reverse proxy to target (a base URL) on
// 127.0.0.1:0 until t ends and returns its base URL. Every exchange
// through it that does not match the document fails t, naming the route.
// answered, when not nil, gets each exchange of an operation that matched
// it: a 2xx, or an error with the code it answered.
func (c *Checker) Proxy(t testing.TB, target string, answered func(Answer)) string {
	srv := httptest.NewServer(c.handler(target, func(err error) { t.Error(err) }, answered))
	t.Cleanup(srv.Close)
	return srv.URL
}

// handler is the proxy: it forwards each request to target, checks the
// exchange and passes the answer on unchanged. report gets each mismatch.
func (c *Checker) handler(target string, report func(error), answered func(Answer)) http.Handler {
	u, err := url.Parse(target)
	if err != nil {
		panic(err) // the suite's own URL
	}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		// The server sees the request as the client sent it: its Host
		// (the cross-origin check) and its X-Forwarded-For (the suite's
		// client-address tests), nothing of the proxy's.
		pr.SetURL(u)
		pr.Out.Host = pr.In.Host
		for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
			if v, ok := pr.In.Header[h]; ok {
				pr.Out.Header[h] = v
			}
		}
	}}
	rp.ModifyResponse = func(resp *http.Response) error {
		reqBody, _ := resp.Request.Context().Value(bodyKey{}).([]byte)
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		op, err := c.check(Exchange{Request: resp.Request, RequestBody: reqBody, Response: resp, ResponseBody: b})
		if err != nil {
			report(err)
		}
		if err == nil && op != "" && answered != nil && (resp.StatusCode/100 == 2 || resp.StatusCode >= 400) {
			a := Answer{Op: op, Status: resp.StatusCode}
			if resp.StatusCode >= 400 {
				var e errBody
				_ = json.Unmarshal(b, &e) // check read it
				a.Code = e.Code
			}
			answered(a)
		}
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bodyKey{}, b)))
	})
}

type bodyKey struct{}
