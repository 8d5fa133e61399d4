package auth

import (
	"context"
	"net/http"
	"testing"

	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/user"
)

// BenchmarkHandleMe: GET /api/auth/me with a valid session through Handle,
// the path every JSON route takes (the flow, one store read). Run before and
// after a change to Observer to show that a Service without one pays
// nothing for it.
func BenchmarkHandleMe(b *testing.B) {
	u := &user.User{ID: "u1", Email: "ada@example.com"}
	benchMe(b, testService(b, &idUsers{users: map[string]*user.User{"u1": u}}, false), u)
}

// benchMe times GET /api/auth/me as u through s.Handle.
func benchMe(b *testing.B, s *Service, u *user.User) {
	r := &fakeRequest{method: http.MethodGet, cookies: map[string]string{s.Modules().SessionManager().CookieName(): sessionCookie(b, s, u)}}
	var me Route
	for _, rt := range s.Modules().Routes() {
		if rt.Pattern == "/api/auth/me" {
			me = rt
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if resp := s.Modules().Handle(me, r); resp.Status != http.StatusOK {
			b.Fatalf("status %d", resp.Status)
		}
	}
}

// nopObserver is an Observer that does nothing: its benchmark is the cost
// of the hook itself (the wrapped store parts, the calls), without any
// telemetry library behind it.
type nopObserver struct{}

func (nopObserver) StartFlow(ctx context.Context, _ Flow) (context.Context, func(int)) {
	return ctx, func(int) {}
}

func (nopObserver) StartStoreCall(ctx context.Context, _, _ string) (context.Context, func(error)) {
	return ctx, func(error) {}
}

func (nopObserver) Event(context.Context, Event) {}

// BenchmarkHandleMeObserved is BenchmarkHandleMe with an Observer that
// does nothing.
func BenchmarkHandleMeObserved(b *testing.B) {
	u := &user.User{ID: "u1", Email: "ada@example.com"}
	benchMe(b, mustNewWith(b, func(c *Config) {
		c.Users = &idUsers{users: map[string]*user.User{"u1": u}}
		c.LimitStore = func(string) ratelimit.Store { return downStore{} }
		c.Observer = nopObserver{}
	}), u)
}
