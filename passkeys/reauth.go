package passkeys

import (
	"context"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/user"
	"github.com/go-webauthn/webauthn/protocol"
)

// Re-authentication by passkey ("sudo mode"): the signed-in user proves
// themselves again with one of their passkeys, user verification required,
// and the session counts as recently authenticated, exactly as after
// POST /api/auth/confirm-password. A user-verified passkey is
// multi-factor (the key held, and the PIN or biometric that unlocks it:
// NIST SP 800-63B rev. 4 multi-factor cryptographic authenticator), so on
// a 2FA account it stands for the password and the second factor at once.
// It is how an account without a password (signed up by passkey, email or
// a social provider) opens every change that needs a recent
// authentication: adding a passkey, ending sessions, 2FA on and off, the
// email change (which then takes no password).

const purposeReauth purpose = "reauth"

// ReauthInput is what FinishReauthentication takes.
type ReauthInput struct {
	// Assertion is the PublicKeyCredential that navigator.credentials.get
	// gave, as its toJSON() serialises it.
	Assertion []byte
}

// BeginReauthentication starts a re-authentication of the visit's
// signed-in user (auth.ErrNotAuthenticated without a session) by one of
// their passkeys (auth.ErrPasskeyNotFound when they have none). It counts
// against Config.BeginLimit, keeps the ceremony bound to the user in
// Config.Challenges, sets the challenge cookie on v and returns the
// options of navigator.credentials.get, allowing the user's passkeys and
// requiring user verification.
func (h *Handler) BeginReauthentication(ctx context.Context, v *auth.Visit) (opts *protocol.CredentialAssertion, err error) {
	ctx, done := h.observe(ctx, v, "passkeys/reauth/begin", "begin reauthentication")
	defer done(&err)
	u, err := h.svc.CurrentUser(ctx, v)
	if err != nil {
		return nil, err
	}
	if err := h.limitBegin(ctx, v); err != nil {
		return nil, err
	}
	return h.beginAssertion(ctx, v, u, protocol.VerificationRequired, ceremony{Purpose: purposeReauth}, "begin reauthentication")
}

// FinishReauthentication verifies the assertion of the ceremony
// BeginReauthentication began on this browser, for the same signed-in
// user, and through auth.Modules.Reauthenticate reissues the session cookie
// with its time of authentication now (auth.EventReauthenticated audited,
// Detail "passkey"). It returns when the re-authentication stops counting
// as recent. The ceremony is taken first, whatever then fails:
// auth.ErrPasskeyChallengeInvalid for none (a replay, a race lost,
// expired, another purpose or user); auth.ErrPasskeyInvalid for an
// assertion that does not verify, was made without user verification, or
// names a passkey that is not the user's; auth.ErrPasskeyCountRegressed as
// FinishTwoFactor. The assertion is not limited per user: it cannot be
// guessed, and the begins are limited.
func (h *Handler) FinishReauthentication(ctx context.Context, v *auth.Visit, in ReauthInput) (res auth.ConfirmPasswordResult, err error) {
	ctx, done := h.observe(ctx, v, "passkeys/reauth/finish", "finish reauthentication")
	defer done(&err)
	cer, err := h.take(ctx, v, purposeReauth)
	if err != nil {
		return auth.ConfirmPasswordResult{}, err
	}
	return h.svc.Modules().Reauthenticate(ctx, v, auth.ReauthenticationInput{
		Method: auth.LoginPasskey,
		Verify: func(ctx context.Context, u *user.User) error {
			return h.verifyAssertion(ctx, v, u, &cer, in.Assertion, true)
		},
	})
}

func (h *Handler) reauthFinish(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
	body, err := readJSON(r, &struct{}{})
	if err != nil {
		return nil, err
	}
	if _, err := h.FinishReauthentication(ctx, v, ReauthInput{Assertion: body}); err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}
