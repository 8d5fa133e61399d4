package recovery

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/authkit-go/authkit/core/password"
)

var codeRE = regexp.MustCompile(`^[0-9a-hjkmnp-tv-z]{8}-[0-9a-hjkmnp-tv-z]{8}$`)

// fakeHasher is a cheap, counting Hasher: a hash is "fake:" + code.
type fakeHasher struct {
	hashes, verifies atomic.Int64
	failHash         error
}

func (f *fakeHasher) Hash(ctx context.Context, pw string) (string, error) {
	f.hashes.Add(1)
	if f.failHash != nil {
		return "", f.failHash
	}
	return "fake:" + pw, nil
}

func (f *fakeHasher) Verify(ctx context.Context, pw, hash string) (bool, error) {
	f.verifies.Add(1)
	if err := ctx.Err(); err != nil {
		return false, err
	}
	rest, ok := strings.CutPrefix(hash, "fake:")
	if !ok {
		return false, password.ErrUnknownFormat
	}
	return rest == pw, nil
}

// alphabetBytes are the 20 bytes that encode, 5 bits at a time, the symbols
// 0 to 31 in order (RFC 4648's test of "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567").
var alphabetBytes, _ = hex.DecodeString("00443214c74254b635cf84653a56d7c675be77df")

func TestGenerateCount(t *testing.T) {
	tests := []struct{ count, want int }{
		{0, DefaultCount}, {-1, DefaultCount}, {1, 1}, {8, 8}, {10, 10}, {MaxCount, MaxCount},
	}
	for _, tt := range tests {
		f := &fakeHasher{}
		codes, hashes, err := Generate(context.Background(), f, tt.count)
		if err != nil {
			t.Fatalf("Generate(%d): %v", tt.count, err)
		}
		if len(codes) != tt.want || len(hashes) != tt.want || f.hashes.Load() != int64(tt.want) {
			t.Fatalf("Generate(%d): %d codes, %d hashes, %d Hash calls; want %d", tt.count, len(codes), len(hashes), f.hashes.Load(), tt.want)
		}
		seen := map[string]bool{}
		for i, c := range codes {
			if !codeRE.MatchString(c) {
				t.Errorf("code %q does not match %v", c, codeRE)
			}
			if seen[c] {
				t.Errorf("code %q repeated", c)
			}
			seen[c] = true
			if hashes[i] != "fake:"+c {
				t.Errorf("hashes[%d] = %q, want the hash of codes[%d] %q", i, hashes[i], i, c)
			}
		}
	}
	if _, _, err := Generate(context.Background(), &fakeHasher{}, MaxCount+1); !errors.Is(err, ErrTooMany) {
		t.Errorf("Generate(%d): err = %v, want ErrTooMany", MaxCount+1, err)
	}
}

func TestGenerateAlphabet(t *testing.T) {
	// 100 codes are 1600 symbols: each of the 32 is expected 50 times, and
	// the chance that crypto/rand leaves any one out is below 1e-20.
	codes, _, err := Generate(context.Background(), &fakeHasher{}, MaxCount)
	if err != nil {
		t.Fatal(err)
	}
	used := map[rune]bool{}
	for _, c := range codes {
		for _, r := range strings.ReplaceAll(c, "-", "") {
			used[r] = true
		}
	}
	for _, r := range Alphabet {
		if !used[r] {
			t.Errorf("symbol %q never used", r)
		}
	}
	if len(used) != len(Alphabet) {
		t.Errorf("%d distinct symbols used, want %d", len(used), len(Alphabet))
	}
}

func TestGenerateDeterministic(t *testing.T) {
	r := io.MultiReader(
		bytes.NewReader(alphabetBytes),
		bytes.NewReader(make([]byte, 10)),
		bytes.NewReader(bytes.Repeat([]byte{0xff}, 10)),
	)
	codes, hashes, err := GenerateWith(context.Background(), &fakeHasher{}, 4, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"01234567-89abcdef", "ghjkmnpq-rstvwxyz", "00000000-00000000", "zzzzzzzz-zzzzzzzz"}
	if !slices.Equal(codes, want) {
		t.Errorf("codes = %q, want %q", codes, want)
	}
	if hashes[3] != "fake:zzzzzzzz-zzzzzzzz" {
		t.Errorf("hashes[3] = %q", hashes[3])
	}
}

