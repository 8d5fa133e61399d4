package secretbox

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"
)

const (
	// MaxPlaintextLen is the largest plaintext Encrypt accepts, in bytes.
	// A TOTP secret is a few dozen bytes; the limit only bounds the work
	// that one stored value can cause.
	MaxPlaintextLen = 32 << 10

	// MaxCiphertextLen is the longest ciphertext, in bytes of text, that
	// Decrypt looks at: longer input is rejected with [ErrMalformed] before
	// any decoding. Every ciphertext that Encrypt makes is shorter (a
	// MaxPlaintextLen plaintext gives 43 756 bytes).
	MaxCiphertextLen = 64 << 10

	version1  = "v1"
	nonceSize = chacha20poly1305.NonceSizeX // 24
	tagSize   = chacha20poly1305.Overhead   // 16
)

var (
	// ErrDecrypt is returned when a ciphertext cannot be decrypted: wrong
	// key, tampered or truncated data, or associated data other than the
	// one it was encrypted with. The AEAD check is all or nothing, so
	// Decrypt never returns garbage. Every error Decrypt returns for a bad
	// ciphertext satisfies errors.Is(err, ErrDecrypt), including
	// [ErrMalformed] and [ErrUnknownKey], which narrow it down.
	ErrDecrypt = errors.New("secretbox: decryption failed")

	// ErrMalformed is returned when the input is not a secretbox ciphertext
	// at all: an unknown version, a bad key id, a body that is not
	// canonical unpadded base64url, too short to hold a nonce and tag, or
	// longer than [MaxCiphertextLen]. It wraps [ErrDecrypt].
	ErrMalformed = fmt.Errorf("%w: not a secretbox ciphertext", ErrDecrypt)

	// ErrUnknownKey is returned when the ciphertext names a key id that no
	// key of the ring has: usually a key was removed from ENCRYPTION_KEY
	// while values encrypted under it remained, or the wrong key is
	// configured. It wraps [ErrDecrypt], so a wrong key satisfies
	// errors.Is(err, ErrDecrypt) too. The returned error names the key id,
	// which is not secret.
	ErrUnknownKey = fmt.Errorf("%w: unknown key id", ErrDecrypt)

	// ErrTooLarge is returned by Encrypt for a plaintext longer than
	// [MaxPlaintextLen].
	ErrTooLarge = errors.New("secretbox: plaintext too large")
)

// Encrypt encrypts plaintext with the ring's first key and returns the
// ciphertext in the text format described in the package documentation.
// Each call draws a fresh random nonce, so encrypting the same plaintext
// twice gives different ciphertexts.
//
// associatedData is authenticated but not encrypted or stored: Decrypt must
// be given the same bytes. Bind a value to where it lives, for example
// "totp:"+userID, so a ciphertext copied into another row does not decrypt.
// nil and empty associated data are the same.
func (k *Keyring) Encrypt(plaintext, associatedData []byte) (string, error) {
	if k == nil || len(k.keys) == 0 {
		return "", fmt.Errorf("%w: the keyring has no key", ErrInvalidKey)
	}
	if len(plaintext) > MaxPlaintextLen {
		return "", fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(plaintext), MaxPlaintextLen)
	}
	key := k.keys[0]

	// One buffer holds the AEAD's additional data (header || caller's
	// data) followed by nonce || ciphertext || tag.
	adLen := len(key.header) + len(associatedData)
	buf := make([]byte, adLen+nonceSize+len(plaintext)+tagSize)
	ad := append(buf[:0:adLen], key.header...)
	ad = append(ad, associatedData...)
	nonce := buf[adLen : adLen+nonceSize]
	if err := k.readNonce(nonce); err != nil {
		return "", err
	}
	sealed := key.aead.Seal(buf[adLen:adLen+nonceSize], nonce, plaintext, ad)

	out := make([]byte, len(key.header)+b64.EncodedLen(len(sealed)))
	n := copy(out, key.header)
	b64.Encode(out[n:], sealed)
	return string(out), nil
}

func (k *Keyring) readNonce(nonce []byte) error {
	if k.rand == nil {
		rand.Read(nonce) // never fails: Go 1.24+ crashes the program instead
		return nil
	}
	if _, err := io.ReadFull(k.rand, nonce); err != nil {
		return fmt.Errorf("secretbox: reading random nonce: %w", err)
	}
	return nil
}

