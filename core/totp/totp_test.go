package totp

import (
	"bytes"
	"encoding/base32"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// rfcSecret is the RFC 6238 Appendix B SHA-1 seed "12345678901234567890" in
// base32.
const rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

// mustNew is New that fails the test on error.
func mustNew(t testing.TB, cfg Config) *TOTP {
	t.Helper()
	tp, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return tp
}

// atStep returns a time inside step n of a 30-second period.
func atStep(n int64) time.Time {
	return time.Unix(n*30+7, 0).UTC()
}

// mustCode is Code that fails the test on error.
func mustCode(t testing.TB, tp *TOTP, secret string, at time.Time) string {
	t.Helper()
	c, err := tp.Code(secret, at)
	if err != nil {
		t.Fatalf("Code(%v): %v", at, err)
	}
	return c
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"digits 7", Config{Digits: 7}, "totp: invalid config: Digits is 7, want 6 or 8"},
		{"digits negative", Config{Digits: -6}, "totp: invalid config: Digits is -6, want 6 or 8"},
		{"digits 10", Config{Digits: 10}, "totp: invalid config: Digits is 10, want 6 or 8"},
		{"period below 1s", Config{Period: 500 * time.Millisecond}, "totp: invalid config: Period is 500ms, want whole seconds, at least 1s"},
		{"period fractional", Config{Period: 1500 * time.Millisecond}, "totp: invalid config: Period is 1.5s, want whole seconds, at least 1s"},
		{"period negative", Config{Period: -30 * time.Second}, "totp: invalid config: Period is -30s, want whole seconds, at least 1s"},
		{"window too large", Config{Window: MaxWindow + 1}, "totp: invalid config: Window is 11, want at most 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, err := New(tt.cfg)
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("New() error = %v, want ErrInvalidConfig", err)
			}
			if err.Error() != tt.want {
				t.Errorf("New() error = %q, want %q", err, tt.want)
			}
			if tp != nil {
				t.Errorf("New() = %v, want nil", tp)
			}
		})
	}
}

func TestNewDefaultsAndAcceptedValues(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		wantDigits int
		wantPeriod int64
		wantWindow int64
	}{
		{"zero config", Config{}, 6, 30, 1},
		{"eight digits", Config{Digits: 8}, 8, 30, 1},
		{"one-second period", Config{Period: time.Second}, 6, 1, 1},
		{"one-minute period", Config{Period: time.Minute}, 6, 60, 1},
		{"negative window means 0", Config{Window: -1}, 6, 30, 0},
		{"very negative window means 0", Config{Window: -100}, 6, 30, 0},
		{"max window", Config{Window: MaxWindow}, 6, 30, MaxWindow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := mustNew(t, tt.cfg)
			if int(tp.digits) != tt.wantDigits || tp.period != tt.wantPeriod || tp.window != tt.wantWindow {
				t.Errorf("New() = digits %d, period %d, window %d; want %d, %d, %d",
					tp.digits, tp.period, tp.window, tt.wantDigits, tt.wantPeriod, tt.wantWindow)
			}
		})
	}
}

func TestNewKeepsInjectedNowAndRand(t *testing.T) {
	cfg := Config{
		Now:  func() time.Time { return atStep(100) },
		Rand: bytes.NewReader(make([]byte, SecretBytes)),
	}
	tp := mustNew(t, cfg)
	if got := tp.Step(tp.now()); got != 100 {
		t.Errorf("Step(Now()) = %d, want 100 from the injected clock", got)
	}
	if got, _ := tp.GenerateSecret(); got != strings.Repeat("A", 32) {
		t.Errorf("GenerateSecret() = %q, want 32 A's from the injected reader", got)
	}
}

// RFC 6238 Appendix B, SHA-1 rows.
var rfcVectors = []struct {
	unix int64
	code string // 8 digits
}{
	{59, "94287082"},
	{1111111109, "07081804"},
	{1111111111, "14050471"},
	{1234567890, "89005924"},
	{2000000000, "69279037"},
	{20000000000, "65353130"},
}

func TestRFC6238Vectors(t *testing.T) {
	for _, digits := range []int{8, 6} {
		tp := mustNew(t, Config{Digits: digits})
		for _, v := range rfcVectors {
			at := time.Unix(v.unix, 0)
			want := v.code[8-digits:]
			if got := mustCode(t, tp, rfcSecret, at); got != want {
				t.Errorf("digits %d: Code(%d) = %s, want %s", digits, v.unix, got, want)
			}
			m, err := tp.Match(want, rfcSecret, at, 0)
			if err != nil {
				t.Errorf("digits %d: Match(%s, %d) error = %v", digits, want, v.unix, err)
				continue
			}
			if step := v.unix / 30; m != (Match{Step: step, Current: step}) {
				t.Errorf("digits %d: Match(%s, %d) = %+v, want step %d", digits, want, v.unix, m, step)
			}
		}
	}
}

