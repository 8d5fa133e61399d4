package password

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"runtime"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// Algorithm names the function [Standard] uses for new hashes.
type Algorithm string

// The algorithms [Standard] can hash with. Verify accepts the hashes of
// both whatever the configured one is.
const (
	Bcrypt   Algorithm = "bcrypt"
	Argon2id Algorithm = "argon2id"
)

// Cost bounds for bcrypt.
const (
	// DefaultBcryptCost is the cost used when Config.BcryptCost is 0.
	DefaultBcryptCost = 12

	// MinProductionBcryptCost is the lowest cost [New] accepts unless
	// Config.AllowLowCost is set.
	MinProductionBcryptCost = 10

	// MaxBcryptCost is the highest cost [New] accepts and the highest
	// [Standard.Verify] will check (2^18 rounds, over ten seconds of CPU
	// per check). bcrypt itself allows 31, more than a day per check; a
	// stored hash must not be able to pin a CPU for that long.
	MaxBcryptCost = 18
)

// Errors about hashes and configuration.
var (
	// ErrUnknownFormat means a hash string is not in any format
	// [Standard.Verify] recognises.
	ErrUnknownFormat = errors.New("password: unknown hash format")

	// ErrMalformedHash means a hash string is in a recognised format but
	// cannot be checked: a field is malformed or a parameter is outside
	// the accepted bounds.
	ErrMalformedHash = errors.New("password: malformed hash")

	// ErrInvalidConfig means [New] was given a Config it cannot use.
	ErrInvalidConfig = errors.New("password: invalid config")
)

// Config configures [New]. The zero value is bcrypt at cost 12.
type Config struct {
	// Algorithm is the function used for new hashes. Hashes of the other
	// algorithm still verify (and NeedsRehash reports them). Default:
	// Bcrypt.
	Algorithm Algorithm

	// BcryptCost is the bcrypt work factor (log2 of the rounds). Production
	// must use at least 10 (MinProductionBcryptCost): New rejects lower
	// costs unless AllowLowCost is set. The accepted range is
	// bcrypt.MinCost (4) to MaxBcryptCost (18). Default: 12.
	BcryptCost int

	// AllowLowCost lets New accept a bcrypt cost below 10 and argon2id
	// parameters below OWASP's weakest recommendation. Set it only in tests
	// and for hashers of high-entropy secrets such as recovery codes, never
	// for passwords.
	AllowLowCost bool

	// Argon2 holds the argon2id parameters; each zero field takes its
	// OWASP default. Used only when Algorithm is Argon2id.
	Argon2 Argon2Params

	// MaxConcurrent is how many hashes this hasher computes at once; other
	// calls wait (and give up when their ctx is done). It bounds the CPU
	// and, for argon2id, the memory a flood of logins can take: peak memory
	// is about MaxConcurrent × Argon2.Memory. Default:
	// runtime.GOMAXPROCS(0).
	MaxConcurrent int

	// Rand is the source of argon2id salts and of DecoyHash's random
	// bytes. bcrypt salts always come from crypto/rand:
	// golang.org/x/crypto/bcrypt takes no reader. Default:
	// crypto/rand.Reader.
	Rand io.Reader
}

// Standard is the password hasher: bcrypt or argon2id for new hashes, and
// verification of plain bcrypt ($2a$, $2b$, $2y$), authkit's long-password
// bcrypt format and argon2id PHC strings. See the package documentation for
// the formats. It is safe for concurrent use.
type Standard struct {
	alg    Algorithm
	cost   int
	argon2 Argon2Params
	rand   io.Reader
	sem    chan struct{}
}

var (
	_ Hasher   = (*Standard)(nil)
	_ Rehasher = (*Standard)(nil)
	_ Decoy    = (*Standard)(nil)
)

// New returns a hasher for cfg. It returns an error wrapping
// ErrInvalidConfig for an unknown algorithm, a cost or parameter outside
// the accepted range, a low cost without AllowLowCost, or a negative
// MaxConcurrent.
func New(cfg Config) (*Standard, error) {
	s := &Standard{
		alg:    cfg.Algorithm,
		cost:   cfg.BcryptCost,
		argon2: cfg.Argon2.withDefaults(),
		rand:   cfg.Rand,
	}
	if s.alg == "" {
		s.alg = Bcrypt
	}
	if s.cost == 0 {
		s.cost = DefaultBcryptCost
	}
	if s.rand == nil {
		s.rand = rand.Reader
	}
	switch s.alg {
	case Bcrypt:
		if s.cost < bcrypt.MinCost || s.cost > MaxBcryptCost {
			return nil, fmt.Errorf("%w: bcrypt cost %d outside [%d, %d]", ErrInvalidConfig, s.cost, bcrypt.MinCost, MaxBcryptCost)
		}
		if s.cost < MinProductionBcryptCost && !cfg.AllowLowCost {
			return nil, fmt.Errorf("%w: bcrypt cost %d is below %d (set AllowLowCost only in tests or for recovery codes)", ErrInvalidConfig, s.cost, MinProductionBcryptCost)
		}
	case Argon2id:
		if err := s.argon2.validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
		if s.argon2.isLow() && !cfg.AllowLowCost {
			return nil, fmt.Errorf("%w: argon2id m=%d KiB, t=%d is below OWASP's weakest recommendation (m >= %d KiB and m*t >= %d; set AllowLowCost only in tests)",
				ErrInvalidConfig, s.argon2.Memory, s.argon2.Iterations, owaspMinMemory, owaspMinWork)
		}
	default:
		return nil, fmt.Errorf("%w: unknown algorithm %q", ErrInvalidConfig, cfg.Algorithm)
	}
	n := cfg.MaxConcurrent
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: MaxConcurrent %d is negative", ErrInvalidConfig, n)
	}
	s.sem = make(chan struct{}, n)
	return s, nil
}

