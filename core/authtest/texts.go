package authtest

// The spec's error texts (docs/errors.md), as the spec writes them. The 429 texts are
// authkit's, of the spec's form "Too many ... Try again later.".
const (
	errNoPendingSetup     = "No pending 2FA setup"
	errInvalidCode        = "Invalid code"
	errInvalid2FACode     = "Invalid 2FA code"
	errCodeUsed           = "Code already used"
	errInvalidRecovery    = "Invalid recovery code"
	err2FANotEnabled      = "2FA is not enabled"
	errEmailRegistered    = "Email already registered"
	errVerifyInvalid      = "Invalid or expired verification link"
	errVerifyNoUser       = "Invalid verification link"
	errVerifyStale        = "This verification link is no longer valid"
	errEmailInUse         = "Email already in use"
	errPasswordsDiffer    = "Passwords do not match"
	errResetInvalid       = "Invalid or expired reset link"
	errResetUsed          = "This reset link has already been used"
	errInvalidCredentials = "Invalid credentials"
	errNoPending2FA       = "No pending 2FA session"
	err2FAExpired         = "2FA session expired"
	errInvalidSession     = "Invalid session"
	errInvalidPassword    = "Invalid password"
	errNotAuthenticated   = "Not authenticated"
	errMethodNotAllowed   = "Method not allowed"
)

// Texts of authkit's own replies (core/auth/messages.go).
const (
	msgRegistered        = "Registration successful. Check your email to verify your address."
	msgEmailVerified     = "Email verified"
	msgAlreadyVerified   = "Email already verified"
	msgVerificationSent  = "Verification email sent"
	msgEmailChanged      = "Email updated. Check your new address to verify it."
	msgForgotSent        = "If an account exists for that email, a password reset link has been sent."
	msgPasswordReset     = "Password has been reset. You can now log in."
	msgPasswordChanged   = "Password changed"
	msgLoggedOut         = "Logged out"
	msgLoggedOutAll      = "Logged out of all sessions"
	msg2FAEnabled        = "2FA enabled"
	msg2FADisabled       = "2FA disabled"
	msg2FAAlreadyEnabled = "2FA is already enabled" // SECURITY.md deviation 5
	msgCrossOrigin       = "Cross-origin request blocked"
	msgTooManyLogins     = "Too many login attempts. Try again later."
	msgTooManyRegister   = "Too many registration attempts. Try again later."
	msgTooManyResets     = "Too many password reset requests. Try again later."
	msgTooManyResends    = "Too many verification emails requested. Try again later."
	msgTooMany2FA        = "Too many 2FA attempts. Try again later."
	msgTooManyPasswords  = "Too many password attempts. Try again later."
	msgPasswordTooShort  = "Password must be at least 8 characters"
)