func TestStep(t *testing.T) {
	tests := []struct {
		period time.Duration
		unix   int64
		want   int64
	}{
		{30 * time.Second, 0, 0},
		{30 * time.Second, 29, 0},
		{30 * time.Second, 30, 1},
		{30 * time.Second, 59, 1},
		{30 * time.Second, 1111111109, 37037036},
		{30 * time.Second, -1, -1},
		{30 * time.Second, -30, -1},
		{30 * time.Second, -31, -2},
		{60 * time.Second, 119, 1},
		{60 * time.Second, 120, 2},
		{time.Second, 1234567890, 1234567890},
	}
	for _, tt := range tests {
		tp := mustNew(t, Config{Period: tt.period})
		if got := tp.Step(time.Unix(tt.unix, 0)); got != tt.want {
			t.Errorf("period %v: Step(%d) = %d, want %d", tt.period, tt.unix, got, tt.want)
		}
	}
}

func TestCodeBeforeEpoch(t *testing.T) {
	tp := mustNew(t, Config{})
	if _, err := tp.Code(rfcSecret, time.Unix(-1, 0)); err == nil {
		t.Fatal("Code(before epoch) error = nil, want an error")
	}
	// Step 0 has a code (the epoch itself), but Match never accepts it: 0 is
	// the "none accepted" value of a stored last step.
	c := mustCode(t, tp, rfcSecret, time.Unix(0, 0))
	tp0 := mustNew(t, Config{Window: -1})
	if _, err := tp0.Match(c, rfcSecret, time.Unix(0, 0), 0); !errors.Is(err, ErrInvalidCode) {
		t.Errorf("Match(step 0 code) error = %v, want ErrInvalidCode", err)
	}
}

func TestMatchWindow(t *testing.T) {
	const now = 56_000_000 // a step in 2023
	tests := []struct {
		name   string
		window int
		accept []int64 // offsets from now that must match; -3..+3 are tried
	}{
		{"window 1 (default)", 0, []int64{-1, 0, 1}},
		{"window 1", 1, []int64{-1, 0, 1}},
		{"window 0", -1, []int64{0}},
		{"window 2", 2, []int64{-2, -1, 0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := mustNew(t, Config{Window: tt.window})
			accepted := map[int64]bool{}
			for _, off := range tt.accept {
				accepted[off] = true
			}
			for off := int64(-3); off <= 3; off++ {
				code := mustCode(t, tp, rfcSecret, atStep(now+off))
				m, err := tp.Match(code, rfcSecret, atStep(now), 0)
				if !accepted[off] {
					if !errors.Is(err, ErrInvalidCode) {
						t.Errorf("offset %+d: Match() = %+v, %v; want ErrInvalidCode", off, m, err)
					}
					continue
				}
				if want := (Match{Step: now + off, Current: now}); err != nil || m != want {
					t.Errorf("offset %+d: Match() = %+v, %v; want %+v", off, m, err, want)
				}
			}
		})
	}
}

