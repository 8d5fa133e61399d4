package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/authkit-go/authkit/core/session"
)

// Route is one authkit endpoint. Framework modules register each route's
// Pattern for its Method and call Handle with the neutral request. The
// Service's table holds core's routes and those modules add with
// [Modules.AddRoutes] ([NewRoute], [StaticRoute]); each carries the
// [Operation] that [Service.OpenAPI] renders.
type Route struct {
	Method string
	// Pattern is the path in net/http ServeMux form, with parameters as
	// {name}: "/api/auth/verify-email/{token}". See [Route.ColonPattern].
	Pattern string
	handle  func(ctx context.Context, s *Service, v *Visit) Response
	feature Feature    // the feature the route belongs to; "" for the always-on ones
	needs   needStore  // registered only with this store configured
	doc     *Operation // what the OpenAPI document says of it; nil: not in it
	quiet   bool       // not a flow: never reported to Config.Observer
	flow    string     // the flow's name when the pattern's is another route's (Flow)
}

// Operation returns what the OpenAPI document says of the route, and
// false for a route the document leaves out (a module's script). Its
// slices and maps are the table's: read them, do not change them.
func (r Route) Operation() (Operation, bool) {
	if r.doc == nil {
		return Operation{}, false
	}
	return *r.doc, true
}

// ColonPattern is Pattern with parameters written :name, the form gin and
// fiber use.
func (r Route) ColonPattern() string {
	p := r.Pattern
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			return p
		}
		j := strings.IndexByte(p[i:], '}')
		if j < 0 {
			return p
		}
		p = p[:i] + ":" + p[i+1:i+j] + p[i+j+1:]
	}
}

// needStore names an optional store a route needs.
type needStore uint8

const (
	none           needStore = iota
	sessionRecords           // Config.Sessions
	trustedDevices           // Config.TrustedDevices
	emailCodes               // Config.EmailCode.Enabled (and so user.EmailCodes)
	emailSignIn              // Config.EmailSignIn.Enabled (and so user.EmailCodes)
	tokenMode                // Config.Tokens.Enabled
	apiKeysOn                // Config.APIKeys.Enabled (and so user.APIKeys)
)

// has reports whether the configuration has store st.
func (cfg *Config) has(st needStore) bool {
	switch st {
	case sessionRecords:
		return cfg.Sessions != nil
	case trustedDevices:
		return cfg.TrustedDevices != nil
	case emailCodes:
		return cfg.EmailCode.Enabled
	case emailSignIn:
		return cfg.EmailSignIn.Enabled
	case tokenMode:
		return cfg.Tokens.Enabled
	case apiKeysOn:
		return cfg.APIKeys.Enabled
	}
	return true
}

