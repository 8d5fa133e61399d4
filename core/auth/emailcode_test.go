package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

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
		for _, rt := range s.Routes() {
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