func TestMatchReplay(t *testing.T) {
	const n = 56_000_000
	// Steps a and a+1 share the 6-digit code 617002 for rfcSecret: a real
	// collision, found by search, used to test which matching step wins.
	const a = 56188870
	tests := []struct {
		name     string
		lastStep int64
		codeStep int64
		now      int64
		want     Match
		wantErr  error
	}{
		{name: "first use, current code", lastStep: 0, codeStep: n, now: n, want: Match{n, n}},
		{name: "first use, previous code", lastStep: 0, codeStep: n - 1, now: n, want: Match{n - 1, n}},
		{name: "first use, next code", lastStep: 0, codeStep: n + 1, now: n, want: Match{n + 1, n}},
		{name: "negative last step means none", lastStep: -5, codeStep: n, now: n, want: Match{n, n}},
		{name: "last step long ago", lastStep: n - 100, codeStep: n, now: n, want: Match{n, n}},
		{name: "previous step accepted, current code", lastStep: n - 1, codeStep: n, now: n, want: Match{n, n}},
		{name: "previous step accepted, next code", lastStep: n - 1, codeStep: n + 1, now: n, want: Match{n + 1, n}},
		{name: "same code in the same step", lastStep: n, codeStep: n, now: n, wantErr: ErrCodeUsed},
		{name: "older code in the same step", lastStep: n, codeStep: n - 1, now: n, wantErr: ErrCodeUsed},
		{name: "spec rule: next code in the same step", lastStep: n, codeStep: n + 1, now: n, wantErr: ErrCodeUsed},
		{name: "current code one step later", lastStep: n, codeStep: n + 1, now: n + 1, want: Match{n + 1, n + 1}},
		{name: "used code one step later", lastStep: n, codeStep: n, now: n + 1, wantErr: ErrCodeUsed},
		// A next-step code accepted in step n stores max(n+1, n) = n+1.
		{name: "hole: next code replayed in the next step", lastStep: n + 1, codeStep: n + 1, now: n + 1, wantErr: ErrCodeUsed},
		{name: "hole: next code replayed two steps later", lastStep: n + 1, codeStep: n + 1, now: n + 2, wantErr: ErrCodeUsed},
		{name: "wrong code is invalid, not used", lastStep: n, codeStep: n + 5, now: n, wantErr: ErrInvalidCode},
		{name: "wrong code with no last step", lastStep: 0, codeStep: n - 2, now: n, wantErr: ErrInvalidCode},
		{name: "clock behind last step", lastStep: n + 3, codeStep: n, now: n, wantErr: ErrCodeUsed},
		{name: "collision: newest wins", lastStep: 0, codeStep: a, now: a, want: Match{a + 1, a}},
		{name: "collision: newest wins, current is newest", lastStep: 0, codeStep: a, now: a + 1, want: Match{a + 1, a + 1}},
		{name: "collision: older step used, newest wins", lastStep: a, codeStep: a, now: a + 1, want: Match{a + 1, a + 1}},
		{name: "collision: both steps used", lastStep: a + 1, codeStep: a, now: a + 2, wantErr: ErrCodeUsed},
	}
	tp := mustNew(t, Config{})
	if c1, c2 := mustCode(t, tp, rfcSecret, atStep(a)), mustCode(t, tp, rfcSecret, atStep(a+1)); c1 != c2 {
		t.Fatalf("steps %d and %d: codes %s and %s, want a collision", a, a+1, c1, c2)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := mustCode(t, tp, rfcSecret, atStep(tt.codeStep))
			m, err := tp.Match(code, rfcSecret, atStep(tt.now), tt.lastStep)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || m != (Match{}) {
					t.Fatalf("Match() = %+v, %v; want %v", m, err, tt.wantErr)
				}
				return
			}
			if err != nil || m != tt.want {
				t.Fatalf("Match() = %+v, %v; want %+v", m, err, tt.want)
			}
		})
	}
}

// TestMatchReplaySequence follows a login that uses the next step's code and
// an attacker who replays it, storing LastStep as the docs require.
func TestMatchReplaySequence(t *testing.T) {
	const n = 56_000_000
	tp := mustNew(t, Config{})
	code := mustCode(t, tp, rfcSecret, atStep(n+1))

	m, err := tp.Match(code, rfcSecret, atStep(n), 0)
	if err != nil {
		t.Fatalf("first use: Match() error = %v", err)
	}
	last := m.LastStep()
	if last != n+1 {
		t.Fatalf("LastStep() = %d, want %d", last, n+1)
	}
	for _, now := range []int64{n, n + 1, n + 2} {
		if _, err := tp.Match(code, rfcSecret, atStep(now), last); !errors.Is(err, ErrCodeUsed) {
			t.Errorf("replay at step %d: Match() error = %v, want ErrCodeUsed", now, err)
		}
	}
	// The next fresh code still works.
	fresh := mustCode(t, tp, rfcSecret, atStep(n+2))
	if m, err := tp.Match(fresh, rfcSecret, atStep(n+2), last); err != nil || m != (Match{n + 2, n + 2}) {
		t.Errorf("fresh code: Match() = %+v, %v; want step %d", m, err, n+2)
	}
}

func TestMatchLastStep(t *testing.T) {
	tests := []struct {
		m    Match
		want int64
	}{
		{Match{Step: 10, Current: 10}, 10},
		{Match{Step: 11, Current: 10}, 11},
		{Match{Step: 9, Current: 10}, 10},
	}
	for _, tt := range tests {
		if got := tt.m.LastStep(); got != tt.want {
			t.Errorf("%+v.LastStep() = %d, want %d", tt.m, got, tt.want)
		}
	}
}