// Decrypt checks and decrypts a ciphertext made by Encrypt with any key of
// the ring, which it picks by the key id the ciphertext carries.
// associatedData must equal the bytes given to Encrypt.
//
// Every failure satisfies errors.Is(err, [ErrDecrypt]). Two wrap it to say
// more: [ErrMalformed] for input that is not a ciphertext at all, and
// [ErrUnknownKey] for a ciphertext under a key the ring does not hold. An
// error that is neither means authentication failed. The returned slice is
// the caller's.
func (k *Keyring) Decrypt(ciphertext string, associatedData []byte) ([]byte, error) {
	if len(ciphertext) > MaxCiphertextLen {
		return nil, malformed("longer than MaxCiphertextLen")
	}
	version, rest, _ := strings.Cut(ciphertext, ".")
	if version != version1 {
		// A future format is decided here, before anything else is read.
		return nil, malformed("unknown version")
	}
	if len(rest) < keyIDLen+1 || rest[keyIDLen] != '.' || !isKeyID(rest[:keyIDLen]) {
		return nil, malformed("bad key id")
	}
	id, body := rest[:keyIDLen], rest[keyIDLen+1:]
	if !isBase64URL(body) {
		return nil, malformed("body is not unpadded base64url")
	}
	raw, err := b64.DecodeString(body)
	if err != nil {
		return nil, malformed("body is not canonical unpadded base64url")
	}
	if len(raw) < nonceSize+tagSize {
		return nil, malformed("too short")
	}
	key := k.find(id)
	if key == nil {
		return nil, fmt.Errorf("%w %s", ErrUnknownKey, id)
	}

	ad := make([]byte, 0, len(key.header)+len(associatedData))
	ad = append(ad, key.header...)
	ad = append(ad, associatedData...)
	sealed := raw[nonceSize:]
	plaintext, err := key.aead.Open(sealed[:0], raw[:nonceSize], sealed, ad)
	if err != nil {
		return nil, ErrDecrypt
	}
	return plaintext[:len(plaintext):len(plaintext)], nil
}

// EncryptString is Encrypt for string plaintext and associated data.
func (k *Keyring) EncryptString(plaintext, associatedData string) (string, error) {
	return k.Encrypt([]byte(plaintext), []byte(associatedData))
}

// DecryptString is Decrypt returning a string, for plaintexts that
// EncryptString made.
func (k *Keyring) DecryptString(ciphertext, associatedData string) (string, error) {
	plaintext, err := k.Decrypt(ciphertext, []byte(associatedData))
	if err != nil {
		return "", err
	}
	return string(plaintext), nil
}

// Encrypt is the spec's encrypt(plaintext, key): it parses key (the text of
// ENCRYPTION_KEY, one or more keys, see [ParseKeyring]) and encrypts with
// the first key and no associated data.
//
// It parses and sets up the keys on every call, which costs more than the
// encryption itself; code that encrypts more than once should parse the
// keyring once with ParseKeyring and use [Keyring.EncryptString], which also
// takes associated data.
func Encrypt(plaintext, key string) (string, error) {
	ring, err := ParseKeyring(key)
	if err != nil {
		return "", err
	}
	return ring.EncryptString(plaintext, "")
}

// Decrypt is the spec's decrypt(ciphertext, key), the reverse of the
// package-level [Encrypt]: no associated data, any key of the ring. Like
// Encrypt it parses key on every call; prefer [Keyring.DecryptString].
func Decrypt(ciphertext, key string) (string, error) {
	ring, err := ParseKeyring(key)
	if err != nil {
		return "", err
	}
	return ring.DecryptString(ciphertext, "")
}

func (k *Keyring) find(id string) *ringKey {
	if k == nil {
		return nil
	}
	for _, key := range k.keys {
		if key.id == id { // key ids are public: no constant-time need
			return key
		}
	}
	return nil
}

func malformed(reason string) error {
	return fmt.Errorf("%w: %s", ErrMalformed, reason)
}

// isKeyID reports whether s is keyIDLen lowercase hex characters.
func isKeyID(s string) bool {
	if len(s) != keyIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
