package user

import (
	"context"
	"errors"
	"slices"
	"time"
)

// ErrTooManyAPIKeys: CreateAPIKey would give the user more live keys than
// the bound it was called with. Nothing was stored.
var ErrTooManyAPIKeys = errors.New("user: too many api keys")

// APIKeys holds users' personal API keys (auth.Config.APIKeys). A key is
// its public id and a secret; the store keeps the id and the SHA-256 of
// the secret, never the secret. Ids are unique across all users (the
// caller makes them random); ids and hashes are compared byte for byte.
// Deleting a user deletes their keys (a store that keeps them apart from
// its users, as sqlxstore does, deletes them when auth ends every key of
// a deleted account).
type APIKeys interface {
	// CreateAPIKey stores k (every field set by the caller; LastUsedAt
	// zero). In the same atomic step it first removes the user's keys that
	// expired at or before k.CreatedAt, then refuses with
	// ErrTooManyAPIKeys when the user holds max keys or more, so that of
	// racing creates at the bound exactly max minus the keys held succeed.
	// ErrConflict when a key with k.ID exists (any user's). Like SignIns it
	// does not check that the user exists: the caller creates keys for a
	// signed-in user only.
	CreateAPIKey(ctx context.Context, k *APIKey, max int) error

	// APIKeyByID returns the key with that id, expired ones included, or
	// ErrNotFound.
	APIKeyByID(ctx context.Context, id string) (*APIKey, error)

	// ListAPIKeys returns the user's keys, expired ones included, oldest
	// first (CreatedAt, then ID); none is an empty slice and no error, also
	// for an id no user has.
	ListAPIKeys(ctx context.Context, userID string) ([]*APIKey, error)

	// TouchAPIKey sets the key's LastUsedAt to at. ErrNotFound when no key
	// has the id. Callers call it at most about once a minute per key.
	TouchAPIKey(ctx context.Context, id string, at time.Time) error

	// RevokeAPIKey deletes the user's key with that id. ErrNotFound when
	// the user has none with that id (another user's counts as none): of
	// racing revokes of one key exactly one succeeds.
	RevokeAPIKey(ctx context.Context, userID, id string) error

	// RevokeAPIKeys deletes every key of the user and returns how many
	// there were; none is 0 and no error.
	RevokeAPIKeys(ctx context.Context, userID string) (int, error)
}

// APIKey is one personal API key of a user, as the store keeps it.
type APIKey struct {
	ID         string // public, part of the key: 16 characters
	UserID     string
	Name       string   // the user's name for it
	Hash       []byte   // SHA-256 of the key's secret, 32 bytes
	Scopes     []string // what the key may do, in the app's terms; none is an empty slice
	CreatedAt  time.Time
	ExpiresAt  time.Time // always set: a key never lives forever
	LastUsedAt time.Time // zero until first used
}

// Clone returns a deep copy of k.
func (k *APIKey) Clone() *APIKey {
	if k == nil {
		return nil
	}
	c := *k
	c.Hash = slices.Clone(k.Hash)
	c.Scopes = append([]string{}, k.Scopes...)
	return &c
}
