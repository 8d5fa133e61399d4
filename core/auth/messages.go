package auth

// The texts of the answers that succeed with a message. The texts of the
// errors are in errors.go, each with its code.
const (
	msg2FAEnabled           = "2FA enabled"
	msg2FADisabled          = "2FA disabled"
	msgRegistered           = "Registration successful. Check your email to verify your address."
	msgEmailVerified        = "Email verified"
	msgAlreadyVerified      = "Email already verified"
	msgVerificationSent     = "Verification email sent"
	msgEmailChanged         = "Email updated. Check your new address to verify it."
	msgForgotSent           = "If an account exists for that email, a password reset link has been sent."
	msgPasswordReset        = "Password has been reset. You can now log in."
	msgPasswordChanged      = "Password changed"
	msgLoggedOut            = "Logged out"
	msgLoggedOutEverywhere  = "Logged out of all sessions"
	msgPasswordConfirmed    = "Password confirmed"
	msgSessionEnded         = "Session ended"
	msgTrustedDeviceRemoved = "Trusted device removed"
	msgEmailCodeSent        = "Code sent. Check your email."
	msgEmailSignInSent      = "If that address can sign in, a sign-in code has been sent. Check your email."
	msgAccountDeleted       = "Account deleted"
)
