package user

import (
	"crypto/rand"
	"encoding/base64"
)

// NewID returns a fresh user id: 128 bits from crypto/rand, encoded as 22
// characters of unpadded base64url. Stores that make their own ids call it.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+): it aborts the program instead.
	return base64.RawURLEncoding.EncodeToString(b[:])
}
