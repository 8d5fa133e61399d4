package auth

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/clock"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// countedRecords is a memory record store that counts reads and writes.
type countedRecords struct {
	*store.MemorySessions
	gets, touches atomic.Int64
}

func (c *countedRecords) Get(ctx context.Context, id string) (session.Record, error) {
	c.gets.Add(1)
	return c.MemorySessions.Get(ctx, id)
}

func (c *countedRecords) Touch(ctx context.Context, id string, seen, expires time.Time) error {
	c.touches.Add(1)
	return c.MemorySessions.Touch(ctx, id, seen, expires)
}

// TestAuthenticateRecordCost: with a record store, RequireUser's decision
// reads the record once and the user once per request, and writes the
// record's last use at most once a minute.
func TestAuthenticateRecordCost(t *testing.T) {
	clk := clock.New(time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC))
	recs := &countedRecords{MemorySessions: store.NewMemorySessions(store.MemoryConfig{Now: clk.Now})}
	u := &user.User{ID: "u1", Email: "ada@example.com"}
	users := &idUsers{users: map[string]*user.User{"u1": u}}
	s := mustNewWith(t, func(c *Config) { c.Users = users; c.Sessions = recs; c.Now = clk.Now })
	r := &fakeRequest{method: http.MethodGet, cookies: map[string]string{s.Modules().SessionManager().CookieName(): sessionCookie(t, s, u)}}
	users.reads = 0
	for range 10 {
		clk.Advance(5 * time.Second)
		if got, resp := s.Authenticate(r); got == nil || resp != nil {
			t.Fatalf("Authenticate = %v, %v", got, resp)
		}
	}
	if g, w, n := recs.gets.Load(), recs.touches.Load(), users.reads; g != 10 || w != 0 || n != 10 {
		t.Errorf("10 requests in 50 s: %d record reads, %d record writes, %d user reads; want 10, 0, 10", g, w, n)
	}
	clk.Advance(10 * time.Second) // a minute after login
	if got, _ := s.Authenticate(r); got == nil {
		t.Fatal("no user")
	}
	if g, w := recs.gets.Load(), recs.touches.Load(); g != 11 || w != 1 {
		t.Errorf("the request a minute after login: %d record reads, %d writes in all; want 11, 1", g, w)
	}
}

// BenchmarkAuthenticateRecords is BenchmarkAuthenticate's "lean" path with
// the memory record store: the cost of one record read per request.
func BenchmarkAuthenticateRecords(b *testing.B) {
	u := &user.User{ID: "u1", Email: "ada@example.com"}
	for name, recs := range map[string]session.Store{"stateless": nil, "records": store.NewMemorySessions(store.MemoryConfig{})} {
		b.Run(name, func(b *testing.B) {
			s := mustNewWith(b, func(c *Config) {
				c.Users = &idUsers{users: map[string]*user.User{"u1": u}}
				c.Sessions = recs
			})
			r := &fakeRequest{method: http.MethodGet, cookies: map[string]string{s.Modules().SessionManager().CookieName(): sessionCookie(b, s, u)}}
			b.ReportAllocs()
			for b.Loop() {
				if got, _ := s.Authenticate(r); got == nil {
					b.Fatal("no user")
				}
			}
		})
	}
	// Token mode: the same record read, for an access token as
	// Authorization: Bearer.
	b.Run("access token", func(b *testing.B) {
		s, access := tokenService(b, u)
		r := &fakeRequest{method: http.MethodGet, headers: map[string]string{"Authorization": "Bearer " + access}}
		b.ReportAllocs()
		for b.Loop() {
			if got, _ := s.Authenticate(r); got == nil {
				b.Fatal("no user")
			}
		}
	})
}

// tokenService is a service in token mode whose only user is u, signed in
// once: it returns the service and that login's access token.
func tokenService(tb testing.TB, u *user.User) (*Service, string) {
	tb.Helper()
	s := mustNewWith(tb, func(c *Config) {
		c.Users = &idUsers{users: map[string]*user.User{u.ID: u}}
		c.Sessions = store.NewMemorySessions(store.MemoryConfig{})
		c.Tokens.Enabled = true
	})
	ts := s.Modules().SessionManager().TokenSession("")
	if err := ts.Login(tb.Context(), u, false); err != nil {
		tb.Fatal(err)
	}
	tk, _ := ts.Tokens()
	return s, tk.Access
}

// AuthenticateCredential tells how a request authenticated: the cookie
// is a session, a bearer access token of token mode an access token.
func TestAuthenticateCredentialKinds(t *testing.T) {
	u := &user.User{ID: "u1", Email: "ada@example.com"}
	s, access := tokenService(t, u)
	for name, tc := range map[string]struct {
		r    *fakeRequest
		want CredentialKind
	}{
		"cookie":       {&fakeRequest{method: http.MethodGet, cookies: map[string]string{s.Modules().SessionManager().CookieName(): sessionCookie(t, s, u)}}, CredentialSession},
		"access token": {&fakeRequest{method: http.MethodGet, headers: map[string]string{"Authorization": "Bearer " + access}}, CredentialAccessToken},
	} {
		got, c, resp := s.AuthenticateCredential(tc.r, false)
		if resp != nil || got == nil || got.ID != "u1" || c.Kind != tc.want || !c.All {
			t.Errorf("%s: %v, %+v, %v; want u1 with a %s credential of every scope", name, got, c, resp, tc.want)
		}
	}
}
