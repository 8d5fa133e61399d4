package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// MemoryConfig configures a [Memory] store.
type MemoryConfig struct {
	// Now stamps CreatedAt on new users. Default: time.Now.
	Now func() time.Time
}

// Memory is an in-memory [user.Store]: per process, lost on restart. It is
// the store for tests, demos and single-process apps. One mutex guards all
// records, so every conditional operation is atomic; it is safe for
// concurrent use. Records are copied in and out, so callers never share
// memory with the store.
type Memory struct {
	now     func() time.Time
	mu      sync.Mutex
	byID    map[string]*user.User
	byEmail map[string]string // email -> id
	passkeys
	identities
	codes    emailCodes           // user id -> mailed code (emailcodes.go)
	signedIn map[string]time.Time // user id -> first sign-in (signins.go)
	apiKeys  apiKeys              // key id -> API key (apikeys.go)
	sessions *MemorySessions      // SessionStore, on the same clock
}

var _ user.Store = (*Memory)(nil)

// owned returns copies (clone) of the records in all that belong to
// userID, oldest first and by id among records of the same time: the order
// every List method of the store promises. of tells a record's owner, time
// and id; the result is empty, not nil, when the user has none.
func owned[K comparable, R any](all map[K]R, userID string, clone func(R) R, of func(R) (owner string, at time.Time, id string)) []R {
	out := []R{}
	for _, r := range all {
		if owner, _, _ := of(r); owner == userID {
			out = append(out, clone(r))
		}
	}
	slices.SortFunc(out, func(a, b R) int {
		_, aAt, aID := of(a)
		_, bAt, bID := of(b)
		if c := aAt.Compare(bAt); c != 0 {
			return c
		}
		return strings.Compare(aID, bID)
	})
	return out
}

