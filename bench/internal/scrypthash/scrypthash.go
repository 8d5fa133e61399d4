// Package scrypthash is a password.Hasher with better-auth's default
// parameters (scrypt N=16384, r=16, p=1, a 64-byte key, the password in
// NFKC) and its stored form ("<salt hex>:<key hex>", the hex text of the
// salt being the salt). The peer benchmark (cmd/peerserver) gives it to
// authkit so that a login costs the same hash on both servers and the
// comparison is the work around it. It is a benchmark tool, not a hasher
// to deploy: authkit's own are in core/password.
package scrypthash

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/scrypt"
	"golang.org/x/text/unicode/norm"

	"github.com/authkit-go/authkit/core/password"
)

// The parameters of better-auth's scrypt (@better-auth/utils, password.node).
const (
	N      = 16384
	R      = 16
	P      = 1
	KeyLen = 64
)

// ErrMalformed is returned by Verify for a hash not in the "salt:key" form.
var ErrMalformed = errors.New("scrypthash: malformed hash")

// Hasher hashes with scrypt at better-auth's parameters.
type Hasher struct{}

var _ password.Hasher = Hasher{}

// Hash returns "<16 random bytes in hex>:<64-byte key in hex>".
func (Hasher) Hash(_ context.Context, pw string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("scrypthash: salt: %w", err)
	}
	salt := hex.EncodeToString(b[:])
	key, err := derive(pw, salt)
	if err != nil {
		return "", err
	}
	return salt + ":" + hex.EncodeToString(key), nil
}

// Verify reports whether pw matches hash, comparing in constant time.
func (Hasher) Verify(_ context.Context, pw, hash string) (bool, error) {
	salt, keyHex, ok := strings.Cut(hash, ":")
	if !ok || salt == "" {
		return false, ErrMalformed
	}
	want, err := hex.DecodeString(keyHex)
	if err != nil || len(want) != KeyLen {
		return false, ErrMalformed
	}
	got, err := derive(pw, salt)
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

func derive(pw, salt string) ([]byte, error) {
	key, err := scrypt.Key([]byte(norm.NFKC.String(pw)), []byte(salt), N, R, P, KeyLen)
	if err != nil {
		return nil, fmt.Errorf("scrypthash: %w", err)
	}
	return key, nil
}