var routes = []Route{
	// The spec's routes (docs/api.md, Routes).
	{Method: http.MethodPost, Pattern: "/api/2fa/setup", handle: setupTwoFactorRoute, feature: FeatureTwoFactor, doc: coreOp(Operation{
		ID: "setupTwoFactor", Summary: "Start turning 2FA on", Auth: "session",
		Description: "Needs a recent authentication (403 reauthentication_required). Feature two-factor.",
		OK:          closedObject(obj{"qrUri": oaStr("otpauth:// URI holding the secret"), "qrImage": oaStr("the URI as a PNG QR code, a data: URI")}, "qrUri", "qrImage"),
		Errors:      []*Error{ErrNotAuthenticated, ErrReauthenticationRequired, ErrTwoFactorAlreadyEnabled},
	})},
	{Method: http.MethodPost, Pattern: "/api/2fa/confirm", handle: confirmTwoFactorRoute, feature: FeatureTwoFactor, doc: coreOp(Operation{
		ID: "confirmTwoFactor", Summary: "Turn 2FA on with a code of the pending secret", Auth: "session",
		Description: "Needs a recent authentication. Feature two-factor.",
		Body:        formBody(obj{"code": oaStr("a current TOTP code (spaces ignored)")}, []string{"code"}),
		OK:          closedObject(obj{"message": obj{"type": "string"}, "recoveryCodes": obj{"type": "array", "items": obj{"type": "string"}}}, "message", "recoveryCodes"),
		Errors:      []*Error{ErrNotAuthenticated, ErrReauthenticationRequired, ErrNoPendingSetup, ErrInvalidCode},
	})},
	{Method: http.MethodPost, Pattern: "/api/login", handle: loginRoute, doc: coreOp(Operation{
		ID: "login", Summary: "Log in with email and password",
		Description: "The spec's path; /api/auth/login is the same handler. With 2FA on, answers requiresTwoFactor and the 2fa_pending cookie instead of a session.",
		Body:        formBody(obj{"email": oaStr("the account's email"), "password": oaStr("the password"), "remember": oaBool("a 30-day session instead of 24 hours")}, []string{"email", "password"}),
		OK:          closedObject(obj{"success": obj{"const": true}, "requiresTwoFactor": obj{"const": true}}),
		Errors:      []*Error{ErrEmailPasswordRequired, ErrInvalidCredentials, ErrTooManyLogins},
		Hooks:       "AfterLogin",
		Cookies:     sessionCookies + "; or 2fa_pending when a second factor follows; authkit_trusted is kept",
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/login", handle: loginRoute, doc: coreOp(Operation{
		ID: "authLogin", Summary: "Log in with email and password (authkit's path)",
		Description: "As POST /api/login.",
		Body:        formBody(obj{"email": oaStr("the account's email"), "password": oaStr("the password"), "remember": oaBool("a 30-day session instead of 24 hours")}, []string{"email", "password"}),
		OK:          closedObject(obj{"success": obj{"const": true}, "requiresTwoFactor": obj{"const": true}}),
		Errors:      []*Error{ErrEmailPasswordRequired, ErrInvalidCredentials, ErrTooManyLogins},
		Hooks:       "AfterLogin",
		Cookies:     sessionCookies + "; or 2fa_pending when a second factor follows",
	})},
	{Method: http.MethodPost, Pattern: "/api/2fa/verify", handle: verifyTwoFactorRoute, doc: coreOp(Operation{
		ID: "verifyTwoFactor", Summary: "Finish a login with a TOTP code", Auth: "pending",
		Body:    formBody(secondStep, []string{"code"}),
		OK:      closedObject(obj{"success": obj{"const": true}}, "success"),
		Errors:  slices.Concat(pendingStep, []*Error{ErrInvalidTwoFactorCode, ErrCodeUsed}),
		Hooks:   "AfterLogin",
		Cookies: loginCookies + "; authkit_trusted with trustDevice",
	})},
	{Method: http.MethodPost, Pattern: "/api/2fa/recover", handle: recoverTwoFactorRoute, doc: coreOp(Operation{
		ID: "recoverTwoFactor", Summary: "Finish a login with a recovery code", Auth: "pending",
		Body:    formBody(secondStep, []string{"code"}),
		OK:      closedObject(obj{"success": obj{"const": true}, "remainingCodes": obj{"type": "integer", "minimum": 0}}, "success", "remainingCodes"),
		Errors:  slices.Concat(pendingStep, []*Error{ErrInvalidRecoveryCode}),
		Hooks:   "AfterLogin",
		Cookies: loginCookies + "; authkit_trusted with trustDevice",
	})},
	{Method: http.MethodPost, Pattern: "/api/2fa/regenerate-codes", handle: regenerateCodesRoute, feature: FeatureTwoFactor, doc: coreOp(Operation{
		ID: "regenerateRecoveryCodes", Summary: "Replace the recovery codes", Auth: "session",
		Description: "Needs a recent authentication. Feature two-factor.",
		OK:          closedObject(obj{"recoveryCodes": obj{"type": "array", "items": obj{"type": "string"}}}, "recoveryCodes"),
		Errors:      []*Error{ErrNotAuthenticated, ErrReauthenticationRequired, ErrTwoFactorNotEnabled},
	})},
	{Method: http.MethodPost, Pattern: "/api/2fa/disable", handle: disableTwoFactorRoute, doc: coreOp(Operation{
		ID: "disableTwoFactor", Summary: "Turn 2FA off", Auth: "session",
		Body:    formBody(obj{"password": oaStr("the current password; an account without one sends none (a recent passkey re-authentication stands for it)")}, nil),
		OK:      oaMessage("2FA disabled"),
		Errors:  slices.Concat([]*Error{ErrNotAuthenticated, ErrTwoFactorNotEnabled, ErrReauthenticationRequired}, currentPassword),
		Cookies: "authkit_session (renewed)",
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/register", handle: registerRoute, feature: FeatureRegistration, doc: coreOp(Operation{
		ID: "register", Summary: "Create an account",
		Description: "Feature registration. Extra string fields of Config.RegisterFields are read too.",
		Body:        formBody(obj{"email": oaStr("at most 254 bytes, trimmed and lowercased"), "password": oaStr("8 to 128 characters"), "name": oaStr("at most 200 characters; required unless Config.NameOptional")}, []string{"email", "password"}),
		OK:          oaMessage("Registration successful. Check your email to verify your address."),
		Errors:      slices.Concat(typedEmail, []*Error{ErrNameRequired, ErrNameTooLong}, newPassword, []*Error{ErrEmailRegistered, ErrPasswordBreached, ErrTooManyRegistrations}),
		Hooks:       "BeforeRegister, AfterRegister",
		Cookies:     sessionCookies,
	})},
	{Method: http.MethodGet, Pattern: "/api/auth/verify-email/{token}", handle: verifyEmailRoute, feature: FeatureEmailVerification, doc: coreOp(Operation{
		ID: "verifyEmail", Summary: "Verify an email address with a mailed token",
		Param:  "the token of the mailed link",
		OK:     oaMessage("Email verified, or Email already verified"),
		Errors: []*Error{ErrVerifyLinkInvalid, ErrVerifyLinkUserMissing, ErrVerifyLinkStale},
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/resend-verification", handle: resendVerificationRoute, feature: FeatureEmailVerification, doc: coreOp(Operation{
		ID: "resendVerification", Summary: "Mail the verification link again", Auth: "session",
		OK:     oaMessage("Verification email sent, or Email already verified"),
		Errors: []*Error{ErrNotAuthenticated, ErrTooManyResends},
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/change-email", handle: changeEmailRoute, feature: FeatureEmailChange, doc: coreOp(Operation{
		ID: "changeEmail", Summary: "Change the account's email", Auth: "session",
		Description: "Feature email-change. An account without a password sends none: 403 reauthentication_required unless its session authenticated recently.",
		Body:        formBody(obj{"newEmail": oaStr("the new address"), "password": oaStr("the current password; an account without one sends none (a recent passkey re-authentication stands for it)")}, []string{"newEmail"}),
		OK:          oaMessage("Email updated. Check your new address to verify it."),
		Errors:      slices.Concat([]*Error{ErrNotAuthenticated, ErrNewEmailRequired}, typedEmail, currentPassword, []*Error{ErrEmailInUse, ErrEmailChangedMeanwhile, ErrReauthenticationRequired}),
		Cookies:     "authkit_session (renewed)",
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/forgot-password", handle: forgotPasswordRoute, feature: FeaturePasswordReset, doc: coreOp(Operation{
		ID: "forgotPassword", Summary: "Mail a password reset link",
		Description: "Feature password-reset. The answer is the same whether or not the address has an account.",
		Body:        formBody(obj{"email": oaStr("the account's email")}, []string{"email"}),
		OK:          oaMessage("If an account exists for that email, a password reset link has been sent."),
		Errors:      slices.Concat(typedEmail, []*Error{ErrTooManyResets}),
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/reset-password/{token}", handle: resetPasswordRoute, feature: FeaturePasswordReset, doc: coreOp(Operation{
		ID: "resetPassword", Summary: "Set a new password with a mailed token",
		Description: "Feature password-reset.",
		Param:       "the token of the mailed link",
		Body:        formBody(obj{"password": oaStr("the new password, 8 to 128 characters"), "confirmPassword": oaStr("must equal password")}, []string{"password", "confirmPassword"}),
		OK:          oaMessage("Password has been reset. You can now log in."),
		Errors:      slices.Concat([]*Error{ErrPasswordsDiffer}, newPassword, []*Error{ErrResetLinkInvalid, ErrResetLinkUsed, ErrPasswordBreached}),
	})},
	// authkit's own (docs/api.md "Routes beyond the spec").
	{Method: http.MethodPost, Pattern: "/api/auth/logout", handle: logoutRoute, doc: coreOp(Operation{
		ID: "logout", Summary: "Log out",
		Description: "Always 200, with or without a session.",
		OK:          oaMessage("Logged out"),
		Cookies:     "authkit_session and 2fa_pending expired",
		Storeless:   true,
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/logout-all", handle: logoutAllRoute, feature: FeatureLogoutEverywhere, doc: coreOp(Operation{
		ID: "logoutAll", Summary: "End every session of the account", Auth: "session",
		Description: "Feature logout-everywhere. Needs a recent authentication; ends every session, pending 2FA login and trusted browser, and deletes every passkey of the account.",
		OK:          oaMessage("Logged out of all sessions"),
		Errors:      []*Error{ErrNotAuthenticated, ErrReauthenticationRequired},
		Cookies:     "authkit_session and 2fa_pending expired",
	})},
	{Method: http.MethodGet, Pattern: "/api/auth/me", handle: meRoute, doc: coreOp(Operation{
		ID: "currentUser", Summary: "The signed-in user", Auth: "session",
		OK:     oaRef("User"),
		Errors: []*Error{ErrNotAuthenticated},
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/change-password", handle: changePasswordRoute, feature: FeaturePasswordChange, doc: coreOp(Operation{
		ID: "changePassword", Summary: "Change the password", Auth: "session",
		Description: "Feature password-change. An account without a password (passkey, email or social sign-up) gets 400 password_not_set: it sets one through the password reset.",
		Body:        formBody(obj{"currentPassword": oaStr("the current password"), "newPassword": oaStr("8 to 128 characters")}, []string{"currentPassword", "newPassword"}),
		OK:          oaMessage("Password changed"),
		Errors:      slices.Concat([]*Error{ErrNotAuthenticated}, newPassword, currentPassword, []*Error{ErrPasswordBreached, ErrPasswordChangedMeanwhile, ErrPasswordNotSet}),
		Cookies:     "authkit_session (renewed)",
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/confirm-password", handle: confirmPasswordRoute, doc: coreOp(Operation{
		ID: "confirmPassword", Summary: "Re-enter the password (a recent session for 15 minutes)", Auth: "session",
		Description: "On an account with 2FA on, code (a TOTP code or a recovery code) is required too, counted against the 2FA limit.",
		Body:        formBody(obj{"password": oaStr("the current password"), "code": oaStr("with 2FA on: a TOTP code or a recovery code")}, []string{"password"}),
		OK:          oaMessage("Password confirmed"),
		Errors:      slices.Concat([]*Error{ErrNotAuthenticated, ErrTwoFactorCodeRequired, ErrInvalidTwoFactorCode, ErrCodeUsed, ErrTooManyTwoFactor}, currentPassword),
		Cookies:     "authkit_session (reissued, authenticated now)",
	})},
	{Method: http.MethodGet, Pattern: "/api/auth/sessions", handle: listSessionsRoute, needs: sessionRecords, doc: coreOp(Operation{
		ID: "listSessions", Summary: "List the account's sessions", Auth: "session",
		Description: "Only with Config.Sessions.",
		OK:          closedObject(obj{"sessions": obj{"type": "array", "items": oaRef("Session")}}, "sessions"),
		Errors:      []*Error{ErrNotAuthenticated},
	})},
	{Method: http.MethodDelete, Pattern: "/api/auth/sessions/{id}", handle: endSessionRoute, needs: sessionRecords, doc: coreOp(Operation{
		ID: "endSession", Summary: "End one session", Auth: "session",
		Description: "Only with Config.Sessions. Ending another session needs a recent authentication.",
		Param:       "the session's id",
		OK:          oaMessage("Session ended"),
		Errors:      []*Error{ErrNotAuthenticated, ErrReauthenticationRequired, ErrSessionNotFound},
		Cookies:     "authkit_session and 2fa_pending expired when it is this session",
	})},
	{Method: http.MethodGet, Pattern: "/api/2fa/trusted-devices", handle: trustedDevicesRoute, needs: trustedDevices, doc: coreOp(Operation{
		ID: "listTrustedDevices", Summary: "List the account's trusted browsers", Auth: "session",
		Description: "Only with Config.TrustedDevices.",
		OK:          closedObject(obj{"devices": obj{"type": "array", "items": oaRef("TrustedDevice")}}, "devices"),
		Errors:      []*Error{ErrNotAuthenticated},
	})},
	{Method: http.MethodDelete, Pattern: "/api/2fa/trusted-devices/{id}", handle: forgetTrustedDeviceRoute, needs: trustedDevices, doc: coreOp(Operation{
		ID: "forgetTrustedDevice", Summary: "Stop trusting one browser", Auth: "session",
		Description: "Only with Config.TrustedDevices.",
		Param:       "the trusted device's id",
		OK:          oaMessage("Trusted device removed"),
		Errors:      []*Error{ErrNotAuthenticated, ErrTrustedDeviceNotFound},
		Cookies:     "authkit_trusted expired when it is this browser's",
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/api-keys", handle: createAPIKeyRoute, needs: apiKeysOn, flow: "api-keys/create", doc: coreOp(Operation{
		ID: "createAPIKey", Summary: "Create a personal API key", Auth: "session",
		Description: "Only with Config.APIKeys.Enabled. Needs a recent authentication. The key is in the answer this once; it authenticates the app's API (Authorization: Bearer), never authkit's routes. Mails the owner a notice.",
		Body:        formBody(obj{"name": oaStr("the user's name for the key"), "scopes": obj{"type": "array", "items": obj{"type": "string"}, "description": "a subset of Config.APIKeys.Scopes; in a form, separated by spaces or commas"}, "expiresInDays": obj{"type": "integer", "minimum": 1, "description": "the key's lifetime in days; default Config.APIKeys.DefaultLifetime, at most MaxLifetime"}}, []string{"name"}),
		OK:          closedObject(obj{"apiKey": oaRef("APIKey"), "key": oaStr("the key, shown this once: authkit_<id>_<secret><checksum>")}, "apiKey", "key"),
		Status:      http.StatusCreated,
		Errors:      []*Error{ErrNotAuthenticated, ErrReauthenticationRequired, ErrNameRequired, ErrNameTooLong, ErrUnknownScope, ErrInvalidExpiry, ErrTooManyAPIKeys},
	})},
	{Method: http.MethodGet, Pattern: "/api/auth/api-keys", handle: listAPIKeysRoute, needs: apiKeysOn, doc: coreOp(Operation{
		ID: "listAPIKeys", Summary: "List the account's API keys", Auth: "session",
		Description: "Only with Config.APIKeys.Enabled. The keys that have not expired, oldest first; never a secret.",
		OK:          closedObject(obj{"apiKeys": obj{"type": "array", "items": oaRef("APIKey")}}, "apiKeys"),
		Errors:      []*Error{ErrNotAuthenticated},
	})},
	{Method: http.MethodDelete, Pattern: "/api/auth/api-keys/{id}", handle: revokeAPIKeyRoute, needs: apiKeysOn, doc: coreOp(Operation{
		ID: "revokeAPIKey", Summary: "Revoke one API key", Auth: "session",
		Description: "Only with Config.APIKeys.Enabled.",
		Param:       "the key's id",
		OK:          oaMessage(msgAPIKeyRevoked),
		Errors:      []*Error{ErrNotAuthenticated, ErrAPIKeyNotFound},
	})},
	{Method: http.MethodPost, Pattern: "/api/2fa/email-code", handle: sendEmailCodeRoute, needs: emailCodes, doc: coreOp(Operation{
		ID: "sendTwoFactorEmailCode", Summary: "Mail a code for the second step", Auth: "pending",
		Description: "Only with Config.EmailCode.Enabled.",
		OK:          oaMessage("Code sent. Check your email."),
		Errors:      []*Error{ErrNoPendingTwoFactor, ErrTwoFactorExpired, ErrInvalidSession, ErrEmailCodeNeedsVerifiedEmail, ErrTooManyEmailCodes},
	})},
	{Method: http.MethodPost, Pattern: "/api/2fa/email-code/verify", handle: verifyEmailCodeRoute, needs: emailCodes, doc: coreOp(Operation{
		ID: "verifyTwoFactorEmailCode", Summary: "Finish a login with a mailed code", Auth: "pending",
		Description: "Only with Config.EmailCode.Enabled.",
		Body:        formBody(secondStep, []string{"code"}),
		OK:          closedObject(obj{"success": obj{"const": true}}, "success"),
		Errors:      slices.Concat(pendingStep, []*Error{ErrEmailCodeNeedsVerifiedEmail, ErrInvalidTwoFactorCode, ErrEmailCodeExpired, ErrCodeUsed}),
		Hooks:       "AfterLogin",
		Cookies:     loginCookies + "; authkit_trusted with trustDevice",
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/email-sign-in", handle: emailSignInRoute, needs: emailSignIn, doc: coreOp(Operation{
		ID: "requestEmailSignIn", Summary: "Mail a sign-in code and link",
		Description: "Only with Config.EmailSignIn.Enabled. The answer is the same whether or not the address has an account; the code and link work in this browser only (the authkit_email_sign_in cookie) unless EmailSignIn.AnyBrowser.",
		Body:        formBody(obj{"email": oaStr("the address to sign in with")}, []string{"email"}),
		OK:          oaMessage("If that address can sign in, a sign-in code has been sent. Check your email."),
		Errors:      slices.Concat(typedEmail, []*Error{ErrTooManySignInRequests}),
		Cookies:     "authkit_email_sign_in (binds the code to this browser)",
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/email-sign-in/verify", handle: emailSignInVerifyRoute, needs: emailSignIn, doc: coreOp(Operation{
		ID: "verifyEmailSignIn", Summary: "Sign in with a mailed code",
		Description: "Only with Config.EmailSignIn.Enabled. As login: with 2FA on, answers requiresTwoFactor and the 2fa_pending cookie. An unknown address signs up when registration is on.",
		Body:        formBody(obj{"email": oaStr("the address the code was mailed to"), "code": oaStr("the mailed code (spaces ignored)"), "remember": oaBool("a 30-day session instead of 24 hours")}, []string{"email", "code"}),
		OK:          closedObject(obj{"success": obj{"const": true}, "requiresTwoFactor": obj{"const": true}}),
		Errors:      slices.Concat(typedEmail, emailSignInStep),
		Hooks:       "BeforeRegister, AfterRegister (sign-up), AfterLogin",
		Cookies:     sessionCookies + "; or 2fa_pending when a second factor follows; authkit_email_sign_in expired",
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/email-sign-in/link/{token}", handle: emailSignInLinkRoute, needs: emailSignIn, doc: coreOp(Operation{
		ID: "verifyEmailSignInLink", Summary: "Sign in with a mailed link",
		Description: "Only with Config.EmailSignIn.Enabled. The page the mailed link opens posts here (a GET signs nobody in). As verify.",
		Param:       "the token of the mailed link",
		Body:        formBody(obj{"remember": oaBool("a 30-day session instead of 24 hours")}, nil),
		OK:          closedObject(obj{"success": obj{"const": true}, "requiresTwoFactor": obj{"const": true}}),
		Errors:      slices.Concat([]*Error{ErrSignInLinkInvalid}, emailSignInStep),
		Hooks:       "BeforeRegister, AfterRegister (sign-up), AfterLogin",
		Cookies:     sessionCookies + "; or 2fa_pending when a second factor follows; authkit_email_sign_in expired",
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/token/refresh", handle: refreshTokenRoute, needs: tokenMode, doc: coreOp(Operation{
		ID: "refreshTokens", Summary: "Turn a refresh token into a new access and refresh token",
		Description: "Only with Config.Tokens.Enabled (token mode, docs/mobile.md). The refresh token used is retired; one used a second time ends its session (401 invalid_refresh_token, audited as refresh_token_reused). Needs no cross-origin check without cookies.",
		Body:        formBody(obj{"refreshToken": oaStr("the refresh token (akrt_...) of the last answer that issued tokens")}, []string{"refreshToken"}),
		OK:          closedObject(tokenProps(), "accessToken", "refreshToken", "expiresIn", "tokenType"),
		Errors:      []*Error{ErrRefreshTokenRequired, ErrInvalidRefreshToken},
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/token/exchange", handle: exchangeRoute, needs: tokenMode, doc: coreOp(Operation{
		ID: "exchangeHandOff", Summary: "Exchange a native app's hand-off code for its tokens (PKCE)",
		Description: "Only with Config.Tokens.Enabled (docs/mobile.md, \"Social sign-in from a native app\"). The code is the one the app's redirect carried; codeVerifier the PKCE verifier of the codeChallenge the app started with. The code is spent whatever the outcome. Answers the tokens, or requiresTwoFactor and a pendingToken when a second step follows.",
		Body:        formBody(obj{"code": oaStr("the hand-off code"), "codeVerifier": oaStr("the PKCE code verifier (RFC 7636)")}, []string{"code", "codeVerifier"}),
		OK:          closedObject(obj{"requiresTwoFactor": obj{"const": true}}),
		Errors:      []*Error{ErrHandOffRequired, ErrInvalidHandOff},
	})},
	{Method: http.MethodPost, Pattern: "/api/auth/delete-account", handle: deleteAccountRoute, doc: coreOp(Operation{
		ID: "deleteAccount", Summary: "Delete the account and what authkit holds about it", Auth: "session",
		Description: "Needs a recent authentication, or the password in the body. On an account with 2FA on, code (a TOTP code or a recovery code) is required too, counted against the 2FA limit. Runs Hooks.BeforeDeleteAccount; mails the deletion notice.",
		Body:        formBody(obj{"password": oaStr("the current password (instead of a recent authentication)"), "code": oaStr("with 2FA on: a TOTP code or a recovery code")}, nil),
		OK:          oaMessage("Account deleted"),
		Errors:      slices.Concat([]*Error{ErrNotAuthenticated, ErrReauthenticationRequired, ErrTwoFactorCodeRequired, ErrInvalidTwoFactorCode, ErrCodeUsed, ErrTooManyTwoFactor, ErrAccountDeletionBlocked}, currentPassword),
		Hooks:       "BeforeDeleteAccount",
		Cookies:     "authkit_session and 2fa_pending expired",
	})},
	{Method: http.MethodGet, Pattern: "/api/auth/export", handle: exportRoute, doc: coreOp(Operation{
		ID: "exportAccount", Summary: "What authkit holds about the account", Auth: "session",
		Description: "Needs a recent authentication. The account, its sessions, trusted browsers, passkeys, linked identities and API keys (their names, scopes and times); never a secret, a hash or a session id.",
		OK:          oaExport(),
		Errors:      []*Error{ErrNotAuthenticated, ErrReauthenticationRequired},
	})},
}

