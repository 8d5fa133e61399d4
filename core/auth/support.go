package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// The support operations: what a support team does for one account, as Go
// methods (the `authkit user` commands of cmd/authkit are thin over them).
// They act on the stores directly, outside any request: no session, no
// rate limit, no cookie. Each change is reported to the audit function as
// a support_* event whose Detail names the actor.

// Support events, reported by the methods of [Support]. Their Detail is
// the actor string the caller passed (who did it and why).
const (
	// EventSupportUnlocked: support cleared a lockout (Support.Unlock).
	EventSupportUnlocked EventType = "support_account_unlocked"

	// EventSupportTwoFactorDisabled: support turned off every second
	// factor of an account (Support.DisableTwoFactor).
	EventSupportTwoFactorDisabled EventType = "support_2fa_disabled"

	// EventSupportSessionsEnded: support ended every session of an
	// account (Support.EndSessions).
	EventSupportSessionsEnded EventType = "support_sessions_ended"

	// EventSupportEmailVerified: support marked an address verified
	// (Support.VerifyEmail).
	EventSupportEmailVerified EventType = "support_email_verified"

	// EventSupportAccountDeleted: support deleted an account and what
	// authkit held for it (Support.DeleteAccount).
	EventSupportAccountDeleted EventType = "support_account_deleted"
)

// Errors of the support operations, for errors.Is. A missing user is
// user.ErrNotFound, wrapped.
var (
	// ErrSupportActor: a changing operation was called without an actor.
	// Every change is audited with who made it, so the actor is required.
	ErrSupportActor = errors.New("auth: support: an actor is required (who does this, and why)")

	// ErrSupportUnsupported: the user store lacks the part of the store
	// contract the operation needs. The error names the interface.
	ErrSupportUnsupported = errors.New("auth: support: the store does not support this operation")
)

// SupportConfig configures [NewSupport]. Only Users is required.
type SupportConfig struct {
	// Users is the user store. Required. Each operation needs a part of
	// the store contract (core/user) beside Accounts: Unlock user.Lockout,
	// DisableTwoFactor user.TwoFactor (and user.Passkeys when the store
	// holds passkeys), EndSessions user.SessionVersions, VerifyEmail
	// user.EmailVerification, DeleteAccount user.Registration. Without it
	// the operation returns ErrSupportUnsupported.
	Users user.Accounts

	// Sessions and TrustedDevices are the session-record stores of the
	// app (auth.Config.Sessions and TrustedDevices). Nil when the app keeps
	// none: the counts of Find are then -1.
	Sessions       session.Store
	TrustedDevices session.Store

	// Mailer sends the notice of DisableTwoFactor, at once (not queued),
	// so the caller learns whether it went. Nil sends none.
	Mailer mail.Mailer

	// Templates render the notice. Default: mail.DefaultTemplates().
	Templates *mail.Templates

	// AppName names the app in the notice. Default: "authkit".
	AppName string

	// Audit receives the support events. Default: logged with Logger.
	Audit func(ctx context.Context, e Event)

	// Logger logs the events when Audit is nil. Default: slog.Default().
	Logger *slog.Logger

	// Now is the clock. Default: time.Now.
	Now func() time.Time

	// BeforeDeleteAccount is the app's before-delete hook for
	// DeleteAccount, as auth.Hooks.BeforeDeleteAccount (Service.Support
	// passes the Service's). Nil: none; a foreign key of the app that
	// still points at the user then fails the deletion with a
	// *user.ReferencedError naming it.
	BeforeDeleteAccount func(ctx context.Context, u *user.User) error
}

// Support holds the support operations. Make one with [NewSupport], or
// [Service.Support] for the stores, mailer and audit of a Service. Its
// methods are safe for concurrent use.
type Support struct {
	cfg  SupportConfig
	tmpl mail.Templates
}

