package user

import (
	"context"
	"time"
)

// Identities holds the accounts at outside identity providers linked to a
// user (social sign-in: the social module). An identity is the provider's
// name as the app configured it ("google") and the provider's stable id of
// the person there (the OpenID Connect "sub"); the pair is unique across
// all users. Deleting a user deletes their identities.
type Identities interface {
	// AddIdentity links id.Provider and id.Subject to id.UserID. It assigns
	// ID when empty (128 random bits, URL-safe) and LinkedAt when zero, and
	// returns the stored record. ErrNotFound when no user has id.UserID;
	// ErrConflict when the provider and subject are linked already (to any
	// user, this one included). Racing adds of one pair: one wins.
	AddIdentity(ctx context.Context, id *Identity) (*Identity, error)

	// IdentityBySubject returns the identity of provider and subject, or
	// ErrNotFound. Both are compared byte for byte.
	IdentityBySubject(ctx context.Context, provider, subject string) (*Identity, error)

	// ListIdentities returns the user's identities, oldest first (LinkedAt,
	// then ID); none is an empty slice and no error. ErrNotFound when no
	// user has the id.
	ListIdentities(ctx context.Context, userID string) ([]*Identity, error)

	// DeleteIdentity removes the user's identity with that id. ErrNotFound
	// when the user has none with that id (another user's counts as none).
	// Condition, when keepOne is true: the user has another identity, so
	// that of racing deletes of a user's last two identities one fails
	// with ErrConflict and the account keeps a way in.
	DeleteIdentity(ctx context.Context, userID, identityID string, keepOne bool) error
}

// Identity is one account at an outside identity provider, linked to a
// user.
type Identity struct {
	ID       string // the store's id of the link (not the provider's)
	UserID   string
	Provider string // the provider's name in the app's configuration ("google")
	Subject  string // the provider's stable id of the account (OIDC "sub")
	Email    string // the address the provider gave when it was linked; may be empty
	LinkedAt time.Time
}

// Clone returns a copy of id.
func (id *Identity) Clone() *Identity {
	if id == nil {
		return nil
	}
	c := *id
	return &c
}
