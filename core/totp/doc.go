// Package totp implements time-based one-time passwords (RFC 6238,
// HMAC-SHA-1) for two-factor login: secrets, otpauth enrollment URIs, and
// code checks with replay protection. Codes are computed by
// github.com/pquerna/otp; this package adds strict input checks, the window,
// and the replay rule.
//
// Defaults are the spec's: 6 digits, 30-second steps, and one
// step accepted on each side of the current one, so a code is good for up to
// 90 seconds.
//
// # Replay protection
//
// [TOTP.Verify] is the spec's boolean check and accepts a code as often as it
// is presented. A login uses [TOTP.Match] with the user's last accepted step
// (lastTotpStep, 0 when none) and stores [Match.LastStep] on success. Match
// rejects a code with [ErrCodeUsed] when the current step or the matched step
// is at or below the last accepted step: the spec's rule plus RFC 6238's,
// so that no code, not even one for the next step, is accepted twice.
// The store must apply the new step atomically, only if the stored one is
// still below both Match.Step and Match.Current.
//
//	t, err := totp.New(totp.Config{}) // 6 digits, 30 s, window 1
//	if err != nil { ... }
//
//	// Setup: store the secret encrypted, show the URI as a QR code.
//	secret, err := t.GenerateSecret()
//	uri := t.QRURI(secret, "Example", "alice@example.com")
//
//	// Login:
//	m, err := t.Match(code, secret, time.Now(), u.LastTOTPStep)
//	switch {
//	case errors.Is(err, totp.ErrInvalidCode): // 400 "Invalid 2FA code"
//	case errors.Is(err, totp.ErrCodeUsed):    // 400 "Code already used"
//	case err != nil:                          // corrupt secret: 500
//	}
//	// Atomically: set lastTotpStep = m.LastStep()
//	// where lastTotpStep is null or < min(m.Step, m.Current).
//
// # Secrets
//
// [TOTP.GenerateSecret] draws 160 bits and writes them in uppercase base32
// without padding. Match, Verify and Code accept any non-empty base32 secret
// in either case, with or without correct '=' padding, because authenticator
// apps and other libraries differ; secrets shorter than 160 bits (such as
// the 80-bit ones of older libraries) are accepted too. Whitespace is not.
package totp
