package authtest

import (
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// OnMemory returns the Harness of a framework module's own run of the
// suite: start serves the Service through the framework, and every test
// gets fresh in-memory stores (core/store) for its users and its session
// records, the records on the suite's clock, so the Sessions topic runs
// too. The stores' own suites prove the other stores; this run proves the
// framework.
func OnMemory(start func(t *testing.T, svc *auth.Service) string) Harness {
	return Harness{
		Start: start,
		NewUsers: func(*testing.T) user.Store {
			return store.NewMemory(store.MemoryConfig{})
		},
		NewSessions: func(_ *testing.T, now func() time.Time) session.Store {
			return store.NewMemorySessions(store.MemoryConfig{Now: now})
		},
	}
}
