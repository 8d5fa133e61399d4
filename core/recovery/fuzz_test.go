package recovery

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/password"
)

// fuzzCodes is how many codes FuzzVerify generates from its random bytes.
const fuzzCodes = 3

// FuzzVerify checks Verify against an oracle, with the counting fakeHasher
// (a hash is "fake:" + code):
//
//   - it never panics, never modifies its input and never returns an array
//     shared with it;
//   - a code that Normalize rejects costs no hash check at all and answers
//     (false, all hashes, nil);
//   - any other code costs exactly one check per stored hash, matches
//     exactly when its canonical form is stored, and removes the first such
//     hash; a stored hash the hasher cannot read makes a non-matching code
//     fail with that hasher's error;
//   - every code that GenerateWith makes from the fuzzed random bytes
//     verifies against its own hash, typed in any accepted spelling, and
//     never against the hashes of the others.
//
// The stored hashes are the generated ones plus extra, an arbitrary string
// (a corrupt, duplicate or foreign hash).
func FuzzVerify(f *testing.F) {
	for _, s := range []struct {
		code, extra string
		random      []byte
	}{
		{"0123abcd-1111zzzz", "fake:0123abcd-1111zzzz", alphabetBytes},
		{"0123ABCD 1111ZZZZ", "corrupt", alphabetBytes},
		{"o123abcd-iLl1zzzz", "fake:0123abcd-1111zzzz", nil},
		{"ghjkmnpq-rstvwxyz", "", alphabetBytes},
		{"00000000-00000000", "fake:00000000-00000000", nil},
		{"0000000o-0000000o", "fake:", []byte{0}},
		{"", "fake:", nil},
		{"аaaaaaaa-aaaaaaaa", "fake:аaaaaaaa-aaaaaaaa", nil},
		{"0123abcd-1111zzzu", "fake:0123abcd-1111zzzu", nil},
		{strings.Repeat(" ", 70) + "0123abcd1111zzzz", "$2a$04$short", nil},
	} {
		f.Add(s.code, s.extra, s.random)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, code, extra string, random []byte) {
		codes, hashes := fuzzGenerate(t, random)

		// Every generated code verifies against its own hash, in any
		// accepted spelling, and against no other code's hash.
		for i, c := range codes {
			others := slices.Delete(slices.Clone(hashes), i, i+1)
			for _, typed := range spellings(c) {
				valid, remaining, err := Verify(ctx, typed, hashes, &fakeHasher{})
				if !valid || err != nil || !slices.Equal(remaining, others) {
					t.Fatalf("generated code %q typed %q: Verify = %v, %q, %v; want true, %q, nil", c, typed, valid, remaining, err, others)
				}
				if valid, _, err := Verify(ctx, typed, others, &fakeHasher{}); valid || err != nil {
					t.Fatalf("generated code %q verified against the other codes' hashes: %v, %v", typed, valid, err)
				}
			}
		}

		stored := append(slices.Clone(hashes), extra)
		input := slices.Clone(stored)

		fh := &fakeHasher{}
		valid, remaining, err := Verify(ctx, code, input, fh)
		checkInputKept(t, input, stored, remaining)

		canon, malformed := Normalize(code)
		if malformed != nil {
			if valid || err != nil || !slices.Equal(remaining, stored) {
				t.Fatalf("Verify(%q) = %v, %q, %v; want false, every hash, nil for a malformed code", code, valid, remaining, err)
			}
			if n := fh.verifies.Load(); n != 0 {
				t.Fatalf("Verify(%q): malformed code cost %d hash checks, want 0", code, n)
			}
			return
		}
		if n := fh.verifies.Load(); n != int64(len(stored)) {
			t.Fatalf("Verify(%q): %d hash checks, want %d (one per hash, no early exit)", code, n, len(stored))
		}
		if i := slices.Index(stored, "fake:"+canon); i >= 0 {
			want := slices.Delete(slices.Clone(stored), i, i+1)
			if !valid || err != nil || !slices.Equal(remaining, want) {
				t.Fatalf("Verify(%q) = %v, %q, %v; want true, %q, nil", code, valid, remaining, err, want)
			}
			return
		}
		if valid || !slices.Equal(remaining, stored) {
			t.Fatalf("Verify(%q) = %v, %q, %v; want false and every hash: %q is not stored", code, valid, remaining, err, canon)
		}
		if corrupt := !strings.HasPrefix(extra, "fake:"); corrupt != errors.Is(err, password.ErrUnknownFormat) {
			t.Fatalf("Verify(%q) with stored hash %q: err = %v", code, extra, err)
		}
	})
}

// fuzzGenerate makes fuzzCodes codes from the bytes random, skipping the
// input when they make the same code twice.
func fuzzGenerate(t *testing.T, random []byte) (codes, hashes []string) {
	t.Helper()
	buf := make([]byte, fuzzCodes*codeBytes)
	for i := range buf {
		if len(random) == 0 {
			buf[i] = byte(i / codeBytes)
		} else {
			// The bytes as given, then cycled with a twist so that a
			// short input still makes distinct codes.
			buf[i] = random[i%len(random)] ^ byte(i/len(random))
		}
	}
	codes, hashes, err := GenerateWith(context.Background(), &fakeHasher{}, fuzzCodes, bytes.NewReader(buf))
	if errors.Is(err, errRepeated) {
		t.Skip("random bytes repeat a code")
	}
	if err != nil {
		t.Fatalf("GenerateWith: %v", err)
	}
	return codes, hashes
}

// checkInputKept fails unless Verify left its input as it was and returned
// remaining in an array of its own; remaining is unchanged on return.
func checkInputKept(t *testing.T, input, want, remaining []string) {
	t.Helper()
	if !slices.Equal(input, want) {
		t.Fatalf("Verify modified its input: %q, was %q", input, want)
	}
	saved := slices.Clone(remaining)
	for i := range remaining {
		remaining[i] = "overwritten"
	}
	if !slices.Equal(input, want) {
		t.Fatal("Verify's remaining shares the input's array")
	}
	copy(remaining, saved)
}

// spellings are ways a person may type the canonical code c, all of which
// Normalize accepts.
func spellings(c string) []string {
	bare := strings.ReplaceAll(c, "-", "")
	lookAlike := strings.NewReplacer("0", "O", "1", "l").Replace(c)
	return []string{c, strings.ToUpper(c), bare, " " + c[:8] + " - " + c[9:] + "\n", lookAlike}
}