// oaExport is the schema of GET /api/auth/export.
func oaExport() obj {
	str := obj{"type": "string"}
	list := func(fields obj) obj {
		req := make([]string, 0, len(fields))
		for k := range fields {
			req = append(req, k)
		}
		slices.Sort(req)
		return obj{"type": "array", "items": closedObject(fields, req...)}
	}
	return closedObject(obj{
		"account":    oaRef("User"),
		"sessions":   list(obj{"current": obj{"type": "boolean"}, "createdAt": str, "lastSeenAt": str, "ip": str, "userAgent": str}),
		"devices":    list(obj{"createdAt": str, "lastUsedAt": str, "expiresAt": str, "ip": str, "userAgent": str}),
		"passkeys":   list(obj{"name": str, "createdAt": str, "lastUsedAt": str, "backedUp": obj{"type": "boolean"}}),
		"identities": list(obj{"provider": str, "email": str, "linkedAt": str}),
		"apiKeys":    list(obj{"name": str, "scopes": obj{"type": "array", "items": str}, "createdAt": str, "expiresAt": str, "lastUsedAt": str}),
	}, "account", "sessions", "devices", "passkeys", "identities", "apiKeys")
}

// The conditions of finishing a sign-in by email, by code or link.
var emailSignInStep = []*Error{ErrSignInOtherBrowser, ErrInvalidSignInCode, ErrEmailCodeExpired, ErrCodeUsed, ErrTooManyLogins}

