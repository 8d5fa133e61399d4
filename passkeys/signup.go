package passkeys

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/user"
	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
)

// Sign-up with a passkey alone: a new account whose only way in is the
// passkey made at sign-up. The account is core's
// (auth.Modules.SignUpWithoutPassword: Register's switch, limit, hooks,
// verification link and session); the ceremony is this package's.

// SignUpInput is what BeginSignUp takes: the account to make.
type SignUpInput struct {
	Email string
	Name  string // the user's name: required unless auth.Config.NameOptional
}

// SignUpFinishInput is what FinishSignUp takes.
type SignUpFinishInput struct {
	// Credential is the PublicKeyCredential of
	// navigator.credentials.create, as its toJSON() serialises it.
	Credential []byte
	// PasskeyName names the passkey: see auth.CheckPasskeyName. Default:
	// "Passkey".
	PasskeyName string
}

// BeginSignUp starts a sign-up with a passkey and no password. It counts
// against Config.BeginLimit, checks the input as Register does
// (auth.Modules.CheckSignUp: registration on, a well-formed address, the
// name rules) and returns the options of navigator.credentials.create for
// a new account: a random user handle, a discoverable credential and user
// verification required (the passkey is the account's every factor).
//
// It does not look the address up: a taken address and a free one get
// the same answer after the same work, so begin tells nobody whether an
// address has an account. FinishSignUp tells it, as Register does, once a
// credential was made and the registration limit counted.
// auth.ErrFeatureDisabled when registration or Config.AllowPasswordless
// is off (an account without a password needs passwordless sign-in).
func (h *Handler) BeginSignUp(ctx context.Context, v *auth.Visit, in SignUpInput) (opts *protocol.CredentialCreation, err error) {
	ctx, done := h.observe(ctx, v, "passkeys/signup/begin", "begin sign-up")
	defer done(&err)
	if !h.passwordless {
		return nil, auth.ErrFeatureDisabled
	}
	if err := h.limitBegin(ctx, v); err != nil {
		return nil, err
	}
	acct, err := h.svc.Modules().CheckSignUp(auth.SignUpInput(in))
	if err != nil {
		return nil, err
	}
	handle := make([]byte, 32)
	if _, err := io.ReadFull(h.cfg.Rand, handle); err != nil {
		return nil, fmt.Errorf("passkeys: user handle: %w", err)
	}
	opts, sess, err := h.wa.BeginRegistration(h.newcomer(acct, handle),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementRequired, RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification: protocol.VerificationRequired,
		}),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired),
		webauthn.WithConveyancePreference(protocol.PreferNoAttestation),
	)
	if err != nil {
		return nil, fmt.Errorf("passkeys: begin sign-up: %w", err)
	}
	if err := h.start(ctx, v, ceremony{Purpose: purposeSignUp, Email: acct.Email, Name: acct.Name, Session: *sess}); err != nil {
		return nil, err
	}
	return opts, nil
}

// FinishSignUp verifies the credential of the ceremony BeginSignUp began
// on this browser, makes the account with it as its passkey and signs it
// in (auth.Modules.SignUpWithoutPassword): the session cookie on v, the
// verification link mailed. The ceremony is taken first, whatever then
// fails: auth.ErrPasskeyChallengeInvalid for none (a replay, a race lost,
// expired, another purpose), so of racing finishes of one ceremony one
// makes the account. Then the registration limit of the client's address
// (auth.ErrTooManyRegistrations), auth.ErrPasskeyInvalid for a credential
// that does not verify or was made without user verification,
// auth.ErrEmailRegistered for an address that has an account (as
// Register; of racing sign-ups of one address one wins),
// auth.ErrPasskeyAlreadyRegistered for a credential id stored already,
// and what the register hooks answer. Nothing is left of a failed finish.
// A success is audited (auth.EventRegistered with Detail "passkey",
// auth.EventPasskeyAdded) and returns the new user.
func (h *Handler) FinishSignUp(ctx context.Context, v *auth.Visit, in SignUpFinishInput) (u *user.User, err error) {
	ctx, done := h.observe(ctx, v, "passkeys/signup/finish", "finish sign-up")
	defer done(&err)
	if !h.passwordless {
		return nil, auth.ErrFeatureDisabled
	}
	cer, err := h.take(ctx, v, purposeSignUp)
	if err != nil {
		return nil, err
	}
	name, err := cleanName(in.PasskeyName)
	if err != nil {
		return nil, err
	}
	handle := cer.Session.UserID
	var cred *webauthn.Credential
	var p *user.Passkey
	u, err = h.svc.Modules().SignUpWithoutPassword(ctx, v, auth.PasswordlessSignUp{
		SignUpInput: auth.SignUpInput{Email: cer.Email, Name: cer.Name},
		Method:      auth.LoginPasskey,
		Verify: func(ctx context.Context) error {
			var resp protocol.CredentialCreationResponse
			if err := json.Unmarshal(in.Credential, &resp); err != nil {
				return auth.ErrPasskeyInvalid
			}
			parsed, err := resp.Parse()
			if err != nil {
				return auth.ErrPasskeyInvalid
			}
			// As FinishRegistration: the id named is the one attested.
			if !bytes.Equal(parsed.RawID, parsed.Response.AttestationObject.AuthData.AttData.CredentialID) {
				return auth.ErrPasskeyInvalid
			}
			acct := h.newcomer(auth.SignUpInput{Email: cer.Email, Name: cer.Name}, handle)
			if cred, err = h.wa.CreateCredential(acct, cer.Session, parsed); err != nil {
				return auth.ErrPasskeyInvalid
			}
			return nil
		},
		Attach: func(ctx context.Context, nu *user.User) error {
			got, err := h.store.PasskeyUserHandle(ctx, nu.ID, handle)
			if err != nil {
				return fmt.Errorf("passkeys: user handle: %w", err)
			}
			if !bytes.Equal(got, handle) {
				return errors.New("passkeys: a new account already has a user handle")
			}
			transports := make([]string, len(cred.Transport))
			for i, t := range cred.Transport {
				transports[i] = string(t)
			}
			p = &user.Passkey{
				ID: cred.ID, UserID: nu.ID, UserHandle: handle, PublicKey: cred.PublicKey,
				SignCount: cred.Authenticator.SignCount, BackupEligible: cred.Flags.BackupEligible, BackupState: cred.Flags.BackupState,
				Transports: transports, AttestationType: cred.AttestationType, AAGUID: cred.Authenticator.AAGUID,
				Name: name, CreatedAt: h.cfg.Now(),
			}
			if err := h.store.AddPasskey(ctx, p); err != nil {
				if errors.Is(err, user.ErrConflict) {
					return auth.ErrPasskeyAlreadyRegistered
				}
				return fmt.Errorf("passkeys: add: %w", err)
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	h.svc.Modules().Audit(ctx, v, auth.Event{Type: auth.EventPasskeyAdded, UserID: u.ID, Detail: name})
	return u, nil
}

// newcomer is the WebAuthn user of a sign-up: the account to be made,
// with its handle and no credentials.
func (h *Handler) newcomer(in auth.SignUpInput, handle []byte) *account {
	return &account{u: &user.User{Email: in.Email, Name: in.Name}, handle: handle}
}
