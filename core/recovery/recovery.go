package recovery

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/bcrypt"

	"github.com/authkit-go/authkit/core/password"
)

const (
	// DefaultCount is the number of codes Generate makes when asked for 0
	// (the spec's default).
	DefaultCount = 8

	// MaxCount is the most codes one call to Generate makes.
	MaxCount = 100

	// Alphabet is the 32 symbols of a code: Crockford's base32 in lowercase.
	// It has no i, l or o (which read as 1 and 0) and no u.
	Alphabet = "0123456789abcdefghjkmnpqrstvwxyz"

	// codeBytes is the entropy of one code: 80 bits, 16 symbols of 5 bits.
	codeBytes = 10

	// maxInput bounds what Normalize reads: 16 symbols, separators and
	// surrounding space.
	maxInput = 64
)

var (
	// ErrMalformed means a string is not a recovery code in any accepted
	// spelling (see Normalize).
	ErrMalformed = errors.New("recovery: malformed code")

	// ErrTooMany means Generate was asked for more than MaxCount codes.
	ErrTooMany = errors.New("recovery: too many codes requested")

	// errRepeated means the random source returned the same 80 bits twice,
	// which crypto/rand never does: the injected reader is broken.
	errRepeated = errors.New("recovery: random source repeated a code")
)

var encoding = base32.NewEncoding(Alphabet).WithPadding(base32.NoPadding)

// decode maps an input byte to its symbol's index in Alphabet, or to 0xff.
// Upper and lower case are equal, and Crockford's look-alikes are folded:
// o to 0, i and l to 1.
var decode = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := range len(Alphabet) {
		c := Alphabet[i]
		t[c] = byte(i)
		if 'a' <= c && c <= 'z' {
			t[c-'a'+'A'] = byte(i)
		}
	}
	for _, c := range "oO" {
		t[c] = 0
	}
	for _, c := range "iIlL" {
		t[c] = 1
	}
	return t
}()

// NewHasher returns the hasher recommended for recovery codes: bcrypt at
// bcrypt.MinCost (4). A password-grade cost buys nothing for 80-bit codes
// and would make one recovery cost eight slow hashes; see the package
// documentation. Do not use it for passwords.
func NewHasher() *password.Standard {
	h, err := password.New(password.Config{BcryptCost: bcrypt.MinCost, AllowLowCost: true})
	if err != nil {
		// Unreachable: the config is constant and valid (TestNewHasher).
		panic("recovery: " + err.Error())
	}
	return h
}

// Generate makes count new recovery codes from crypto/rand and their hashes
// made with h: codes are shown to the user once, hashes are stored, in the
// same order. count <= 0 means DefaultCount (8); above MaxCount it returns
// an error wrapping ErrTooMany.
func Generate(ctx context.Context, h password.Hasher, count int) (codes, hashes []string, err error) {
	return GenerateWith(ctx, h, count, nil)
}

// GenerateWith is Generate with the random source r (nil means
// crypto/rand.Reader), for tests that need reproducible codes. It reads
// exactly 10 bytes per code. It returns an error when r fails or returns
// the same 10 bytes twice, or when h fails; hashing runs in parallel,
// bounded by GOMAXPROCS.
func GenerateWith(ctx context.Context, h password.Hasher, count int, r io.Reader) (codes, hashes []string, err error) {
	if h == nil {
		return nil, nil, errors.New("recovery: nil hasher")
	}
	if count <= 0 {
		count = DefaultCount
	}
	if count > MaxCount {
		return nil, nil, fmt.Errorf("%w: %d, at most %d", ErrTooMany, count, MaxCount)
	}
	if r == nil {
		r = rand.Reader
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("recovery: %w", err)
	}
	buf := make([]byte, count*codeBytes)
	defer clear(buf)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, nil, fmt.Errorf("recovery: reading random bytes: %w", err)
	}
	codes = make([]string, count)
	for i := range codes {
		codes[i] = format(buf[i*codeBytes : (i+1)*codeBytes])
		if slices.Contains(codes[:i], codes[i]) {
			return nil, nil, errRepeated
		}
	}
	hashes = make([]string, count)
	errs := make([]error, count)
	parallel(count, func(i int) {
		hashes[i], errs[i] = h.Hash(ctx, codes[i])
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, fmt.Errorf("recovery: hashing a code: %w", err)
		}
	}
	return codes, hashes, nil
}

