package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

func TestPaths(t *testing.T) {
	s := &Service{cfg: Config{Sessions: noRecords{}, TrustedDevices: noRecords{}, EmailCode: EmailCodeConfig{Enabled: true},
		EmailSignIn: EmailSignInConfig{Enabled: true}, Tokens: TokenConfig{Enabled: true}, APIKeys: APIKeysConfig{Enabled: true}}} // every route listed
	paths := s.Modules().Paths()
	byPattern := map[string]Path{}
	for _, p := range paths {
		if _, dup := byPattern[p.Pattern]; dup {
			t.Fatalf("path %s listed twice", p.Pattern)
		}
		byPattern[p.Pattern] = p
	}
	if len(paths) != len(routes)-1 { // every authkit path has one method but /api/auth/api-keys (GET and POST)
		t.Fatalf("%d paths for %d routes", len(paths), len(routes))
	}
	for pattern, allow := range map[string]string{
		"/api/login":                     "POST",
		"/api/auth/me":                   "GET, HEAD",
		"/api/auth/verify-email/{token}": "GET, HEAD",
		"/api/auth/sessions/{id}":        "DELETE",
		"/api/auth/api-keys":             "POST, GET, HEAD",
	} {
		if got := byPattern[pattern].Allow; got != allow {
			t.Errorf("Allow for %s = %q, want %q", pattern, got, allow)
		}
	}
	if got := byPattern["/api/auth/reset-password/{token}"].ColonPattern(); got != "/api/auth/reset-password/:token" {
		t.Errorf("ColonPattern = %q", got)
	}
	if !strings.HasPrefix(paths[0].Pattern, "/api/2fa/setup") {
		t.Errorf("Paths lost the route order: first is %s", paths[0].Pattern)
	}
}

func TestError(t *testing.T) {
	s := &Service{}
	for _, tc := range []struct {
		status    int
		msg, want string
	}{
		{404, "Cannot GET /x", `{"error":"Not found","code":"not_found"}`},
		{405, "", `{"error":"Method not allowed","code":"method_not_allowed"}`},
		{413, "body size exceeds the given limit", `{"error":"Request body too large","code":"body_too_large"}`},
		{500, "panic: runtime error: index out of range", `{"error":"Internal server error","code":"internal_error"}`},
		{503, "", `{"error":"Internal server error","code":"internal_error"}`},
		{431, "", `{"error":"Request Header Fields Too Large","code":"request_rejected"}`},
		{400, "Bad request body", `{"error":"Bad request body","code":"request_rejected"}`},
	} {
		r := s.Modules().Error(tc.status, tc.msg)
		if r.Status != tc.status || string(r.Body) != tc.want || r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("Error(%d, %q) = %d %s, want %d %s", tc.status, tc.msg, r.Status, r.Body, tc.status, tc.want)
		}
	}
}

// noRecords is a session.Store that holds nothing, for tests that only
// need Config.Sessions set.
type noRecords struct{}

func (noRecords) Create(context.Context, session.Record) error { return nil }
func (noRecords) Get(context.Context, string) (session.Record, error) {
	return session.Record{}, user.ErrNotFound
}
func (noRecords) Touch(context.Context, string, time.Time, time.Time) error { return user.ErrNotFound }
func (noRecords) Delete(context.Context, string, string) error              { return user.ErrNotFound }
func (noRecords) List(context.Context, string) ([]session.Record, error)    { return nil, nil }
func (noRecords) DeleteAll(context.Context, string, string) error           { return nil }

// AddRoutes adds a module's routes to the table the Service serves and
// documents; a route the table has, a route not made by NewRoute or
// StaticRoute, and any route once the table was served are refused, and
// the table stays as it was.
func TestAddRoutes(t *testing.T) {
	ok := func(context.Context, *Visit, Request) (any, error) { return map[string]bool{"success": true}, nil }
	s := newFlow(t, nil).s
	before := len(s.table())
	if err := s.Modules().AddRoutes(NewRoute(http.MethodPost, "/api/extra", ok, Operation{ID: "extra"})); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		rt   Route
		want string
	}{
		{"core's", NewRoute(http.MethodPost, "/api/login", ok, Operation{}), "auth: AddRoutes POST /api/login: the Service has that route already"},
		{"a switched-off feature's", NewRoute(http.MethodGet, "/api/auth/sessions", ok, Operation{}), "auth: AddRoutes GET /api/auth/sessions: the Service has that route already"},
		{"added before", NewRoute(http.MethodPost, "/api/extra", ok, Operation{}), "auth: AddRoutes POST /api/extra: the Service has that route already"},
		{"not NewRoute's", Route{Method: http.MethodGet, Pattern: "/api/other"}, "auth: AddRoutes GET /api/other: not a route of NewRoute or StaticRoute"},
	} {
		if err := s.Modules().AddRoutes(NewRoute(http.MethodGet, "/api/fine", ok, Operation{}), tc.rt); err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if got := len(s.table()); got != before+1 {
		t.Fatalf("the table has %d routes, want %d: a refused call added some", got, before+1)
	}
	if got := s.Modules().Routes(); got[len(got)-1].Pattern != "/api/extra" {
		t.Errorf("Routes ends with %s, want the module's /api/extra", got[len(got)-1].Pattern)
	}
	if err := s.Modules().AddRoutes(NewRoute(http.MethodGet, "/api/late", ok, Operation{})); !errors.Is(err, ErrRoutesServed) {
		t.Errorf("after Routes: err = %v, want ErrRoutesServed", err)
	}
	s = newFlow(t, nil).s
	_ = s.Modules().Paths()
	if err := s.Modules().AddRoutes(NewRoute(http.MethodGet, "/api/late", ok, Operation{})); !errors.Is(err, ErrRoutesServed) {
		t.Errorf("after Paths: err = %v, want ErrRoutesServed", err)
	}
}

