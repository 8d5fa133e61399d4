package session

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Record is one server-side session: what a [Store] keeps so that a
// session can be listed and ended before its cookie expires. The cookie
// carries only the record's id; the record is the truth.
type Record struct {
	// ID names the record: 32 lowercase hex characters (128 bits from
	// crypto/rand), made by the Manager. Stores treat it as opaque.
	ID string

	// UserID is the user the session belongs to.
	UserID string

	// CreatedAt is the login that made the session; LastSeenAt the last
	// request that used it, written at most once per Config.TouchInterval.
	// Millisecond precision.
	CreatedAt  time.Time
	LastSeenAt time.Time

	// ExpiresAt is when the session's lifetime ends (Lifetime or
	// RememberLifetime after its cookie was last issued). A store may
	// forget the record from then on (a TTL); the Manager refuses it from
	// then on whether or not the store still has it.
	ExpiresAt time.Time

	// IP is the client address at login and UserAgent its User-Agent
	// header, as the app hands them over (bounded, printable).
	IP        string
	UserAgent string

	// Remember is the login's "remember me" choice.
	Remember bool
}

// Store keeps session records (Config.Store). Every method is atomic on its
// own; none is read-modify-write in the caller. Records are copied in and
// out. Not-found is user.ErrNotFound, wrapped; a backend failure wraps
// user.ErrUnavailable (answered 503). Timestamps keep millisecond
// precision. core/store/storetest's RunSessionStore proves every rule.
//
// The rule that matters for security: a record that Delete or DeleteAll
// removed never comes back. Touch updates only a record that exists, so a
// request that used a session at the moment it was ended cannot revive it.
type Store interface {
	// Create stores a new record. r.ID is new (random); a store may
	// refuse an id it already holds with an error.
	Create(ctx context.Context, r Record) error

	// Get returns the record with that id, or user.ErrNotFound. It may
	// return a record past its ExpiresAt; the caller checks.
	Get(ctx context.Context, id string) (Record, error)

	// Touch sets LastSeenAt to seen and ExpiresAt to expires on the record
	// with that id if it exists, and otherwise returns user.ErrNotFound and
	// creates nothing.
	Touch(ctx context.Context, id string, seen, expires time.Time) error

	// Delete removes the record id when it belongs to userID. It returns
	// user.ErrNotFound, and removes nothing, when there is no such record
	// or it belongs to another user.
	Delete(ctx context.Context, userID, id string) error

	// List returns every record of userID, newest first (CreatedAt
	// descending, ties by ID descending); an empty slice when there is
	// none. It may include records past their ExpiresAt; the caller drops
	// them.
	List(ctx context.Context, userID string) ([]Record, error)

	// DeleteAll removes every record of userID but the one whose id is
	// except ("" keeps none). It is idempotent. A record created after it
	// returns is not affected.
	DeleteAll(ctx context.Context, userID, except string) error
}

// SortRecords sorts records in the order Store.List returns them: newest
// first, CreatedAt descending, ties by ID descending.
func SortRecords(rs []Record) {
	slices.SortFunc(rs, func(a, b Record) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
}
