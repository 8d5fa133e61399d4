package secretbox

import (
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"
)

const (
	// KeySize is the size of a raw key in bytes.
	KeySize = chacha20poly1305.KeySize

	// KeyPrefix starts the text form of every key ("authkit key, format
	// 1"). It makes a key recognisable in a secret manager or a leak
	// scanner, and [ParseKeyring] requires it, so that a value pasted into
	// the wrong variable fails loudly.
	KeyPrefix = "ak1_"

	// keyTextLen is the length of a key's text form after the prefix:
	// KeySize bytes in unpadded base64url.
	keyTextLen = (KeySize*8 + 5) / 6

	// keyIDLen is the length of a key id: 4 bytes in lowercase hex.
	keyIDLen = 8

	// keyIDLabel separates the key-id hash from any other use of the key.
	keyIDLabel = "authkit secretbox key id v1\x00"
)

// ErrInvalidKey is returned (wrapped, with the position of the bad key) by
// [ParseKeyring] and [NewKeyring] for a key of the wrong length or form, an
// empty key list, or a key listed twice, and by Encrypt on a keyring with no
// key. Its messages never contain key material.
var ErrInvalidKey = errors.New("secretbox: invalid key")

// b64 is the one text encoding of keys and ciphertexts: base64url without
// padding, and strict, so that every byte string has exactly one text form.
var b64 = base64.RawURLEncoding.Strict()

// Keyring holds one or more keys. The first key encrypts; every key
// decrypts, chosen by the key id a ciphertext carries, so keys can be
// rotated without re-encrypting everything at once.
//
// A Keyring is immutable and safe for concurrent use. It never prints its
// keys: fmt verbs, String, GoString and log/slog show the key ids only, and
// the keys themselves sit behind pointers so that even reflection-based
// printing of a struct that embeds a Keyring shows addresses, not bytes.
type Keyring struct {
	keys []*ringKey
	rand io.Reader // nil: crypto/rand. Set only by this package's tests.
}

// ringKey is one key of a ring. It keeps no raw key bytes: the AEAD holds
// its own copy.
type ringKey struct {
	id     string      // keyIDLen lowercase hex characters
	header string      // "v1.<id>.", the ciphertext prefix and start of the AD
	aead   cipher.AEAD // XChaCha20-Poly1305; stateless, so safe for concurrent use
}

// GenerateKey returns a new random key in text form: [KeyPrefix] followed by
// [KeySize] bytes from crypto/rand in unpadded base64url (47 characters in
// all). It is what `authkit encryption-key` prints.
func GenerateKey() (string, error) {
	return generateKey(rand.Reader)
}

func generateKey(r io.Reader) (string, error) {
	var key [KeySize]byte
	if _, err := io.ReadFull(r, key[:]); err != nil {
		return "", fmt.Errorf("secretbox: reading random key: %w", err)
	}
	return KeyPrefix + b64.EncodeToString(key[:]), nil
}

// ParseKeyring parses the text form of one or more keys separated by commas,
// as kept in ENCRYPTION_KEY. Spaces around each key are trimmed. The first
// key encrypts; every key decrypts. To rotate, put a new key first and keep
// the old ones after it until nothing encrypted under them remains.
//
// Each key must be [KeyPrefix] followed by exactly 43 base64url characters
// (no padding), as [GenerateKey] makes. Errors wrap [ErrInvalidKey] and name
// the position of the bad key ("key 2 of 3"), never its text.
func ParseKeyring(s string) (*Keyring, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: no key given", ErrInvalidKey)
	}
	parts := strings.Split(s, ",")
	raw := make([][]byte, len(parts))
	for i, p := range parts {
		key, err := parseKey(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%w: key %d of %d: %s", ErrInvalidKey, i+1, len(parts), err)
		}
		raw[i] = key
	}
	ring, err := NewKeyring(raw...)
	for _, key := range raw {
		clear(key) // NewKeyring keeps its own copies
	}
	return ring, err
}

