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
