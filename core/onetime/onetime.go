package onetime

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is what [Store.Take] returns for a key the store does not
// hold, or holds no longer: taken already, or expired.
var ErrNotFound = errors.New("onetime: not found")

// ErrFull is what [MemoryStore.Put] returns for a new key when the store
// holds Capacity live values. Other stores may return their own errors
// when they cannot take more.
var ErrFull = errors.New("onetime: store full")

// Store keeps values until they expire, for one Take each: the state of
// a ceremony begun on one instance of an app and finished on another (the
// passkeys module's challenges), a nonce, a code sent by mail.
//
// Implementations must be safe for concurrent use. [MemoryStore] is the
// in-process one; adapters/redisstore and adapters/sqlxstore share one
// between instances. core/store/storetest.RunOneTimeStore proves a
// store's contract.
type Store interface {
	// Put stores a copy of data under key until expires: from then on, or
	// for a time already past, Take finds nothing. A key that exists
	// already, live or expired, is replaced: its data and its expiry are
	// the new ones. Keys are any strings (any bytes, any length); stores
	// that keep time in milliseconds round expires down to the
	// millisecond, so a value never lives longer than asked. A store may
	// refuse a key when it is full (an error). A done ctx stores nothing
	// and returns an error that wraps ctx.Err().
	Put(ctx context.Context, key string, data []byte, expires time.Time) error

	// Take returns the data of key and deletes it, in one atomic step: of
	// racing Takes of one key at most one gets the data, the others
	// ErrNotFound. A key that is missing, or whose expiry is not after
	// now, gives ErrNotFound (wrapped or not: test with errors.Is). The
	// data is the caller's: the store keeps no reference to it. Empty
	// data comes back with length 0. A done ctx takes nothing and returns
	// an error that wraps ctx.Err().
	Take(ctx context.Context, key string, now time.Time) ([]byte, error)
}

// Provider is a store of another kind, such as a user store, that can
// also keep one-time values in the same backend: auth.New uses it for the
// logins waiting for their second step (auth.Config.PendingLogins) when
// the app sets none, so that instances sharing the user store share those
// too. adapters/sqlxstore's user store (DB.Users) is one.
type Provider interface {
	// OneTimeStore returns the one-time store; every call the same.
	OneTimeStore() Store
}