// NewSupport returns the support operations over cfg's stores. It copies
// cfg and fails only when cfg.Users is nil.
func NewSupport(cfg SupportConfig) (*Support, error) {
	if cfg.Users == nil {
		return nil, errors.New("auth: SupportConfig.Users is required")
	}
	if cfg.AppName == "" {
		cfg.AppName = "authkit"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	sp := &Support{cfg: cfg, tmpl: mail.DefaultTemplates()}
	if cfg.Templates != nil {
		sp.tmpl = *cfg.Templates
	}
	return sp, nil
}

// Support returns the support operations over the Service's user store,
// session records, trusted devices, mailer, templates, app name, audit
// function and clock.
func (s *Service) Support() *Support {
	sp, _ := NewSupport(SupportConfig{ // Users is never nil in a Service
		Users: s.cfg.Users, Sessions: s.cfg.Sessions, TrustedDevices: s.cfg.TrustedDevices,
		Mailer: s.cfg.Mailer, Templates: &s.tmpl, AppName: s.cfg.AppName,
		Audit: s.cfg.Audit, Logger: s.log, Now: s.now,
		BeforeDeleteAccount: s.cfg.Hooks.BeforeDeleteAccount,
	})
	return sp
}

// Account is what authkit holds about a user, as support sees it: never a
// password hash, a TOTP secret, a recovery code or a key.
type Account struct {
	ID    string
	Email string
	Name  string

	CreatedAt       time.Time
	EmailVerifiedAt time.Time // zero when the address is not verified

	TwoFactorEnabled bool // TOTP is on
	RecoveryCodes    int  // recovery codes left (0 when 2FA is off)

	// Passkeys is the number of passkeys; -1 when the store keeps none
	// (no user.Passkeys).
	Passkeys int

	FailedLogins int
	LockedUntil  time.Time // zero, or a time in the past, when not locked

	// Sessions and TrustedDevices count the unexpired records; -1 when
	// the app keeps none (SupportConfig.Sessions, TrustedDevices).
	Sessions       int
	TrustedDevices int

	PasswordChangedAt time.Time
	SessionVersion    int64
}

// Locked reports whether the account is locked at now.
func (a Account) Locked(now time.Time) bool { return a.LockedUntil.After(now) }

// Find returns what authkit holds about the user whose id or address is
// idOrEmail: an argument with an "@" is an address (compared in
// lowercase), anything else an id. No user is user.ErrNotFound, wrapped.
func (sp *Support) Find(ctx context.Context, idOrEmail string) (Account, error) {
	u, err := sp.user(ctx, idOrEmail)
	if err != nil {
		return Account{}, err
	}
	a := Account{
		ID: u.ID, Email: u.Email, Name: u.Name, CreatedAt: u.CreatedAt, EmailVerifiedAt: u.EmailVerifiedAt,
		TwoFactorEnabled: u.TwoFactorEnabled, FailedLogins: u.FailedLogins, LockedUntil: u.LockedUntil,
		PasswordChangedAt: u.PasswordChangedAt, SessionVersion: u.SessionVersion,
		Passkeys: -1, Sessions: -1, TrustedDevices: -1,
	}
	if u.TwoFactorEnabled {
		a.RecoveryCodes = len(u.RecoveryCodeHashes)
	}
	if pk, ok := sp.cfg.Users.(user.Passkeys); ok {
		keys, err := pk.ListPasskeys(ctx, u.ID)
		if err != nil {
			return Account{}, fmt.Errorf("auth: support: list passkeys: %w", err)
		}
		a.Passkeys = len(keys)
	}
	if a.Sessions, err = sp.count(ctx, sp.cfg.Sessions, u.ID); err != nil {
		return Account{}, fmt.Errorf("auth: support: list sessions: %w", err)
	}
	if a.TrustedDevices, err = sp.count(ctx, sp.cfg.TrustedDevices, u.ID); err != nil {
		return Account{}, fmt.Errorf("auth: support: list trusted devices: %w", err)
	}
	return a, nil
}

// user reads the user by id or address.
func (sp *Support) user(ctx context.Context, idOrEmail string) (*user.User, error) {
	var (
		u   *user.User
		err error
	)
	if strings.Contains(idOrEmail, "@") {
		u, err = sp.cfg.Users.ByEmail(ctx, foldEmail(idOrEmail))
	} else {
		u, err = sp.cfg.Users.ByID(ctx, idOrEmail)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: support: find %q: %w", idOrEmail, err)
	}
	return u, nil
}

// count returns the number of the user's unexpired records in st, or -1
// when st is nil.
func (sp *Support) count(ctx context.Context, st session.Store, userID string) (int, error) {
	if st == nil {
		return -1, nil
	}
	recs, err := st.List(ctx, userID)
	if err != nil {
		return 0, err
	}
	now, n := sp.cfg.Now(), 0
	for _, r := range recs {
		if r.ExpiresAt.After(now) {
			n++
		}
	}
	return n, nil
}

// change starts a changing operation: it checks the actor and reads the
// user.
func (sp *Support) change(ctx context.Context, id, actor string) (*user.User, error) {
	if strings.TrimSpace(actor) == "" {
		return nil, ErrSupportActor
	}
	u, err := sp.cfg.Users.ByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("auth: support: find %q: %w", id, err)
	}
	return u, nil
}