func TestGenerateErrors(t *testing.T) {
	ctx := context.Background()
	if _, _, err := GenerateWith(ctx, &fakeHasher{}, 8, bytes.NewReader(make([]byte, 79))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short reader: err = %v, want io.ErrUnexpectedEOF", err)
	}
	if _, _, err := GenerateWith(ctx, &fakeHasher{}, 2, bytes.NewReader(make([]byte, 20))); !errors.Is(err, errRepeated) {
		t.Errorf("all-zero reader: err = %v, want errRepeated", err)
	}
	boom := errors.New("boom")
	if codes, hashes, err := Generate(ctx, &fakeHasher{failHash: boom}, 8); !errors.Is(err, boom) || codes != nil || hashes != nil {
		t.Errorf("failing hasher: (%q, %q, %v), want (nil, nil, boom)", codes, hashes, err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	f := &fakeHasher{}
	if _, _, err := Generate(canceled, f, 8); !errors.Is(err, context.Canceled) || f.hashes.Load() != 0 {
		t.Errorf("canceled: err = %v after %d Hash calls, want context.Canceled and none", err, f.hashes.Load())
	}
	if _, _, err := Generate(ctx, nil, 8); err == nil {
		t.Error("nil hasher: err = nil")
	}
}

// generate returns n codes (0: the default count) and their hashes by h,
// failing the test if Generate fails.
func generate(t *testing.T, h password.Hasher, n int) (codes, hashes []string) {
	t.Helper()
	codes, hashes, err := Generate(context.Background(), h, n)
	if err != nil {
		t.Fatal(err)
	}
	return codes, hashes
}

func TestNewHasher(t *testing.T) {
	h := NewHasher()
	codes, hashes := generate(t, h, 0)
	for i, hash := range hashes {
		if cost, err := bcrypt.Cost([]byte(hash)); err != nil || cost != bcrypt.MinCost || !strings.HasPrefix(hash, "$2a$04$") {
			t.Errorf("hash %q: cost %d, %v; want a $2a$04$ bcrypt hash", hash, cost, err)
		}
		if ok, err := h.Verify(context.Background(), codes[i], hash); !ok || err != nil {
			t.Errorf("hash %d does not verify its code: %v, %v", i, ok, err)
		}
	}
}

func TestVerifyEachPosition(t *testing.T) {
	ctx := context.Background()
	h := NewHasher()
	codes, hashes := generate(t, h, 0)
	orig := slices.Clone(hashes)
	for i, code := range codes {
		valid, remaining, err := Verify(ctx, code, hashes, h)
		if !valid || err != nil {
			t.Fatalf("code %d: Verify = %v, %v", i, valid, err)
		}
		want := slices.Concat(hashes[:i], hashes[i+1:])
		if !slices.Equal(remaining, want) {
			t.Errorf("code %d: remaining = %q, want %q", i, remaining, want)
		}
		// The code is spent: it no longer verifies against remaining, and
		// remaining is unchanged by the attempt.
		valid, again, err := Verify(ctx, code, remaining, h)
		if valid || err != nil || !slices.Equal(again, remaining) {
			t.Errorf("code %d reused: Verify = %v, %q, %v; want false, remaining, nil", i, valid, again, err)
		}
	}
	if !slices.Equal(hashes, orig) {
		t.Errorf("Verify modified its input: %q, was %q", hashes, orig)
	}
}

func TestVerifyUseAll(t *testing.T) {
	ctx := context.Background()
	h := NewHasher()
	codes, hashes := generate(t, h, 3)
	for _, code := range []string{codes[1], codes[0], codes[2]} {
		var valid bool
		var err error
		valid, hashes, err = Verify(ctx, code, hashes, h)
		if !valid || err != nil {
			t.Fatalf("Verify(%q) = %v, %v", code, valid, err)
		}
	}
	if len(hashes) != 0 {
		t.Errorf("after using every code, remaining = %q", hashes)
	}
	if valid, remaining, err := Verify(ctx, codes[0], hashes, h); valid || len(remaining) != 0 || err != nil {
		t.Errorf("Verify with no hashes = %v, %q, %v", valid, remaining, err)
	}
}

func TestVerifyWrongCode(t *testing.T) {
	ctx := context.Background()
	h := NewHasher()
	_, hashes := generate(t, h, 0)
	valid, remaining, err := Verify(ctx, "00000000-00000000", hashes, h)
	if valid || err != nil || !slices.Equal(remaining, hashes) {
		t.Errorf("wrong code: Verify = %v, %q, %v; want false, the hashes, nil", valid, remaining, err)
	}
}

func TestVerifyNormalisesInput(t *testing.T) {
	ctx := context.Background()
	f := &fakeHasher{}
	hashes := []string{"fake:0123abcd-1111zzzz"}
	for _, in := range []string{"0123ABCD-1111ZZZZ", "0123abcd1111zzzz", " 0123abcd 1111zzzz\n", "o123abcd-iLl1zzzz"} {
		if valid, _, err := Verify(ctx, in, hashes, f); !valid || err != nil {
			t.Errorf("Verify(%q) = %v, %v; want true", in, valid, err)
		}
	}
}

func TestVerifyChecksEveryHash(t *testing.T) {
	ctx := context.Background()
	hashes := []string{"fake:aaaaaaaa-aaaaaaaa", "fake:bbbbbbbb-bbbbbbbb", "fake:cccccccc-cccccccc", "fake:dddddddd-dddddddd"}
	for _, code := range []string{"aaaaaaaa-aaaaaaaa", "dddddddd-dddddddd", "eeeeeeee-eeeeeeee"} {
		f := &fakeHasher{}
		if _, _, err := Verify(ctx, code, hashes, f); err != nil {
			t.Fatal(err)
		}
		if n := f.verifies.Load(); n != int64(len(hashes)) {
			t.Errorf("Verify(%q): %d hash checks, want %d (no early exit)", code, n, len(hashes))
		}
	}
}

func TestVerifyMalformedDoesNotHash(t *testing.T) {
	hashes := []string{"fake:aaaaaaaa-aaaaaaaa", "fake:bbbbbbbb-bbbbbbbb"}
	for _, in := range []string{"", "aaaaaaaa", "aaaaaaaa-aaaaaaa", "aaaaaaaa-aaaaaaaau", "аaaaaaaa-aaaaaaaa"} {
		f := &fakeHasher{}
		valid, remaining, err := Verify(context.Background(), in, hashes, f)
		if valid || err != nil || !slices.Equal(remaining, hashes) {
			t.Errorf("Verify(%q) = %v, %q, %v; want false, the hashes, nil", in, valid, remaining, err)
		}
		if n := f.verifies.Load(); n != 0 {
			t.Errorf("Verify(%q) ran %d hash checks, want 0", in, n)
		}
	}
}

func TestVerifyRemaining(t *testing.T) {
	ctx := context.Background()
	a, b, c := "fake:aaaaaaaa-aaaaaaaa", "fake:bbbbbbbb-bbbbbbbb", "fake:cccccccc-cccccccc"
	tests := []struct {
		name   string
		hashes []string
		code   string
		valid  bool
		want   []string
	}{
		{"first", []string{a, b, c}, "aaaaaaaa-aaaaaaaa", true, []string{b, c}},
		{"middle keeps order", []string{a, b, c}, "bbbbbbbb-bbbbbbbb", true, []string{a, c}},
		{"last", []string{a, b, c}, "cccccccc-cccccccc", true, []string{a, b}},
		{"duplicate: one copy removed", []string{b, a, b, c}, "bbbbbbbb-bbbbbbbb", true, []string{a, b, c}},
		{"only one", []string{a}, "aaaaaaaa-aaaaaaaa", true, []string{}},
		{"no match", []string{a, b}, "cccccccc-cccccccc", false, []string{a, b}},
		{"empty", []string{}, "aaaaaaaa-aaaaaaaa", false, []string{}},
		{"nil", nil, "aaaaaaaa-aaaaaaaa", false, nil},
	}
	for _, tt := range tests {
		input := slices.Clone(tt.hashes)
		valid, remaining, err := Verify(ctx, tt.code, input, &fakeHasher{})
		if err != nil || valid != tt.valid || !slices.Equal(remaining, tt.want) {
			t.Errorf("%s: Verify = %v, %q, %v; want %v, %q, nil", tt.name, valid, remaining, err, tt.valid, tt.want)
		}
		if !slices.Equal(input, tt.hashes) {
			t.Errorf("%s: input modified to %q", tt.name, input)
		}
		// remaining never shares the input's array.
		for i := range remaining {
			remaining[i] = "overwritten"
		}
		if !slices.Equal(input, tt.hashes) {
			t.Errorf("%s: remaining aliases the input", tt.name)
		}
	}
}

func TestVerifyBrokenHash(t *testing.T) {
	ctx := context.Background()
	good := "fake:aaaaaaaa-aaaaaaaa"
	hashes := []string{"corrupt", good, "also corrupt"}

	valid, remaining, err := Verify(ctx, "aaaaaaaa-aaaaaaaa", hashes, &fakeHasher{})
	if !valid || err != nil || !slices.Equal(remaining, []string{"corrupt", "also corrupt"}) {
		t.Errorf("match beside broken hashes: Verify = %v, %q, %v; want true, the broken ones, nil", valid, remaining, err)
	}
	valid, remaining, err = Verify(ctx, "bbbbbbbb-bbbbbbbb", hashes, &fakeHasher{})
	if valid || !errors.Is(err, password.ErrUnknownFormat) || !strings.Contains(err.Error(), "hash 0") || !slices.Equal(remaining, hashes) {
		t.Errorf("no match: Verify = %v, %q, %v; want false, the hashes, the error of hash 0", valid, remaining, err)
	}
	// With the real hasher: a malformed bcrypt hash.
	h := NewHasher()
	valid, _, err = Verify(ctx, "bbbbbbbb-bbbbbbbb", []string{"$2a$04$short"}, h)
	if valid || !errors.Is(err, password.ErrMalformedHash) {
		t.Errorf("malformed bcrypt: Verify = %v, %v; want false, ErrMalformedHash", valid, err)
	}
}

func TestVerifyContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	hashes := []string{"fake:aaaaaaaa-aaaaaaaa"}
	f := &fakeHasher{}
	valid, remaining, err := Verify(ctx, "aaaaaaaa-aaaaaaaa", hashes, f)
	if valid || !errors.Is(err, context.Canceled) || !slices.Equal(remaining, hashes) || f.verifies.Load() != 0 {
		t.Errorf("canceled: Verify = %v, %q, %v after %d checks; want false, the hashes, context.Canceled, none", valid, remaining, err, f.verifies.Load())
	}
	if _, _, err := Verify(context.Background(), "aaaaaaaa-aaaaaaaa", hashes, nil); err == nil {
		t.Error("nil hasher: err = nil")
	}
}

// TestVerifyConcurrent runs Verify on one shared slice from many goroutines;
// run with -race.
func TestVerifyConcurrent(t *testing.T) {
	ctx := context.Background()
	h := NewHasher()
	codes, hashes := generate(t, h, 4)
	orig := slices.Clone(hashes)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			code, want := codes[i%len(codes)], true
			if i >= len(codes) {
				code, want = "00000000-00000000", false
			}
			valid, remaining, err := Verify(ctx, code, hashes, h)
			if valid != want || err != nil {
				t.Errorf("goroutine %d: Verify = %v, %v; want %v", i, valid, err, want)
			}
			wantLen := len(hashes)
			if want {
				wantLen--
			}
			if len(remaining) != wantLen {
				t.Errorf("goroutine %d: %d remaining, want %d", i, len(remaining), wantLen)
			}
		})
	}
	wg.Wait()
	if !slices.Equal(hashes, orig) {
		t.Error("concurrent Verify calls modified the shared slice")
	}
}