// coreOp is a core route's Operation: the cookies its answers may set
// or expire (x-set-cookies) are those its success sets (named in
// Cookies), and the session cookie of a session route (a dead one is
// expired).
func coreOp(op Operation) *Operation {
	op.SetCookies = []string{}
	for _, name := range []string{session.DefaultCookieName, DeviceCookie, PendingCookie, TrustedDeviceCookie, EmailSignInCookie} {
		if strings.Contains(op.Cookies, name) || (name == session.DefaultCookieName && op.Auth == "session") {
			op.SetCookies = append(op.SetCookies, name)
		}
	}
	return &op
}

// formBody is the body of a core route: read by decode (input.go), JSON
// or a form post.
func formBody(fields obj, required []string) *OperationBody {
	return &OperationBody{Fields: fields, Required: required, Form: true, Errors: bodyConditions,
		Description: "JSON, or the same fields as a form post. Unknown fields are ignored; absent fields are empty. A body without Content-Type is read as JSON; any other type answers 415."}
}

// The conditions of a body read by decode (input.go): every route with
// fields.
var bodyConditions = []*Error{ErrUnreadableBody, ErrInvalidCharacters, ErrInvalidJSON, ErrInvalidForm,
	ErrDuplicateField, ErrWrongFieldType, ErrBodyTooLarge, ErrUnsupportedContentType}

