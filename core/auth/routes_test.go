package auth

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

func TestPaths(t *testing.T) {
	s := &Service{cfg: Config{Sessions: noRecords{}, TrustedDevices: noRecords{}, EmailCode: EmailCodeConfig{Enabled: true}}} // every route listed
	paths := s.Paths()
	byPattern := map[string]Path{}
	for _, p := range paths {
		if _, dup := byPattern[p.Pattern]; dup {
			t.Fatalf("path %s listed twice", p.Pattern)
		}
		byPattern[p.Pattern] = p
	}
	if len(paths) != len(routes) { // every authkit path has one method
		t.Fatalf("%d paths for %d routes", len(paths), len(routes))
	}
	for pattern, allow := range map[string]string{
		"/api/login":                     "POST",
		"/api/auth/me":                   "GET, HEAD",
		"/api/auth/verify-email/{token}": "GET, HEAD",
		"/api/auth/sessions/{id}":        "DELETE",
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
		r := s.Error(tc.status, tc.msg)
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
