// Package token makes and checks signed, expiring, purpose-bound tokens that
// carry a user id and an issue time: the spec's createTokenVerifier, used for
// the session cookie, the 2fa_pending cookie, email verification links and
// password reset links.
//
//	v, err := token.NewVerifier(token.Config{
//		Secrets: []string{os.Getenv("SESSION_SECRET")},
//		Purpose: "reset_password",
//		Expiry:  time.Hour,
//	})
//	...
//	tok, err := v.CreateWith(u.ID, v.Bind(u.Email, u.PasswordHash))
//	...
//	c, err := v.Verify(tok)
//	switch {
//	case err != nil:
//		// "Invalid or expired reset link"
//	case !v.BindingHolds(c, u.Email, u.PasswordHash):
//		// "This reset link has already been used"
//	}
//
// # Purposes
//
// Every Verifier has a purpose. The MAC key is derived per purpose from each
// secret with HKDF-SHA256 (info "authkit/token/v1/mac/" + purpose), and the
// purpose is also part of the MAC input, so a token made for one purpose
// never verifies for another: a 2fa_pending cookie cannot be replayed as an
// email verification link. [Verifier.Bind] uses a second key derived the same
// way (info "authkit/token/v1/bind/" + purpose).
//
// # Secrets and rotation
//
// Config.Secrets lists the secrets, each at least 32 bytes (NewVerifier
// refuses shorter ones); SESSION_SECRET may hold several. The first signs,
// all verify, and every MAC is checked against every secret so the time
// taken does not reveal which one matched. To rotate, put the new secret
// first, and drop the old one once the longest-lived tokens signed with it
// have expired (30 days for remembered sessions). The example servers
// generate a random secret in development; production must set one.
//
// # Wire format
//
// A token is unpadded base64url (RFC 4648 section 5, no '=' and no line
// breaks; exactly one spelling per token) of these bytes:
//
//	offset  size  field
//	0       1     version, 0x01
//	1       8     issue time, Unix milliseconds, big-endian two's complement
//	9       1     n = length of the user id, 1..255
//	10      n     user id
//	10+n    1     m = length of the data, 0..64
//	11+n    m     data
//	11+n+m  32    HMAC-SHA256(key, len(purpose) || purpose || bytes 0..11+n+m)
//
// The MAC is kept whole (32 bytes): a session token is then about 90
// characters, well within a cookie, and nobody has to argue about truncation.
// Tokens are between 59 and [MaxLen] (483) characters; Verify refuses any
// other length before decoding, and refuses characters outside the base64url
// alphabet, non-zero padding bits, unknown versions, lengths that do not add
// up and trailing bytes, all as [ErrMalformed].
//
// # Time
//
// A token is valid while now < IssuedAt + Expiry, and not when its issue
// time lies more than MaxSkew (default 1 minute) ahead of the clock. Issue
// times have millisecond precision; Claims.IssuedAt is in UTC.
//
// The payload is signed, not encrypted: whoever holds a token can read the
// user id and the data. Bind values that must stay private instead of
// putting them in the data.
package token
