package user

import (
	"context"
	"time"
)

// EmailCodes holds the one-time codes mailed as a fallback second factor
// (auth.Config.EmailCode, off by default). A user has at most one code:
// storing a new one replaces the old. The store never sees a code, only
// the keyed hash the flow hands it (bound to the user, the pending login
// and the code, under a key the store does not have), and compares it byte
// for byte.
//
// The flows also keep the codes of sign-in by email (auth.Config.EmailSignIn)
// here, under keys that are no user id ("email-sign-in:" and 64 hex
// digits, a keyed hash of the address): a store treats userID as an opaque
// string of at most 255 bytes.
//
// Unlike the other parts, EmailCodes does not require the user to exist:
// a store may keep codes in a table of their own keyed by the user id as
// text, with no link to the users table (sqlxstore does), so ErrNotFound
// from EmailCode means "no code", whatever the reason. A code that outlives
// its account is harmless: it is bound to the login it was mailed for and
// expires within minutes. Deleting a user should delete their code where
// that is cheap (the memory store does).
type EmailCodes interface {
	// PutEmailCode stores c as the code of c.UserID, replacing any code
	// the user has (spent or not, expired or not).
	PutEmailCode(ctx context.Context, c EmailCode) error

	// EmailCode returns the user's code, or ErrNotFound when the user has
	// none. An expired code may be returned: the caller checks ExpiresAt.
	EmailCode(ctx context.Context, userID string) (EmailCode, error)

	// TakeEmailCode spends the user's code: it deletes it.
	// Condition: the stored Hash equals hash (the code the caller checked)
	// and ExpiresAt is after now. Of racing takes of one code exactly one
	// succeeds; the others get ErrConflict, as does a take of a code that
	// was replaced, has expired or is gone.
	TakeEmailCode(ctx context.Context, userID string, hash []byte, now time.Time) error
}

// EmailCode is one mailed code as a store keeps it.
type EmailCode struct {
	UserID string
	// Hash is the keyed hash of the code (at most 64 bytes), never the
	// code itself.
	Hash      []byte
	CreatedAt time.Time
	ExpiresAt time.Time
}

// EmailCodeEraser deletes a user's email code outright, for the deletion
// of an account (auth.Support.DeleteAccount): a store that keeps codes
// apart from its users (sqlxstore) does not drop them with the user. It is
// optional, beside EmailCodes.
type EmailCodeEraser interface {
	// DeleteEmailCode deletes the user's code, spent or not, expired or
	// not. It is idempotent: no code (or no user) is not an error.
	DeleteEmailCode(ctx context.Context, userID string) error
}
