package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// TestNewEmailCode: six decimal digits, zero-padded, every value reachable,
// the leading digit spread evenly, and a failing reader an error.
func TestNewEmailCode(t *testing.T) {
	if c, err := newEmailCode(bytes.NewReader(make([]byte, 64))); err != nil || c != "000000" {
		t.Fatalf("all-zero randomness: %q, %v; want \"000000\"", c, err)
	}
	const n = 20000
	var first [10]int
	for range n {
		c, err := newEmailCode(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if len(c) != 6 || strings.Trim(c, "0123456789") != "" {
			t.Fatalf("code %q is not 6 decimal digits", c)
		}
		first[c[0]-'0']++
	}
	for d, got := range first {
		if got < n/10*8/10 || got > n/10*12/10 { // 2000 ± 20%: about 14 standard deviations
			t.Errorf("leading digit %d in %d of %d codes, want about %d", d, got, n, n/10)
		}
	}
	if _, err := newEmailCode(iotest.ErrReader(errors.New("no entropy"))); err == nil {
		t.Fatal("a failing reader gave a code")
	}
}

// memoryWithoutCodes is every part of user.Store but not user.EmailCodes.
type memoryWithoutCodes struct{ user.Store }

// TestEmailCodeNeedsStorePart: New refuses email codes on a store without
// user.EmailCodes, naming the part and the way out, and accepts the store
// with them off.
func TestEmailCodeNeedsStorePart(t *testing.T) {
	users := memoryWithoutCodes{store.NewMemory(store.MemoryConfig{})}
	_, err := newWith(t, func(c *Config) { c.Users = users; c.EmailCode.Enabled = true })
	want := "auth: Config.Users (auth.memoryWithoutCodes) does not implement user.EmailCodes, which email codes (Config.EmailCode) needs: implement it, or leave Config.EmailCode.Enabled false"
	if err == nil || err.Error() != want {
		t.Fatalf("New: %v, want %q", err, want)
	}
	if _, err := newWith(t, func(c *Config) { c.Users = users }); err != nil {
		t.Fatalf("New with email codes off: %v", err)
	}
}

// TestEmailCodeOff: with email codes off (the default) the methods fail
// with ErrFeatureDisabled before they read anything, and the routes are
// not listed and HasEmailCodes says no; with them on, all say yes.
func TestEmailCodeOff(t *testing.T) {
	s := mustNewWith(t, func(c *Config) {})
	v := s.Visit(jsonReq(`{}`))
	if err := s.SendTwoFactorEmailCode(context.Background(), v); !errors.Is(err, ErrFeatureDisabled) {
		t.Errorf("SendTwoFactorEmailCode: %v, want ErrFeatureDisabled", err)
	}
	if _, err := s.VerifyTwoFactorEmailCode(context.Background(), v, TwoFactorInput{Code: "123456"}); !errors.Is(err, ErrFeatureDisabled) {
		t.Errorf("VerifyTwoFactorEmailCode: %v, want ErrFeatureDisabled", err)
	}
	count := func(s *Service) (n int) {
		for _, rt := range s.Modules().Routes() {
			if strings.HasPrefix(rt.Pattern, "/api/2fa/email-code") {
				n++
			}
		}
		return n
	}
	if s.HasEmailCodes() {
		t.Error("HasEmailCodes with the feature off")
	}
	if n := count(s); n != 0 {
		t.Errorf("%d email-code routes listed with the feature off, want 0", n)
	}
	on := mustNewWith(t, func(c *Config) { c.Users = store.NewMemory(store.MemoryConfig{}); c.EmailCode.Enabled = true })
	if !on.HasEmailCodes() {
		t.Error("HasEmailCodes false with the feature on")
	}
	if n := count(on); n != 2 {
		t.Errorf("%d email-code routes listed with the feature on, want 2", n)
	}
	if on.cfg.EmailCode.Lifetime != DefaultEmailCodeLifetime {
		t.Errorf("default lifetime %v, want %v", on.cfg.EmailCode.Lifetime, DefaultEmailCodeLifetime)
	}
}

// TestPendingData: the 2fa_pending payload round-trips with its flags and
// nonce, reads one issued before the nonce (a login pending across an
// upgrade), and refuses any other length and unknown flags.
func TestPendingData(t *testing.T) {
	nonce := bytes.Repeat([]byte{7}, pendingNonceBytes)
	for _, tc := range []struct {
		data    []byte
		flags   byte
		version int64
		ok      bool
	}{
		{pendingData(pendingRemember, 300, nonce), pendingRemember, 300, true},
		{pendingData(0, -1, nonce), 0, -1, true},
		{pendingData(pendingRemember, 5, nil), pendingRemember, 5, true},
		{pendingData(pendingOwnSession|pendingRemember, 7, nonce), pendingOwnSession | pendingRemember, 7, true},
		{pendingData(pendingRemember, 5, nonce[:5]), 0, 0, false},
		{append(pendingData(pendingRemember, 5, nonce), 0), 0, 0, false},
		{[]byte{4, 0}, 0, 0, false}, // an unknown flag
		{[]byte{1}, 0, 0, false},
		{[]byte{1, 0x80}, 0, 0, false}, // a varint cut short
	} {
		flags, version, ok := parsePendingData(tc.data)
		if ok != tc.ok || ok && (flags != tc.flags || version != tc.version) {
			t.Errorf("parsePendingData(%x) = %b, %d, %v; want %b, %d, %v", tc.data, flags, version, ok, tc.flags, tc.version, tc.ok)
		}
	}
}

// TestPendingLoginsDiffer: two password steps of one account in the same
// millisecond get different 2fa_pending cookies, so an email code mailed
// for one of them cannot finish the other (SECURITY.md deviation 14).
func TestPendingLoginsDiffer(t *testing.T) {
	f := newFlow(t, func(c *Config) { c.EmailCode.Enabled = true })
	ctx := context.Background()
	hash, err := f.s.hasher.Hash(ctx, goodPW)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.cfg.Users.(user.Registration).Create(ctx, &user.User{Email: "ada@example.com", Name: "Ada", PasswordHash: hash,
		TwoFactorEnabled: true, EmailVerifiedAt: f.now}); err != nil {
		t.Fatal(err)
	}
	a, b := newBrowser(), newBrowser()
	for _, br := range []*browser{a, b} {
		if err := f.do(br, func(v *Visit) error {
			res, err := f.s.Login(ctx, v, LoginInput{Email: "ada@example.com", Password: goodPW})
			if err == nil && !res.RequiresTwoFactor {
				t.Fatal("no second step")
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if a.cookies[PendingCookie] == "" || a.cookies[PendingCookie] == b.cookies[PendingCookie] {
		t.Fatalf("pending cookies of two logins in one millisecond: %q and %q, want two different ones", a.cookies[PendingCookie], b.cookies[PendingCookie])
	}
	if err := f.do(a, func(v *Visit) error { return f.s.SendTwoFactorEmailCode(ctx, v) }); err != nil {
		t.Fatal(err)
	}
	ms := f.mails(mail.KindTwoFactorEmailCode)
	if len(ms) != 1 {
		t.Fatalf("%d email-code mails, want 1", len(ms))
	}
	code := regexp.MustCompile(`(?m)^Your code: ([0-9]{6})$`).FindStringSubmatch(ms[0].Text)
	if code == nil {
		t.Fatalf("no code in %q", ms[0].Text)
	}
	verify := func(br *browser) error {
		return f.do(br, func(v *Visit) error {
			_, err := f.s.VerifyTwoFactorEmailCode(ctx, v, TwoFactorInput{Code: code[1]})
			return err
		})
	}
	if err := verify(b); !errors.Is(err, ErrInvalidTwoFactorCode) {
		t.Fatalf("the code of login a at login b: %v, want ErrInvalidTwoFactorCode", err)
	}
	if err := verify(a); err != nil {
		t.Fatalf("the code at its own login: %v", err)
	}
	if f.signedInAs(a) == "" || f.signedInAs(b) != "" {
		t.Fatal("want login a signed in and b not")
	}
}
