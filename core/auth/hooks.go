package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/authkit-go/authkit/core/user"
)

// Hooks let an app veto or extend a flow without forking it. Every hook is
// optional and runs inside the flow, in the request's goroutine, with the
// flow's context (the typed method's ctx; a JSON route's is the request's).
//
// A hook that returns an *Error vetoes with it: the answer is that error's
// status, code and text (the app's own, e.g. 403 "invitation_required"). A
// hook that returns any other error, or panics, fails the flow with 500
// (the cause is logged). Either way the flow leaves nothing half-made: a
// registration whose AfterRegister fails is deleted again, and no session
// is issued after an AfterLogin that fails.
type Hooks struct {
	// BeforeRegister runs when a registration is valid and its email is
	// free, before anything is stored: the place to check an invitation or
	// an extra field (Registration.Fields) and to refuse. It must not
	// create records of its own (a later step may still fail); keep what
	// AfterRegister needs in Registration.Data.
	BeforeRegister func(ctx context.Context, r *Registration) error

	// AfterRegister runs when the account is stored, before the
	// verification mail and the session: the place to create the app's own
	// records for the user (a tenant, a profile). When it fails, authkit
	// deletes the account again (user.Registration.Delete) and sends no mail; the
	// app's own records are the hook's to keep consistent.
	AfterRegister func(ctx context.Context, u *user.User, r *Registration) error

	// AfterLogin runs when every factor of a login is accepted (the
	// password, and the TOTP or recovery code of an account with 2FA),
	// before the session is issued; returning an error refuses the
	// session (a suspended account, a tenant that is locked). A recovery
	// code is spent by then.
	AfterLogin func(ctx context.Context, u *user.User, how LoginMethod) error

	// AfterPasswordChange runs when a password change or reset is stored.
	// The change stands whatever the hook does: its error is logged.
	AfterPasswordChange func(ctx context.Context, u *user.User, how PasswordChange)

	// AfterEmailChange runs when an email change is stored (u is the
	// account as it was, with the old address). Its error is logged.
	AfterEmailChange func(ctx context.Context, u *user.User, newEmail string)

	// BeforeDeleteAccount runs when an account is about to be deleted
	// (Service.DeleteAccount; Support.DeleteAccount runs
	// SupportConfig.BeforeDeleteAccount): the place to delete or anonymise
	// the app's own rows of the user, and to refuse. When the store is a
	// user.AccountDeleter (sqlxstore), it runs inside the transaction that
	// deletes the user, and ctx carries it (sqlxstore.TxFrom): the app's
	// changes and the deletion commit together or not at all. Other stores
	// run it first and delete after it, so it must be idempotent (a failed
	// deletion may run it again). An *Error it returns is the answer;
	// any other error answers ErrAccountDeletionBlocked (409). Racing
	// deletions of one account may each run it; one deletes.
	BeforeDeleteAccount func(ctx context.Context, u *user.User) error
}

// Registration is a registration on its way, as the register hooks see it.
type Registration struct {
	Email string // lowercased and checked
	Name  string // trimmed; "" when Config.NameOptional and none was given

	// Fields are the extra fields named by Config.RegisterFields, as sent;
	// an absent field is "".
	Fields map[string]string

	// Data is the app's, from BeforeRegister to AfterRegister.
	Data any
}

// LoginMethod is the last factor of a login.
type LoginMethod string

// The factors a login can end with.
const (
	LoginPassword      LoginMethod = "password"       // an account without 2FA
	LoginTOTP          LoginMethod = "totp"           // the second step by TOTP code
	LoginRecoveryCode  LoginMethod = "recovery_code"  // the second step by recovery code
	LoginTrustedDevice LoginMethod = "trusted_device" // the password from a trusted browser (Config.TrustedDevices): no second step
)

// PasswordChange is how a password changed.
type PasswordChange string

// The ways a password changes.
const (
	PasswordChanged PasswordChange = "changed" // by the signed-in user, with the current password
	PasswordReset   PasswordChange = "reset"   // by a mailed reset link
)

// reserved are the registration body's own fields, which
// Config.RegisterFields cannot name.
var reserved = []string{"email", "password", "name"}

func checkRegisterFields(names []string) error {
	for i, n := range names {
		switch {
		case n == "":
			return fmt.Errorf("auth: Config.RegisterFields: an empty name")
		case slices.Contains(reserved, n):
			return fmt.Errorf("auth: Config.RegisterFields: %q is a field of registration already", n)
		case slices.Contains(names[:i], n):
			return fmt.Errorf("auth: Config.RegisterFields: %q twice", n)
		}
	}
	return nil
}

// runHook calls a hook, turning a panic into an error so that the flow can
// undo what it did; the panic is logged.
func (s *Service) runHook(ctx context.Context, name string, call func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "authkit: hook panicked", "hook", name, "panic", p)
			err = fmt.Errorf("hook %s panicked: %v", name, p)
		}
	}()
	if err := call(); err != nil {
		return fmt.Errorf("hook %s: %w", name, err)
	}
	return nil
}

// beforeRegister runs Hooks.BeforeRegister, when set, on the account
// about to be made: its error vetoes the sign-up.
func (s *Service) beforeRegister(ctx context.Context, reg *Registration) error {
	if h := s.cfg.Hooks.BeforeRegister; h != nil {
		return s.runHook(ctx, "BeforeRegister", func() error { return h(ctx, reg) })
	}
	return nil
}

// afterRegister runs Hooks.AfterRegister, when set, on u, the account just
// made. A failed hook deletes u again, so no account, no mail and no
// session is left by it; op names the sign-up in the error when that
// deletion fails too.
func (s *Service) afterRegister(ctx context.Context, u *user.User, reg *Registration, op string) error {
	h := s.cfg.Hooks.AfterRegister
	if h == nil {
		return nil
	}
	err := s.runHook(ctx, "AfterRegister", func() error { return h(ctx, u.Clone(), reg) })
	if err == nil {
		return nil
	}
	if derr := s.users.registration.Delete(context.WithoutCancel(ctx), u.ID); derr != nil {
		return fmt.Errorf("%s: undo after %w: %w", op, err, derr)
	}
	return err
}

// createAccount creates nu, the account reg describes, and runs
// Hooks.AfterRegister on it (see afterRegister). An address registered
// meanwhile is ErrEmailRegistered; op names the sign-up in errors.
func (s *Service) createAccount(ctx context.Context, nu *user.User, reg *Registration, op string) (*user.User, error) {
	u, err := s.users.registration.Create(ctx, nu)
	if errors.Is(err, user.ErrEmailTaken) {
		return nil, ErrEmailRegistered
	}
	if err != nil {
		return nil, fmt.Errorf("%s: create: %w", op, err)
	}
	if err := s.afterRegister(ctx, u, reg, op); err != nil {
		return nil, err
	}
	return u, nil
}

// notify calls an After*Change hook: the change stands, a failure is
// logged.
func (s *Service) notify(ctx context.Context, name string, call func()) {
	err := s.runHook(ctx, name, func() error { call(); return nil })
	if err != nil {
		s.log.ErrorContext(ctx, "authkit: hook failed", "hook", name, "err", err)
	}
}

// afterLogin runs Hooks.AfterLogin, if any.
func (s *Service) afterLogin(ctx context.Context, u *user.User, how LoginMethod) error {
	if s.cfg.Hooks.AfterLogin == nil {
		return nil
	}
	return s.runHook(ctx, "AfterLogin", func() error { return s.cfg.Hooks.AfterLogin(ctx, u, how) })
}