func (sp *Support) audit(ctx context.Context, typ EventType, u *user.User, actor string) {
	e := Event{Type: typ, Time: sp.cfg.Now(), UserID: u.ID, Email: u.Email, Detail: actor}
	if sp.cfg.Audit != nil {
		sp.cfg.Audit(ctx, e)
		return
	}
	sp.cfg.Logger.Log(ctx, slog.LevelInfo, "authkit: "+string(e.Type), auditAttrs(e)...)
}

// supportTarget returns the part P of the user store that an operation
// needs (ErrSupportUnsupported without it) and the user the operation
// changes (see change).
func supportTarget[P any](ctx context.Context, sp *Support, id, actor string) (P, *user.User, error) {
	part, ok := sp.cfg.Users.(P)
	if !ok {
		return part, nil, fmt.Errorf("%w: the user store does not implement %s", ErrSupportUnsupported, reflect.TypeFor[P]())
	}
	u, err := sp.change(ctx, id, actor)
	return part, u, err
}

// Unlock clears the user's lockout and failed-login count
// (user.Lockout.ClearLoginFailures). It reports whether the account was
// locked at the time; it clears the count either way and audits
// EventSupportUnlocked.
func (sp *Support) Unlock(ctx context.Context, id, actor string) (wasLocked bool, err error) {
	lo, u, err := supportTarget[user.Lockout](ctx, sp, id, actor)
	if err != nil {
		return false, err
	}
	if err := lo.ClearLoginFailures(ctx, u.ID); err != nil {
		return false, fmt.Errorf("auth: support: unlock: %w", err)
	}
	sp.audit(ctx, EventSupportUnlocked, u, actor)
	return u.LockedUntil.After(sp.cfg.Now()), nil
}

// TwoFactorReset is what [Support.DisableTwoFactor] changed.
type TwoFactorReset struct {
	TOTP     bool // TOTP was on and is now off (its secret and recovery codes gone)
	Passkeys int  // passkeys deleted
	Sessions int  // session records deleted (-1: the app keeps none)
	Trusted  int  // trusted-device records deleted (-1: the app keeps none)
	Notified bool // the notice mail was sent
}

// Changed reports whether anything was turned off.
func (r TwoFactorReset) Changed() bool { return r.TOTP || r.Passkeys > 0 }

