package authtest

import (
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clock"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/session"
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
	// (OnMemory passes store.NewMemory).
	NewUsers func(t *testing.T) user.Store

	// NewLimitStore returns the store of one rate limit for one test (name
	// is the limit's, e.g. "login:ip"). Default: a fresh in-memory store
	// per limit, on the suite's clock.
	NewLimitStore func(t *testing.T, clock func() time.Time, name string) ratelimit.Store

	// NewSessions returns a fresh, empty session-record store for one test
	// (auth.Config.Sessions), now being the suite's clock. The Sessions
	// topic runs on it; without it that topic is skipped (but its test of
	// a Service without records). The other topics run on stateless
	// cookies either way. Default: nil.
	NewSessions func(t *testing.T, now func() time.Time) session.Store

	// RealTimeLimits marks limit stores that keep their own time (Redis):
	// the suite then skips the tests that move the clock past a window.
	RealTimeLimits bool

	// FastHashing makes the Services hash new passwords and recovery codes
	// with a test-only hasher (SHA-256, no cost; it still verifies the
	// bcrypt hashes of seeded users) instead of bcrypt at its minimum cost,
	// except in the topics about the hashes themselves (their format, the
	// upgrade at login), which keep bcrypt. Under the race detector bcrypt
	// is about two thirds of the suite's CPU time, and the flows take the
	// same path whatever the hasher: one run of a module with bcrypt
	// (nethttpauth's) proves them with it; a second framework or store
	// may set FastHashing. Default: false.
	FastHashing bool
}

// Clock is the suite's settable clock; every Service the suite builds
// reads time from it. It is core/clock's, the clock of store/storetest too.
type Clock = clock.Clock