func oaRef(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func oaStr(desc string) obj { return obj{"type": "string", "description": desc} }

func oaBool(desc string) obj { return obj{"type": "boolean", "description": desc} }

func oaMessage(desc string) obj {
	return obj{"$ref": "#/components/schemas/Message", "description": desc}
}

var secondStep = obj{
	"code":        oaStr("the code"),
	"remember":    oaBool("when sent, overrides the remember flag given at login"),
	"trustDevice": oaBool("true trusts this browser (with Config.TrustedDevices): the authkit_trusted cookie"),
}

const (
	sessionCookies = "authkit_session (the session), authkit_device (this browser signed in before)"
	loginCookies   = sessionCookies + "; 2fa_pending is deleted"
)

// The conditions of the second step that every way of giving it shares
// (pendingUser): the pending cookie missing, expired or of a deleted
// account, the per-user 2FA limit.
var pendingStep = []*Error{ErrNoPendingTwoFactor, ErrTwoFactorExpired, ErrInvalidSession, ErrTooManyTwoFactor}

// The conditions of a new password (checkPolicy; password_context_word
// with Config.PasswordPolicy's RefuseContextWords). Not its
// ErrPasswordInvalid: every flow checks the password with checkText
// first, which refuses what Policy.Check calls invalid (invalid UTF-8, a
// control character, also after NFKC) as invalid_characters, naming the
// field.
var newPassword = []*Error{ErrPasswordTooShort, ErrPasswordTooLong, ErrPasswordContextWord}

// The conditions of a typed-in address (normalizeEmail).
var typedEmail = []*Error{ErrEmailRequired, ErrEmailTooLong, ErrInvalidEmail}

// The conditions of the current password where a signed-in user gives it
// (checkPassword).
var currentPassword = []*Error{ErrInvalidPassword, ErrTooManyPasswordEntries}

// Routes lists every endpoint of the features the Service has on
// (Config.Disable): a switched-off route is not listed, so no framework
// module registers it and it answers 404. The session routes are listed
// only with Config.Sessions, the trusted-device routes only with
// Config.TrustedDevices, the email-code routes only with
// Config.EmailCode.Enabled, the email sign-in routes only with
// Config.EmailSignIn.Enabled. The routes modules registered
// ([Modules.AddRoutes]) follow core's. Once Routes (or Paths) was called,
// the table is served: AddRoutes refuses more. The slice is the caller's.
func (m *Modules) Routes() []Route {
	s := m.svc()
	s.added.Lock()
	s.added.served = true
	s.added.Unlock()
	return s.table()
}

// table is Routes without marking the table served.
func (s *Service) table() []Route {
	var out []Route
	for _, rt := range routes {
		if s.enabled(rt.feature) == nil && s.cfg.has(rt.needs) {
			out = append(out, rt)
		}
	}
	s.added.Lock()
	defer s.added.Unlock()
	return append(out, s.added.routes...)
}

// addedRoutes is the routes modules registered, and whether the table was
// served.
type addedRoutes struct {
	sync.Mutex
	routes []Route
	served bool
}

// ErrRoutesServed is what Modules.AddRoutes returns once a framework module
// took the Service's routes (Modules.Routes or Paths): a route registered
// then would never be served. Register every module's routes (passkeys.New)
// before mounting the Service.
var ErrRoutesServed = errors.New("auth: routes registered after the Service's routes were served (Modules.Routes or Paths): register them before mounting the Service")

// AddRoutes adds a module's routes to the Service's table: framework
// modules serve them beside core's (Mount, Register, New), Handle runs
// them as core's (the Visit, the cross-origin check of a state-changing
// route, the Observer's flow, a panic answered 500), and OpenAPI documents
// them. It refuses, changing nothing, a route of a method and pattern the
// table holds already (core's included, whatever the Service has on), a
// route not made by NewRoute or StaticRoute, and any route once the
// table was served ([ErrRoutesServed]).
func (m *Modules) AddRoutes(rs ...Route) error {
	s := m.svc()
	s.added.Lock()
	defer s.added.Unlock()
	if s.added.served {
		return ErrRoutesServed
	}
	have := map[string]bool{}
	for _, rt := range slices.Concat(routes, s.added.routes) {
		have[rt.Method+" "+rt.Pattern] = true
	}
	for _, rt := range rs {
		key := rt.Method + " " + rt.Pattern
		switch {
		case rt.handle == nil:
			return fmt.Errorf("auth: AddRoutes %s: not a route of NewRoute or StaticRoute", key)
		case have[key]:
			return fmt.Errorf("auth: AddRoutes %s: the Service has that route already", key)
		}
		have[key] = true
	}
	s.added.routes = append(s.added.routes, rs...)
	return nil
}

// RouteFunc is a module's route: it reads the request and calls a typed
// method with v, in ctx (the Visit's, the Observer's flow's when there is
// one), and returns the 200 body or an error, which Handle renders as
// core's routes render theirs (Modules.Answer).
type RouteFunc func(ctx context.Context, v *Visit, r Request) (any, error)

// NewRoute returns a module's JSON route for Modules.AddRoutes: method and
// pattern (ServeMux form, as Route.Pattern), fn, and what the OpenAPI
// document says of it. A method other than GET, HEAD and OPTIONS is
// state-changing: Handle refuses it cross-origin before fn runs. fn may
// answer a [Redirect] instead of a JSON body.
func NewRoute(method, pattern string, fn RouteFunc, op Operation) Route {
	name := method + " " + pattern
	return Route{Method: method, Pattern: pattern, doc: &op, handle: func(ctx context.Context, s *Service, v *Visit) Response {
		body, err := fn(ctx, v, v.req)
		if rd, ok := body.(Redirect); ok && err == nil {
			return s.redirect(v, rd)
		}
		return s.answer(ctx, v, name, body, err)
	}}
}

// StaticRoute returns a GET route for Modules.AddRoutes that answers body
// with contentType, Cache-Control: no-cache and X-Content-Type-Options:
// nosniff (a module's script). It is not a flow (Config.Observer never
// hears of it) and not in the OpenAPI document.
func StaticRoute(pattern, contentType string, body []byte) Route {
	return Route{Method: http.MethodGet, Pattern: pattern, quiet: true, handle: func(context.Context, *Service, *Visit) Response {
		h := http.Header{}
		h.Set("Content-Type", contentType)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		return Response{Status: http.StatusOK, Header: h, Body: body}
	}}
}

// Path is one route path with every route on it and the Allow header value
// a 405 on that path carries.
type Path struct {
	Pattern string // ServeMux form, as Route.Pattern
	Routes  []Route
	Allow   string // e.g. "POST", or "GET, HEAD"
}

// ColonPattern is Pattern with parameters written :name (gin, fiber).
func (p Path) ColonPattern() string { return Route{Pattern: p.Pattern}.ColonPattern() }

// Paths groups Routes by path, in order, for modules that answer the other
// methods of a path with MethodNotAllowed.
func (m *Modules) Paths() []Path {
	var out []Path
	index := map[string]int{}
	for _, rt := range m.Routes() {
		i, ok := index[rt.Pattern]
		if !ok {
			i = len(out)
			index[rt.Pattern] = i
			out = append(out, Path{Pattern: rt.Pattern})
		}
		out[i].Routes = append(out[i].Routes, rt)
	}
	for i := range out {
		var methods []string
		for _, rt := range out[i].Routes {
			methods = append(methods, rt.Method)
			if rt.Method == http.MethodGet {
				methods = append(methods, http.MethodHead)
			}
		}
		out[i].Allow = strings.Join(methods, ", ")
	}
	return out
}

// Handle runs route rt for r. It never panics: a panic in a flow is logged
// and answered 500.
func (m *Modules) Handle(rt Route, r Request) (resp Response) {
	s := m.svc()
	v := s.Visit(r)
	ctx := r.Context()
	if s.cfg.Observer != nil && !rt.quiet {
		var end func(status int)
		ctx, end = s.startObserved(ctx, Flow{Name: rt.Flow(), Route: rt}) // the typed method the route calls is this flow
		defer func() { end(resp.Status) }()                               // after the recover below: a panic ends as 500
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "authkit: panic in flow", "route", rt.Pattern, "panic", p)
			resp = s.respond(&Visit{}, http.StatusInternalServerError, errorBody{Error: ErrInternal.Message, Code: ErrInternal.Code})
		}
	}()
	if !safeMethod(r.Method()) && !(v.tokenMode && r.Header("Cookie") == "") && // a token request carries no ambient credential
		(rt.doc == nil || !rt.doc.CrossSite) {
		if err := s.CheckOrigin(r); err != nil {
			return s.failure(ctx, v, "origin", err)
		}
	}
	return rt.handle(ctx, s, v)
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// CheckOrigin is the cross-origin protection of the JSON routes, for an
// app's own state-changing handlers (its form posts): http.
// CrossOriginProtection's check on the headers that decide it,
// Sec-Fetch-Site, else Origin against Host, with Config.TrustedOrigins
// allowed. Requests without either (curl, server-to-server) pass. It
// returns ErrCrossOrigin for a request to refuse (403). Safe methods (GET,
// HEAD, OPTIONS) always pass.
func (s *Service) CheckOrigin(r Request) error {
	if safeMethod(r.Method()) {
		return nil
	}
	if err := s.checkOrigin(r); err != nil {
		return ErrCrossOrigin
	}
	return nil
}