func TestNormalize(t *testing.T) {
	const want = "0123abcd-1111zzzz"
	ok := []string{
		"0123abcd-1111zzzz",
		"0123ABCD-1111ZZZZ",
		"0123AbCd-1111zZzZ",
		"0123abcd1111zzzz",
		"0123abcd 1111zzzz",
		"0123abcd - 1111zzzz",
		"0123abcd--1111zzzz",
		"  0123abcd-1111zzzz \t\n",
		"O123abcd-1111zzzz", // O for 0
		"o123abcd-1111zzzz",
		"0123abcd-IiLlzzzz",             // I, i, L, l for 1
		"\u00a00123abcd-1111zzzz\u3000", // Unicode spaces around: trimmed
	}
	for _, in := range ok {
		got, err := Normalize(in)
		if got != want || err != nil {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []string{
		"",
		"-",
		"0123abcd",
		"0123abcd-1111zzz",       // 15
		"0123abcd-1111zzzzz",     // 17
		"0123abcd1111zzzzz",      // 17 without hyphen
		"0123abcd-1111zzzu",      // u is not in the alphabet
		"0123abcd-1111zzz!",      // punctuation
		"0123abcd_1111zzzz",      // underscore is not a separator
		"0123-abcd-1111-zzzz",    // hyphens inside a group
		"-0123abcd1111zzzz",      // leading hyphen
		"0123abcd1111zzzz-",      // trailing hyphen
		"0123abcd\t1111zzzz",     // tab between groups
		"0123abcd\u20131111zzzz", // en dash
		"０123abcd-1111zzzz",      // fullwidth zero
		"0123аbcd-1111zzzz",      // Cyrillic а
		"0123abcd-1111zzzz\x00",
		"0123abcd-1111zzz\xff",
		"0123abcd" + strings.Repeat(" ", 100) + "1111zzzz",
	}
	for _, in := range bad {
		if got, err := Normalize(in); !errors.Is(err, ErrMalformed) || got != "" {
			t.Errorf("Normalize(%q) = %q, %v; want ErrMalformed", in, got, err)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"0123abcd-1111zzzz", "0123ABCD1111ZZZZ", "o123abcd 1iLlzzzz", "", "-", "аaaaaaaa-aaaaaaaa"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Normalize(in)
		if err != nil {
			if !errors.Is(err, ErrMalformed) || got != "" {
				t.Fatalf("Normalize(%q) = %q, %v", in, got, err)
			}
			return
		}
		if !codeRE.MatchString(got) {
			t.Fatalf("Normalize(%q) = %q: not canonical", in, got)
		}
		if again, err := Normalize(got); again != got || err != nil {
			t.Fatalf("Normalize(%q) = %q, %v: not idempotent", got, again, err)
		}
	})
}
