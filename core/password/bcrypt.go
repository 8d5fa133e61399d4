package password

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

const (
	// bcryptMaxBytes is the longest input bcrypt reads; it ignores the rest.
	bcryptMaxBytes = 72

	// bcryptHashLen is the length of a "$2a$NN$" + 22 salt + 31 hash string.
	bcryptHashLen = 60

	// bcryptSHA256Prefix marks authkit's long-password format. The bcrypt
	// hash that follows starts with its own "$", so a stored hash reads
	// "$authkit-bcrypt-sha256$v=1$2a$12$...".
	bcryptSHA256Prefix = "$authkit-bcrypt-sha256$v=1"

	// prehashKey is the fixed HMAC-SHA256 key of the long-password format.
	// It is a domain label, not a secret.
	prehashKey = "authkit-bcrypt-sha256-v1"

	// bcryptAlphabet is bcrypt's base64 alphabet.
	bcryptAlphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

// The sizes of a bcrypt hash's salt and of the digest it stores (bcrypt's
// 24-byte output, of which the encoding keeps 23).
const (
	bcryptSaltBytes   = 16
	bcryptDigestBytes = 23
)

// bcryptEncoding is bcrypt's base64: its own alphabet, no padding.
var bcryptEncoding = base64.NewEncoding(bcryptAlphabet).WithPadding(base64.NoPadding)

// formatBcrypt writes "$2a$NN$" + salt + digest in bcrypt's encoding, as
// golang.org/x/crypto/bcrypt writes the hashes it makes.
func formatBcrypt(cost int, salt, digest []byte) string {
	return fmt.Sprintf("$2a$%02d$%s%s", cost, bcryptEncoding.EncodeToString(salt), bcryptEncoding.EncodeToString(digest))
}

// hashBcrypt hashes the normalised password n at cost: plain bcrypt when n
// fits in 72 bytes, the long-password format otherwise.
func hashBcrypt(n string, cost int) (string, error) {
	if len(n) <= bcryptMaxBytes {
		h, err := bcrypt.GenerateFromPassword([]byte(n), cost)
		if err != nil {
			return "", fmt.Errorf("password: bcrypt: %w", err)
		}
		return string(h), nil
	}
	h, err := bcrypt.GenerateFromPassword(prehash(n), cost)
	if err != nil {
		return "", fmt.Errorf("password: bcrypt: %w", err)
	}
	return bcryptSHA256Prefix + string(h), nil
}

// prehash maps a password of any length to 44 bytes that bcrypt reads in
// full: base64 (standard, padded) of HMAC-SHA256(prehashKey, n). Encoding the
// MAC keeps NUL bytes out of bcrypt's input, which C implementations would
// treat as the end of the password.
func prehash(n string) []byte {
	m := hmac.New(sha256.New, []byte(prehashKey))
	m.Write([]byte(n))
	sum := m.Sum(nil)
	out := make([]byte, base64.StdEncoding.EncodedLen(len(sum)))
	base64.StdEncoding.Encode(out, sum)
	return out
}

// bcryptCompare is bcrypt's comparison; tests count its calls.
var bcryptCompare = bcrypt.CompareHashAndPassword

// compareBcrypt checks pw against a plain bcrypt hash that parseBcrypt
// accepted.
func compareBcrypt(hash string, pw []byte) (bool, error) {
	err := bcryptCompare([]byte(hash), pw)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, bcrypt.ErrMismatchedHashAndPassword):
		return false, nil
	default:
		return false, fmt.Errorf("%w: %w", ErrMalformedHash, err)
	}
}

// isBcryptPrefix reports whether h starts like a bcrypt hash this package
// accepts: $2a$ (x/crypto and most libraries), $2b$ (OpenBSD, Python,
// Node) or $2y$ (PHP, htpasswd). All three are the same algorithm for
// valid UTF-8. $2x$ (crypt_blowfish's deliberately kept sign-extension bug)
// and $2$ are not accepted.
func isBcryptPrefix(h string) bool {
	return strings.HasPrefix(h, "$2a$") || strings.HasPrefix(h, "$2b$") || strings.HasPrefix(h, "$2y$")
}

// parseBcrypt checks the whole syntax of a plain bcrypt hash and returns its
// cost. x/crypto's own parser accepts trailing bytes and any cost up to 31.
func parseBcrypt(h string) (int, error) {
	if !isBcryptPrefix(h) {
		return 0, fmt.Errorf("%w: not a $2a$, $2b$ or $2y$ bcrypt hash", ErrMalformedHash)
	}
	if len(h) != bcryptHashLen {
		return 0, fmt.Errorf("%w: bcrypt hash is %d bytes, want %d", ErrMalformedHash, len(h), bcryptHashLen)
	}
	if !isDigit(h[4]) || !isDigit(h[5]) || h[6] != '$' {
		return 0, fmt.Errorf("%w: bcrypt cost is not two digits", ErrMalformedHash)
	}
	cost := int(h[4]-'0')*10 + int(h[5]-'0')
	if cost < bcrypt.MinCost || cost > MaxBcryptCost {
		return 0, fmt.Errorf("%w: bcrypt cost %d outside [%d, %d]", ErrMalformedHash, cost, bcrypt.MinCost, MaxBcryptCost)
	}
	for i := 7; i < len(h); i++ {
		if strings.IndexByte(bcryptAlphabet, h[i]) < 0 {
			return 0, fmt.Errorf("%w: bcrypt salt or hash has a byte outside its alphabet", ErrMalformedHash)
		}
	}
	return cost, nil
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }
