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

// Store persists user records. It is the one place that changes security
// state, and every operation that does so under concurrency is a single
// atomic, conditional operation in the store: the condition named in the
// method's comment is checked and the change applied as one step (one
// conditional statement or one short transaction), never read-modify-write
// in the caller. When the condition does not hold the method returns
// ErrConflict and changes nothing.
//
// Every method that takes an id returns ErrNotFound when no user has it
// (ErrNotFound wins over ErrConflict). Emails are passed in already
// normalised (lowercase); stores compare them byte for byte. Timestamps keep
// millisecond precision. Records returned are the caller's to modify.
//
// storetest.Run in the store module proves every rule of this contract,
// the atomic ones with racing goroutines; a custom Store should pass it.
type Store interface {
	// Create stores a new user. It assigns ID when empty (128 random bits,
	// URL-safe) and CreatedAt when zero, and returns the stored record.
	// Fails with ErrEmailTaken when the email is in use.
	Create(ctx context.Context, u *User) (*User, error)

	// ByID returns the user with that id, or ErrNotFound.
	ByID(ctx context.Context, id string) (*User, error)

	// ByEmail returns the user with that (lowercase) email, or ErrNotFound.
	ByEmail(ctx context.Context, email string) (*User, error)

	// Delete removes the user. Deleting a missing user returns ErrNotFound.
	Delete(ctx context.Context, id string) error

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

	// VerifyEmail sets EmailVerifiedAt = at. When the address is already
	// verified it changes nothing and returns nil.
	// Condition: the stored Email equals email (the address the link was
	// mailed to).
	VerifyEmail(ctx context.Context, id, email string, at time.Time) error

	// ChangeEmail sets Email = newEmail, EmailVerifiedAt cleared,
	// EmailChangedAt = at, SessionVersion raised by one.
	// Condition: the stored Email equals oldEmail (the address the caller
	// checked the password for). Fails with ErrEmailTaken when another
	// user has newEmail.
	ChangeEmail(ctx context.Context, id, oldEmail, newEmail string, at time.Time) error

	// SetPassword stores a new password hash; see [PasswordUpdate] for the
	// conditions and side effects of each kind of update.
	SetPassword(ctx context.Context, id string, p PasswordUpdate) error

	// BumpSessionVersion raises SessionVersion by one and returns the new
	// value, ending every session issued before.
	BumpSessionVersion(ctx context.Context, id string) (int64, error)

	// RecordLoginFailure counts one failed password check. When the count
	// reaches max it sets LockedUntil = at + lockFor and starts counting
	// again from zero. It returns the count after this failure and
	// LockedUntil.
	RecordLoginFailure(ctx context.Context, id string, max int, lockFor time.Duration, at time.Time) (failures int, lockedUntil time.Time, err error)

	// ClearLoginFailures sets FailedLogins to 0 and clears LockedUntil.
	ClearLoginFailures(ctx context.Context, id string) error
}

// EnableTOTP is the argument of [Store.EnableTOTP].
type EnableTOTP struct {
	Pending            string   // the pending secret the confirming code matched
	Secret             string   // the permanent secret, encrypted
	RecoveryCodeHashes []string // hashes of the codes shown to the user
	Step               int64    // LastTOTPStep to record
}

// PasswordUpdate is the argument of [Store.SetPassword]. Its fields select
// the kind of update:
//
//   - a reset by link: Hash, IssuedBefore (the link's issue time) and At;
//     condition: PasswordChangedAt is zero or before IssuedBefore.
//   - a change by the signed-in user: Hash, OldHash and At; condition: the
//     stored hash equals OldHash.
//   - a rehash at login (a stronger algorithm or cost): Hash and OldHash,
//     At zero; condition: the stored hash equals OldHash.
//
// When At is set, PasswordChangedAt = At, SessionVersion is raised by one
// and the failed-login count and lock are cleared; when At is zero only the
// hash changes.
type PasswordUpdate struct {
	Hash         string
	OldHash      string    // condition when non-empty: stored hash equals it
	IssuedBefore time.Time // condition when non-zero: PasswordChangedAt zero or before it
	At           time.Time // when non-zero: the time of the change
}
