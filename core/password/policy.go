package password

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Errors returned by [Policy.Check]. Hash also returns ErrInvalid for a
// password that is not valid UTF-8.
var (
	// ErrTooShort means the password has fewer characters than Policy.Min.
	ErrTooShort = errors.New("password: too short")

	// ErrTooLong means the password has more characters than Policy.Max.
	ErrTooLong = errors.New("password: too long")

	// ErrInvalid means the password is not valid UTF-8 or holds a control
	// character (NUL, tab, newline, DEL, C1 controls).
	ErrInvalid = errors.New("password: invalid characters")
)

// Default password length bounds, in characters after normalisation.
const (
	DefaultMinLength = 8
	DefaultMaxLength = 128
)

// Normalize returns the NFKC normal form of pw: the form that is hashed and
// verified. Compatibility characters fold to their plain equivalents ("ﬁ"
// becomes "fi", fullwidth "Ａ" becomes "A") and composed and decomposed
// accents become the same string, so a password typed on one keyboard or
// operating system verifies when typed on another.
//
// Invalid UTF-8 sequences are passed through unchanged.
func Normalize(pw string) string {
	return norm.NFKC.String(pw)
}

// Length returns the number of characters in pw after normalisation, counted
// as Unicode code points: "é" is one character whether typed composed or
// decomposed, an emoji such as "😀" is one, and an emoji sequence joined with
// U+200D (a family, a flag) counts every code point in it. Each byte of an
// invalid UTF-8 sequence counts as one character.
func Length(pw string) int {
	return utf8.RuneCountInString(Normalize(pw))
}

// Policy is the length rule for new passwords (registration, reset, change).
// It is not applied by [Hasher.Verify]: a password that was accepted once
// must keep working when the policy tightens.
//
// The zero value is the default policy: 8 to 128 characters.
type Policy struct {
	// Min is the fewest characters accepted, counted as by [Length].
	// Default: 8.
	Min int

	// Max is the most characters accepted, counted as by [Length]. It bounds
	// the work a single request can ask of the hasher. Default: 128.
	Max int
}

// Check reports whether pw is acceptable as a new password. It returns an
// error wrapping ErrInvalid for invalid UTF-8 or a control character,
// ErrTooShort or ErrTooLong for a length outside [Min, Max], and nil
// otherwise. Lengths are counted after NFKC normalisation (see [Length]).
// A Max below Min rejects every password.
func (p Policy) Check(pw string) error {
	lo, hi := p.Min, p.Max
	if lo <= 0 {
		lo = DefaultMinLength
	}
	if hi <= 0 {
		hi = DefaultMaxLength
	}
	if !utf8.ValidString(pw) {
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalid)
	}
	n := 0
	for _, r := range Normalize(pw) {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: control character %U", ErrInvalid, r)
		}
		n++
	}
	switch {
	case n < lo:
		return fmt.Errorf("%w: at least %d characters required", ErrTooShort, lo)
	case n > hi:
		return fmt.Errorf("%w: at most %d characters allowed", ErrTooLong, hi)
	}
	return nil
}
