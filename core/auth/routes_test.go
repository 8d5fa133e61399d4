package auth

import (
	"strings"
	"testing"
)

func TestPaths(t *testing.T) {
	s := &Service{}
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
