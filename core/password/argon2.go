package password

import (
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2Params are the argon2id parameters. Each zero field takes its
// default, which is OWASP's recommended configuration (m=19456 KiB, t=2,
// p=1) with a 16-byte salt and a 32-byte key.
type Argon2Params struct {
	// Memory is the memory cost in KiB, between 8×Parallelism and
	// 262144 (256 MiB). Default: 19456 (19 MiB).
	Memory uint32

	// Iterations is the number of passes over the memory, 1 to 32.
	// Default: 2.
	Iterations uint32

	// Parallelism is the number of lanes (and goroutines), 1 to 64.
	// Default: 1.
	Parallelism uint8

	// SaltLength is the salt size in bytes, 8 to 64. Default: 16.
	SaltLength uint32

	// KeyLength is the derived key (tag) size in bytes, 16 to 64.
	// Default: 32.
	KeyLength uint32
}

// Bounds on argon2id parameters, enforced by New and by Verify before any
// memory is allocated, so that a stored hash cannot make Verify allocate
// gigabytes or spin for minutes.
const (
	argon2MaxMemory      = 256 << 10 // KiB
	argon2MaxIterations  = 32
	argon2MaxParallelism = 64
	argon2MinSalt        = 8
	argon2MaxSalt        = 64
	argon2MinKey         = 16
	argon2MaxKey         = 64

	// argon2MaxHashLen bounds the whole PHC string before it is parsed.
	argon2MaxHashLen = 256

	// OWASP's weakest recommended argon2id configuration is m=7168 KiB,
	// t=5; all five of its configurations have m*t >= 35840.
	owaspMinMemory = 7168
	owaspMinWork   = 35840

	argon2Prefix = "$argon2id$"
)

func (p Argon2Params) withDefaults() Argon2Params {
	if p.Memory == 0 {
		p.Memory = 19456
	}
	if p.Iterations == 0 {
		p.Iterations = 2
	}
	if p.Parallelism == 0 {
		p.Parallelism = 1
	}
	if p.SaltLength == 0 {
		p.SaltLength = 16
	}
	if p.KeyLength == 0 {
		p.KeyLength = 32
	}
	return p
}

// validate checks the bounds shared by New and Verify.
func (p Argon2Params) validate() error {
	switch {
	case p.Parallelism < 1 || p.Parallelism > argon2MaxParallelism:
		return fmt.Errorf("argon2id parallelism %d outside [1, %d]", p.Parallelism, argon2MaxParallelism)
	case p.Memory < 8*uint32(p.Parallelism) || p.Memory > argon2MaxMemory:
		return fmt.Errorf("argon2id memory %d KiB outside [%d, %d]", p.Memory, 8*uint32(p.Parallelism), argon2MaxMemory)
	case p.Iterations < 1 || p.Iterations > argon2MaxIterations:
		return fmt.Errorf("argon2id iterations %d outside [1, %d]", p.Iterations, argon2MaxIterations)
	case p.SaltLength < argon2MinSalt || p.SaltLength > argon2MaxSalt:
		return fmt.Errorf("argon2id salt length %d outside [%d, %d]", p.SaltLength, argon2MinSalt, argon2MaxSalt)
	case p.KeyLength < argon2MinKey || p.KeyLength > argon2MaxKey:
		return fmt.Errorf("argon2id key length %d outside [%d, %d]", p.KeyLength, argon2MinKey, argon2MaxKey)
	}
	return nil
}

// isLow reports whether p is weaker than every OWASP recommendation.
func (p Argon2Params) isLow() bool {
	return p.Memory < owaspMinMemory || uint64(p.Memory)*uint64(p.Iterations) < owaspMinWork
}

// argon2Hash is a parsed argon2id PHC string.
type argon2Hash struct {
	params    Argon2Params
	salt, key []byte
}

func (h argon2Hash) verify(n string) bool {
	p := h.params
	key := argon2.IDKey([]byte(n), h.salt, p.Iterations, p.Memory, p.Parallelism, p.KeyLength)
	return subtle.ConstantTimeCompare(key, h.key) == 1
}

// hashArgon2id hashes the normalised password n with a fresh salt from r.
func hashArgon2id(r io.Reader, n string, p Argon2Params) (string, error) {
	salt := make([]byte, p.SaltLength)
	if _, err := io.ReadFull(r, salt); err != nil {
		return "", fmt.Errorf("password: reading argon2id salt: %w", err)
	}
	key := argon2.IDKey([]byte(n), salt, p.Iterations, p.Memory, p.Parallelism, p.KeyLength)
	return formatArgon2id(p, salt, key), nil
}

// formatArgon2id writes the PHC string of salt and key under p.
func formatArgon2id(p Argon2Params, salt, key []byte) string {
	return fmt.Sprintf("%sv=%d$m=%d,t=%d,p=%d$%s$%s", argon2Prefix, argon2.Version,
		p.Memory, p.Iterations, p.Parallelism,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// parseArgon2id parses "$argon2id$v=19$m=M,t=T,p=P$SALT$KEY" with SALT and
// KEY in unpadded standard base64, as the reference implementation writes
// it. Every bound is checked here, before Verify allocates anything.
func parseArgon2id(s string) (argon2Hash, error) {
	var h argon2Hash
	if len(s) > argon2MaxHashLen {
		return h, fmt.Errorf("%w: argon2id hash longer than %d bytes", ErrMalformedHash, argon2MaxHashLen)
	}
	rest, ok := strings.CutPrefix(s, argon2Prefix)
	if !ok {
		return h, fmt.Errorf("%w: not an argon2id hash", ErrMalformedHash)
	}
	f := strings.Split(rest, "$")
	if len(f) != 4 {
		return h, fmt.Errorf("%w: argon2id hash has %d fields after the algorithm, want 4", ErrMalformedHash, len(f))
	}
	if f[0] != "v=19" {
		return h, fmt.Errorf("%w: argon2id version %q, only v=19 is supported", ErrMalformedHash, f[0])
	}
	ps := strings.Split(f[1], ",")
	if len(ps) != 3 {
		return h, fmt.Errorf("%w: argon2id parameters %q, want m=,t=,p=", ErrMalformedHash, f[1])
	}
	m, err1 := parseParam(ps[0], "m=")
	t, err2 := parseParam(ps[1], "t=")
	p, err3 := parseParam(ps[2], "p=")
	if err1 != nil || err2 != nil || err3 != nil {
		return h, fmt.Errorf("%w: argon2id parameters %q, want m=,t=,p= with decimal values", ErrMalformedHash, f[1])
	}
	if p > argon2MaxParallelism {
		return h, fmt.Errorf("%w: argon2id parallelism %d above %d", ErrMalformedHash, p, argon2MaxParallelism)
	}
	// Check the alphabet (the decoder would skip newlines) and the encoded
	// lengths before decoding, so that decoding allocates at most
	// argon2MaxSalt and argon2MaxKey bytes.
	if !isBase64(f[2]) || !isBase64(f[3]) {
		return h, fmt.Errorf("%w: argon2id salt or key is not unpadded standard base64", ErrMalformedHash)
	}
	saltLen := base64.RawStdEncoding.DecodedLen(len(f[2]))
	keyLen := base64.RawStdEncoding.DecodedLen(len(f[3]))
	h.params = Argon2Params{
		Memory:      m,
		Iterations:  t,
		Parallelism: uint8(p),
		SaltLength:  uint32(saltLen),
		KeyLength:   uint32(keyLen),
	}
	if err := h.params.validate(); err != nil {
		return h, fmt.Errorf("%w: %w", ErrMalformedHash, err)
	}
	enc := base64.RawStdEncoding.Strict()
	if h.salt, err1 = enc.DecodeString(f[2]); err1 != nil {
		return h, fmt.Errorf("%w: argon2id salt: %w", ErrMalformedHash, err1)
	}
	if h.key, err2 = enc.DecodeString(f[3]); err2 != nil {
		return h, fmt.Errorf("%w: argon2id key: %w", ErrMalformedHash, err2)
	}
	return h, nil
}

func isBase64(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// parseParam parses "name=decimal" as a uint32 without sign, leading zeros
// or surrounding space.
func parseParam(s, name string) (uint32, error) {
	v, ok := strings.CutPrefix(s, name)
	if !ok || v == "" || (v[0] == '0' && len(v) > 1) {
		return 0, strconv.ErrSyntax
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, err
	}
	return uint32(n), nil
}