// locked runs fn under mu once ctx is live. Each method of the memory
// stores is one such step, so each is atomic.
func locked[T any](ctx context.Context, mu *sync.Mutex, fn func() (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	mu.Lock()
	defer mu.Unlock()
	return fn()
}

// lockedDo is locked for a step that returns only an error.
func lockedDo(ctx context.Context, mu *sync.Mutex, fn func() error) error {
	_, err := locked(ctx, mu, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}

// lookup returns a copy (clone) of the record all holds at key, or
// ErrNotFound (of op) when it holds none.
func lookup[K comparable, R any](all map[K]R, key K, op string, clone func(R) R) (R, error) {
	r, ok := all[key]
	if !ok {
		return r, notFound(op)
	}
	return clone(r), nil
}

// notFound is ErrNotFound wrapped for operation op.
func notFound(op string) error {
	return fmt.Errorf("store: %s: %w", op, user.ErrNotFound)
}

// NewMemory returns an empty store.
func NewMemory(cfg MemoryConfig) *Memory {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, byID: map[string]*user.User{}, byEmail: map[string]string{}, passkeys: newPasskeys(), identities: newIdentities(), codes: emailCodes{}, signedIn: map[string]time.Time{}, apiKeys: apiKeys{},
		sessions: NewMemorySessions(MemoryConfig{Now: now})}
}

var _ session.Provider = (*Memory)(nil)

// SessionStore implements [session.Provider]: the session records of this
// store's users, a [MemorySessions] on the store's clock, the same on
// every call. auth.New keeps sessions there unless the app sets
// auth.Config.Sessions or asks for stateless cookies.
func (m *Memory) SessionStore() session.Store { return m.sessions }

// Create implements [user.Registration].
func (m *Memory) Create(ctx context.Context, u *user.User) (*user.User, error) {
	return locked(ctx, &m.mu, func() (*user.User, error) {
		c := u.Clone()
		if c.ID == "" {
			c.ID = user.NewID()
		}
		if c.CreatedAt.IsZero() {
			c.CreatedAt = m.now()
		}
		truncateTimes(c)
		if _, ok := m.byEmail[c.Email]; ok {
			return nil, fmt.Errorf("store: create: %w", user.ErrEmailTaken)
		}
		if _, ok := m.byID[c.ID]; ok {
			return nil, fmt.Errorf("store: create: id in use: %w", user.ErrConflict)
		}
		m.byID[c.ID] = c
		m.byEmail[c.Email] = c.ID
		return c.Clone(), nil
	})
}

// ByID implements [user.Accounts].
func (m *Memory) ByID(ctx context.Context, id string) (*user.User, error) {
	return locked(ctx, &m.mu, func() (*user.User, error) {
		return lookup(m.byID, id, "user by id", (*user.User).Clone)
	})
}

// ByEmail implements [user.Accounts].
func (m *Memory) ByEmail(ctx context.Context, email string) (*user.User, error) {
	return locked(ctx, &m.mu, func() (*user.User, error) {
		id, ok := m.byEmail[email]
		if !ok {
			return nil, notFound("user by email")
		}
		return m.byID[id].Clone(), nil
	})
}

// Delete implements [user.Registration].
func (m *Memory) Delete(ctx context.Context, id string) error {
	return m.update(ctx, "delete", id, func(u *user.User) error {
		delete(m.byEmail, u.Email)
		delete(m.byID, id)
		m.dropPasskeys(id)
		m.dropIdentities(id)
		delete(m.codes, id)
		delete(m.signedIn, id)
		m.apiKeys.dropAPIKeys(id)
		return nil
	})
}

// BeginTOTPSetup implements [user.TwoFactor].
func (m *Memory) BeginTOTPSetup(ctx context.Context, id, pendingSecret string) error {
	return m.update(ctx, "begin totp setup", id, func(u *user.User) error {
		if u.TwoFactorEnabled {
			return user.ErrConflict
		}
		u.PendingTOTPSecret = pendingSecret
		return nil
	})
}

// EnableTOTP implements [user.TwoFactor].
func (m *Memory) EnableTOTP(ctx context.Context, id string, e user.EnableTOTP) error {
	return m.update(ctx, "enable totp", id, func(u *user.User) error {
		if u.TwoFactorEnabled || u.PendingTOTPSecret == "" || u.PendingTOTPSecret != e.Pending {
			return user.ErrConflict
		}
		u.TOTPSecret = e.Secret
		u.PendingTOTPSecret = ""
		u.RecoveryCodeHashes = slices.Clone(e.RecoveryCodeHashes)
		u.LastTOTPStep = e.Step
		u.TwoFactorEnabled = true
		return nil
	})
}

// AcceptTOTPStep implements [user.TwoFactor].
func (m *Memory) AcceptTOTPStep(ctx context.Context, id string, matched, current int64) error {
	return m.update(ctx, "accept totp step", id, func(u *user.User) error {
		if !u.TwoFactorEnabled {
			return user.ErrConflict
		}
		if u.LastTOTPStep != 0 && (matched <= u.LastTOTPStep || current <= u.LastTOTPStep) {
			return user.ErrConflict
		}
		u.LastTOTPStep = max(matched, current)
		return nil
	})
}

// ConsumeRecoveryCode implements [user.TwoFactor].
func (m *Memory) ConsumeRecoveryCode(ctx context.Context, id string, old, remaining []string) error {
	return m.update(ctx, "consume recovery code", id, func(u *user.User) error {
		if !slices.Equal(u.RecoveryCodeHashes, old) {
			return user.ErrConflict
		}
		u.RecoveryCodeHashes = slices.Clone(remaining)
		if u.RecoveryCodeHashes == nil {
			u.RecoveryCodeHashes = []string{}
		}
		return nil
	})
}

// ReplaceRecoveryCodes implements [user.TwoFactor].
func (m *Memory) ReplaceRecoveryCodes(ctx context.Context, id string, hashes []string) error {
	return m.update(ctx, "replace recovery codes", id, func(u *user.User) error {
		if !u.TwoFactorEnabled {
			return user.ErrConflict
		}
		u.RecoveryCodeHashes = slices.Clone(hashes)
		return nil
	})
}

// DisableTOTP implements [user.TwoFactor].
func (m *Memory) DisableTOTP(ctx context.Context, id string) error {
	return m.update(ctx, "disable totp", id, func(u *user.User) error {
		if !u.TwoFactorEnabled {
			return user.ErrConflict
		}
		u.TwoFactorEnabled = false
		u.TOTPSecret = ""
		u.PendingTOTPSecret = ""
		u.RecoveryCodeHashes = nil
		u.LastTOTPStep = 0
		u.SessionVersion++
		return nil
	})
}

// VerifyEmail implements [user.EmailVerification].
func (m *Memory) VerifyEmail(ctx context.Context, id, email string, at time.Time) error {
	return m.update(ctx, "verify email", id, func(u *user.User) error {
		if u.Email != email {
			return user.ErrConflict
		}
		if u.EmailVerifiedAt.IsZero() {
			u.EmailVerifiedAt = at.Truncate(time.Millisecond)
		}
		return nil
	})
}

// ChangeEmail implements [user.EmailChange].
func (m *Memory) ChangeEmail(ctx context.Context, id, oldEmail, newEmail string, at time.Time) error {
	return m.update(ctx, "change email", id, func(u *user.User) error {
		if u.Email != oldEmail {
			return user.ErrConflict
		}
		if other, ok := m.byEmail[newEmail]; ok && other != id {
			return user.ErrEmailTaken
		}
		delete(m.byEmail, u.Email)
		m.byEmail[newEmail] = id
		u.Email = newEmail
		u.EmailVerifiedAt = time.Time{}
		u.EmailChangedAt = at.Truncate(time.Millisecond)
		u.SessionVersion++
		return nil
	})
}

// ResetPassword implements [user.PasswordReset].
func (m *Memory) ResetPassword(ctx context.Context, id string, r user.Reset) error {
	return m.update(ctx, "reset password", id, func(u *user.User) error {
		if u.PasswordHash != r.OldHash ||
			(!u.PasswordChangedAt.IsZero() && !u.PasswordChangedAt.Before(r.IssuedBefore.Truncate(time.Millisecond))) {
			return user.ErrConflict
		}
		setPassword(u, r.Hash, r.At)
		return nil
	})
}

// ChangePassword implements [user.PasswordChange].
func (m *Memory) ChangePassword(ctx context.Context, id, oldHash, newHash string, at time.Time) error {
	return m.update(ctx, "change password", id, func(u *user.User) error {
		if u.PasswordHash != oldHash {
			return user.ErrConflict
		}
		setPassword(u, newHash, at)
		return nil
	})
}

// setPassword is the effect of a reset or a change.
func setPassword(u *user.User, hash string, at time.Time) {
	u.PasswordHash = hash
	u.PasswordChangedAt = at.Truncate(time.Millisecond)
	u.SessionVersion++
	u.FailedLogins = 0
	u.LockedUntil = time.Time{}
}

// RehashPassword implements [user.PasswordRehash].
func (m *Memory) RehashPassword(ctx context.Context, id, oldHash, newHash string) error {
	return m.update(ctx, "rehash password", id, func(u *user.User) error {
		if u.PasswordHash != oldHash {
			return user.ErrConflict
		}
		u.PasswordHash = newHash
		return nil
	})
}

// BumpSessionVersion implements [user.SessionVersions].
func (m *Memory) BumpSessionVersion(ctx context.Context, id string) (int64, error) {
	var v int64
	err := m.update(ctx, "bump session version", id, func(u *user.User) error {
		u.SessionVersion++
		v = u.SessionVersion
		return nil
	})
	return v, err
}

// RecordLoginFailure implements [user.Lockout].
func (m *Memory) RecordLoginFailure(ctx context.Context, id string, limit int, lockFor time.Duration, at time.Time) (int, time.Time, error) {
	var n int
	var until time.Time
	err := m.update(ctx, "record login failure", id, func(u *user.User) error {
		u.FailedLogins++
		n = u.FailedLogins
		if limit > 0 && u.FailedLogins >= limit {
			u.LockedUntil = at.Add(lockFor).Truncate(time.Millisecond)
			u.FailedLogins = 0
		}
		until = u.LockedUntil
		return nil
	})
	return n, until, err
}

// ClearLoginFailures implements [user.Lockout].
func (m *Memory) ClearLoginFailures(ctx context.Context, id string) error {
	return m.update(ctx, "clear login failures", id, func(u *user.User) error {
		u.FailedLogins = 0
		u.LockedUntil = time.Time{}
		return nil
	})
}

// update runs fn on the stored record under the lock. fn changes the record
// in place or returns an error, in which case the record is left as it was.
func (m *Memory) update(ctx context.Context, op, id string, fn func(u *user.User) error) error {
	return lockedDo(ctx, &m.mu, func() error {
		c, err := lookup(m.byID, id, op, (*user.User).Clone)
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return fmt.Errorf("store: %s: %w", op, err)
		}
		if _, still := m.byID[id]; still {
			m.byID[id] = c
		}
		return nil
	})
}

func truncateTimes(u *user.User) {
	for _, t := range []*time.Time{&u.EmailVerifiedAt, &u.EmailChangedAt, &u.PasswordChangedAt, &u.LockedUntil, &u.CreatedAt} {
		*t = t.Truncate(time.Millisecond)
	}
}
