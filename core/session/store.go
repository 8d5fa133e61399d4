package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/authkit-go/authkit/core/user"
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

// DefaultMaxPerUser is how many records one user may hold when
// Config.MaxPerUser is not set.
const DefaultMaxPerUser = 100

// Bounded is the part of a [Store] that bounds how many records one user
// holds, in the store's own step: the Manager (Config.MaxPerUser) and
// core's trusted devices use it through [CreateBounded] when the store has
// it. core/store/storetest's RunSessionStore proves it ("Bounded").
type Bounded interface {
	// CreateBounded stores r as Store.Create does, then removes the
	// oldest records of r.UserID (CreatedAt ascending, ties by ID
	// ascending) past the newest max; max < 1 bounds nothing. Records
	// past their ExpiresAt may be removed first. It never removes one of
	// the user's max newest records, so r stays unless max newer ones
	// exist. Concurrent calls for one user may leave more than max records
	// only while they run: once they have all returned, the user holds at
	// most max (each removes, after storing its own, what lies past the
	// newest max it sees).
	CreateBounded(ctx context.Context, r Record, max int) error
}

// CreateBounded stores r in st and bounds r.UserID's records to max (see
// [Bounded]): in one step of the store when st implements Bounded, else
// by Create, List and a Delete of each record past the newest max, which
// keeps the same bound once concurrent calls have returned, at the cost
// of listing the user's records on every call.
func CreateBounded(ctx context.Context, st Store, r Record, max int) error {
	if b, ok := st.(Bounded); ok {
		return b.CreateBounded(ctx, r, max)
	}
	if err := st.Create(ctx, r); err != nil {
		return err
	}
	if max < 1 {
		return nil
	}
	rs, err := st.List(ctx, r.UserID)
	if err != nil {
		return fmt.Errorf("bound records: %w", err)
	}
	SortRecords(rs)
	for _, old := range rs[min(max, len(rs)):] {
		if err := st.Delete(ctx, r.UserID, old.ID); err != nil && !errors.Is(err, user.ErrNotFound) {
			return fmt.Errorf("bound records: %w", err)
		}
	}
	return nil
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

// Provider is a store of another kind, such as a user store, that can
// also keep session records: auth.New keeps records in it when the app
// sets no auth.Config.Sessions (and does not ask for stateless cookies),
// so that logout ends every copy of a cookie by default. core/store's
// Memory and adapters/sqlxstore's user store (DB.Users) are providers.
type Provider interface {
	// SessionStore returns the session-record store; every call the
	// same.
	SessionStore() Store
}
