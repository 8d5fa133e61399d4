package token

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync"
	"time"
)

// Errors returned by [Verifier.Verify]. They are distinct so that logs can
// tell a forgery from an old link; clients should be shown the spec's text
// for the flow instead (for example "Invalid or expired reset link").
var (
	// ErrMalformed means the string is not a token of this format at all:
	// empty, too long, not unpadded base64url, an unknown version, or bytes
	// that do not parse. No MAC was checked.
	ErrMalformed = errors.New("token: malformed")

	// ErrSignature means the token parsed but its MAC matches none of the
	// configured secrets for this purpose: a forgery, a token made under a
	// retired secret, or a token made for another purpose.
	ErrSignature = errors.New("token: invalid signature")

	// ErrExpired means the MAC is valid and the token is at least Expiry old.
	ErrExpired = errors.New("token: expired")

	// ErrNotYetValid means the MAC is valid and the issue time is more than
	// MaxSkew ahead of the clock.
	ErrNotYetValid = errors.New("token: issued in the future")
)

// Errors returned by [NewVerifier] and [Verifier.CreateWith]. Both are
// programming or configuration mistakes, never the result of request input.
var (
	// ErrInvalidConfig wraps every error from NewVerifier.
	ErrInvalidConfig = errors.New("token: invalid config")

	// ErrInvalidInput wraps the errors of Create and CreateWith: an empty
	// user id, one longer than MaxUserIDLen bytes, or data longer than
	// MaxDataLen bytes.
	ErrInvalidInput = errors.New("token: invalid input")
)

// Limits of the token format.
const (
	// MinSecretLen is the minimum length in bytes of every secret.
	MinSecretLen = 32

	// MaxPurposeLen is the maximum length in bytes of Config.Purpose.
	MaxPurposeLen = 64

	// MaxUserIDLen is the maximum length in bytes of a user id.
	MaxUserIDLen = 255

	// MaxDataLen is the maximum length in bytes of the extra payload given
	// to CreateWith.
	MaxDataLen = 64

	// BindingLen is the length in bytes of the digest returned by Bind.
	BindingLen = 16

	// MaxLen is the length in characters of the longest token (a
	// MaxUserIDLen user id and MaxDataLen bytes of data). Verify rejects
	// anything longer before decoding it.
	MaxLen = (maxPayloadLen*8 + 5) / 6
)

const (
	version = 1
	macLen  = sha256.Size

	// Layout: version(1) | iat ms(8) | len(user id)(1) | user id |
	// len(data)(1) | data | mac(32).
	headerLen     = 1 + 8 + 1
	minPayloadLen = headerLen + 1 + 1 + macLen
	maxPayloadLen = headerLen + MaxUserIDLen + 1 + MaxDataLen + macLen
	minLen        = (minPayloadLen*8 + 5) / 6

	// HKDF info strings. The two prefixes differ before the purpose, so no
	// purpose can make a MAC key collide with a binding key.
	macInfo  = "authkit/token/v1/mac/"
	bindInfo = "authkit/token/v1/bind/"
)

var encoding = base64.RawURLEncoding.Strict()

// Config configures a [Verifier]. The zero value of each optional field
// means the documented default.
type Config struct {
	// Secrets are the signing secrets, for example SESSION_SECRET. The first
	// one signs; every one verifies, so a secret is rotated by putting the
	// new one first and removing the old one once its tokens have expired.
	// Each must be at least MinSecretLen (32) bytes of high-entropy
	// material, such as 32 random bytes in base64. Required.
	Secrets []string

	// Purpose names what the tokens are for: "session", "2fa_pending",
	// "verify_email", "reset_password", ... A token verifies only under the
	// purpose it was made for. 1 to MaxPurposeLen bytes of printable ASCII.
	// Required.
	Purpose string

	// Expiry is how long a token is valid after its issue time. Required,
	// must be positive.
	Expiry time.Duration

	// MaxSkew is how far in the future an issue time may lie, to absorb
	// clock differences between servers. Default: 1 minute.
	MaxSkew time.Duration

	// Now returns the current time. Default: time.Now.
	Now func() time.Time
}

// Claims is what a valid token carries.
type Claims struct {
	// UserID is the user id given to Create.
	UserID string

	// IssuedAt is the issue time, in UTC with millisecond precision.
	IssuedAt time.Time

	// Data is the extra payload given to CreateWith; nil when there was none.
	Data []byte
}

// IssuedAtMs returns the issue time in Unix milliseconds, the spec's iatMs.
func (c Claims) IssuedAtMs() int64 { return c.IssuedAt.UnixMilli() }