// fullwidth maps ASCII digits to FULLWIDTH DIGIT characters (U+FF10..).
func fullwidth(s string) string {
	return strings.Map(func(r rune) rune { return r - '0' + '\uff10' }, s)
}

func TestMatchMalformedCode(t *testing.T) {
	const n = 56_000_000
	tp := mustNew(t, Config{})
	tp8 := mustNew(t, Config{Digits: 8})
	code := mustCode(t, tp, rfcSecret, atStep(n))
	code8 := mustCode(t, tp8, rfcSecret, atStep(n))
	if _, err := tp.Match(code, rfcSecret, atStep(n), 0); err != nil {
		t.Fatalf("well-formed code: Match() error = %v", err)
	}
	tests := []struct {
		name string
		tp   *TOTP
		code string
	}{
		{"empty", tp, ""},
		{"leading space", tp, " " + code},
		{"trailing space", tp, code + " "},
		{"inner space", tp, code[:3] + " " + code[3:]},
		{"trailing newline", tp, code + "\n"},
		{"leading tab", tp, "\t" + code},
		{"trailing NUL", tp, code + "\x00"},
		{"too short", tp, code[:5]},
		{"too long", tp, code + "0"},
		{"8-digit code for 6 digits", tp, code8},
		{"6-digit code for 8 digits", tp8, code8[2:]},
		{"letter", tp, code[:5] + "a"},
		{"sign", tp, "+" + code[1:]},
		{"fullwidth digits", tp, fullwidth(code)},
		{"arabic-indic digits", tp, "\u0661\u0662\u0663\u0664\u0665\u0666"},
		{"hyphenated", tp, code[:3] + "-" + code[3:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := tt.tp.Match(tt.code, rfcSecret, atStep(n), 0)
			if !errors.Is(err, ErrInvalidCode) || m != (Match{}) {
				t.Errorf("Match(%q) = %+v, %v; want ErrInvalidCode", tt.code, m, err)
			}
		})
	}
}

