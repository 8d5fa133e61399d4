package user

import "time"

// User is one account. Field comments name the spec's user field each
// one renders.
type User struct {
	// ID identifies the user. Stores make it (128 random bits, URL-safe)
	// unless the app's store brings its own; flows treat it as opaque.
	ID string `json:"id"`

	// Email is unique and stored lowercase (spec: email).
	Email string `json:"email"`

	// Name is the display name given at registration (spec: name).
	Name string `json:"name"`

	// PasswordHash is the output of a password hasher (spec: password).
	PasswordHash string `json:"-"`

	// TwoFactorEnabled reports whether TOTP is required at login (spec:
	// twoFactorEnabled).
	TwoFactorEnabled bool `json:"twoFactorEnabled"`

	// TOTPSecret is the confirmed TOTP secret, encrypted at rest; empty when
	// none (spec: totpSecret).
	TOTPSecret string `json:"-"`

	// PendingTOTPSecret is the encrypted secret of a setup that is not yet
	// confirmed; empty when none (spec: pendingTotpSecret).
	PendingTOTPSecret string `json:"-"`

	// RecoveryCodeHashes are the hashes of the unused recovery codes; nil
	// when none were ever issued (spec: recoveryCodeHashes).
	RecoveryCodeHashes []string `json:"-"`

	// LastTOTPStep is the last accepted TOTP time step, kept for replay
	// protection; 0 when none (spec: lastTotpStep).
	LastTOTPStep int64 `json:"-"`

	// EmailVerifiedAt is when the current address was verified; zero when
	// unverified (spec: emailVerifiedAt).
	EmailVerifiedAt time.Time `json:"-"`

	// EmailChangedAt is when the address last changed; zero when never
	// (spec: emailChangedAt).
	EmailChangedAt time.Time `json:"-"`

	// PasswordChangedAt is when the password was last reset or changed;
	// zero when never (spec: passwordChangedAt).
	PasswordChangedAt time.Time `json:"-"`

	// SessionVersion is carried in every session cookie; raising it ends
	// every session issued before (logout everywhere, password reset, 2FA
	// disable, email change). authkit extension.
	SessionVersion int64 `json:"-"`

	// FailedLogins counts consecutive failed password checks; a success
	// clears it. authkit extension.
	FailedLogins int `json:"-"`

	// LockedUntil is the end of a lock-out after too many consecutive
	// failures; zero when not locked. authkit extension.
	LockedUntil time.Time `json:"-"`

	// CreatedAt is when the account was created.
	CreatedAt time.Time `json:"-"`
}

// EmailVerified reports whether the current address has been verified.
func (u *User) EmailVerified() bool { return !u.EmailVerifiedAt.IsZero() }

// Clone returns a deep copy of u, so a store can hand out records that the
// caller may change without touching the stored one.
func (u *User) Clone() *User {
	if u == nil {
		return nil
	}
	c := *u
	if u.RecoveryCodeHashes != nil {
		c.RecoveryCodeHashes = append(make([]string, 0, len(u.RecoveryCodeHashes)), u.RecoveryCodeHashes...)
	}
	return &c
}

// Public is the view of a user that is safe to send to that user: no
// secrets, no hashes, no internal counters.
type Public struct {
	ID                     string     `json:"id"`
	Email                  string     `json:"email"`
	Name                   string     `json:"name"`
	EmailVerified          bool       `json:"emailVerified"`
	EmailVerifiedAt        *time.Time `json:"emailVerifiedAt"`
	TwoFactorEnabled       bool       `json:"twoFactorEnabled"`
	RecoveryCodesRemaining int        `json:"recoveryCodesRemaining"`
	CreatedAt              *time.Time `json:"createdAt,omitempty"`
}

// Public returns the safe view of u. Timestamps are UTC with millisecond
// precision, the precision every store keeps.
func (u *User) Public() Public {
	return Public{
		ID:                     u.ID,
		Email:                  u.Email,
		Name:                   u.Name,
		EmailVerified:          u.EmailVerified(),
		EmailVerifiedAt:        timePtr(u.EmailVerifiedAt),
		TwoFactorEnabled:       u.TwoFactorEnabled,
		RecoveryCodesRemaining: len(u.RecoveryCodeHashes),
		CreatedAt:              timePtr(u.CreatedAt),
	}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC().Truncate(time.Millisecond)
	return &t
}