// DisableTwoFactor turns off every second factor of a user who lost them
// all: TOTP with its recovery codes (user.TwoFactor.DisableTOTP, which
// raises the session version, so every session and pending login ends)
// and every passkey (user.Passkeys; when there was no TOTP to turn off,
// the session version is raised here, through user.SessionVersions).
// Passkeys go too because a passkey both signs in and passes the second
// step: one left on a lost device would still open the account. The
// user's session records and trusted devices are deleted, so that no
// browser skips the next second step. When something changed it audits
// EventSupportTwoFactorDisabled (also when a later step failed) and mails
// the account the two-factor-disabled notice (mail.KindTwoFactorDisabled,
// in English: there is no request to take a language from); a failed mail
// is returned with the result (Notified false) after the change.
func (sp *Support) DisableTwoFactor(ctx context.Context, id, actor string) (r TwoFactorReset, err error) {
	tf, u, err := supportTarget[user.TwoFactor](ctx, sp, id, actor)
	if err != nil {
		return r, err
	}
	defer func() {
		if r.Changed() {
			sp.audit(ctx, EventSupportTwoFactorDisabled, u, actor)
		}
	}()
	if u.TwoFactorEnabled {
		switch err := tf.DisableTOTP(ctx, u.ID); {
		case err == nil:
			r.TOTP = true
		case !errors.Is(err, user.ErrConflict): // a conflict: turned off meanwhile
			return r, fmt.Errorf("auth: support: disable totp: %w", err)
		}
	}
	if pk, ok := sp.cfg.Users.(user.Passkeys); ok {
		keys, err := pk.ListPasskeys(ctx, u.ID)
		if err != nil {
			return r, fmt.Errorf("auth: support: list passkeys: %w", err)
		}
		for _, k := range keys {
			switch err := pk.DeletePasskey(ctx, u.ID, k.ID); {
			case err == nil:
				r.Passkeys++
			case !errors.Is(err, user.ErrNotFound):
				return r, fmt.Errorf("auth: support: delete passkey: %w", err)
			}
		}
	}
	if !r.Changed() {
		r.Sessions, r.Trusted = -1, -1
		return r, nil
	}
	if !r.TOTP { // passkeys only: DisableTOTP did not end the sessions
		if sv, ok := sp.cfg.Users.(user.SessionVersions); ok {
			if _, err := sv.BumpSessionVersion(ctx, u.ID); err != nil {
				return r, fmt.Errorf("auth: support: bump session version: %w", err)
			}
		}
	}
	if r.Sessions, r.Trusted, err = sp.endRecords(ctx, u.ID); err != nil {
		return r, err
	}
	if sp.cfg.Mailer == nil {
		return r, nil
	}
	msg, err := sp.tmpl.Render(mail.KindTwoFactorDisabled, mail.Data{To: u.Email, Name: u.Name, AppName: sp.cfg.AppName, Time: sp.cfg.Now()})
	if err == nil {
		err = sp.cfg.Mailer.Send(ctx, msg)
	}
	if err != nil {
		return r, fmt.Errorf("auth: support: 2FA is off, but the notice was not sent: %w", err)
	}
	r.Notified = true
	return r, nil
}

// endRecords deletes every session record and trusted device of the user
// and returns how many unexpired ones there were (-1 for a store the app
// does not keep).
func (sp *Support) endRecords(ctx context.Context, userID string) (sessions, trusted int, err error) {
	sessions, trusted = -1, -1
	for _, st := range []struct {
		store session.Store
		n     *int
		what  string
	}{{sp.cfg.Sessions, &sessions, "session records"}, {sp.cfg.TrustedDevices, &trusted, "trusted devices"}} {
		if st.store == nil {
			continue
		}
		n, err := sp.count(ctx, st.store, userID)
		if err != nil {
			return sessions, trusted, fmt.Errorf("auth: support: list %s: %w", st.what, err)
		}
		if err := st.store.DeleteAll(ctx, userID, ""); err != nil {
			return sessions, trusted, fmt.Errorf("auth: support: delete %s: %w", st.what, err)
		}
		*st.n = n
	}
	return sessions, trusted, nil
}

// EndedSessions is what [Support.EndSessions] changed.
type EndedSessions struct {
	SessionVersion int64 // the user's new session version
	Sessions       int   // session records deleted (-1: the app keeps none)
	Trusted        int   // trusted-device records deleted (-1: the app keeps none)
	APIKeys        int   // personal API keys revoked (-1: the store keeps none)
}

// EndSessions ends every session of the user: it raises the session
// version (user.SessionVersions), which ends every session cookie and
// pending login issued before, then deletes the session records and the
// trusted devices, so that the next login asks for the second step again,
// and revokes the user's API keys (user.APIKeys), which a session's thief
// may have made. It audits EventSupportSessionsEnded.
func (sp *Support) EndSessions(ctx context.Context, id, actor string) (EndedSessions, error) {
	sv, u, err := supportTarget[user.SessionVersions](ctx, sp, id, actor)
	if err != nil {
		return EndedSessions{}, err
	}
	var r EndedSessions
	if r.SessionVersion, err = sv.BumpSessionVersion(ctx, u.ID); err != nil {
		return r, fmt.Errorf("auth: support: bump session version: %w", err)
	}
	sp.audit(ctx, EventSupportSessionsEnded, u, actor)
	r.Sessions, r.Trusted, err = sp.endRecords(ctx, u.ID)
	r.APIKeys = -1
	if ks, ok := sp.cfg.Users.(user.APIKeys); ok {
		n, kerr := ks.RevokeAPIKeys(ctx, u.ID)
		if kerr != nil {
			return r, errors.Join(err, fmt.Errorf("auth: support: revoke api keys: %w", kerr))
		}
		r.APIKeys = n
	}
	return r, err
}