// ForTesting returns a bcrypt hasher at bcrypt.MinCost (4), for other
// packages' tests, where a password-grade cost would make every login in a
// test suite take a quarter of a second.
//
// It is INSECURE for passwords: a cost-4 hash is 256 times cheaper to
// attack than the default. Never use it outside tests.
func ForTesting() *Standard {
	return &Standard{
		alg:    Bcrypt,
		cost:   bcrypt.MinCost,
		argon2: Argon2Params{}.withDefaults(),
		rand:   rand.Reader,
		sem:    make(chan struct{}, runtime.GOMAXPROCS(0)),
	}
}

// Hash returns a new hash of pw's NFKC normal form in the configured
// algorithm. With bcrypt, a normal form of at most 72 bytes gets a plain
// $2a$ hash and a longer one the long-password format (never truncated).
//
// Hash does not apply a [Policy]: check new passwords before hashing them.
// It returns an error wrapping ErrInvalid when pw is not valid UTF-8, ctx's
// error when ctx is done before a hashing slot is free, and an error when
// the random source fails.
func (s *Standard) Hash(ctx context.Context, pw string) (string, error) {
	if !utf8.ValidString(pw) {
		return "", fmt.Errorf("%w: not valid UTF-8", ErrInvalid)
	}
	n := Normalize(pw)
	if err := s.acquire(ctx); err != nil {
		return "", err
	}
	defer s.release()
	if s.alg == Argon2id {
		return hashArgon2id(s.rand, n, s.argon2)
	}
	return hashBcrypt(n, s.cost)
}

// Verify reports whether pw matches hash. pw is NFKC-normalised first, as
// in Hash. It returns (false, nil) for a wrong password, and (false, err)
// when the hash cannot be checked: err wraps ErrUnknownFormat or
// ErrMalformedHash, or is ctx's error when ctx is done before a hashing slot
// is free.
//
// A password longer than 72 bytes (normalised) never matches a plain bcrypt
// hash: bcrypt would compare only its first 72 bytes. Verify answers false
// for it, but only after a bcrypt comparison at the hash's cost, so that
// every answer costs one hash whatever the password's length: a login that
// took no time for a long password would tell an observer that the account
// exists (SECURITY.md "Timing").
func (s *Standard) Verify(ctx context.Context, pw, hash string) (bool, error) {
	p, err := parseHash(hash)
	if err != nil {
		return false, err
	}
	n := Normalize(pw)
	if err := s.acquire(ctx); err != nil {
		return false, err
	}
	defer s.release()
	switch {
	case p.kind == kindArgon2id:
		return p.argon2.verify(n), nil
	case p.kind == kindBcryptSHA256:
		return compareBcrypt(p.bcrypt, prehash(n))
	case len(n) > bcryptMaxBytes:
		// A plain bcrypt hash and a long password: spend the comparison's
		// work, throw its answer away, never match.
		_, err := compareBcrypt(p.bcrypt, prehash(n))
		return false, err
	default:
		return compareBcrypt(p.bcrypt, []byte(n))
	}
}

// DecoyHash implements [Decoy]: a hash in the form Hash makes, in the
// configured algorithm at its cost or parameters (NeedsRehash is false for
// it), whose salt and digest are random bytes from the configured random
// source rather than the output of hashing. No password matches it but by
// a 2^-184 chance, and Verify spends on it the work of a real hash's check.
// It costs no hashing, so a Service (and every test that starts one) does
// not pay a full-cost hash at start.
func (s *Standard) DecoyHash() (string, error) {
	if s.alg == Argon2id {
		p := s.argon2
		b := make([]byte, p.SaltLength+p.KeyLength)
		if _, err := io.ReadFull(s.rand, b); err != nil {
			return "", fmt.Errorf("password: reading a decoy hash: %w", err)
		}
		return formatArgon2id(p, b[:p.SaltLength], b[p.SaltLength:]), nil
	}
	var b [bcryptSaltBytes + bcryptDigestBytes]byte
	if _, err := io.ReadFull(s.rand, b[:]); err != nil {
		return "", fmt.Errorf("password: reading a decoy hash: %w", err)
	}
	return formatBcrypt(s.cost, b[:bcryptSaltBytes], b[bcryptSaltBytes:]), nil
}

// NeedsRehash reports whether hash should be replaced by a fresh Hash of
// the same password, typically right after a successful Verify: when it was
// made with the other algorithm, another bcrypt cost, or other argon2id
// parameters (memory, iterations, parallelism, salt or key length). Plain
// and long-password bcrypt hashes at the configured cost both count as
// current. An unknown or malformed hash reports true, so that whatever
// reaches this method is replaced by one this hasher can check.
func (s *Standard) NeedsRehash(hash string) bool {
	p, err := parseHash(hash)
	if err != nil {
		return true
	}
	switch p.kind {
	case kindArgon2id:
		return s.alg != Argon2id || p.argon2.params != s.argon2
	default:
		return s.alg != Bcrypt || p.cost != s.cost
	}
}

// acquire takes a hashing slot, giving up when ctx is done first.
func (s *Standard) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("password: %w", err)
	}
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("password: waiting for a hashing slot: %w", ctx.Err())
	}
}

func (s *Standard) release() { <-s.sem }
