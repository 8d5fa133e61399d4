package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/authkit-go/authkit/core/user"
)

// Sign-up without a password: an account whose only way in is a
// credential a module proves at sign-up (the passkeys module's sign-up
// ceremony), beside the accounts sign-in by email and the social module
// make. The module begins with CheckSignUp, which checks the address and
// the name without looking the address up, so that its begin answers the
// same for a taken and a free address; it finishes with
// SignUpWithoutPassword, where Register's rules apply: the registration
// switch, the registration limit of the client's address, the hooks, the
// verification link, the session.

// SignUpInput is the account a sign-up without a password asks for.
type SignUpInput struct {
	Email string
	Name  string // required unless Config.NameOptional, as in Register
}

// CheckSignUp checks a sign-up without a password before its ceremony
// begins, as Register checks its input: ErrFeatureDisabled with
// FeatureRegistration off (or a store without user.Registration), the
// text rules (ErrInvalidCharacters), a well-formed address
// (ErrInvalidEmail), Register's name rules (ErrNameRequired unless
// Config.NameOptional, ErrNameTooLong). It returns the input normalised:
// the address trimmed, folded and lowercased, the name trimmed. It
// neither looks the address up nor counts a limit: whether the address
// has an account is told by SignUpWithoutPassword only, once the
// caller's proof is in and the registration limit counted.
func (m *Modules) CheckSignUp(in SignUpInput) (SignUpInput, error) {
	s := m.svc()
	if err := s.enabled(FeatureRegistration); err != nil || s.users.registration == nil {
		return SignUpInput{}, ErrFeatureDisabled
	}
	if err := checkText(text{"email", in.Email}, text{"name", in.Name}); err != nil {
		return SignUpInput{}, err
	}
	email, err := normalizeEmail(in.Email)
	if err != nil {
		return SignUpInput{}, err
	}
	name := strings.TrimSpace(in.Name)
	if name == "" && !s.cfg.NameOptional {
		return SignUpInput{}, ErrNameRequired
	}
	if utf8.RuneCountInString(name) > maxNameRunes {
		return SignUpInput{}, ErrNameTooLong
	}
	return SignUpInput{Email: email, Name: name}, nil
}

// PasswordlessSignUp is what SignUpWithoutPassword takes.
type PasswordlessSignUp struct {
	// SignUpInput is the account, as CheckSignUp returned it when the
	// ceremony began; it is checked again.
	SignUpInput
	// Method names the credential (LoginPasskey): the audit detail of
	// EventRegistered.
	Method LoginMethod
	// Verify checks the caller's proof (an attestation), after the
	// registration limit counted the attempt and before the address is
	// looked up. An *Error it returns is answered as it is.
	Verify func(ctx context.Context) error
	// Attach stores the credential for the new account u, before
	// AfterRegister runs: an error deletes the account again and is
	// returned.
	Attach func(ctx context.Context, u *user.User) error
}

// SignUpWithoutPassword creates an account without a password whose way
// in is the credential the caller proves and attaches, and signs it in on
// v, as Register does: CheckSignUp's checks, the registration limit of
// the client's address (ErrTooManyRegistrations), in.Verify, then an
// address in use fails with ErrEmailRegistered (as Register; two racing
// sign-ups of one address make one account, the store's Create decides),
// Hooks.BeforeRegister may veto it, in.Attach stores the credential, a
// failed Hooks.AfterRegister undoes it all. The account's address is not
// verified: the 24-hour verification link is mailed (unless
// FeatureEmailVerification is off), and until it is followed the account
// is one an owner of the address claims by proving it (SECURITY.md
// deviation 23). The session starts as Register's; EventRegistered is
// audited with Detail in.Method.
func (m *Modules) SignUpWithoutPassword(ctx context.Context, v *Visit, in PasswordlessSignUp) (_ *user.User, err error) {
	s := m.svc()
	ctx, flow := s.enter(ctx, v, "register/passwordless")
	defer flow.end(&err)
	if in.Verify == nil || in.Attach == nil {
		return nil, errors.New("sign up without password: Verify and Attach are required")
	}
	acct, err := m.CheckSignUp(in.SignUpInput)
	if err != nil {
		return nil, err
	}
	if err := s.checkShown(ctx, v, s.lim.register, v.ClientIP()); err != nil {
		return nil, err
	}
	if err := in.Verify(ctx); err != nil {
		return nil, err
	}
	switch _, err := s.users.ByEmail(ctx, acct.Email); {
	case err == nil:
		return nil, ErrEmailRegistered
	case !errors.Is(err, user.ErrNotFound):
		return nil, fmt.Errorf("sign up without password: lookup: %w", err)
	}
	reg := &Registration{Email: acct.Email, Name: acct.Name, Fields: map[string]string{}}
	if err := s.beforeRegister(ctx, reg); err != nil {
		return nil, err
	}
	u, err := s.users.registration.Create(ctx, &user.User{Email: acct.Email, Name: acct.Name})
	if err != nil {
		if errors.Is(err, user.ErrEmailTaken) {
			return nil, ErrEmailRegistered // a racing sign-up of the address won
		}
		return nil, fmt.Errorf("sign up without password: create: %w", err)
	}
	undo := func(cause error) error {
		if _, derr := eraseUser(context.WithoutCancel(ctx), s.cfg.Users, nil, &user.User{ID: u.ID}, s.runHook); derr != nil {
			return fmt.Errorf("sign up without password: undo after %w: %w", cause, derr)
		}
		return cause
	}
	if err := in.Attach(ctx, u.Clone()); err != nil {
		return nil, undo(err)
	}
	if h := s.cfg.Hooks.AfterRegister; h != nil {
		if err := s.runHook(ctx, "AfterRegister", func() error { return h(ctx, u.Clone(), reg) }); err != nil {
			return nil, undo(err)
		}
	}
	if err := s.sendVerification(ctx, v, u, u.Email); err != nil {
		return nil, fmt.Errorf("sign up without password: verification token: %w", err)
	}
	if err := s.startSession(ctx, v, u, false); err != nil {
		return nil, fmt.Errorf("sign up without password: session: %w", err)
	}
	if s.cfg.featureOn(FeatureNewDeviceNotice) {
		s.firstSignIn(ctx, u)
	}
	s.rememberDevice(ctx, v, u)
	s.audit(ctx, v, Event{Type: EventRegistered, UserID: u.ID, Detail: string(in.Method)})
	return u, nil
}