func (s *Service) checkOrigin(r Request) error {
	hr := &http.Request{Method: r.Method(), Host: r.Host(), Header: http.Header{}, URL: &url.URL{Path: "/"}}
	for _, h := range []string{"Sec-Fetch-Site", "Origin"} {
		if v := r.Header(h); v != "" {
			hr.Header.Set(h, v)
		}
	}
	return s.origins.Check(hr)
}

// NotFound answers an unknown path under authkit's prefix as JSON.
func (m *Modules) NotFound(r Request) Response {
	s := m.svc()
	return s.errorResponse(ErrNotFound)
}

// MethodNotAllowed answers a known path with the wrong method as JSON.
func (m *Modules) MethodNotAllowed(r Request, allow string) Response {
	s := m.svc()
	resp := s.errorResponse(ErrMethodNotAllowed)
	if allow != "" {
		resp.Header.Set("Allow", allow)
	}
	return resp
}

// Error is an authkit error response, {"error": ..., "code": ...} with the
// headers of every authkit answer, for the errors a framework raises before
// a route runs (fiber's body limit, a malformed request). Statuses authkit
// answers itself keep its own texts and codes whatever msg says: 404 "Not
// found", 405 "Method not allowed", 413 "Request body too large", and every
// 5xx "Internal server error" (a framework's text for a server error is
// never sent). Any other status has the code "request_rejected" and msg, or
// the status text when msg is empty.
func (m *Modules) Error(status int, msg string) Response {
	s := m.svc()
	switch {
	case status == http.StatusNotFound:
		return s.errorResponse(ErrNotFound)
	case status == http.StatusMethodNotAllowed:
		return s.errorResponse(ErrMethodNotAllowed)
	case status == http.StatusRequestEntityTooLarge:
		return s.errorResponse(ErrBodyTooLarge)
	case status >= 500:
		e := *ErrInternal
		e.Status = status
		return s.errorResponse(&e)
	case msg == "":
		msg = http.StatusText(status)
	}
	e := ErrRequestRejected.with(msg, "", nil)
	e.Status = status
	return s.errorResponse(e)
}

// errorResponse is e as an answer of its own: no visit, no cookies.
func (s *Service) errorResponse(e *Error) Response {
	r := s.json(e.Status, errorBody{Error: e.Message, Code: e.Code})
	retryAfterUnavailable(&r)
	return r
}
