package password

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// tinyArgon2 are the smallest argon2id parameters worth testing with.
var tinyArgon2 = Argon2Params{Memory: 64, Iterations: 1, Parallelism: 1}

func newLowBcrypt(t testing.TB, cost int) *Standard {
	t.Helper()
	h, err := New(Config{BcryptCost: cost, AllowLowCost: true})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func newTinyArgon2(t testing.TB, p Argon2Params) *Standard {
	t.Helper()
	h, err := New(Config{Algorithm: Argon2id, Argon2: p, AllowLowCost: true})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustHash(t testing.TB, h Hasher, pw string) string {
	t.Helper()
	hash, err := h.Hash(context.Background(), pw)
	if err != nil {
		t.Fatalf("Hash(%q): %v", pw, err)
	}
	return hash
}

func verify(t testing.TB, h Hasher, pw, hash string) bool {
	t.Helper()
	ok, err := h.Verify(context.Background(), pw, hash)
	if err != nil {
		t.Fatalf("Verify(%q, %q): %v", pw, hash, err)
	}
	return ok
}

type hasherCase struct {
	name string
	h    *Standard
}

func hashers(t *testing.T) []hasherCase {
	return []hasherCase{
		{"bcrypt", newLowBcrypt(t, bcrypt.MinCost)},
		{"argon2id", newTinyArgon2(t, tinyArgon2)},
	}
}

func TestHashVerifyRoundTrip(t *testing.T) {
	passwords := []string{
		"",
		"correct horse battery staple",
		strings.Repeat("a", 72),
		strings.Repeat("a", 73),
		strings.Repeat("é", 36), // 72 bytes
		strings.Repeat("é", 37), // 74 bytes, 37 characters
		strings.Repeat("b", 100),
		strings.Repeat("c", 1000),
		"pässwörd 密码 😀",
	}
	for _, hc := range hashers(t) {
		for _, pw := range passwords {
			hash := mustHash(t, hc.h, pw)
			if !verify(t, hc.h, pw, hash) {
				t.Errorf("%s: Verify(%.20q) of its own hash = false", hc.name, pw)
			}
			if verify(t, hc.h, pw+"x", hash) {
				t.Errorf("%s: Verify(%.20q+\"x\") = true", hc.name, pw)
			}
			if hc.h.NeedsRehash(hash) {
				t.Errorf("%s: NeedsRehash of a fresh hash = true", hc.name)
			}
			var prefix string
			var wantLen int
			switch {
			case hc.name == "argon2id":
				prefix = "$argon2id$v=19$m=64,t=1,p=1$"
			case len(pw) <= 72:
				prefix, wantLen = "$2a$04$", 60
			default:
				prefix, wantLen = "$authkit-bcrypt-sha256$v=1$2a$04$", 86
			}
			if !strings.HasPrefix(hash, prefix) || (wantLen != 0 && len(hash) != wantLen) {
				t.Errorf("%s: Hash(%.20q) = %q (%d bytes), want prefix %q and %d bytes", hc.name, pw, hash, len(hash), prefix, wantLen)
			}
		}
	}
}

func TestHashSaltsDiffer(t *testing.T) {
	for _, hc := range hashers(t) {
		a, b := mustHash(t, hc.h, "same password"), mustHash(t, hc.h, "same password")
		if a == b {
			t.Errorf("%s: two hashes of one password are equal: %q", hc.name, a)
		}
	}
}

// TestLongPasswordsNotTruncated guards against the bcrypt truncation bug:
// bcrypt reads 72 bytes, so a naive implementation accepts any password
// that shares the first 72 bytes of the real one.
func TestLongPasswordsNotTruncated(t *testing.T) {
	prefix := strings.Repeat("p", 72)
	for _, hc := range hashers(t) {
		for _, n := range []int{73, 100, 1000} {
			a := prefix + strings.Repeat("a", n-72)
			b := prefix + strings.Repeat("b", n-72)
			hash := mustHash(t, hc.h, a)
			if !verify(t, hc.h, a, hash) {
				t.Errorf("%s/%d: Verify(a) = false", hc.name, n)
			}
			if verify(t, hc.h, b, hash) {
				t.Errorf("%s/%d: password differing after byte 72 verifies", hc.name, n)
			}
			if verify(t, hc.h, prefix, hash) {
				t.Errorf("%s/%d: the 72-byte prefix verifies", hc.name, n)
			}
		}
		// The other direction: the hash of the 72-byte prefix must not
		// accept longer passwords that start with it.
		hash := mustHash(t, hc.h, prefix)
		for _, n := range []int{73, 100, 1000} {
			if verify(t, hc.h, prefix+strings.Repeat("a", n-72), hash) {
				t.Errorf("%s: %d-byte extension of a 72-byte password verifies", hc.name, n)
			}
		}
	}
}

func TestNormalization(t *testing.T) {
	tests := []struct {
		name        string
		hashed, try string
		want        bool
	}{
		{"ligature fi", "\ufb01nancial \ufb02ow", "financial flow", true},
		{"plain fi against ligature", "financial flow", "\ufb01nancial \ufb02ow", true},
		{"composed vs decomposed", "caf\u00e9 au lait", "cafe\u0301 au lait", true},
		{"decomposed vs composed", "cafe\u0301 au lait", "caf\u00e9 au lait", true},
		{"fullwidth", "\uff21\uff22\uff23\uff11\uff12\uff13", "ABC123", true},
		{"no-break space", "open\u00a0sesame", "open sesame", true},
		{"accent is not dropped", "caf\u00e9 au lait", "cafe au lait", false},
		{"case is kept", "Password", "password", false},
	}
	for _, hc := range hashers(t) {
		for _, tt := range tests {
			hash := mustHash(t, hc.h, tt.hashed)
			if got := verify(t, hc.h, tt.try, hash); got != tt.want {
				t.Errorf("%s/%s: Verify = %v, want %v", hc.name, tt.name, got, tt.want)
			}
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\ufb01", "fi"},
		{"cafe\u0301", "caf\u00e9"},
		{"\uff21\uff11", "A1"},
		{"\u00bd", "1\u20442"}, // ½ -> 1⁄2
		{"ascii stays", "ascii stays"},
		{"a\xffb", "a\xffb"},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestVerifyForeignBcrypt checks hashes made by another implementation.
func TestVerifyForeignBcrypt(t *testing.T) {
	h := newLowBcrypt(t, bcrypt.MinCost)
	// Made by libxcrypt's crypt(3) (Openwall's crypt_blowfish, through
	// Python's crypt module) with the salt LhayLxezLhK1LhWvKxCyLO.
	vectors := []struct{ pw, hash string }{
		{"correct horse battery staple", "$2b$04$LhayLxezLhK1LhWvKxCyLO6EQzjYY9pQiAagMMqiDZZquQyHq.3bm"},
		{"correct horse battery staple", "$2y$04$LhayLxezLhK1LhWvKxCyLO6EQzjYY9pQiAagMMqiDZZquQyHq.3bm"},
		{"p\u00e4ssw\u00f6rd \u5bc6\u7801", "$2b$04$LhayLxezLhK1LhWvKxCyLOeIzn82hp1cHB3BUGLUA42.QAqJmKZN2"},
		{"p\u00e4ssw\u00f6rd \u5bc6\u7801", "$2y$04$LhayLxezLhK1LhWvKxCyLOeIzn82hp1cHB3BUGLUA42.QAqJmKZN2"},
		{strings.Repeat("x", 72), "$2b$04$LhayLxezLhK1LhWvKxCyLOkqPd0TIWCxicZGySaAgVpuGPXiE/Cha"},
	}
	for _, v := range vectors {
		if !verify(t, h, v.pw, v.hash) {
			t.Errorf("Verify(%.20q, %q) = false, want true", v.pw, v.hash)
		}
		if verify(t, h, v.pw+"!", v.hash) {
			t.Errorf("Verify(%.20q+\"!\", %q) = true, want false", v.pw, v.hash)
		}
		if h.NeedsRehash(v.hash) {
			t.Errorf("NeedsRehash(%q) = true at the configured cost", v.hash)
		}
	}
	// crypt(3) would accept this one (it truncates at 72 bytes); authkit
	// never truncates.
	if verify(t, h, strings.Repeat("x", 73), "$2b$04$LhayLxezLhK1LhWvKxCyLOkqPd0TIWCxicZGySaAgVpuGPXiE/Cha") {
		t.Error("a 73-byte password verifies against a plain bcrypt hash of its first 72 bytes")
	}

	// $2a$, $2b$ and $2y$ are the same algorithm for valid UTF-8 input
	// (the letters record fixes to other implementations' handling of
	// 8-bit bytes and of lengths above 255), so swapping the version letter
	// of a Go-made hash yields exactly what OpenBSD ($2b$) or PHP ($2y$)
	// would have stored for the same salt.
	for _, pw := range []string{"swap me", "ünïcödé pässwörd"} {
		hash := mustHash(t, h, pw)
		for _, v := range []string{"b", "y"} {
			foreign := "$2" + v + hash[3:]
			if !verify(t, h, pw, foreign) {
				t.Errorf("Verify(%q, %q) = false", pw, foreign)
			}
			if verify(t, h, "wrong", foreign) {
				t.Errorf("Verify(wrong, %q) = true", foreign)
			}
		}
	}
}

// Argon2id reference vectors from the reference implementation's
// src/test.c (password "password", salt "somesalt").
const (
	argon2RefP1 = "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"
	argon2RefP2 = "$argon2id$v=19$m=256,t=2,p=2$c29tZXNhbHQ$bQk8UB/VmZZF4Oo79iDXuL5/0ttZwg2f/5U52iv1cDc"
)

func TestVerifyArgon2idReference(t *testing.T) {
	// A bcrypt hasher verifies argon2id hashes too.
	for _, hc := range hashers(t) {
		for _, ref := range []string{argon2RefP1, argon2RefP2} {
			if !verify(t, hc.h, "password", ref) {
				t.Errorf("%s: Verify(password, %q) = false", hc.name, ref)
			}
			if verify(t, hc.h, "Password", ref) {
				t.Errorf("%s: Verify(Password, %q) = true", hc.name, ref)
			}
		}
	}
}

func TestHashArgon2idDeterministic(t *testing.T) {
	h, err := New(Config{
		Algorithm:    Argon2id,
		Argon2:       Argon2Params{Memory: 256, Iterations: 2, Parallelism: 1, SaltLength: 8, KeyLength: 32},
		AllowLowCost: true,
		Rand:         strings.NewReader("somesalt"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustHash(t, h, "password"); got != argon2RefP1 {
		t.Errorf("Hash = %q, want %q", got, argon2RefP1)
	}
	// The reader is now empty: the next salt cannot be read.
	if _, err := h.Hash(context.Background(), "password"); !errors.Is(err, io.EOF) {
		t.Errorf("Hash with an exhausted Rand: err = %v, want io.EOF", err)
	}
}

func TestVerifyMalformed(t *testing.T) {
	h := newLowBcrypt(t, bcrypt.MinCost)
	good := mustHash(t, h, "pw") // $2a$04$ + 53
	long := mustHash(t, h, strings.Repeat("L", 80))
	body := good[7:] // salt and hash
	ref := argon2RefP1
	withParams := func(p string) string {
		return "$argon2id$v=19$" + p + "$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"
	}
	tests := []struct {
		name, hash string
		want       error
	}{
		{"empty", "", ErrUnknownFormat},
		{"dollar", "$", ErrUnknownFormat},
		{"plaintext", "hunter2", ErrUnknownFormat},
		{"md5crypt", "$1$saltsalt$qjXMvbEw8oaL.CzflDugX/", ErrUnknownFormat},
		{"2x", "$2x$04$" + body, ErrUnknownFormat},
		{"2 without minor", "$2$04$" + body, ErrUnknownFormat},
		{"3a", "$3a$04$" + body, ErrUnknownFormat},
		{"upper 2A", "$2A$04$" + body, ErrUnknownFormat},
		{"leading space", " " + good, ErrUnknownFormat},
		{"argon2i", strings.Replace(ref, "argon2id", "argon2i", 1), ErrUnknownFormat},
		{"argon2d", strings.Replace(ref, "argon2id", "argon2d", 1), ErrUnknownFormat},
		{"scrypt", "$scrypt$ln=16,r=8,p=1$aM15713r3Xsvxbi31lqr1Q$nFNh2CVHVjNldFVKDHDlm4CbdRSCdEBsjjJxD+iCs5E", ErrUnknownFormat},
		{"long format v=2", strings.Replace(long, "v=1", "v=2", 1), ErrUnknownFormat},
		{"long format without version", strings.Replace(long, "$v=1", "", 1), ErrUnknownFormat},

		{"bcrypt too short", good[:59], ErrMalformedHash},
		{"bcrypt too long", good + "x", ErrMalformedHash},
		{"bcrypt prefix only", "$2a$", ErrMalformedHash},
		{"bcrypt cost 03", "$2a$03$" + body, ErrMalformedHash},
		{"bcrypt cost 00", "$2a$00$" + body, ErrMalformedHash},
		{"bcrypt cost 19", "$2a$19$" + body, ErrMalformedHash},
		{"bcrypt cost 31", "$2b$31$" + body, ErrMalformedHash},
		{"bcrypt cost 99", "$2y$99$" + body, ErrMalformedHash},
		{"bcrypt cost +4", "$2a$+4$" + body, ErrMalformedHash},
		{"bcrypt cost 4 one digit", "$2a$4$" + body + "x", ErrMalformedHash},
		{"bcrypt no dollar after cost", "$2a$04x" + body, ErrMalformedHash},
		{"bcrypt bad char", "$2a$04$" + "!" + body[1:], ErrMalformedHash},
		{"bcrypt NUL", "$2a$04$" + body[:52] + "\x00", ErrMalformedHash},
		{"bcrypt non-ASCII", "$2a$04$" + body[:51] + "é", ErrMalformedHash},
		{"long format inner too short", "$authkit-bcrypt-sha256$v=1$2a$04$abc", ErrMalformedHash},
		{"long format inner argon2", "$authkit-bcrypt-sha256$v=1$" + ref, ErrMalformedHash},
		{"long format inner 2x", "$authkit-bcrypt-sha256$v=1$2x$04$" + body, ErrMalformedHash},
		{"long format empty", "$authkit-bcrypt-sha256$v=1$", ErrMalformedHash},

		{"argon2 absurd memory", withParams("m=4294967295,t=2,p=1"), ErrMalformedHash},
		{"argon2 memory overflows uint32", withParams("m=4294967296,t=2,p=1"), ErrMalformedHash},
		{"argon2 memory just above bound", withParams("m=262145,t=2,p=1"), ErrMalformedHash},
		{"argon2 memory below 8p", withParams("m=15,t=2,p=2"), ErrMalformedHash},
		{"argon2 memory 0", withParams("m=0,t=2,p=1"), ErrMalformedHash},
		{"argon2 t=0", withParams("m=256,t=0,p=1"), ErrMalformedHash},
		{"argon2 t=33", withParams("m=256,t=33,p=1"), ErrMalformedHash},
		{"argon2 t huge", withParams("m=256,t=4294967295,p=1"), ErrMalformedHash},
		{"argon2 p=0", withParams("m=256,t=2,p=0"), ErrMalformedHash},
		{"argon2 p=65", withParams("m=1024,t=2,p=65"), ErrMalformedHash},
		{"argon2 p=257 (wraps to 1 as uint8)", withParams("m=256,t=2,p=257"), ErrMalformedHash},
		{"argon2 negative", withParams("m=-256,t=2,p=1"), ErrMalformedHash},
		{"argon2 plus sign", withParams("m=+256,t=2,p=1"), ErrMalformedHash},
		{"argon2 leading zero", withParams("m=0256,t=2,p=1"), ErrMalformedHash},
		{"argon2 space", withParams("m= 256,t=2,p=1"), ErrMalformedHash},
		{"argon2 hex", withParams("m=0x100,t=2,p=1"), ErrMalformedHash},
		{"argon2 reordered", withParams("t=2,m=256,p=1"), ErrMalformedHash},
		{"argon2 missing p", withParams("m=256,t=2"), ErrMalformedHash},
		{"argon2 extra param", withParams("m=256,t=2,p=1,keyid=abc"), ErrMalformedHash},
		{"argon2 empty params", withParams(""), ErrMalformedHash},
		{"argon2 v=16", strings.Replace(ref, "v=19", "v=16", 1), ErrMalformedHash},
		{"argon2 no version", strings.Replace(ref, "v=19$", "", 1), ErrMalformedHash},
		{"argon2 extra field", ref + "$", ErrMalformedHash},
		{"argon2 missing key", "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ", ErrMalformedHash},
		{"argon2 empty salt", "$argon2id$v=19$m=256,t=2,p=1$$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4", ErrMalformedHash},
		{"argon2 salt 4 bytes", strings.Replace(ref, "c29tZXNhbHQ", "c29tZQ", 1), ErrMalformedHash},
		{"argon2 salt 65 bytes", strings.Replace(ref, "c29tZXNhbHQ", strings.Repeat("A", 87), 1), ErrMalformedHash},
		{"argon2 key 15 bytes", strings.Replace(ref, "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4", "nf65EOgLrQMR/uIPnA4r", 1), ErrMalformedHash},
		{"argon2 key 65 bytes", strings.Replace(ref, "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4", strings.Repeat("A", 87), 1), ErrMalformedHash},
		{"argon2 key huge", strings.Replace(ref, "nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4", strings.Repeat("A", 100000), 1), ErrMalformedHash},
		{"argon2 padded base64", strings.Replace(ref, "c29tZXNhbHQ", "c29tZXNhbHQ=", 1), ErrMalformedHash},
		{"argon2 URL base64", strings.Replace(ref, "/", "_", 1), ErrMalformedHash},
		{"argon2 newline in key", strings.Replace(ref, "nf65", "nf\n65", 1), ErrMalformedHash},
		{"argon2 non-canonical trailing bits", strings.Replace(ref, "c29tZXNhbHQ", "c29tZXNhbHR", 1), ErrMalformedHash},
		{"argon2 bad base64 length", strings.Replace(ref, "c29tZXNhbHQ", "c29tZXNhbHQAA", 1), ErrMalformedHash},
		{"argon2 prefix only", "$argon2id$", ErrMalformedHash},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := h.Verify(context.Background(), "pw", tt.hash)
			if ok || !errors.Is(err, tt.want) {
				t.Fatalf("Verify = (%v, %v), want (false, %v)", ok, err, tt.want)
			}
			if !h.NeedsRehash(tt.hash) {
				t.Errorf("NeedsRehash = false for a hash Verify rejects")
			}
		})
	}
}

func TestNeedsRehash(t *testing.T) {
	b4 := newLowBcrypt(t, 4)
	b5 := newLowBcrypt(t, 5)
	a := newTinyArgon2(t, tinyArgon2)
	variant := func(p Argon2Params) string { return mustHash(t, newTinyArgon2(t, p), "pw") }

	b4Hash := mustHash(t, b4, "pw")
	b4Long := mustHash(t, b4, strings.Repeat("l", 100))
	b5Hash := mustHash(t, b5, "pw")
	b5Long := mustHash(t, b5, strings.Repeat("l", 100))
	aHash := mustHash(t, a, "pw")

	tests := []struct {
		name string
		h    *Standard
		hash string
		want bool
	}{
		{"bcrypt4: own plain", b4, b4Hash, false},
		{"bcrypt4: own long", b4, b4Long, false},
		{"bcrypt4: $2b$ at cost 4", b4, "$2b" + b4Hash[3:], false},
		{"bcrypt4: $2y$ at cost 4", b4, "$2y" + b4Hash[3:], false},
		{"bcrypt4: cost 5", b4, b5Hash, true},
		{"bcrypt4: long at cost 5", b4, b5Long, true},
		{"bcrypt4: argon2id", b4, aHash, true},
		{"bcrypt4: unknown", b4, "hunter2", true},
		{"bcrypt4: malformed", b4, b4Hash[:59], true},
		{"bcrypt5: cost 4", b5, b4Hash, true},
		{"bcrypt5: own", b5, b5Hash, false},
		{"argon2: own", a, aHash, false},
		{"argon2: bcrypt", a, b4Hash, true},
		{"argon2: long bcrypt", a, b4Long, true},
		{"argon2: other memory", a, variant(Argon2Params{Memory: 128, Iterations: 1, Parallelism: 1}), true},
		{"argon2: other iterations", a, variant(Argon2Params{Memory: 64, Iterations: 2, Parallelism: 1}), true},
		{"argon2: other parallelism", a, variant(Argon2Params{Memory: 64, Iterations: 1, Parallelism: 2}), true},
		{"argon2: other salt length", a, variant(Argon2Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 32}), true},
		{"argon2: other key length", a, variant(Argon2Params{Memory: 64, Iterations: 1, Parallelism: 1, KeyLength: 16}), true},
		{"argon2: same params, defaults spelled out", a, variant(Argon2Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}), false},
		{"argon2: unknown", a, "", true},
	}
	for _, tt := range tests {
		if got := tt.h.NeedsRehash(tt.hash); got != tt.want {
			t.Errorf("%s: NeedsRehash(%q) = %v, want %v", tt.name, tt.hash, got, tt.want)
		}
	}
}

func TestNew(t *testing.T) {
	h, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	wantArgon2 := Argon2Params{Memory: 19456, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}
	if h.alg != Bcrypt || h.cost != 12 || h.argon2 != wantArgon2 || cap(h.sem) != runtime.GOMAXPROCS(0) || h.rand == nil {
		t.Errorf("New(Config{}) = alg %q cost %d argon2 %+v sem %d, want bcrypt 12 %+v %d",
			h.alg, h.cost, h.argon2, cap(h.sem), wantArgon2, runtime.GOMAXPROCS(0))
	}
	if h, err := New(Config{MaxConcurrent: 3}); err != nil || cap(h.sem) != 3 {
		t.Errorf("MaxConcurrent 3: err %v", err)
	}

	ok := []Config{
		{BcryptCost: 10},
		{BcryptCost: MaxBcryptCost},
		{BcryptCost: bcrypt.MinCost, AllowLowCost: true},
		{Algorithm: Argon2id},
		{Algorithm: Argon2id, Argon2: Argon2Params{Memory: 7168, Iterations: 5}},
		{Algorithm: Argon2id, Argon2: Argon2Params{Memory: 47104, Iterations: 1}},
		{Algorithm: Argon2id, Argon2: tinyArgon2, AllowLowCost: true},
		// The bcrypt cost is not checked when argon2id is configured.
		{Algorithm: Argon2id, BcryptCost: 5},
	}
	for _, cfg := range ok {
		if _, err := New(cfg); err != nil {
			t.Errorf("New(%+v): %v", cfg, err)
		}
	}

	bad := []Config{
		{Algorithm: "scrypt"},
		{Algorithm: "BCRYPT"},
		{BcryptCost: 9},
		{BcryptCost: bcrypt.MinCost},
		{BcryptCost: 3, AllowLowCost: true},
		{BcryptCost: -1, AllowLowCost: true},
		{BcryptCost: MaxBcryptCost + 1},
		{BcryptCost: bcrypt.MaxCost},
		{MaxConcurrent: -1},
		{Algorithm: Argon2id, Argon2: tinyArgon2},
		{Algorithm: Argon2id, Argon2: Argon2Params{Memory: 7167, Iterations: 10}},
		{Algorithm: Argon2id, Argon2: Argon2Params{Memory: 19456, Iterations: 1}},
		{Algorithm: Argon2id, Argon2: Argon2Params{Memory: argon2MaxMemory + 1}},
		{Algorithm: Argon2id, Argon2: Argon2Params{Iterations: 33}},
		{Algorithm: Argon2id, Argon2: Argon2Params{Parallelism: 65}},
		{Algorithm: Argon2id, Argon2: Argon2Params{SaltLength: 7}},
		{Algorithm: Argon2id, Argon2: Argon2Params{KeyLength: 15}},
		{Algorithm: Argon2id, Argon2: Argon2Params{KeyLength: 65}},
		{Algorithm: Argon2id, Argon2: Argon2Params{Memory: 64, Parallelism: 9}, AllowLowCost: true},
	}
	for _, cfg := range bad {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v): err = %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

// TestDefaultCost checks that the zero Config really hashes at cost 12. It
// is the one test that pays the production cost, once.
func TestDefaultCost(t *testing.T) {
	t.Parallel()
	h, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	hash := mustHash(t, h, "correct horse battery staple")
	if cost, err := bcrypt.Cost([]byte(hash)); err != nil || cost != 12 {
		t.Errorf("bcrypt.Cost(%q) = %d, %v; want 12", hash, cost, err)
	}
}

func TestForTesting(t *testing.T) {
	h := ForTesting()
	hash := mustHash(t, h, "pw")
	if cost, err := bcrypt.Cost([]byte(hash)); err != nil || cost != bcrypt.MinCost {
		t.Errorf("bcrypt.Cost = %d, %v; want %d", cost, err, bcrypt.MinCost)
	}
	if !verify(t, h, "pw", hash) || h.NeedsRehash(hash) {
		t.Error("ForTesting hasher does not accept its own hash")
	}
}

func TestHashRejectsInvalidUTF8(t *testing.T) {
	for _, hc := range hashers(t) {
		if _, err := hc.h.Hash(context.Background(), "bad\xff"); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Hash(invalid UTF-8): err = %v, want ErrInvalid", hc.name, err)
		}
	}
}

func TestContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, hc := range hashers(t) {
		hash := mustHash(t, hc.h, "pw")
		if _, err := hc.h.Hash(ctx, "pw"); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Hash: err = %v, want context.Canceled", hc.name, err)
		}
		if ok, err := hc.h.Verify(ctx, "pw", hash); ok || !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Verify = %v, %v; want false, context.Canceled", hc.name, ok, err)
		}
	}
}

// blockingReader hands out salt bytes only when released, so a test can
// hold a hashing slot for as long as it wants.
type blockingReader struct {
	entered, release chan struct{}
}

func (r *blockingReader) Read(p []byte) (int, error) {
	r.entered <- struct{}{}
	<-r.release
	clear(p)
	return len(p), nil
}

// TestWaitRespectsContext fills the only hashing slot and checks that a
// second call gives up when its context ends. Without the semaphore the
// second call would block in the reader; without ctx-aware waiting it would
// wait for the slot: either way the test would hang instead of passing.
func TestWaitRespectsContext(t *testing.T) {
	r := &blockingReader{entered: make(chan struct{}), release: make(chan struct{})}
	h, err := New(Config{Algorithm: Argon2id, Argon2: tinyArgon2, AllowLowCost: true, MaxConcurrent: 1, Rand: r})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() {
		_, err := h.Hash(context.Background(), "first")
		first <- err
	}()
	<-r.entered // the first call holds the only slot

	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() {
		_, err := h.Verify(ctx, "pw", argon2RefP1)
		second <- err
	}()
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("waiting Verify: err = %v, want context.Canceled", err)
	}
	close(r.release)
	if err := <-first; err != nil {
		t.Errorf("first Hash: %v", err)
	}
}

