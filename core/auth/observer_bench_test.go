package auth

import (
	"net/http"
	"testing"

	"github.com/authkit-go/authkit/core/user"
)

// BenchmarkHandleMe: GET /api/auth/me with a valid session through Handle,
// the path every JSON route takes (the flow, one store read). Run before and
// after a change to Observer to show that a Service without one pays
// nothing for it.
func BenchmarkHandleMe(b *testing.B) {
	u := &user.User{ID: "u1", Email: "ada@example.com"}
	s := testService(b, &idUsers{users: map[string]*user.User{"u1": u}}, false)
	r := &fakeRequest{method: http.MethodGet, cookies: map[string]string{s.Sessions().CookieName(): sessionCookie(b, s, u)}}
	var me Route
	for _, rt := range s.Routes() {
		if rt.Pattern == "/api/auth/me" {
			me = rt
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if resp := s.Handle(me, r); resp.Status != http.StatusOK {
			b.Fatalf("status %d", resp.Status)
		}
	}
}