// format writes 10 bytes as "xxxxxxxx-xxxxxxxx": each symbol is the next 5
// bits, most significant first, so every symbol is uniform by construction.
func format(b []byte) string {
	var s [16]byte
	encoding.Encode(s[:], b)
	return string(s[:8]) + "-" + string(s[8:])
}

// Normalize returns code in its canonical form "xxxxxxxx-xxxxxxxx", or an
// error wrapping ErrMalformed. It accepts what a person is likely to type:
// surrounding whitespace, upper case, the hyphen missing or replaced by
// spaces and hyphens (between the two groups only), and Crockford's
// look-alikes o for 0 and i or l for 1. Anything else is malformed: another
// length, another character, or any non-ASCII character, including letters
// that merely look like ASCII ones.
func Normalize(code string) (string, error) {
	s := strings.TrimSpace(code)
	if len(s) > maxInput {
		return "", fmt.Errorf("%w: too long", ErrMalformed)
	}
	var sym [16]byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' || c == ' ' {
			if n != 8 {
				return "", fmt.Errorf("%w: separator outside the middle", ErrMalformed)
			}
			continue
		}
		v := decode[c]
		if v == 0xff {
			return "", fmt.Errorf("%w: character not in the alphabet", ErrMalformed)
		}
		if n == len(sym) {
			return "", fmt.Errorf("%w: more than 16 characters", ErrMalformed)
		}
		sym[n] = Alphabet[v]
		n++
	}
	if n != len(sym) {
		return "", fmt.Errorf("%w: %d characters, want 16", ErrMalformed, n)
	}
	return string(sym[:8]) + "-" + string(sym[8:]), nil
}

// Verify reports whether code matches one of hashes, and returns remaining:
// a new slice (never sharing the input's array) holding hashes in their
// order without the matched one. The caller persists remaining on success,
// atomically and only if the stored hashes are still the ones it read. On
// failure remaining holds all of hashes. If the same hash is stored twice,
// one copy is removed.
//
// code is normalised first (see Normalize). A malformed code returns
// (false, hashes, nil) without hashing anything: the early answer tells a
// timing observer only that the input was malformed, which whoever typed
// it already knows.
//
// Otherwise every hash is checked, in parallel (bounded by GOMAXPROCS and
// by the hasher's own limit), with no early exit, so the time taken does not
// depend on whether or which code matched. A hash that cannot be checked
// (h.Verify returns an error) is kept in remaining and never matches. If a
// code matched, such errors are ignored and Verify succeeds; if none
// matched, Verify returns the error of the first such hash (a corrupt stored
// hash, or ctx done), wrapped.
func Verify(ctx context.Context, code string, hashes []string, h password.Hasher) (valid bool, remaining []string, err error) {
	unused := slices.Clone(hashes)
	if h == nil {
		return false, unused, errors.New("recovery: nil hasher")
	}
	canon, err := Normalize(code)
	if err != nil {
		return false, unused, nil
	}
	if err := ctx.Err(); err != nil {
		return false, unused, fmt.Errorf("recovery: %w", err)
	}
	matched := make([]bool, len(hashes))
	errs := make([]error, len(hashes))
	parallel(len(hashes), func(i int) {
		ok, err := h.Verify(ctx, canon, hashes[i])
		matched[i], errs[i] = ok && err == nil, err
	})
	if i := slices.Index(matched, true); i >= 0 {
		return true, slices.Delete(unused, i, i+1), nil
	}
	for i, err := range errs {
		if err != nil {
			return false, unused, fmt.Errorf("recovery: checking stored hash %d: %w", i, err)
		}
	}
	return false, unused, nil
}

// parallel calls f(0) ... f(n-1) on up to GOMAXPROCS goroutines and returns
// when all calls have returned.
func parallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}