func TestSecretForms(t *testing.T) {
	const n = 56_000_000
	tp := mustNew(t, Config{})
	want := mustCode(t, tp, rfcSecret, atStep(n))
	// 16 bytes need padding: 26 characters, 6 '='.
	raw16 := []byte("0123456789abcdef")
	pad16 := base32.StdEncoding.EncodeToString(raw16)
	want16 := mustCode(t, tp, strings.TrimRight(pad16, "="), atStep(n))
	if pad16 != "GAYTEMZUGU3DOOBZMFRGGZDFMY======" {
		t.Fatalf("padded 16-byte secret = %q", pad16)
	}

	valid := []struct {
		name, secret, want string
	}{
		{"lowercase", strings.ToLower(rfcSecret), want},
		{"mixed case", "gezdGNBVgy3tqojqGEZDGNBVGY3TQOJQ", want},
		{"padded", pad16, want16},
		{"padded lowercase", strings.ToLower(pad16), want16},
		{"two characters", "GE", ""},
		{"two characters padded", "GE======", ""},
	}
	for _, tt := range valid {
		got, err := tp.Code(tt.secret, atStep(n))
		if err != nil || (tt.want != "" && got != tt.want) {
			t.Errorf("%s: Code(%q) = %q, %v; want %q", tt.name, tt.secret, got, err, tt.want)
		}
		if _, err := tp.Match(got, tt.secret, atStep(n), 0); err != nil {
			t.Errorf("%s: Match(Code(%q)) error = %v", tt.name, tt.secret, err)
		}
	}

	invalid := []struct{ name, secret string }{
		{"empty", ""},
		{"padding only", "========"},
		{"one character", "G"},
		{"three characters", "GEZ"},
		{"six characters", "GEZDGN"},
		{"short padding", "GAYTEMZUGU3DOOBZMFRGGZDFMY=="},
		{"excess padding", rfcSecret + "========"},
		{"padding in the middle", "GEZD=GNBVGY3TQOJQ"},
		{"digit 1", "GEZDGNBVGY3TQOJ1"},
		{"digit 0", "GEZDGNBVGY3TQOJ0"},
		{"digit 8", "GEZDGNBVGY3TQOJ8"},
		{"leading space", " " + rfcSecret},
		{"trailing newline", rfcSecret + "\n"},
		{"grouped with spaces", "GEZD GNBV GY3T QOJQ"},
		{"hex", "3132333435363738393031323334353637383930"},
		{"base64", "MTIzNDU2Nzg5MDEyMzQ1Njc4OTA"},
		{"long s uppercases to S", "GEZDGNBVGY3TQOJ\u017f"},
		{"fullwidth letters", "\uff27\uff25"},
		{"invalid UTF-8", "GE\xff\xfe"},
	}
	code := mustCode(t, tp, rfcSecret, atStep(n))
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tp.Code(tt.secret, atStep(n))
			if !errors.Is(err, ErrInvalidSecret) || c != "" {
				t.Errorf("Code(%q) = %q, %v; want ErrInvalidSecret", tt.secret, c, err)
			}
			if err != nil && len(tt.secret) > 3 && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("Code(%q) error %q quotes the secret", tt.secret, err)
			}
			m, err := tp.Match(code, tt.secret, atStep(n), 0)
			if !errors.Is(err, ErrInvalidSecret) || m != (Match{}) {
				t.Errorf("Match(%q) = %+v, %v; want ErrInvalidSecret", tt.secret, m, err)
			}
			if vt := mustNew(t, Config{Now: func() time.Time { return atStep(n) }}); vt.Verify(code, tt.secret) {
				t.Errorf("Verify(%q) = true, want false", tt.secret)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	const n = 56_000_000
	tp := mustNew(t, Config{Now: func() time.Time { return atStep(n) }})
	tests := []struct {
		name   string
		code   string
		secret string
		want   bool
	}{
		{"current code", mustCode(t, tp, rfcSecret, atStep(n)), rfcSecret, true},
		{"previous code", mustCode(t, tp, rfcSecret, atStep(n-1)), rfcSecret, true},
		{"next code", mustCode(t, tp, rfcSecret, atStep(n+1)), rfcSecret, true},
		{"code two steps old", mustCode(t, tp, rfcSecret, atStep(n-2)), rfcSecret, false},
		{"another secret's code", mustCode(t, tp, "JBSWY3DPEHPK3PXP", atStep(n)), rfcSecret, false},
		{"malformed code", "12345", rfcSecret, false},
		{"malformed secret", mustCode(t, tp, rfcSecret, atStep(n)), "not base32!", false},
	}
	for _, tt := range tests {
		if got := tp.Verify(tt.code, tt.secret); got != tt.want {
			t.Errorf("%s: Verify(%q) = %v, want %v", tt.name, tt.code, got, tt.want)
		}
	}
	// Verify has no replay protection: the same code verifies again.
	if c := tests[0].code; !tp.Verify(c, rfcSecret) {
		t.Errorf("Verify(%q) a second time = false, want true", c)
	}
}

func TestGenerateSecret(t *testing.T) {
	seq := make([]byte, 64)
	for i := range seq {
		seq[i] = byte(i)
	}
	tp := mustNew(t, Config{Rand: bytes.NewReader(seq)})
	got, err := tp.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	if want := "AAAQEAYEAUDAOCAJBIFQYDIOB4IBCEQT"; got != want { // bytes 0..19
		t.Errorf("GenerateSecret() = %q, want %q", got, want)
	}
	got2, err := tp.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	if want := base32.StdEncoding.EncodeToString(seq[20:40]); got2 != want {
		t.Errorf("second GenerateSecret() = %q, want %q (bytes 20..39)", got2, want)
	}

	// The default reader: 32 characters of the uppercase base32 alphabet,
	// decoding to 20 bytes, different each time.
	def := mustNew(t, Config{})
	seen := map[string]bool{}
	for range 4 {
		s, err := def.GenerateSecret()
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 32 || strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
			t.Errorf("GenerateSecret() = %q, want 32 characters of A-Z2-7", s)
		}
		if b, err := b32NoPadding.DecodeString(s); err != nil || len(b) != SecretBytes {
			t.Errorf("GenerateSecret() = %q decodes to %d bytes, %v", s, len(b), err)
		}
		if seen[s] {
			t.Errorf("GenerateSecret() repeated %q", s)
		}
		seen[s] = true
	}
}

func TestGenerateSecretReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		r    io.Reader
		want error
	}{
		{"reader fails", iotest.ErrReader(boom), boom},
		{"reader runs dry", bytes.NewReader(make([]byte, SecretBytes-1)), io.ErrUnexpectedEOF},
		{"reader empty", bytes.NewReader(nil), io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := mustNew(t, Config{Rand: tt.r})
			s, err := tp.GenerateSecret()
			if !errors.Is(err, tt.want) || s != "" {
				t.Errorf("GenerateSecret() = %q, %v; want %v", s, err, tt.want)
			}
		})
	}
	// A reader that hands out one byte at a time is enough.
	tp := mustNew(t, Config{Rand: iotest.OneByteReader(bytes.NewReader(make([]byte, SecretBytes)))})
	if s, err := tp.GenerateSecret(); err != nil || s != strings.Repeat("A", 32) {
		t.Errorf("GenerateSecret(one byte at a time) = %q, %v", s, err)
	}
}

