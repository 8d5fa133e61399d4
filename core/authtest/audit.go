package authtest

import (
	"context"
	"slices"
	"sync"

	"github.com/authkit-go/authkit/core/auth"
)

// AuditLog records the security events a Service reports, for a test to
// check: set [AuditLog.Record] as auth.Config.Audit. The zero value is
// ready; it is safe for concurrent use. The flow suites of authtest and
// passkeystest check their Services' events with it.
type AuditLog struct {
	mu     sync.Mutex
	events []auth.Event
}

// Record appends e; its signature is auth.Config.Audit's.
func (a *AuditLog) Record(_ context.Context, e auth.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, e)
}

// Events returns a copy of every event recorded so far, oldest first.
func (a *AuditLog) Events() []auth.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.events)
}

// Of returns the events of type typ recorded so far, oldest first.
func (a *AuditLog) Of(typ auth.EventType) []auth.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []auth.Event
	for _, e := range a.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// Last returns the most recent event of type typ, and false if there is
// none.
func (a *AuditLog) Last(typ auth.EventType) (auth.Event, bool) {
	of := a.Of(typ)
	if len(of) == 0 {
		return auth.Event{}, false
	}
	return of[len(of)-1], true
}

// Count returns how many events of type typ were recorded for the user
// with the given id.
func (a *AuditLog) Count(typ auth.EventType, userID string) int {
	n := 0
	for _, e := range a.Of(typ) {
		if e.UserID == userID {
			n++
		}
	}
	return n
}

// Details returns the Detail of every event of type typ, oldest first.
func (a *AuditLog) Details(typ auth.EventType) []string {
	var out []string
	for _, e := range a.Of(typ) {
		out = append(out, e.Detail)
	}
	return out
}
