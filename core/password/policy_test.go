package password

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLength(t *testing.T) {
	tests := []struct {
		pw   string
		want int
	}{
		{"", 0},
		{"password", 8},
		{strings.Repeat("😀", 8), 8},
		{"caf\u00e9", 4},
		{"cafe\u0301", 4},                 // composes to é
		{"\ufb01", 2},                     // ﬁ -> fi
		{"\ufdfa", 18},                    // one code point expands to 18
		{"\U0001F468\u200D\U0001F469", 3}, // man ZWJ woman: three code points
		{"a\xffb", 3},
	}
	for _, tt := range tests {
		if got := Length(tt.pw); got != tt.want {
			t.Errorf("Length(%q) = %d, want %d", tt.pw, got, tt.want)
		}
	}
}

func TestPolicyCheck(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		pw     string
		want   error
	}{
		{"default: 8 ASCII", Policy{}, "abcdefgh", nil},
		{"default: 7 ASCII", Policy{}, "abcdefg", ErrTooShort},
		{"default: empty", Policy{}, "", ErrTooShort},
		{"default: 128", Policy{}, strings.Repeat("a", 128), nil},
		{"default: 129", Policy{}, strings.Repeat("a", 129), ErrTooLong},
		{"8 emoji (32 bytes) is 8 characters", Policy{}, strings.Repeat("😀", 8), nil},
		{"7 emoji (28 bytes) is 7 characters", Policy{}, strings.Repeat("😀", 7), ErrTooShort},
		{"128 emoji (512 bytes)", Policy{}, strings.Repeat("😀", 128), nil},
		{"7 decomposed é (14 code points) are 7 characters", Policy{}, strings.Repeat("e\u0301", 7), ErrTooShort},
		{"4 ligatures are 8 characters", Policy{}, strings.Repeat("\ufb01", 4), nil},
		{"one expanding code point", Policy{Max: 17}, "\ufdfa", ErrTooLong},
		{"space is allowed", Policy{}, "pass word", nil},
		{"no-break space", Policy{}, "pass\u00a0word", nil},
		{"invalid UTF-8", Policy{}, "password\xff", ErrInvalid},
		{"NUL", Policy{}, "pass\x00word", ErrInvalid},
		{"tab", Policy{}, "pass\tword", ErrInvalid},
		{"newline", Policy{}, "password\n", ErrInvalid},
		{"DEL", Policy{}, "pass\x7fword", ErrInvalid},
		{"C1 control", Policy{}, "pass\u0085word", ErrInvalid},
		{"invalid before length", Policy{}, "\xff", ErrInvalid},
		{"custom min", Policy{Min: 12}, "abcdefghijk", ErrTooShort},
		{"custom min met", Policy{Min: 12}, "abcdefghijkl", nil},
		{"custom max", Policy{Min: 1, Max: 4}, "abcde", ErrTooLong},
		{"custom min 1", Policy{Min: 1, Max: 4}, "a", nil},
		{"negative means default", Policy{Min: -1, Max: -1}, "abcdefg", ErrTooShort},
		{"max below min rejects all", Policy{Min: 10, Max: 5}, "abcdefghijk", ErrTooLong},
	}
	for _, tt := range tests {
		err := tt.policy.Check(tt.pw)
		if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
			t.Errorf("%s: Check = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func FuzzPolicyCheck(f *testing.F) {
	for _, s := range []string{"", "password", "😀😀😀😀😀😀😀😀", "\ufdfa", "e\u0301", "\x00", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pw string) {
		err := Policy{}.Check(pw)
		switch {
		case err == nil:
			if n := Length(pw); !utf8.ValidString(pw) || n < DefaultMinLength || n > DefaultMaxLength {
				t.Fatalf("Check(%q) = nil with length %d", pw, n)
			}
		case errors.Is(err, ErrInvalid), errors.Is(err, ErrTooShort), errors.Is(err, ErrTooLong):
		default:
			t.Fatalf("Check(%q) = %v: not a Policy error", pw, err)
		}
	})
}

// TestPolicyCheckFor: the single-factor minimum applies only without a
// second factor (and to Check, which knows nothing of the account), and
// context words do not count towards what is left of a password.
func TestPolicyCheckFor(t *testing.T) {
	ada := Context{Words: []string{"Acme Portal", "ada.lovelace@example.com", "Ada Lovelace"}}
	with2FA := ada
	with2FA.SecondFactor = true
	tests := []struct {
		name   string
		policy Policy
		pw     string
		ctx    Context
		want   error
	}{
		{"default: 8 without a second factor", Policy{}, "abcdefgh", ada, nil},
		{"default: context words allowed", Policy{}, "lovelace", ada, nil},
		{"NIST: 14 alone", NIST(), "abcdefghijklmn", ada, ErrTooShort},
		{"NIST: 15 alone", NIST(), "abcdefghijklmno", ada, nil},
		{"NIST: 8 with a second factor", NIST(), "abcdefgh", with2FA, nil},
		{"NIST: 7 with a second factor", NIST(), "abcdefg", with2FA, ErrTooShort},
		{"NIST: the surname and a year", NIST(), "Lovelace18151852", ada, ErrContextWord},
		{"NIST: the address", NIST(), "ada.lovelace@example.com", ada, ErrContextWord},
		{"NIST: the full name, spaced", NIST(), "ada lovelace ada lovelace", ada, ErrContextWord},
		{"NIST: the app's name, full-width", NIST(), "\uff21\uff43\uff4d\uff45portal2024!!", ada, ErrContextWord},
		{"NIST: the app's name with a second factor", NIST(), "acmeportal", with2FA, ErrContextWord},
		{"NIST: a passphrase holding a word of the name", NIST(), "lovelace wrote the first program", ada, nil},
		{"NIST: a passphrase", NIST(), "correct horse battery staple", ada, nil},
		{"NIST: short name parts do not count", NIST(), "ada and the engine", ada, nil},
		{"NIST: no words", NIST(), "abcdefghijklmno", Context{}, nil},
		{"NIST: punctuation counts towards the length without a word", NIST(), "8 chars!", with2FA, nil},
		{"single-factor minimum below Min is Min", Policy{Min: 12, MinSingleFactor: 10}, "abcdefghijk", ada, ErrTooShort},
	}
	for _, tt := range tests {
		err := tt.policy.CheckFor(tt.pw, tt.ctx)
		if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
			t.Errorf("%s: CheckFor(%q) = %v, want %v", tt.name, tt.pw, err, tt.want)
		}
	}
	if err := NIST().Check("abcdefghijklmn"); !errors.Is(err, ErrTooShort) {
		t.Errorf("NIST().Check of 14 characters = %v, want %v: Check knows of no second factor", err, ErrTooShort)
	}
	if got := NIST().MinFor(true); got != 8 {
		t.Errorf("NIST().MinFor(true) = %d, want 8", got)
	}
}
