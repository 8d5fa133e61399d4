package user

import (
	"context"
	"time"
)

// Passkeys holds a user's WebAuthn credentials (the passkeys module). The
// store keeps each credential as opaque data: it never parses a public key
// or checks a signature, it keeps what the module hands it and applies the
// conditions below atomically.
//
// Credential ids are globally unique (an authenticator makes them random):
// a store refuses a second credential with an id it already holds, whoever
// it belongs to. Ids, handles and keys are compared byte for byte.
// Deleting a user deletes their passkeys and their user handle.
type Passkeys interface {
	// PasskeyUserHandle returns the user's WebAuthn user handle. When the
	// user has none yet, it stores candidate (random bytes the caller made)
	// and returns it; when they have one, it returns that one and ignores
	// candidate. Get-or-create is one atomic step: racing calls with
	// different candidates all return the same handle.
	PasskeyUserHandle(ctx context.Context, id string, candidate []byte) ([]byte, error)

	// ByPasskeyUserHandle returns the user whose handle is handle, or
	// ErrNotFound.
	ByPasskeyUserHandle(ctx context.Context, handle []byte) (*User, error)

	// AddPasskey stores a new credential of p.UserID, with the user handle
	// the user has (PasskeyUserHandle) as p.UserHandle. It returns
	// ErrNotFound when no user has p.UserID, and ErrConflict when a
	// credential with p.ID exists already (any user's).
	AddPasskey(ctx context.Context, p *Passkey) error

	// ListPasskeys returns the user's credentials, oldest first (CreatedAt,
	// then ID); none is an empty slice and no error. ErrNotFound when no
	// user has the id.
	ListPasskeys(ctx context.Context, userID string) ([]*Passkey, error)

	// PasskeyByID returns the credential with that id, or ErrNotFound.
	PasskeyByID(ctx context.Context, credentialID []byte) (*Passkey, error)

	// RenamePasskey sets the credential's Name. ErrNotFound when the user
	// has no credential with that id (another user's counts as none).
	RenamePasskey(ctx context.Context, userID string, credentialID []byte, name string) error

	// DeletePasskey removes the credential. ErrNotFound when the user has
	// no credential with that id (another user's counts as none).
	DeletePasskey(ctx context.Context, userID string, credentialID []byte) error

	// UsePasskey records a verified assertion: SignCount = u.SignCount,
	// BackupState = u.BackupState, LastUsedAt = u.At.
	// Condition: the stored SignCount equals u.OldSignCount (the count the
	// assertion was checked against), so of two assertions checked against
	// the same count only one is recorded. ErrNotFound when the user has
	// no credential with that id.
	UsePasskey(ctx context.Context, userID string, credentialID []byte, u PasskeyUse) error
}

// Passkey is one WebAuthn credential of a user.
type Passkey struct {
	ID              []byte // the credential id
	UserID          string
	UserHandle      []byte   // the user's handle (Passkeys.PasskeyUserHandle), as the authenticator keeps it
	PublicKey       []byte   // COSE_Key, as the authenticator gave it
	SignCount       uint32   // the signature counter last seen
	BackupEligible  bool     // the BE flag at registration: the credential can be synced
	BackupState     bool     // the BS flag last seen: the credential is backed up (synced)
	Transports      []string // as the browser reported them ("internal", "usb", "hybrid", ...)
	AttestationType string   // "none" unless the app asks for attestation
	AAGUID          []byte   // the authenticator model (16 bytes; zero for attestation "none" on many)
	Name            string   // the user's name for it
	CreatedAt       time.Time
	LastUsedAt      time.Time // zero until first used
}

// Clone returns a deep copy of p.
func (p *Passkey) Clone() *Passkey {
	if p == nil {
		return nil
	}
	c := *p
	c.ID = append([]byte(nil), p.ID...)
	c.UserHandle = append([]byte(nil), p.UserHandle...)
	c.PublicKey = append([]byte(nil), p.PublicKey...)
	c.AAGUID = append([]byte(nil), p.AAGUID...)
	c.Transports = append([]string(nil), p.Transports...)
	return &c
}

// PasskeyUse is the argument of [Passkeys.UsePasskey].
type PasskeyUse struct {
	OldSignCount uint32 // condition: the stored SignCount equals it
	SignCount    uint32
	BackupState  bool
	At           time.Time
}
