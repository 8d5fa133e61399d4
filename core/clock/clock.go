// Package clock is a settable clock for tests: it stands still until it is
// moved, so a test crosses an expiry or a rate-limit window without
// sleeping. Hand its Now to whatever takes a time source (auth.Config.Now,
// ratelimit.Config.Now, a store's Now). It is the one clock of the flow
// suite (core/authtest) and the store suites (core/store/storetest).
package clock

import (
	"sync"
	"time"
)

// Clock is a settable clock. Its zero value stands at the zero time. It is
// safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock stopped at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
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
