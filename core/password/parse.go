package password

import (
	"fmt"
	"strings"
)

// kind is a hash format Verify recognises.
type kind int

const (
	kindBcrypt       kind = iota + 1 // $2a$, $2b$, $2y$
	kindBcryptSHA256                 // $authkit-bcrypt-sha256$v=1$2a$...
	kindArgon2id                     // $argon2id$v=19$...
)

// parsedHash is a hash string whose syntax and bounds have been checked.
type parsedHash struct {
	kind   kind
	bcrypt string // the plain bcrypt hash, for both bcrypt kinds
	cost   int
	argon2 argon2Hash
}

// parseHash recognises h's format and checks it completely; no hashing work
// or large allocation happens before it succeeds.
func parseHash(h string) (parsedHash, error) {
	switch {
	case isBcryptPrefix(h):
		cost, err := parseBcrypt(h)
		return parsedHash{kind: kindBcrypt, bcrypt: h, cost: cost}, err
	case strings.HasPrefix(h, bcryptSHA256Prefix+"$"):
		inner := h[len(bcryptSHA256Prefix):]
		cost, err := parseBcrypt(inner)
		return parsedHash{kind: kindBcryptSHA256, bcrypt: inner, cost: cost}, err
	case strings.HasPrefix(h, argon2Prefix):
		a, err := parseArgon2id(h)
		return parsedHash{kind: kindArgon2id, argon2: a}, err
	}
	return parsedHash{}, fmt.Errorf("%w (want $2a$, $2b$, $2y$, %s$ or %s)", ErrUnknownFormat, bcryptSHA256Prefix, argon2Prefix)
}
