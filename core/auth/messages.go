package auth

// The texts clients see. Errors are the spec's (section 7) to the letter;
// success messages and the texts of authkit's own routes are authkit's.
const (
	// Spec section 7.
	msgNoPendingSetup      = "No pending 2FA setup"
	msgInvalidCode         = "Invalid code"
	msgInvalid2FACode      = "Invalid 2FA code"
	msgCodeUsed            = "Code already used"
	msgInvalidRecoveryCode = "Invalid recovery code"
	msg2FANotEnabled       = "2FA is not enabled"
	msgEmailRegistered     = "Email already registered"
	msgVerifyInvalid       = "Invalid or expired verification link"
	msgVerifyUserMissing   = "Invalid verification link"
	msgVerifyStale         = "This verification link is no longer valid"
	msgEmailInUse          = "Email already in use"
	msgPasswordsDiffer     = "Passwords do not match"
	msgResetInvalid        = "Invalid or expired reset link"
	msgResetUsed           = "This reset link has already been used"
	msgInvalidCredentials  = "Invalid credentials"
	msgNoPending2FA        = "No pending 2FA session"
	msg2FAExpired          = "2FA session expired"
	msgInvalidSession      = "Invalid session"
	msgInvalidPassword     = "Invalid password"
	msgNotAuthenticated    = "Not authenticated"

	// Rate limits: spec "Too many ... Try again later."
	msgTooManyLogins        = "Too many login attempts. Try again later."
	msgTooManyRegistrations = "Too many registration attempts. Try again later."
	msgTooManyResets        = "Too many password reset requests. Try again later."
	msgTooManyResends       = "Too many verification emails requested. Try again later."
	msgTooMany2FA           = "Too many 2FA attempts. Try again later."
	msgTooManyPasswords     = "Too many password attempts. Try again later."
	msgTooManyRequests      = "Too many requests. Try again later."

	// DESIGN.md deviations and authkit's own routes.
	msg2FAAlreadyEnabled = "2FA is already enabled"
	msgCrossOrigin       = "Cross-origin request blocked"
	msgUnavailable       = "Service temporarily unavailable. Try again later."
	msgInternal          = "Internal server error"
	msgNotFound          = "Not found"
	msgMethodNotAllowed  = "Method not allowed"
	msgBodyTooLarge      = "Request body too large"
	msgEmailChangedRace  = "Your email address was changed by another request"

	// Success.
	msg2FAEnabled          = "2FA enabled"
	msg2FADisabled         = "2FA disabled"
	msgRegistered          = "Registration successful. Check your email to verify your address."
	msgEmailVerified       = "Email verified"
	msgAlreadyVerified     = "Email already verified"
	msgVerificationSent    = "Verification email sent"
	msgEmailChanged        = "Email updated. Check your new address to verify it."
	msgForgotSent          = "If an account exists for that email, a password reset link has been sent."
	msgPasswordReset       = "Password has been reset. You can now log in."
	msgPasswordChanged     = "Password changed"
	msgLoggedOut           = "Logged out"
	msgLoggedOutEverywhere = "Logged out of all sessions"
)