// VerifyEmail marks the user's current address verified
// (user.EmailVerification, under the condition that the address is still
// the one read). It reports whether it was verified already; then it
// changes nothing and audits nothing. Otherwise it audits
// EventSupportEmailVerified.
func (sp *Support) VerifyEmail(ctx context.Context, id, actor string) (alreadyVerified bool, err error) {
	ev, u, err := supportTarget[user.EmailVerification](ctx, sp, id, actor)
	if err != nil {
		return false, err
	}
	if !u.EmailVerifiedAt.IsZero() {
		return true, nil
	}
	if err := ev.VerifyEmail(ctx, u.ID, u.Email, sp.cfg.Now()); err != nil {
		return false, fmt.Errorf("auth: support: verify email: %w", err)
	}
	sp.audit(ctx, EventSupportEmailVerified, u, actor)
	return false, nil
}

// DeletedAccount is what [Support.DeleteAccount] deleted.
type DeletedAccount struct {
	User       bool // the user is deleted (false: nothing was)
	Passkeys   int  // passkeys deleted with the user (-1: the store keeps none)
	Sessions   int  // session records deleted (-1: the app keeps none)
	Trusted    int  // trusted-device records deleted (-1: the app keeps none)
	EmailCodes bool // the store's email codes were deleted (user.EmailCodeEraser)
}

// DeleteAccount deletes the user and everything authkit holds for them,
// on the path of the user's own deletion (Service.DeleteAccount): the user
// (user.Registration.Delete, which takes the passkeys, the passkey user
// handle and the identities with it; on an app's own table mapped by
// sqlxstore, the app's row and authkit's side-table row), after
// SupportConfig.BeforeDeleteAccount (in the store's transaction when it is
// a user.AccountDeleter); then the mailed email code
// (user.EmailCodeEraser, when the store has it), the session records and
// the trusted devices. Rows of the app that still point at the user fail
// it with a *user.ReferencedError naming them (errors.Is
// user.ErrReferenced), and nothing is deleted. Once the user is gone it
// audits EventSupportAccountDeleted and mails the notice
// (mail.KindAccountDeleted, with a Mailer); a failure after that is
// returned with the result (the sessions are dead anyway: their user is
// gone).
func (sp *Support) DeleteAccount(ctx context.Context, id, actor string) (DeletedAccount, error) {
	_, u, err := supportTarget[user.Registration](ctx, sp, id, actor)
	if err != nil {
		return DeletedAccount{}, err
	}
	run := func(_ context.Context, name string, call func() error) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("hook %s panicked: %v", name, p)
			}
		}()
		if err := call(); err != nil {
			return fmt.Errorf("hook %s: %w", name, err)
		}
		return nil
	}
	r, err := eraseUser(ctx, sp.cfg.Users, sp.cfg.BeforeDeleteAccount, u, run)
	if err != nil {
		return r, fmt.Errorf("auth: support: delete user: %w", err)
	}
	ctx = context.WithoutCancel(ctx)
	sp.audit(ctx, EventSupportAccountDeleted, u, actor)
	var errs []error
	if sp.cfg.Mailer != nil {
		msg, err := sp.tmpl.Render(mail.KindAccountDeleted, mail.Data{To: u.Email, Name: u.Name, AppName: sp.cfg.AppName, Time: sp.cfg.Now()})
		if err == nil {
			err = sp.cfg.Mailer.Send(ctx, msg)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("auth: support: mail the deletion notice: %w", err))
		}
	}
	r.EmailCodes, r.Sessions, r.Trusted = eraseOwned(ctx, sp.cfg.Users, sp.cfg.Sessions, sp.cfg.TrustedDevices, u.ID, func(what string, err error) {
		errs = append(errs, fmt.Errorf("auth: support: delete %s: %w", what, err))
	})
	return r, errors.Join(errs...)
}