// FuzzMatch checks that Match never panics, fails only with its sentinels,
// and accepts only the code of a step in the window above the last step.
func FuzzMatch(f *testing.F) {
	f.Add("287082", rfcSecret, int64(59), int64(0))
	f.Add("94287082", rfcSecret, int64(59), int64(1))
	f.Add(" 12345", "gezdgnbv", int64(-1), int64(-1))
	f.Add("\uff11\uff12\uff13\uff14\uff15\uff16", "GE======", int64(1<<62), int64(1<<62))
	f.Add("000000", "", int64(-1<<62), int64(-1<<63))
	tp := mustNew(f, Config{})
	f.Fuzz(func(t *testing.T, code, secret string, unix, lastStep int64) {
		at := time.Unix(unix, 0)
		m, err := tp.Match(code, secret, at, lastStep)
		switch {
		case err == nil:
		case errors.Is(err, ErrInvalidCode), errors.Is(err, ErrCodeUsed), errors.Is(err, ErrInvalidSecret):
			if m != (Match{}) {
				t.Fatalf("Match() = %+v with error %v", m, err)
			}
			return
		default:
			t.Fatalf("Match() error = %v, want one of the sentinels", err)
		}
		cur := tp.Step(at)
		if m.Current != cur || m.Step < 1 || m.Step < cur-1 || m.Step > cur+1 || m.Step <= lastStep {
			t.Fatalf("Match(%q, at step %d, last %d) = %+v", code, cur, lastStep, m)
		}
		if lastStep > 0 && m.Current <= lastStep {
			t.Fatalf("Match(last %d) = %+v, accepted at or below the last step", lastStep, m)
		}
		canon, err := canonicalSecret(secret)
		if err != nil {
			t.Fatalf("Match() accepted secret %q: canonicalSecret error = %v", secret, err)
		}
		if want, err := tp.code(canon, m.Step); err != nil || want != code {
			t.Fatalf("Match() = step %d, but that step's code is %q, %v; not %q", m.Step, want, err, code)
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	tp := mustNew(b, Config{Now: func() time.Time { return atStep(56_000_000) }})
	b.ReportAllocs()
	for b.Loop() {
		if tp.Verify("000000", rfcSecret) { // wrong: all 3 steps computed
			b.Fatal("Verify() = true")
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	const n = 56_000_000
	tp := mustNew(b, Config{})
	code := mustCode(b, tp, rfcSecret, atStep(n))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tp.Match(code, rfcSecret, atStep(n), n-1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGenerateSecret(b *testing.B) {
	tp := mustNew(b, Config{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tp.GenerateSecret(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNextAccepted: the code NextAccepted gives is accepted at the time it
// gives, and not a moment before (a replay), after a login in the current
// step, after one with the next step's code, and with none yet.
func TestNextAccepted(t *testing.T) {
	tp, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := tp.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_020, 0).UTC() // 10 s into a 30 s step
	cur := tp.Step(now)
	for _, tt := range []struct {
		name     string
		lastStep int64
		wait     time.Duration
	}{
		{"no step accepted yet", 0, 0},
		{"the last login was a step ago", cur - 1, 0},
		{"the last login was in this step", cur, 20 * time.Second},
		{"the last login used the next step's code", cur + 1, 50 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, at, err := tp.NextAccepted(secret, tt.lastStep, now)
			if err != nil {
				t.Fatal(err)
			}
			if got := at.Sub(now); got != tt.wait {
				t.Fatalf("at is %v after now, want %v", got, tt.wait)
			}
			m, err := tp.Match(code, secret, at, tt.lastStep)
			if err != nil {
				t.Fatalf("Match at the time given: %v", err)
			}
			if m.LastStep() <= tt.lastStep {
				t.Errorf("LastStep %d, want above %d", m.LastStep(), tt.lastStep)
			}
			if tt.wait > 0 {
				if _, err := tp.Match(code, secret, at.Add(-time.Second), tt.lastStep); !errors.Is(err, ErrCodeUsed) {
					t.Errorf("Match a second before: %v, want ErrCodeUsed", err)
				}
			}
		})
	}
}