// TestVerifyCostIndependentOfLength: every Verify against a bcrypt hash
// spends exactly one bcrypt comparison at the hash's cost, whatever the
// password's length and whatever the answer. A long password against a plain
// bcrypt hash once answered false with no work at all, so a login with a
// 73-byte password took no time on a known account and one hash on an
// unknown one (whose dummy hash is long-password format): a timing oracle
// for account existence.
func TestVerifyCostIndependentOfLength(t *testing.T) {
	h := ForTesting()
	plain := mustHash(t, h, strings.Repeat("p", 72))
	long := mustHash(t, h, strings.Repeat("p", 73))
	if !strings.HasPrefix(plain, "$2a$") || !strings.HasPrefix(long, "$authkit-bcrypt-sha256$") {
		t.Fatalf("fixtures: plain %q, long %q", plain, long)
	}
	var costs []int
	orig := bcryptCompare
	t.Cleanup(func() { bcryptCompare = orig })
	bcryptCompare = func(hash, pw []byte) error {
		c, err := bcrypt.Cost(hash)
		if err != nil {
			t.Errorf("compared against an unparsable hash %q", hash)
		}
		costs = append(costs, c)
		return orig(hash, pw)
	}
	for _, hash := range []string{plain, long} {
		for _, n := range []int{1, 8, 72, 73, 1024, 4096} {
			costs = costs[:0]
			pw := strings.Repeat("p", n)
			got, err := h.Verify(context.Background(), pw, hash)
			if err != nil {
				t.Fatalf("Verify(%d bytes, %.12s…): %v", n, hash, err)
			}
			want := (hash == plain && n == 72) || (hash == long && n == 73)
			if got != want {
				t.Errorf("Verify(%d bytes, %.12s…) = %v, want %v", n, hash, got, want)
			}
			if len(costs) != 1 || costs[0] != bcrypt.MinCost {
				t.Errorf("Verify(%d bytes, %.12s…) made bcrypt comparisons at costs %v, want exactly one at %d",
					n, hash, costs, bcrypt.MinCost)
			}
		}
	}
}