// Handle runs a module's route as core's: the cross-origin check of a
// state-changing route before the route (none for a CrossSite one), its error or body rendered, a
// panic answered 500; a static route answers its bytes.
func TestHandleModuleRoute(t *testing.T) {
	s := newFlow(t, nil).s
	calls := 0
	rts := []Route{
		NewRoute(http.MethodPost, "/api/extra", func(ctx context.Context, v *Visit, r Request) (any, error) {
			calls++
			if r.Header("X-Fail") != "" {
				return nil, ErrNotAuthenticated
			}
			if r.Header("X-Panic") != "" {
				panic("boom")
			}
			return map[string]string{"got": r.Header("X-Value")}, nil
		}, Operation{ID: "extra"}),
		StaticRoute("/api/extra/x.js", "text/javascript; charset=utf-8", []byte("alert(1)")),
		NewRoute(http.MethodPost, "/api/extra/form-post", func(context.Context, *Visit, Request) (any, error) {
			calls++
			return map[string]string{"got": "post"}, nil
		}, Operation{ID: "formPost", CrossSite: true}),
	}
	if err := s.Modules().AddRoutes(rts...); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		rt      Route
		headers map[string]string
		want    string
		calls   int
	}{
		{"cross-origin", rts[0], map[string]string{"Sec-Fetch-Site": "cross-site"}, `403 {"error":"Cross-origin request blocked","code":"cross_origin_blocked"}`, 0},
		{"success", rts[0], map[string]string{"X-Value": "v"}, `200 {"got":"v"}`, 1},
		{"an error", rts[0], map[string]string{"X-Fail": "1"}, `401 {"error":"Not authenticated","code":"not_authenticated"}`, 1},
		{"a panic", rts[0], map[string]string{"X-Panic": "1"}, `500 {"error":"Internal server error","code":"internal_error"}`, 1},
		{"static", rts[1], map[string]string{"Sec-Fetch-Site": "cross-site"}, `200 alert(1)`, 0},
		{"cross-site allowed", rts[2], map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://provider.example"}, `200 {"got":"post"}`, 1},
	} {
		calls = 0
		resp := s.Modules().Handle(tc.rt, &fakeRequest{method: tc.rt.Method, host: "example.com", headers: tc.headers})
		if got := fmt.Sprintf("%d %s", resp.Status, resp.Body); got != tc.want || calls != tc.calls {
			t.Errorf("%s: %s (route called %d times), want %s (%d)", tc.name, got, calls, tc.want, tc.calls)
		}
	}
	resp := s.Modules().Handle(rts[1], &fakeRequest{method: http.MethodGet})
	for k, want := range map[string]string{"Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("static route's %s = %q, want %q", k, got, want)
		}
	}
}

// A module's route is a flow of the Observer's, named as Route.Flow names
// it and ended with its status; a static route is none.
func TestModuleRouteObserved(t *testing.T) {
	rec := &recorder{}
	s := mustNewWith(t, func(c *Config) { c.Observer = rec })
	rts := []Route{
		NewRoute(http.MethodPost, "/api/extra/go", func(context.Context, *Visit, Request) (any, error) { return nil, ErrNotAuthenticated }, Operation{}),
		StaticRoute("/api/extra/x.js", "text/javascript", []byte("1")),
	}
	if err := s.Modules().AddRoutes(rts...); err != nil {
		t.Fatal(err)
	}
	for _, rt := range rts {
		s.Modules().Handle(rt, &fakeRequest{method: rt.Method})
	}
	want := []string{"flow extra/go by POST /api/extra/go", "end extra/go 401"}
	if !slices.Equal(rec.log, want) {
		t.Errorf("observer saw\n%q\nwant\n%q", rec.log, want)
	}
}