// parseKey decodes one key's text form. Its error texts describe the
// problem without repeating the input.
func parseKey(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty")
	}
	body, ok := strings.CutPrefix(s, KeyPrefix)
	if !ok {
		return nil, fmt.Errorf("does not start with %q", KeyPrefix)
	}
	if len(body) != keyTextLen {
		return nil, fmt.Errorf("has %d characters after %q, want %d", len(body), KeyPrefix, keyTextLen)
	}
	if !isBase64URL(body) {
		return nil, errors.New("is not unpadded base64url")
	}
	key, err := b64.DecodeString(body)
	if err != nil || len(key) != KeySize {
		// Strict decoding: the last character carries 2 unused bits,
		// which must be zero, so each key has exactly one text form.
		return nil, errors.New("is not unpadded base64url (non-canonical last character)")
	}
	return key, nil
}

// NewKeyring returns a keyring of raw [KeySize]-byte keys; the first
// encrypts. The keys are copied, so the caller may clear its slices
// afterwards. A key listed twice is an error rather than silently merged:
// during a rotation it usually means the old key was pasted where the new
// one was meant to go.
func NewKeyring(keys ...[]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no key given", ErrInvalidKey)
	}
	ring := &Keyring{keys: make([]*ringKey, len(keys))}
	for i, key := range keys {
		if len(key) != KeySize {
			return nil, fmt.Errorf("%w: key %d of %d: has %d bytes, want %d", ErrInvalidKey, i+1, len(keys), len(key), KeySize)
		}
		for j := range i {
			if subtle.ConstantTimeCompare(key, keys[j]) == 1 {
				return nil, fmt.Errorf("%w: keys %d and %d of %d are the same key", ErrInvalidKey, j+1, i+1, len(keys))
			}
		}
		aead, err := chacha20poly1305.NewX(key)
		if err != nil {
			// Only in FIPS 140-only mode (GODEBUG=fips140=only).
			return nil, fmt.Errorf("secretbox: %w", err)
		}
		id := keyID(key)
		for j := range i {
			if ring.keys[j].id == id {
				// Distinct keys, same 32-bit id: about one chance in
				// four billion per pair. Fail at startup rather than
				// guess between them at decryption.
				return nil, fmt.Errorf("%w: keys %d and %d of %d have the same key id %s; replace one with a new key",
					ErrInvalidKey, j+1, i+1, len(keys), id)
			}
		}
		ring.keys[i] = &ringKey{id: id, header: version1 + "." + id + ".", aead: aead}
	}
	return ring, nil
}

// keyID is the short public name of a key: the first 4 bytes of
// SHA-256(keyIDLabel || key), in lowercase hex.
func keyID(key []byte) string {
	h := sha256.New()
	h.Write([]byte(keyIDLabel))
	h.Write(key)
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:keyIDLen/2])
}

// KeyIDs returns the ids of the ring's keys, the encrypting key first. Key
// ids are not secret; they appear in every ciphertext and are safe to log.
func (k *Keyring) KeyIDs() []string {
	if k == nil {
		return nil
	}
	ids := make([]string, len(k.keys))
	for i, key := range k.keys {
		ids[i] = key.id
	}
	return ids
}

// String returns the key ids, encrypting key first, for example
// "secretbox.Keyring[1a2b3c4d 5e6f7a8b]". It never shows key material.
func (k *Keyring) String() string {
	return "secretbox.Keyring[" + strings.Join(k.KeyIDs(), " ") + "]"
}

// GoString is used by %#v. Like String, it shows only the key ids.
func (k *Keyring) GoString() string {
	return "&secretbox.Keyring{keyIDs: " + fmt.Sprintf("%q", k.KeyIDs()) + "}"
}

// Format makes every fmt verb print what String (or, for %#v, GoString)
// returns, so that no verb can reach the keys.
func (k *Keyring) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		io.WriteString(f, k.GoString())
	case verb == 'q':
		io.WriteString(f, strconv.Quote(k.String()))
	default:
		io.WriteString(f, k.String())
	}
}

// LogValue implements [slog.LogValuer]: a group holding the key ids.
func (k *Keyring) LogValue() slog.Value {
	return slog.GroupValue(slog.Any("key_ids", k.KeyIDs()))
}

// isBase64URL reports whether s holds only base64url characters. The
// standard decoder skips '\r' and '\n'; this check keeps a value with line
// breaks in it from being accepted as another spelling of a valid one.
func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
