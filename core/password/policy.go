package password

import (
	"errors"
	"fmt"
	"slices"
	"strings"
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

	// ErrContextWord means that, with Policy.RefuseContextWords, the
	// password is too little besides a word of its context (the app's
	// name, the account's address or name).
	ErrContextWord = errors.New("password: built on the app's name, the address or the name")
)

// Default password length bounds, in characters after normalisation.
const (
	DefaultMinLength = 8
	DefaultMaxLength = 128
)

// NIST SP 800-63B rev. 4 (section 3.1.1.2) minimums: a password that is
// the account's only factor has at least 15 characters, one used with a
// second factor at least 8.
const (
	NISTSingleFactorMin = 15
	NISTMultiFactorMin  = 8
)

// minContextWord is the length, in folded characters, from which a word of
// the context counts: shorter parts of a name ("Li", "Ada") are too common
// inside good passphrases to refuse.
const minContextWord = 4

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

// Policy is the rule for new passwords (registration, reset, change). It
// is not applied by [Hasher.Verify]: a password that was accepted once
// must keep working when the policy tightens.
//
// The zero value is the default policy: 8 to 128 characters, whatever the
// account's other factors, no context words refused. [NIST] is the policy
// of NIST SP 800-63B rev. 4: 15 characters for a password that is the only
// factor, 8 beside a second one, and no password built on the app's name,
// the address or the name.
type Policy struct {
	// Min is the fewest characters accepted, counted as by [Length].
	// Default: 8.
	Min int

	// Max is the most characters accepted, counted as by [Length]. It bounds
	// the work a single request can ask of the hasher. Default: 128.
	Max int

	// MinSingleFactor is the fewest characters for the password of an
	// account without a second factor (NIST SP 800-63B rev. 4 asks 15);
	// below Min it is Min. Default: 0, Min for every account.
	MinSingleFactor int

	// RefuseContextWords refuses a password built on a word of its
	// context ([Context.Words]: the app's name, the account's address and
	// name): after every such word of at least 4 letters or digits is
	// taken out of it, the password (folded: NFKC, lowercase, letters and
	// digits only) must still have its minimum length, so context words
	// never count towards it. "Lovelace1815!" for Ada Lovelace is
	// refused, "lovelace wrote the first program" is not. Default: false.
	RefuseContextWords bool
}

// NIST returns the policy of NIST SP 800-63B rev. 4, section 3.1.1.2: at
// least 15 characters for a password that is the account's only factor, 8
// with a second factor, at most 128, and context words refused.
func NIST() Policy {
	return Policy{Min: NISTMultiFactorMin, MinSingleFactor: NISTSingleFactorMin, RefuseContextWords: true}
}

// Context is what [Policy.CheckFor] knows of the account the new password
// is for.
type Context struct {
	// SecondFactor reports that the account has a second factor (2FA on),
	// so [Policy.MinSingleFactor] does not apply.
	SecondFactor bool
	// Words are the context's words: the app's name, the account's
	// address and name. Each is folded and split as RefuseContextWords
	// says; empty ones are ignored.
	Words []string
}

// MinFor returns the fewest characters the policy accepts for an account
// with or without a second factor.
func (p Policy) MinFor(secondFactor bool) int {
	lo := p.Min
	if lo <= 0 {
		lo = DefaultMinLength
	}
	if !secondFactor && p.MinSingleFactor > lo {
		return p.MinSingleFactor
	}
	return lo
}

// CheckFor is Check for an account's context: the minimum is MinFor of
// c.SecondFactor, and with RefuseContextWords a password built on one of
// c.Words wraps ErrContextWord. The other errors are Check's.
func (p Policy) CheckFor(pw string, c Context) error {
	if err := p.check(pw, p.MinFor(c.SecondFactor)); err != nil {
		return err
	}
	if p.RefuseContextWords && builtOn(pw, c.Words, p.MinFor(c.SecondFactor)) {
		return ErrContextWord
	}
	return nil
}

// fold is the form context words are compared in: NFKC, lowercase, letters
// and digits only.
func fold(s string) string {
	var b strings.Builder
	for _, r := range Normalize(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// contextWords returns the folded words of words: each whole, and each of
// its parts split at anything but a letter or a digit ("ada.lovelace@
// example.com" gives "adalovelaceexamplecom", "ada", "lovelace",
// "example", "com"), those of at least minContextWord characters, longest
// first.
func contextWords(words []string) []string {
	var out []string
	add := func(w string) {
		if utf8.RuneCountInString(w) >= minContextWord && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	for _, w := range words {
		add(fold(w))
		if local, _, ok := strings.Cut(w, "@"); ok {
			add(fold(local))
		}
		for _, part := range strings.FieldsFunc(Normalize(w), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			add(fold(part))
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// builtOn reports whether pw holds a context word and keeps fewer than
// keep folded characters once every context word is taken out of it. A
// password without one is never refused here, however short its letters
// and digits alone are.
func builtOn(pw string, words []string, keep int) bool {
	whole := fold(pw)
	rest := whole
	for _, w := range contextWords(words) {
		rest = strings.ReplaceAll(rest, w, "")
	}
	return rest != whole && utf8.RuneCountInString(rest) < keep
}

// Check reports whether pw is acceptable as a new password. It returns an
// error wrapping ErrInvalid for invalid UTF-8 or a control character,
// ErrTooShort or ErrTooLong for a length outside [Min, Max], and nil
// otherwise. Lengths are counted after NFKC normalisation (see [Length]).
// A Max below Min rejects every password. Knowing nothing of the account,
// it applies MinFor(false): the single-factor minimum when one is set.
func (p Policy) Check(pw string) error {
	return p.check(pw, p.MinFor(false))
}

// check is Check with the minimum lo.
func (p Policy) check(pw string, lo int) error {
	hi := p.Max
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
