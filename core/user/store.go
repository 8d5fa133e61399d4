package user

import (
	"context"
	"errors"
	"time"
)

// Errors every [Store] returns (wrapped, so test them with errors.Is).
var (
	// ErrNotFound: no user has that id or email.
	ErrNotFound = errors.New("user: not found")

	// ErrEmailTaken: another user already has that address.
	ErrEmailTaken = errors.New("user: email already taken")

	// ErrConflict: the condition of a conditional operation did not hold
	// when the store applied it (another request got there first, or the
	// state the caller read is stale). Nothing was changed.
	ErrConflict = errors.New("user: conflicting update")

	// ErrUnavailable: the backend could not be reached or failed. Flows
	// answer 503. Stores wrap the driver's error with it.
	ErrUnavailable = errors.New("user: store unavailable")
)

// The store contract is split by feature: [Accounts] is the one part every
// store has, and each further part is a small interface of its own that a
// store implements when its app uses the feature. auth.New checks the parts
// against the configuration and names the missing one ("Config.Users does
// not implement user.TwoFactor: implement it or disable
// auth.FeatureTwoFactor"). Features added later arrive as new parts; no
// published interface grows.
//
// Every part follows the same rules. Each operation that changes security
// state under concurrency is a single atomic, conditional operation in the
// store: the condition named in the method's comment is checked and the
// change applied as one step (one conditional statement or one short
// transaction), never read-modify-write in the caller. When the condition
// does not hold the method returns ErrConflict and changes nothing.
//
// Every method that takes an id returns ErrNotFound when no user has it,
// including an id that cannot be one of the store's (a non-number for a
// store whose database numbers its rows); ErrNotFound wins over
// ErrConflict. Emails are passed in already normalised (lowercase); stores
// compare them byte for byte unless they document otherwise. Timestamps
// keep millisecond precision. Records returned are the caller's to modify.
//
// storetest.RunUserStore in core/store/storetest proves every rule of every
// part a store implements, the atomic ones with racing goroutines; a custom
// store should pass it.

// Accounts finds users. Every user store implements it; it is the type of
// auth.Config.Users.
type Accounts interface {
	// ByID returns the user with that id, or ErrNotFound.
	ByID(ctx context.Context, id string) (*User, error)

	// ByEmail returns the user with that (lowercase) email, or ErrNotFound.
	ByEmail(ctx context.Context, email string) (*User, error)
}

// Registration creates and deletes accounts: public sign-up
// (auth.FeatureRegistration), and the undo of a failed AfterRegister hook.
// An app that creates accounts itself switches the feature off and need
// not implement it.
type Registration interface {
	// Create stores a new user. It assigns ID when empty (128 random bits,
	// URL-safe; a store whose database numbers its rows returns that number
	// in decimal) and CreatedAt when zero, and returns the stored record.
	// Fails with ErrEmailTaken when the email is in use.
	Create(ctx context.Context, u *User) (*User, error)

	// Delete removes the user. Deleting a missing user returns ErrNotFound.
	Delete(ctx context.Context, id string) error
}

// EmailVerification records a verified address. Every store implements it:
// verification is always on.
type EmailVerification interface {
	// VerifyEmail sets EmailVerifiedAt = at. When the address is already
	// verified it changes nothing and returns nil.
	// Condition: the stored Email equals email (the address the link was
	// mailed to).
	VerifyEmail(ctx context.Context, id, email string, at time.Time) error
}

// EmailChange changes a user's address (auth.FeatureEmailChange).
type EmailChange interface {
	// ChangeEmail sets Email = newEmail, EmailVerifiedAt cleared,
	// EmailChangedAt = at, SessionVersion raised by one.
	// Condition: the stored Email equals oldEmail (the address the caller
	// checked the password for). Fails with ErrEmailTaken when another
	// user has newEmail.
	ChangeEmail(ctx context.Context, id, oldEmail, newEmail string, at time.Time) error
}

// PasswordReset sets a password from a mailed link
// (auth.FeaturePasswordReset).
type PasswordReset interface {
	// ResetPassword sets PasswordHash = r.Hash, PasswordChangedAt = r.At,
	// raises SessionVersion by one and clears FailedLogins and LockedUntil.
	// Condition: the stored hash equals r.OldHash (the hash the link was
	// bound to), and PasswordChangedAt is zero or before r.IssuedBefore
	// (the link's issue time): a link works once, and not after any later
	// change.
	ResetPassword(ctx context.Context, id string, r Reset) error
}

