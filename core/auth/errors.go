package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/authkit-go/authkit/core/i18n"
	"github.com/authkit-go/authkit/core/user"
)

// Code is the stable, machine-readable name of one error condition: lower
// snake_case ASCII, one per condition, never changed once released. It is
// the "code" of every error body, the key of translations, and what an app
// switches on. The table of every code is [Codes].
type Code string

// Error is an expected failure of a flow: the HTTP status it answers with,
// its stable code and its text (the spec's, to the letter, for the
// conditions of the spec's error table, docs/errors.md). Every typed method returns one (or wraps
// an unexpected cause, see [AsError]); the JSON routes render it as
// {"error": Message, "code": Code}, plus "retryAfter" for a 429.
//
// Errors match by code: errors.Is(err, auth.ErrInvalidCredentials) holds for
// any *Error with that code, whatever its RetryAfter.
//
// The Err* values are exported *Error variables, and Go has no constant
// pointers: an app could reassign one or change its fields, and the flows,
// which return them, would then answer differently. They stay so because
// no compatible immutable form exists: errors.Is(err, auth.ErrX), switches
// on err.(*auth.Error) and reads of auth.ErrX.Code in released code all
// need the exported *Error variable (a value of another type would break
// each of them). Treat them as constants; [Codes] returns copies to build
// on, and Config.Catalog changes a text without touching them.
type Error struct {
	Status  int
	Code    Code
	Message string

	// RetryAfter is when a rate limit's window ends (429 only).
	RetryAfter time.Time

	limit http.Header       // a 429's rate-limit headers
	key   string            // the catalog key of a variant text, e.g. "wrong_field_type.string"; "" for Code
	vars  map[string]string // what the text names: {field}, {min}, {max}
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// def defines one condition.
func def(status int, code Code, msg string) *Error {
	e := &Error{Status: status, Code: code, Message: msg}
	codes = append(codes, e)
	return e
}

// codes is every defined condition, in the order of [Codes].
var codes []*Error

// Codes returns every error condition authkit answers with: status, code
// and English text. The slice and its values are the caller's.
func Codes() []Error {
	out := make([]Error, len(codes))
	for i, e := range codes {
		out[i] = Error{Status: e.Status, Code: e.Code, Message: e.Message}
	}
	return out
}

// The errors of the spec's error table (docs/errors.md), with its texts.
var (
	ErrNoPendingSetup         = def(400, "no_pending_setup", "No pending 2FA setup")
	ErrInvalidCode            = def(400, "invalid_code", "Invalid code")
	ErrInvalidTwoFactorCode   = def(400, "invalid_two_factor_code", "Invalid 2FA code")
	ErrCodeUsed               = def(400, "code_already_used", "Code already used")
	ErrInvalidRecoveryCode    = def(400, "invalid_recovery_code", "Invalid recovery code")
	ErrTwoFactorNotEnabled    = def(400, "two_factor_not_enabled", "2FA is not enabled")
	ErrEmailRegistered        = def(400, "email_already_registered", "Email already registered")
	ErrVerifyLinkInvalid      = def(400, "verification_link_invalid", "Invalid or expired verification link")
	ErrVerifyLinkUserMissing  = def(400, "verification_link_user_missing", "Invalid verification link")
	ErrVerifyLinkStale        = def(400, "verification_link_stale", "This verification link is no longer valid")
	ErrEmailInUse             = def(400, "email_in_use", "Email already in use")
	ErrPasswordsDiffer        = def(400, "passwords_do_not_match", "Passwords do not match")
	ErrResetLinkInvalid       = def(400, "reset_link_invalid", "Invalid or expired reset link")
	ErrResetLinkUsed          = def(400, "reset_link_used", "This reset link has already been used")
	ErrInvalidCredentials     = def(401, "invalid_credentials", "Invalid credentials")
	ErrNoPendingTwoFactor     = def(401, "no_pending_two_factor", "No pending 2FA session")
	ErrInvalidRefreshToken    = def(401, "invalid_refresh_token", "Invalid refresh token") // token mode: does not verify, session ended, or used before
	ErrRefreshTokenRequired   = def(400, "refresh_token_required", "Refresh token is required")
	ErrInvalidHandOff         = def(400, "invalid_hand_off", "Invalid or expired code") // token mode: a hand-off code unknown, used, expired, or with the wrong verifier
	ErrHandOffRequired        = def(400, "code_and_verifier_required", "Code and code verifier are required")
	ErrTwoFactorExpired       = def(401, "two_factor_session_expired", "2FA session expired")
	ErrInvalidSession         = def(401, "invalid_session", "Invalid session")
	ErrInvalidPassword        = def(401, "invalid_password", "Invalid password")
	ErrNotAuthenticated       = def(401, "not_authenticated", "Not authenticated")
	ErrTooManyLogins          = def(429, "too_many_login_attempts", "Too many login attempts. Try again later.")
	ErrTooManyRegistrations   = def(429, "too_many_registrations", "Too many registration attempts. Try again later.")
	ErrTooManyResets          = def(429, "too_many_reset_requests", "Too many password reset requests. Try again later.")
	ErrTooManyResends         = def(429, "too_many_verification_emails", "Too many verification emails requested. Try again later.")
	ErrTooManyTwoFactor       = def(429, "too_many_two_factor_attempts", "Too many 2FA attempts. Try again later.")
	ErrTooManyPasswordEntries = def(429, "too_many_password_attempts", "Too many password attempts. Try again later.")
	ErrTooManyRequests        = def(429, "too_many_requests", "Too many requests. Try again later.")
)

// The errors authkit adds: its deviations from the spec (SECURITY.md), its
// own routes, input validation and the answers of the HTTP layer.
var (
	ErrTwoFactorAlreadyEnabled  = def(400, "two_factor_already_enabled", "2FA is already enabled")
	ErrEmailPasswordRequired    = def(400, "email_password_required", "Email and password are required")
	ErrNameRequired             = def(400, "name_required", "Name is required")
	ErrNameTooLong              = def(400, "name_too_long", "Name is too long")
	ErrNewEmailRequired         = def(400, "new_email_required", "New email is required")
	ErrInvalidEmail             = def(400, "invalid_email", "Invalid email address")
	ErrPasswordTooShort         = def(400, "password_too_short", "Password must be at least 8 characters")
	ErrPasswordTooLong          = def(400, "password_too_long", "Password must be at most 128 characters")
	ErrPasswordInvalid          = def(400, "password_invalid_characters", "Password contains invalid characters")
	ErrPasswordBreached         = def(400, "password_breached", "This password has appeared in a data breach or is too common. Choose a different password.")
	ErrPasswordContextWord      = def(400, "password_context_word", "Password must not be based on the app's name, your email address or your name")
	ErrInvalidJSON              = def(400, "invalid_json", "Invalid JSON body")
	ErrInvalidForm              = def(400, "invalid_form", "Invalid form body")
	ErrDuplicateField           = def(400, "duplicate_field", "Duplicate field")
	ErrWrongFieldType           = def(400, "wrong_field_type", "Field has the wrong type")
	ErrInvalidCharacters        = def(400, "invalid_characters", "Request body contains invalid characters")
	ErrUnreadableBody           = def(400, "unreadable_body", "Could not read request body")
	ErrEmailRequired            = def(400, "email_required", "Email is required")
	ErrEmailTooLong             = def(400, "email_too_long", "Email address is too long")
	ErrEmailNotVerified         = def(403, "email_not_verified", "Email not verified")
	ErrReauthenticationRequired = def(403, "reauthentication_required", "Please confirm your password to continue")
	ErrTwoFactorCodeRequired    = def(403, "two_factor_code_required", "Enter your 2FA code to confirm")
	ErrTwoFactorRequired        = def(403, "two_factor_required", "Set up two-factor authentication to continue")
	ErrCrossOrigin              = def(403, "cross_origin_blocked", "Cross-origin request blocked")
	ErrNotFound                 = def(404, "not_found", "Not found")
	ErrSessionNotFound          = def(404, "session_not_found", "Session not found")
	ErrTrustedDeviceNotFound    = def(404, "trusted_device_not_found", "Trusted device not found")
	ErrMethodNotAllowed         = def(405, "method_not_allowed", "Method not allowed")
	ErrEmailChangedMeanwhile    = def(409, "email_changed_concurrently", "Your email address was changed by another request")
	ErrPasswordChangedMeanwhile = def(409, "password_changed_concurrently", "Your password was changed by another request")
	ErrBodyTooLarge             = def(413, "body_too_large", "Request body too large")
	ErrUnsupportedContentType   = def(415, "unsupported_content_type", "Unsupported content type")
	ErrFeatureDisabled          = def(404, "feature_disabled", "This feature is not available")
	ErrRequestRejected          = def(400, "request_rejected", "Bad Request")
	ErrInternal                 = def(500, "internal_error", "Internal server error")
	ErrUnavailable              = def(503, "service_unavailable", "Service temporarily unavailable. Try again later.")

	// ErrAccountDeletionBlocked: the app's rows prevent a deletion: a
	// Hooks.BeforeDeleteAccount that failed with an error that is not an
	// *Error, or rows that still point at the user (a foreign key,
	// user.ErrReferenced). Nothing is deleted; the cause is logged.
	ErrAccountDeletionBlocked = def(409, "account_deletion_blocked", "The account cannot be deleted now. Contact support.")
)

// with returns a copy of e with its text replaced: the conditions whose
// text names a field or a configured bound. key names the variant's text
// in a catalog ("" for the code's own), vars what the text names.
func (e *Error) with(msg, key string, vars map[string]string) *Error {
	c := *e
	c.Message, c.key, c.vars = msg, key, vars
	return &c
}

// translate returns e's text in lang: the variant's, else the code's, else
// the English Message.
func (e *Error) translate(lang *i18n.Language) string {
	if lang == nil {
		return e.Message
	}
	if e.key != "" {
		if t := lang.Text(e.key, e.vars); t != "" {
			return t
		}
	}
	if t := lang.Text(string(e.Code), e.vars); t != "" {
		return t
	}
	return e.Message
}

// errBackend marks failures of a backend (store, limit store): 503.
var errBackend = errors.New("backend unavailable")

// AsError returns the *Error an error from a typed method answers with: the
// *Error itself, [ErrUnavailable] for a backend that failed (a store or a
// limit store down, a deadline, a client that went away), and [ErrInternal]
// for anything else. A nil err gives nil.
func AsError(err error) *Error {
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case errors.Is(err, errBackend), errors.Is(err, user.ErrUnavailable),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ErrUnavailable
	default:
		return ErrInternal
	}
}

// storeWrite is the error of a flow whose conditional store write failed:
// user.ErrConflict (the record changed since the flow read it, a racing
// request won) is the flow's own answer lost; any other failure is
// wrapped with the flow's name op, as "op: store: ...".
func storeWrite(op string, err, lost error) error {
	if errors.Is(err, user.ErrConflict) {
		return lost
	}
	return fmt.Errorf("%s: store: %w", op, err)
}