// TestDecoyHash: the decoy is a hash of the configured algorithm and cost
// or parameters, in the form Hash writes (same length, same parse, no
// rehash wanted), that matches no password, short or long, and that
// golang.org/x/crypto/bcrypt itself accepts as a hash of that cost; two
// decoys differ.
func TestDecoyHash(t *testing.T) {
	for _, h := range []*Standard{newLowBcrypt(t, 5), newTinyArgon2(t, tinyArgon2)} {
		t.Run(string(h.alg), func(t *testing.T) {
			decoy, err := h.DecoyHash()
			if err != nil {
				t.Fatal(err)
			}
			real, err := h.Hash(context.Background(), "correct horse battery")
			if err != nil {
				t.Fatal(err)
			}
			if len(decoy) != len(real) {
				t.Errorf("decoy %q is %d long, a real hash %q %d", decoy, len(decoy), real, len(real))
			}
			pd, err := parseHash(decoy)
			if err != nil {
				t.Fatalf("decoy %q: %v", decoy, err)
			}
			pr, _ := parseHash(real)
			if pd.kind != pr.kind || pd.cost != pr.cost || pd.argon2.params != pr.argon2.params {
				t.Errorf("decoy parses as %+v, a real hash as %+v", pd, pr)
			}
			if h.NeedsRehash(decoy) {
				t.Errorf("NeedsRehash(decoy %q) = true", decoy)
			}
			if h.alg == Bcrypt {
				if c, err := bcrypt.Cost([]byte(decoy)); err != nil || c != 5 {
					t.Errorf("bcrypt.Cost(decoy) = %d, %v; want 5", c, err)
				}
			}
			for _, pw := range []string{"", "correct horse battery", strings.Repeat("p", 100)} {
				if ok, err := h.Verify(context.Background(), pw, decoy); ok || err != nil {
					t.Errorf("Verify(%q, decoy) = %v, %v; want false, nil", pw, ok, err)
				}
			}
			if again, _ := h.DecoyHash(); again == decoy {
				t.Errorf("two decoys are equal: %q", decoy)
			}
		})
	}
}

// TestDecoyHashRandomFails: a failing random source is an error, not a
// decoy of zeroes.
func TestDecoyHashRandomFails(t *testing.T) {
	for _, cfg := range []Config{{BcryptCost: 4, AllowLowCost: true}, {Algorithm: Argon2id, Argon2: tinyArgon2, AllowLowCost: true}} {
		cfg.Rand = failingReader{}
		h, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if d, err := h.DecoyHash(); err == nil || d != "" {
			t.Errorf("%s: DecoyHash with a failing source = %q, %v; want an error", cfg.Algorithm, d, err)
		}
	}
}

// failingReader is a random source that always fails.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }
