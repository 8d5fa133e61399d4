package token

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"
)

const (
	secretA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	secretB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535_897_932, time.UTC)

func newVerifier(t testing.TB, clk *clock, purpose string, expiry time.Duration, secrets ...string) *Verifier {
	t.Helper()
	v, err := NewVerifier(Config{Secrets: secrets, Purpose: purpose, Expiry: expiry, Now: clk.Now})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

func mustCreate(t testing.TB, v *Verifier, id string, data []byte) string {
	t.Helper()
	tok, err := v.CreateWith(id, data)
	if err != nil {
		t.Fatalf("CreateWith(%q, %x): %v", id, data, err)
	}
	return tok
}

func TestRoundTrip(t *testing.T) {
	clk := &clock{t0}
	v := newVerifier(t, clk, "session", time.Hour, secretA)
	tests := []struct {
		name string
		id   string
		data []byte
	}{
		{"id only", "u1", nil},
		{"id and data", "3q2-7w_AAAAAAAAAAAAAAA", []byte{0, 1, 2, 0xff}},
		{"max id", strings.Repeat("x", MaxUserIDLen), nil},
		{"max data", "u", bytes.Repeat([]byte{7}, MaxDataLen)},
		{"max both", strings.Repeat("é", MaxUserIDLen/2), bytes.Repeat([]byte{9}, MaxDataLen)},
		{"binary id", "\x00\xff\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := mustCreate(t, v, tt.id, tt.data)
			if len(tok) > MaxLen {
				t.Fatalf("token length %d > MaxLen %d", len(tok), MaxLen)
			}
			c, err := v.Verify(tok)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := t0.Truncate(time.Millisecond)
			if c.UserID != tt.id || !c.IssuedAt.Equal(want) || c.IssuedAt.Location() != time.UTC {
				t.Errorf("claims = %q %v, want %q %v UTC", c.UserID, c.IssuedAt, tt.id, want)
			}
			if c.IssuedAtMs() != t0.UnixMilli() {
				t.Errorf("IssuedAtMs = %d, want %d", c.IssuedAtMs(), t0.UnixMilli())
			}
			if !bytes.Equal(c.Data, tt.data) || (tt.data == nil) != (c.Data == nil) {
				t.Errorf("Data = %x, want %x", c.Data, tt.data)
			}
		})
	}
}

func TestLengths(t *testing.T) {
	v := newVerifier(t, &clock{t0}, "session", time.Hour, secretA)
	shortest := mustCreate(t, v, "u", nil)
	longest := mustCreate(t, v, strings.Repeat("x", MaxUserIDLen), make([]byte, MaxDataLen))
	if len(shortest) != 59 || len(longest) != MaxLen || MaxLen != 483 {
		t.Errorf("lengths = %d, %d (MaxLen %d), want 59, 483", len(shortest), len(longest), MaxLen)
	}
	// A session-sized token: 22-character id, 2 bytes of data.
	if n := len(mustCreate(t, v, strings.Repeat("i", 22), []byte{0, 0})); n != 90 {
		t.Errorf("session-sized token is %d characters, want 90", n)
	}
}

func TestWireLayout(t *testing.T) {
	v := newVerifier(t, &clock{time.UnixMilli(0x0102030405)}, "session", time.Hour, secretA)
	tok := mustCreate(t, v, "ab", []byte{0xee})
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	wantHead := []byte{1, 0, 0, 0, 1, 2, 3, 4, 5, 2, 'a', 'b', 1, 0xee}
	if !bytes.HasPrefix(b, wantHead) || len(b) != len(wantHead)+32 {
		t.Errorf("payload = %x, want %x followed by a 32-byte MAC", b, wantHead)
	}
}

func TestCreateInvalidInput(t *testing.T) {
	v := newVerifier(t, &clock{t0}, "session", time.Hour, secretA)
	tests := []struct {
		name string
		id   string
		data []byte
	}{
		{"empty id", "", nil},
		{"long id", strings.Repeat("x", MaxUserIDLen+1), nil},
		{"long data", "u", make([]byte, MaxDataLen+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := v.CreateWith(tt.id, tt.data)
			if !errors.Is(err, ErrInvalidInput) || tok != "" {
				t.Errorf("CreateWith = %q, %v; want ErrInvalidInput", tok, err)
			}
		})
	}
}

func TestExpiryBoundary(t *testing.T) {
	clk := &clock{t0}
	v := newVerifier(t, clk, "session", 5*time.Minute, secretA)
	tok := mustCreate(t, v, "u1", nil)
	iat := t0.Truncate(time.Millisecond)
	tests := []struct {
		now  time.Time
		want error
	}{
		{iat, nil},
		{iat.Add(5*time.Minute - time.Millisecond), nil},
		{iat.Add(5*time.Minute - time.Nanosecond), nil},
		{iat.Add(5 * time.Minute), ErrExpired},
		{iat.Add(5*time.Minute + time.Millisecond), ErrExpired},
		{iat.Add(24 * time.Hour), ErrExpired},
	}
	for _, tt := range tests {
		clk.t = tt.now
		if _, err := v.Verify(tok); err != tt.want {
			t.Errorf("at iat+%v: err = %v, want %v", tt.now.Sub(iat), err, tt.want)
		}
	}
}

func TestFutureSkew(t *testing.T) {
	clk := &clock{t0}
	skewed, err := NewVerifier(Config{Secrets: []string{secretA}, Purpose: "session", Expiry: time.Hour, MaxSkew: 10 * time.Second, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defaulted := newVerifier(t, clk, "session", time.Hour, secretA)
	tok := mustCreate(t, skewed, "u1", nil) // issued at t0 (ms)
	iat := t0.Truncate(time.Millisecond)
	tests := []struct {
		name string
		v    *Verifier
		now  time.Time
		want error
	}{
		{"10s skew, exactly at limit", skewed, iat.Add(-10 * time.Second), nil},
		{"10s skew, 1ms beyond", skewed, iat.Add(-10*time.Second - time.Millisecond), ErrNotYetValid},
		{"default skew, 1 minute", defaulted, iat.Add(-time.Minute), nil},
		{"default skew, beyond", defaulted, iat.Add(-time.Minute - time.Millisecond), ErrNotYetValid},
	}
	for _, tt := range tests {
		clk.t = tt.now
		if _, err := tt.v.Verify(tok); err != tt.want {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestSignatureCheckedBeforeTime(t *testing.T) {
	clk := &clock{t0}
	v := newVerifier(t, clk, "session", time.Hour, secretA)
	other := newVerifier(t, clk, "session", time.Hour, secretB)
	forged := mustCreate(t, other, "u1", nil)
	for _, now := range []time.Time{t0, t0.Add(48 * time.Hour), t0.Add(-48 * time.Hour)} {
		clk.t = now
		if _, err := v.Verify(forged); err != ErrSignature {
			t.Errorf("at %v: err = %v, want ErrSignature", now, err)
		}
	}
}

func TestRotation(t *testing.T) {
	clk := &clock{t0}
	old := newVerifier(t, clk, "session", time.Hour, secretA)
	rotated := newVerifier(t, clk, "session", time.Hour, secretB, secretA)
	onlyNew := newVerifier(t, clk, "session", time.Hour, secretB)

	oldTok := mustCreate(t, old, "u1", nil)
	if c, err := rotated.Verify(oldTok); err != nil || c.UserID != "u1" {
		t.Errorf("old token under [new, old]: %+v, %v", c, err)
	}
	if _, err := onlyNew.Verify(oldTok); err != ErrSignature {
		t.Errorf("old token under [new]: err = %v, want ErrSignature", err)
	}

	newTok := mustCreate(t, rotated, "u1", nil)
	if _, err := onlyNew.Verify(newTok); err != nil {
		t.Errorf("new token under [new]: %v (not signed with the first secret?)", err)
	}
	if _, err := old.Verify(newTok); err != ErrSignature {
		t.Errorf("new token under [old]: err = %v, want ErrSignature", err)
	}
}

func TestWrongSecret(t *testing.T) {
	clk := &clock{t0}
	a := newVerifier(t, clk, "session", time.Hour, secretA)
	// Differs from secretA only in the last byte.
	b := newVerifier(t, clk, "session", time.Hour, secretA[:len(secretA)-1]+"b")
	if _, err := b.Verify(mustCreate(t, a, "u1", nil)); err != ErrSignature {
		t.Errorf("err = %v, want ErrSignature", err)
	}
}

var purposes = []string{"session", "2fa_pending", "verify_email", "reset_password"}

func TestPurposeSeparation(t *testing.T) {
	clk := &clock{t0}
	vs := make(map[string]*Verifier)
	for _, p := range purposes {
		vs[p] = newVerifier(t, clk, p, time.Hour, secretA)
	}
	for _, made := range purposes {
		tok := mustCreate(t, vs[made], "u1", []byte("d"))
		for _, checked := range purposes {
			_, err := vs[checked].Verify(tok)
			if made == checked && err != nil {
				t.Errorf("%s token under %s: %v", made, checked, err)
			}
			if made != checked && err != ErrSignature {
				t.Errorf("%s token under %s: err = %v, want ErrSignature", made, checked, err)
			}
		}
	}
}

func TestEveryMutationFails(t *testing.T) {
	clk := &clock{t0}
	v := newVerifier(t, clk, "verify_email", time.Hour, secretA)
	tok := mustCreate(t, v, "user-1234", []byte{1, 2, 3})
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=. \n\r\x00\xff"
	for i := 0; i < len(tok); i++ {
		for j := 0; j < len(alphabet); j++ {
			if alphabet[j] == tok[i] {
				continue
			}
			m := tok[:i] + string(alphabet[j]) + tok[i+1:]
			if c, err := v.Verify(m); err == nil {
				t.Fatalf("mutation at %d to %q verified: %+v", i, alphabet[j], c)
			}
		}
	}
}

func TestTruncationsAndExtensions(t *testing.T) {
	v := newVerifier(t, &clock{t0}, "session", time.Hour, secretA)
	tok := mustCreate(t, v, "user-1234", []byte{1, 2, 3})
	for n := 0; n < len(tok); n++ {
		if _, err := v.Verify(tok[:n]); err == nil {
			t.Fatalf("prefix of length %d verified", n)
		}
		if _, err := v.Verify(tok[n+1:]); err == nil {
			t.Fatalf("suffix from %d verified", n+1)
		}
	}
	for _, ext := range []string{"A", "AA", "AAA", "AAAA", "=", "==", "\n", " "} {
		if _, err := v.Verify(tok + ext); err == nil {
			t.Errorf("token + %q verified", ext)
		}
	}
}

func TestMalformed(t *testing.T) {
	clk := &clock{t0}
	v := newVerifier(t, clk, "session", time.Hour, secretA)
	valid := mustCreate(t, v, "u1", nil)
	raw, _ := base64.RawURLEncoding.DecodeString(valid)
	enc := base64.RawURLEncoding.EncodeToString
	// 47 bytes need padding in the padded encoding ("u1" gives 45, which needs none).
	raw47, _ := base64.RawURLEncoding.DecodeString(mustCreate(t, v, "abcd", nil))
	padded := base64.URLEncoding.EncodeToString(raw47)
	if !strings.HasSuffix(padded, "=") {
		t.Fatalf("padded = %q has no padding", padded)
	}
	with := func(f func(b []byte) []byte) string {
		return enc(f(append([]byte(nil), raw...)))
	}
	tests := []struct {
		name string
		tok  string
	}{
		{"empty", ""},
		{"short", "abc"},
		{"huge", strings.Repeat("A", 1<<20)},
		{"one over MaxLen", strings.Repeat("A", MaxLen+1)},
		{"padded", padded},
		{"std alphabet +", valid[:10] + "+" + valid[11:]},
		{"std alphabet /", valid[:10] + "/" + valid[11:]},
		{"line break", valid[:20] + "\n" + valid[20:]},
		{"carriage return", valid[:20] + "\r" + valid[20:]},
		{"space", valid[:20] + " " + valid[20:]},
		{"non-ascii", valid[:20] + "é" + valid[22:]},
		{"impossible length", valid + "A"},
		{"all zero", enc(make([]byte, 60))},
		{"version 0", with(func(b []byte) []byte { b[0] = 0; return b })},
		{"version 2", with(func(b []byte) []byte { b[0] = 2; return b })},
		{"id length 0", with(func(b []byte) []byte { b[9] = 0; return b })},
		{"id length too long", with(func(b []byte) []byte { b[9] = 200; return b })},
		{"data length wrong", with(func(b []byte) []byte { b[12] = 1; return b })},
		{"data length over cap", enc(append(append([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'u', MaxDataLen + 1}, make([]byte, MaxDataLen+1)...), make([]byte, 32)...))},
		{"trailing byte", with(func(b []byte) []byte { return append(b, 0) })},
		{"short mac", with(func(b []byte) []byte { return b[:len(b)-1] })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := v.Verify(tt.tok)
			if err != ErrMalformed {
				t.Errorf("Verify = %+v, %v; want ErrMalformed", c, err)
			}
		})
	}
}

func TestNonZeroPaddingBits(t *testing.T) {
	v := newVerifier(t, &clock{t0}, "session", time.Hour, secretA)
	// 47 bytes encode to 63 characters; the last one carries 2 unused bits.
	tok := mustCreate(t, v, "abcd", nil)
	if len(tok)%4 == 0 {
		t.Fatalf("test needs a token with padding bits, got length %d", len(tok))
	}
	last := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", tok[len(tok)-1])
	alt := tok[:len(tok)-1] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last|1])
	if alt == tok {
		t.Fatal("test token has a set low bit already")
	}
	if _, err := v.Verify(alt); err != ErrMalformed {
		t.Errorf("non-canonical spelling: err = %v, want ErrMalformed", err)
	}
}

func TestBind(t *testing.T) {
	clk := &clock{t0}
	v := newVerifier(t, clk, "reset_password", time.Hour, secretA)
	b := v.Bind("a@example.com", "$2a$10$hash")
	if len(b) != BindingLen {
		t.Fatalf("len(Bind) = %d, want %d", len(b), BindingLen)
	}
	if !bytes.Equal(b, v.Bind("a@example.com", "$2a$10$hash")) {
		t.Error("Bind is not deterministic")
	}
	c, err := v.Verify(mustCreate(t, v, "u1", b))
	if err != nil {
		t.Fatal(err)
	}
	if !v.BindingHolds(c, "a@example.com", "$2a$10$hash") {
		t.Error("BindingHolds = false for the bound values")
	}
	differ := [][]string{
		{"b@example.com", "$2a$10$hash"},
		{"a@example.com", "$2a$10$other"},
		{"$2a$10$hash", "a@example.com"},
		{"a@example.com"},
		{"a@example.com", "$2a$10$hash", ""},
		{"a@example.com$2a$10$hash"},
		{},
	}
	for _, vals := range differ {
		if v.BindingHolds(c, vals...) {
			t.Errorf("BindingHolds(%q) = true", vals)
		}
	}
	if v.BindingHolds(Claims{UserID: "u1"}, "a@example.com", "$2a$10$hash") {
		t.Error("BindingHolds with no data = true")
	}
}

func TestBindAmbiguity(t *testing.T) {
	v := newVerifier(t, &clock{t0}, "verify_email", time.Hour, secretA)
	pairs := [][2][]string{
		{{"ab", "c"}, {"a", "bc"}},
		{{"", "a"}, {"a", ""}},
		{{"a"}, {"a", ""}},
		{{}, {""}},
		{{"\x01a"}, {"", "a"}},
	}
	for _, p := range pairs {
		if bytes.Equal(v.Bind(p[0]...), v.Bind(p[1]...)) {
			t.Errorf("Bind(%q) == Bind(%q)", p[0], p[1])
		}
	}
}

func TestBindIsKeyedPerPurposeAndSecret(t *testing.T) {
	clk := &clock{t0}
	a := newVerifier(t, clk, "verify_email", time.Hour, secretA)
	b := newVerifier(t, clk, "verify_email", time.Hour, secretB)
	p := newVerifier(t, clk, "reset_password", time.Hour, secretA)
	x := a.Bind("a@example.com")
	if bytes.Equal(x, b.Bind("a@example.com")) || bytes.Equal(x, p.Bind("a@example.com")) {
		t.Error("Bind does not depend on the secret and the purpose")
	}
}

func TestBindingHoldsAfterRotation(t *testing.T) {
	clk := &clock{t0}
	old := newVerifier(t, clk, "verify_email", time.Hour, secretA)
	rotated := newVerifier(t, clk, "verify_email", time.Hour, secretB, secretA)
	c, err := rotated.Verify(mustCreate(t, old, "u1", old.Bind("a@example.com")))
	if err != nil {
		t.Fatal(err)
	}
	if !rotated.BindingHolds(c, "a@example.com") {
		t.Error("binding made under the old secret does not hold after rotation")
	}
	if rotated.BindingHolds(c, "b@example.com") {
		t.Error("binding holds for another value")
	}
	if !bytes.Equal(rotated.Bind("x"), newVerifier(t, clk, "verify_email", time.Hour, secretB).Bind("x")) {
		t.Error("Bind does not use the first secret")
	}
}

func TestNewVerifierConfig(t *testing.T) {
	ok := Config{Secrets: []string{secretA}, Purpose: "session", Expiry: time.Hour}
	tests := []struct {
		name   string
		modify func(c *Config)
		valid  bool
	}{
		{"valid", func(c *Config) {}, true},
		{"exactly 32 bytes", func(c *Config) { c.Secrets = []string{strings.Repeat("s", 32)} }, true},
		{"31 bytes", func(c *Config) { c.Secrets = []string{strings.Repeat("s", 31)} }, false},
		{"second secret short", func(c *Config) { c.Secrets = []string{secretA, "short"} }, false},
		{"empty secret", func(c *Config) { c.Secrets = []string{""} }, false},
		{"no secrets", func(c *Config) { c.Secrets = nil }, false},
		{"no purpose", func(c *Config) { c.Purpose = "" }, false},
		{"purpose with space", func(c *Config) { c.Purpose = "a b" }, false},
		{"purpose with control", func(c *Config) { c.Purpose = "a\x00" }, false},
		{"purpose too long", func(c *Config) { c.Purpose = strings.Repeat("p", MaxPurposeLen+1) }, false},
		{"purpose at max", func(c *Config) { c.Purpose = strings.Repeat("p", MaxPurposeLen) }, true},
		{"zero expiry", func(c *Config) { c.Expiry = 0 }, false},
		{"negative expiry", func(c *Config) { c.Expiry = -time.Second }, false},
		{"negative skew", func(c *Config) { c.MaxSkew = -time.Second }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			cfg.Secrets = append([]string(nil), ok.Secrets...)
			tt.modify(&cfg)
			before, skew := append([]string(nil), cfg.Secrets...), cfg.MaxSkew
			v, err := NewVerifier(cfg)
			if tt.valid && (err != nil || v == nil) {
				t.Errorf("NewVerifier: %v", err)
			}
			if !tt.valid && (!errors.Is(err, ErrInvalidConfig) || v != nil) {
				t.Errorf("NewVerifier = %v, %v; want ErrInvalidConfig", v, err)
			}
			if cfg.MaxSkew != skew || cfg.Now != nil || strings.Join(before, ",") != strings.Join(cfg.Secrets, ",") {
				t.Error("NewVerifier changed the config")
			}
		})
	}
}

func TestAccessors(t *testing.T) {
	v := newVerifier(t, &clock{t0}, "2fa_pending", 5*time.Minute, secretA)
	if v.Purpose() != "2fa_pending" || v.Expiry() != 5*time.Minute {
		t.Errorf("Purpose, Expiry = %q, %v", v.Purpose(), v.Expiry())
	}
}

func TestConcurrentUse(t *testing.T) {
	v := newVerifier(t, &clock{t0}, "session", time.Hour, secretB, secretA)
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				tok, err := v.Create("u1")
				if err == nil {
					_, err = v.Verify(tok)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func BenchmarkCreate(b *testing.B) {
	v := newVerifier(b, &clock{t0}, "session", time.Hour, secretA)
	data := []byte{0, 2}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.CreateWith("3q2-7w_AAAAAAAAAAAAAAA", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) { benchmarkVerify(b, secretA) }

func BenchmarkVerifyTwoSecrets(b *testing.B) { benchmarkVerify(b, secretB, secretA) }

// benchmarkVerify measures Verify on a Verifier over secrets, of a token
// it made.
func benchmarkVerify(b *testing.B, secrets ...string) {
	v := newVerifier(b, &clock{t0}, "session", time.Hour, secrets...)
	tok := mustCreate(b, v, "3q2-7w_AAAAAAAAAAAAAAA", []byte{0, 2})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(tok); err != nil {
			b.Fatal(err)
		}
	}
}

// TestKnownAnswer rebuilds a token and a binding from the layout in doc.go
// with the standard library alone, so the key derivation, the MAC input and
// the encoding are pinned (each purpose mechanism on its own would already
// pass TestPurposeSeparation).
func TestKnownAnswer(t *testing.T) {
	const purpose = "verify_email"
	iat := time.UnixMilli(1_700_000_000_123)
	v := newVerifier(t, &clock{iat}, purpose, time.Hour, secretA)
	data := []byte{0xca, 0xfe}
	got := mustCreate(t, v, "user-7", data)

	macKey, err := hkdf.Key(sha256.New, []byte(secretA), nil, "authkit/token/v1/mac/"+purpose, 32)
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte{1}
	payload = binary.BigEndian.AppendUint64(payload, uint64(iat.UnixMilli()))
	payload = append(payload, 6)
	payload = append(payload, "user-7"...)
	payload = append(payload, 2, 0xca, 0xfe)
	mac := hmac.New(sha256.New, macKey)
	mac.Write(append([]byte{byte(len(purpose))}, purpose...))
	mac.Write(payload)
	want := base64.RawURLEncoding.EncodeToString(mac.Sum(payload))
	if got != want {
		t.Errorf("token = %s\nwant    %s", got, want)
	}

	bindKey, err := hkdf.Key(sha256.New, []byte(secretA), nil, "authkit/token/v1/bind/"+purpose, 32)
	if err != nil {
		t.Fatal(err)
	}
	bm := hmac.New(sha256.New, bindKey)
	bm.Write([]byte{3})
	bm.Write([]byte("a@b"))
	bm.Write([]byte{0})
	if b := v.Bind("a@b", ""); !bytes.Equal(b, bm.Sum(nil)[:16]) {
		t.Errorf("Bind = %x, want %x", b, bm.Sum(nil)[:16])
	}
}
