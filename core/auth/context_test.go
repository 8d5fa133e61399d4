package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/core/user"
)

// seenUsers is a user store that writes down the context of each ByEmail
// and, once that context has ended, fails as a database driver does: with
// the context's error.
type seenUsers struct {
	user.Store
	mu   sync.Mutex
	seen []context.Context
}

func (u *seenUsers) ByEmail(ctx context.Context, _ string) (*user.User, error) {
	u.mu.Lock()
	u.seen = append(u.seen, ctx)
	u.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("test: query: %w", err)
	}
	return nil, fmt.Errorf("test: %w", user.ErrNotFound)
}

func (u *seenUsers) last(t *testing.T) context.Context {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.seen) != 1 {
		t.Fatalf("ByEmail called %d times, want once", len(u.seen))
	}
	return u.seen[0]
}

type callerMark struct{}

// TestTypedCallContext: a typed method's ctx is the one context of the
// call: a caller's ctx that was cancelled reaches the store cancelled
// (while the request's is live), carrying the caller's values, and the
// call answers what a cancelled backend answers, 503 with Retry-After;
// with an Observer too, whose flow context derives from the caller's.
func TestTypedCallContext(t *testing.T) {
	for _, observed := range []bool{false, true} {
		t.Run(fmt.Sprintf("observer %v", observed), func(t *testing.T) {
			users := &seenUsers{}
			rec := &recorder{}
			s := mustNewWith(t, func(c *Config) {
				c.Users = users
				c.Lockout, c.Limits = Lockout{Max: -1}, Limits{LoginIP: Off, LoginEmail: Off}
				if observed {
					c.Observer = rec
				}
			})
			v := s.Visit(jsonReq(`{}`)) // the request's context is never cancelled
			ctx, cancel := context.WithCancel(context.WithValue(context.Background(), callerMark{}, "caller"))
			cancel()
			_, err := s.Login(ctx, v, LoginInput{Email: "ada@example.com", Password: "correct horse"})
			if !errors.Is(err, context.Canceled) || AsError(err) != ErrUnavailable {
				t.Fatalf("login: %v (answers %v), want context.Canceled answered as ErrUnavailable", err, AsError(err))
			}
			got := users.last(t)
			if got.Err() == nil || got.Value(callerMark{}) != "caller" {
				t.Errorf("the store's context: err %v, mark %v; want the caller's, cancelled", got.Err(), got.Value(callerMark{}))
			}
			resp := s.Answer(ctx, v, "login", nil, err)
			if resp.Status != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "5" {
				t.Errorf("answer %d, Retry-After %q; want 503 and 5", resp.Status, resp.Header.Get("Retry-After"))
			}
			if observed {
				if want := []string{"flow login by call", "store Accounts.ByEmail in login: error", "end login 503"}; !slices.Equal(rec.log, want) {
					t.Errorf("observed %q, want %q", rec.log, want)
				}
			}
		})
	}
}

// TestNestedCallContext: a typed method called inside another flow (a
// module's route, Service.Observe) with a context of its own derived from
// the flow's uses that context, not the flow's: its cancellation reaches
// the store, and the call is still part of the outer flow, reported once.
func TestNestedCallContext(t *testing.T) {
	users := &seenUsers{}
	rec := &recorder{}
	s := mustNewWith(t, func(c *Config) {
		c.Users, c.Observer = users, rec
		c.Lockout, c.Limits = Lockout{Max: -1}, Limits{LoginIP: Off, LoginEmail: Off}
	})
	v := s.Visit(jsonReq(`{}`))
	fctx, end := s.Observe(context.Background(), v, Flow{Name: "outer"})
	inner, cancel := context.WithCancel(fctx)
	cancel()
	_, err := s.Login(inner, v, LoginInput{Email: "ada@example.com", Password: "correct horse"})
	end(err)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("login: %v, want context.Canceled", err)
	}
	if users.last(t).Err() == nil {
		t.Error("the store's context is not the caller's cancelled one")
	}
	if want := []string{"flow outer by call", "store Accounts.ByEmail in outer: error", "end outer 503"}; !slices.Equal(rec.log, want) {
		t.Errorf("observed %q, want %q", rec.log, want)
	}
}