// A Verifier creates and verifies the tokens of one purpose. It is safe for
// concurrent use.
type Verifier struct {
	purpose   string
	macPrefix []byte // len(purpose) || purpose, the start of every MAC input
	expiry    time.Duration
	maxSkew   time.Duration
	now       func() time.Time
	macKeys   [][]byte // macKeys[0] signs
	bindKeys  [][]byte // bindKeys[0] binds
	scratch   sync.Pool
}

// scratch is the per-call state of Create and Verify, pooled so that they
// allocate nothing but their results.
type scratch struct {
	macs []hash.Hash // HMAC-SHA256 under macKeys[i]
	sum  [macLen]byte
	raw  [maxPayloadLen]byte
	text [MaxLen]byte
}

// NewVerifier returns a Verifier for cfg. It derives one MAC key and one
// binding key per secret with HKDF-SHA256, using the purpose as context, so
// the secrets themselves never key a MAC directly.
func NewVerifier(cfg Config) (*Verifier, error) {
	if len(cfg.Secrets) == 0 {
		return nil, fmt.Errorf("%w: no secret", ErrInvalidConfig)
	}
	if err := checkPurpose(cfg.Purpose); err != nil {
		return nil, err
	}
	if cfg.Expiry <= 0 {
		return nil, fmt.Errorf("%w: Expiry must be positive", ErrInvalidConfig)
	}
	if cfg.MaxSkew < 0 {
		return nil, fmt.Errorf("%w: MaxSkew must not be negative", ErrInvalidConfig)
	}
	v := &Verifier{
		purpose:   cfg.Purpose,
		macPrefix: append([]byte{byte(len(cfg.Purpose))}, cfg.Purpose...),
		expiry:    cfg.Expiry,
		maxSkew:   cfg.MaxSkew,
		now:       cfg.Now,
		macKeys:   make([][]byte, len(cfg.Secrets)),
		bindKeys:  make([][]byte, len(cfg.Secrets)),
	}
	if v.maxSkew == 0 {
		v.maxSkew = time.Minute
	}
	if v.now == nil {
		v.now = time.Now
	}
	for i, s := range cfg.Secrets {
		if len(s) < MinSecretLen {
			return nil, fmt.Errorf("%w: secret %d is shorter than %d bytes", ErrInvalidConfig, i, MinSecretLen)
		}
		macKey, err := hkdf.Key(sha256.New, []byte(s), nil, macInfo+cfg.Purpose, sha256.Size)
		if err != nil {
			return nil, fmt.Errorf("%w: derive key: %w", ErrInvalidConfig, err)
		}
		bindKey, err := hkdf.Key(sha256.New, []byte(s), nil, bindInfo+cfg.Purpose, sha256.Size)
		if err != nil {
			return nil, fmt.Errorf("%w: derive key: %w", ErrInvalidConfig, err)
		}
		v.macKeys[i], v.bindKeys[i] = macKey, bindKey
	}
	v.scratch.New = func() any {
		s := &scratch{macs: make([]hash.Hash, len(v.macKeys))}
		for i, k := range v.macKeys {
			s.macs[i] = hmac.New(sha256.New, k)
		}
		return s
	}
	return v, nil
}

func checkPurpose(p string) error {
	if p == "" || len(p) > MaxPurposeLen {
		return fmt.Errorf("%w: Purpose must be 1 to %d bytes", ErrInvalidConfig, MaxPurposeLen)
	}
	for i := 0; i < len(p); i++ {
		if p[i] <= ' ' || p[i] > '~' {
			return fmt.Errorf("%w: Purpose must be printable ASCII without spaces", ErrInvalidConfig)
		}
	}
	return nil
}

// Purpose returns the purpose the Verifier was configured with.
func (v *Verifier) Purpose() string { return v.purpose }

// Expiry returns the configured token lifetime.
func (v *Verifier) Expiry() time.Duration { return v.expiry }

// Create returns a token for userID issued now. userID must be 1 to
// MaxUserIDLen bytes; it is carried as is (signed, not encrypted: anyone
// holding the token can read it).
func (v *Verifier) Create(userID string) (string, error) {
	return v.CreateWith(userID, nil)
}

// CreateWith is Create with an extra payload of at most MaxDataLen bytes,
// covered by the MAC and returned in Claims.Data. Like the user id it is
// readable by whoever holds the token; use [Verifier.Bind] to carry a
// commitment to values that must stay hidden.
func (v *Verifier) CreateWith(userID string, data []byte) (string, error) {
	if userID == "" || len(userID) > MaxUserIDLen {
		return "", fmt.Errorf("%w: user id must be 1 to %d bytes", ErrInvalidInput, MaxUserIDLen)
	}
	if len(data) > MaxDataLen {
		return "", fmt.Errorf("%w: data longer than %d bytes", ErrInvalidInput, MaxDataLen)
	}
	s := v.scratch.Get().(*scratch)
	defer v.scratch.Put(s)
	b := append(s.raw[:0], version)
	b = binary.BigEndian.AppendUint64(b, uint64(v.now().UnixMilli()))
	b = append(b, byte(len(userID)))
	b = append(b, userID...)
	b = append(b, byte(len(data)))
	b = append(b, data...)
	b = v.appendMAC(b, s.macs[0], b)

	n := encoding.EncodedLen(len(b))
	encoding.Encode(s.text[:n], b)
	return string(s.text[:n]), nil
}

// appendMAC appends to dst the MAC of msg under h. The purpose is part of
// the MAC input as well as of the key derivation.
func (v *Verifier) appendMAC(dst []byte, h hash.Hash, msg []byte) []byte {
	h.Reset()
	h.Write(v.macPrefix)
	h.Write(msg)
	return h.Sum(dst)
}

// Verify checks tok and returns its claims. The checks run in this order,
// and the first failure is returned: format ([ErrMalformed]), MAC against
// every configured secret ([ErrSignature]), issue time not more than
// MaxSkew ahead ([ErrNotYetValid]), and now < IssuedAt+Expiry
// ([ErrExpired]). So a forged token never reveals anything about time.
func (v *Verifier) Verify(tok string) (Claims, error) {
	if len(tok) < minLen || len(tok) > MaxLen {
		return Claims{}, ErrMalformed
	}
	// The base64 decoder skips CR and LF; refuse them, and anything else
	// outside the alphabet, so that a token has exactly one spelling.
	for i := 0; i < len(tok); i++ {
		if !isBase64URL(tok[i]) {
			return Claims{}, ErrMalformed
		}
	}
	s := v.scratch.Get().(*scratch)
	defer v.scratch.Put(s)
	n, err := encoding.Decode(s.raw[:], s.text[:copy(s.text[:], tok)])
	if err != nil {
		return Claims{}, ErrMalformed
	}
	b := s.raw[:n]
	if len(b) < minPayloadLen || b[0] != version {
		return Claims{}, ErrMalformed
	}
	idLen := int(b[headerLen-1])
	if idLen == 0 || headerLen+idLen+1+macLen > len(b) {
		return Claims{}, ErrMalformed
	}
	dataOff := headerLen + idLen + 1
	dataLen := int(b[dataOff-1])
	if dataLen > MaxDataLen || dataOff+dataLen+macLen != len(b) {
		return Claims{}, ErrMalformed
	}
	msg, mac := b[:dataOff+dataLen], b[dataOff+dataLen:]

	// Check every secret, so the time taken does not tell which one matched.
	ok := 0
	for _, h := range s.macs {
		ok |= subtle.ConstantTimeCompare(v.appendMAC(s.sum[:0], h, msg), mac)
	}
	if ok != 1 {
		return Claims{}, ErrSignature
	}

	ms := int64(binary.BigEndian.Uint64(b[1:9]))
	iat := time.UnixMilli(ms).UTC()
	now := v.now()
	if iat.After(now.Add(v.maxSkew)) {
		return Claims{}, ErrNotYetValid
	}
	if !now.Before(iat.Add(v.expiry)) {
		return Claims{}, ErrExpired
	}
	c := Claims{UserID: string(b[headerLen : headerLen+idLen]), IssuedAt: iat}
	if dataLen > 0 {
		c.Data = append([]byte(nil), b[dataOff:dataOff+dataLen]...)
	}
	return c, nil
}

func isBase64URL(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// Bind returns a BindingLen-byte digest of values, keyed with a key derived
// for this purpose from the signing secret. Pass it to CreateWith to make a
// token that is valid only while the values still hold, and check it with
// BindingHolds. A verification token binds the address it was mailed to; a
// reset token binds the email and the current password hash.
//
// The digest is keyed, so it reveals nothing about the values even though
// the token travels in a URL (a plain hash of an email could be guessed).
// The encoding is unambiguous: ("ab", "c") and ("a", "bc") differ, as do
// different orders and counts.
func (v *Verifier) Bind(values ...string) []byte {
	return bind(make([]byte, 0, sha256.Size), v.bindKeys[0], values)
}

// BindingHolds reports whether c.Data is the binding of values under any of
// the configured secrets (the token may have been made before a rotation).
// The comparison is constant-time and does not reveal which secret matched.
func (v *Verifier) BindingHolds(c Claims, values ...string) bool {
	var sum [sha256.Size]byte
	ok := 0
	for _, k := range v.bindKeys {
		ok |= subtle.ConstantTimeCompare(bind(sum[:0], k, values), c.Data)
	}
	return ok == 1
}

func bind(dst, key []byte, values []string) []byte {
	h := hmac.New(sha256.New, key)
	var n [binary.MaxVarintLen64]byte
	for _, s := range values {
		h.Write(binary.AppendUvarint(n[:0], uint64(len(s))))
		h.Write([]byte(s))
	}
	return h.Sum(dst)[:BindingLen]
}