// PasswordChange sets a password the signed-in user chose
// (auth.FeaturePasswordChange).
type PasswordChange interface {
	// ChangePassword sets PasswordHash = newHash, PasswordChangedAt = at,
	// raises SessionVersion by one and clears FailedLogins and
	// LockedUntil.
	// Condition: the stored hash equals oldHash (the hash the current
	// password was checked against).
	ChangePassword(ctx context.Context, id, oldHash, newHash string, at time.Time) error
}

// PasswordRehash upgrades a hash at login, when the hasher's algorithm or
// cost has moved on (a legacy bcrypt hash of an imported table, say). It is
// optional: without it, old hashes keep working and are never upgraded.
type PasswordRehash interface {
	// RehashPassword sets PasswordHash = newHash and changes nothing else.
	// Condition: the stored hash equals oldHash.
	RehashPassword(ctx context.Context, id, oldHash, newHash string) error
}

// TwoFactor holds TOTP two-factor state (auth.FeatureTwoFactor).
type TwoFactor interface {
	// BeginTOTPSetup stores an encrypted secret as PendingTOTPSecret,
	// replacing any earlier pending one.
	// Condition: TwoFactorEnabled is false.
	BeginTOTPSetup(ctx context.Context, id, pendingSecret string) error

	// EnableTOTP turns 2FA on: TOTPSecret = e.Secret, PendingTOTPSecret
	// cleared, RecoveryCodeHashes = e.RecoveryCodeHashes, LastTOTPStep =
	// e.Step (the confirming code's step counts as used), TwoFactorEnabled
	// true.
	// Condition: TwoFactorEnabled is false and PendingTOTPSecret equals
	// e.Pending (the secret the code was checked against).
	EnableTOTP(ctx context.Context, id string, e EnableTOTP) error

	// AcceptTOTPStep records a TOTP code as used: LastTOTPStep =
	// max(matched, current).
	// Condition: TwoFactorEnabled is true, and LastTOTPStep is 0 or below
	// both matched and current (SECURITY.md deviation 2: the spec's rule plus RFC 6238 5.2).
	AcceptTOTPStep(ctx context.Context, id string, matched, current int64) error

	// ConsumeRecoveryCode replaces the recovery-code hashes with remaining
	// (the hashes without the code just used).
	// Condition: the stored hashes are still exactly old, in order.
	ConsumeRecoveryCode(ctx context.Context, id string, old, remaining []string) error

	// ReplaceRecoveryCodes stores a new set of recovery-code hashes; every
	// earlier code stops working.
	// Condition: TwoFactorEnabled is true.
	ReplaceRecoveryCodes(ctx context.Context, id string, hashes []string) error

	// DisableTOTP turns 2FA off: TOTPSecret, PendingTOTPSecret,
	// RecoveryCodeHashes and LastTOTPStep cleared, TwoFactorEnabled false,
	// SessionVersion raised by one.
	// Condition: TwoFactorEnabled is true.
	DisableTOTP(ctx context.Context, id string) error
}

// Lockout counts failed password checks and locks an account after too
// many (auth.Config.Lockout, on by default).
type Lockout interface {
	// RecordLoginFailure counts one failed password check. When the count
	// reaches max it sets LockedUntil = at + lockFor and starts counting
	// again from zero. It returns the count after this failure and
	// LockedUntil.
	RecordLoginFailure(ctx context.Context, id string, max int, lockFor time.Duration, at time.Time) (failures int, lockedUntil time.Time, err error)

	// ClearLoginFailures sets FailedLogins to 0 and clears LockedUntil.
	ClearLoginFailures(ctx context.Context, id string) error
}

// SessionVersions ends every session of a user at once (logout
// everywhere). Every store implements it.
type SessionVersions interface {
	// BumpSessionVersion raises SessionVersion by one and returns the new
	// value, ending every session issued before.
	BumpSessionVersion(ctx context.Context, id string) (int64, error)
}

// Store is every part above together: what the stores authkit ships
// implement (the memory store, adapters/sqlxstore). It is a convenience
// for them and for tests; it will not grow, and a store of your own
// implements only the parts its app uses.
type Store interface {
	Accounts
	Registration
	EmailVerification
	EmailChange
	PasswordReset
	PasswordChange
	PasswordRehash
	TwoFactor
	Lockout
	SessionVersions
}

// EnableTOTP is the argument of [TwoFactor.EnableTOTP].
type EnableTOTP struct {
	Pending            string   // the pending secret the confirming code matched
	Secret             string   // the permanent secret, encrypted
	RecoveryCodeHashes []string // hashes of the codes shown to the user
	Step               int64    // LastTOTPStep to record
}

// Reset is the argument of [PasswordReset.ResetPassword].
type Reset struct {
	OldHash      string    // condition: the stored hash equals it
	Hash         string    // the new hash
	IssuedBefore time.Time // condition: PasswordChangedAt zero or before it
	At           time.Time // the time of the change
}
