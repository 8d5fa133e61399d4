package authtest

import (
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/user"
)

// Harness is what a framework module (or an example server) hands the
// suite.
type Harness struct {
	// Start serves svc through the framework under test on 127.0.0.1:0
	// and returns the base URL ("http://127.0.0.1:PORT"). It registers the
	// server's shutdown with t.Cleanup. Required.
	Start func(t *testing.T, svc *auth.Service) string

	// NewUsers returns a fresh, empty user store for one test. Required
	// (core cannot import the store module; framework modules pass
	// store.NewMemory).
	NewUsers func(t *testing.T) user.Store

	// NewLimitStore returns the store of one rate limit for one test (name
	// is the limit's, e.g. "login:ip"). Default: a fresh in-memory store
	// per limit, on the suite's clock.
	NewLimitStore func(t *testing.T, clock func() time.Time, name string) ratelimit.Store

	// RealTimeLimits marks limit stores that keep their own time (Redis):
	// the suite then skips the tests that move the clock past a window.
	RealTimeLimits bool
}

// Clock is the suite's settable clock; every Service the suite builds
// reads time from it.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
