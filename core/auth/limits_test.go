package auth

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/user"
)

// TestStoreFullEventOncePerMinute: however many requests find a limit's
// store full at once, one limit_store_full event is reported per minute
// per limit.
func TestStoreFullEventOncePerMinute(t *testing.T) {
	now := time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)
	var clock sync.Mutex
	var mu sync.Mutex
	var events []Event
	s := mustNewWith(t, func(c *Config) {
		c.Now = func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
		c.Audit = func(_ context.Context, e Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e)
		}
	})
	ctx := context.Background()
	burst := func() {
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				c := s.Visit(jsonReq(`{}`)) // one request each
				s.storeFull(ctx, c, s.lim.loginEmail)
				s.storeFull(ctx, c, s.lim.resetEmail)
			})
		}
		wg.Wait()
	}
	want := func(n int) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if len(events) != n {
			t.Fatalf("%d events, want %d: %+v", len(events), n, events)
		}
		for _, e := range events {
			if e.Type != EventLimitStoreFull || (e.Detail != "login:email" && e.Detail != "reset:email") {
				t.Fatalf("event %+v", e)
			}
		}
	}
	burst()
	want(2) // one per limit
	clock.Lock()
	now = now.Add(59 * time.Second)
	clock.Unlock()
	burst()
	want(2)
	clock.Lock()
	now = now.Add(time.Second)
	clock.Unlock()
	burst()
	want(4)
}

// refundDown is a memory store whose Refund fails.
type refundDown struct{ *ratelimit.MemoryStore }

func (refundDown) Refund(context.Context, string, time.Time) error {
	return errors.New("connection refused")
}

// TestLoginRefundFails: a refund the store cannot make leaves the login
// answered as usual and the attempt counted (the safe side).
func TestLoginRefundFails(t *testing.T) {
	ms := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{CleanupInterval: -1})
	t.Cleanup(func() { ms.Close() })
	users := oneUser(t)
	s := mustNewWith(t, func(c *Config) {
		c.Users = users
		c.LimitStore = func(string) ratelimit.Store { return refundDown{ms} }
	})
	if status, msg := login(t, s); status != 200 || msg != "" {
		t.Fatalf("login with a failing refund: %d %q, want 200", status, msg)
	}
	n, _, err := ms.Increment(context.Background(), "login:ip:203.0.113.9", time.Minute)
	if err != nil || n != 2 {
		t.Fatalf("address count after the login = %d (%v), want 1 before this increment", n-1, err)
	}
}

// oneUserStore holds ada@example.com, password "correct horse".
type oneUserStore struct {
	noUsers
	u *user.User
}

func (s oneUserStore) ByEmail(_ context.Context, email string) (*user.User, error) {
	if email == s.u.Email {
		u := *s.u
		return &u, nil
	}
	return s.noUsers.ByEmail(context.Background(), email)
}

func oneUser(t *testing.T) oneUserStore {
	t.Helper()
	h, err := password.ForTesting().Hash(context.Background(), "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	return oneUserStore{u: &user.User{ID: "u1", Email: "ada@example.com", Name: "Ada", PasswordHash: h}}
}
