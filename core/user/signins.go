package user

import (
	"context"
	"time"
)

// SignIns records which accounts have signed in under authkit, so that
// the first sign-in of an account that existed before authkit arrived is
// not taken for a sign-in from a new device: no browser can hold its
// device cookie yet, and without this part every existing user is mailed
// "New sign-in" at the rollout (auth.FeatureNewDeviceNotice). It is
// optional; without it every sign-in from a browser without the device
// cookie is mailed, the first one included.
//
// Like EmailCodes, SignIns does not require the user to exist: a store may
// keep the record in a table of its own keyed by the user id as text, with
// no link to the users table (sqlxstore does). A record that outlives its
// account is harmless as long as ids are not reused.
type SignIns interface {
	// MarkSignedIn records that the user signed in (or registered) at at,
	// and reports whether nothing was recorded for the user before: true
	// exactly once per user. Of racing calls for one user exactly one
	// reports true. A later call leaves the record as it is.
	MarkSignedIn(ctx context.Context, userID string, at time.Time) (first bool, err error)
}
