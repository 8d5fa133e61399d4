package auth

import (
	"context"
	"errors"
	"testing"
	"time"
)

const goodPW = "correct horse battery staple"

// TestConfirmPassword: a stale session is refused with the 403 until the
// password is confirmed; a confirmation reissues the session cookie with a
// fresh time, reports until when it counts, and is audited; a wrong password
// changes nothing.
func TestConfirmPassword(t *testing.T) {
	f := newFlow(t, nil)
	ctx := context.Background()
	b, u := f.register("ada@example.com", goodPW)
	f.now = f.now.Add(DefaultReauthWindow)

	err := f.do(b, func(v *Visit) error { _, err := f.s.SetupTwoFactor(ctx, v); return err })
	var e *Error
	if !errors.As(err, &e) || e != ErrReauthenticationRequired || e.Status != 403 || e.Code != "reauthentication_required" ||
		e.Message != "Please confirm your password to continue" {
		t.Fatalf("stale setup: %v, want ErrReauthenticationRequired", err)
	}
	if got, _ := f.s.users.ByID(ctx, u.ID); got.PendingTOTPSecret != "" {
		t.Fatal("a refused setup stored a pending secret")
	}

	before := b.cookies[SecureSessionCookie]
	err = f.do(b, func(v *Visit) error {
		_, err := f.s.ConfirmPassword(ctx, v, ConfirmPasswordInput{Password: "wrong password!"})
		return err
	})
	if !errors.Is(err, ErrInvalidPassword) || b.cookies[SecureSessionCookie] != before {
		t.Fatalf("wrong password: %v, cookie changed %v", err, b.cookies[SecureSessionCookie] != before)
	}
	if _, ok := f.event(EventPasswordConfirmed); ok {
		t.Fatal("a wrong password was audited as a confirmation")
	}

	var res ConfirmPasswordResult
	err = f.do(b, func(v *Visit) (err error) {
		res, err = f.s.ConfirmPassword(ctx, v, ConfirmPasswordInput{Password: goodPW})
		return err
	})
	if err != nil || res.User == nil || res.User.ID != u.ID || !res.Until.Equal(f.now.Add(DefaultReauthWindow)) {
		t.Fatalf("ConfirmPassword = %+v, %v; want the user, until %v", res, err, f.now.Add(DefaultReauthWindow))
	}
	if b.cookies[SecureSessionCookie] == before {
		t.Fatal("ConfirmPassword did not reissue the session cookie")
	}
	if ev, ok := f.event(EventPasswordConfirmed); !ok || ev.UserID != u.ID || ev.IP != "192.0.2.7" {
		t.Errorf("audit: %+v, want %s for %s from 192.0.2.7", ev, EventPasswordConfirmed, u.ID)
	}
	f.now = res.Until.Add(-time.Millisecond)
	if err := f.do(b, func(v *Visit) error { _, err := f.s.RecentUser(ctx, v); return err }); err != nil {
		t.Fatalf("RecentUser 1ms before Until: %v", err)
	}
	f.now = res.Until
	if err := f.do(b, func(v *Visit) error { _, err := f.s.RecentUser(ctx, v); return err }); err != ErrReauthenticationRequired {
		t.Fatalf("RecentUser at Until: %v, want ErrReauthenticationRequired", err)
	}
	if err := f.do(newBrowser(), func(v *Visit) error { _, err := f.s.RecentUser(ctx, v); return err }); err != ErrNotAuthenticated {
		t.Fatalf("RecentUser without a session: %v, want ErrNotAuthenticated", err)
	}
}

// TestReauthWindowConfig: the default is 15 minutes, a set window is
// used as given, and a negative one switches the check off (Until zero).
func TestReauthWindowConfig(t *testing.T) {
	if got := mustNewWith(t, func(*Config) {}).cfg.ReauthWindow; got != 15*time.Minute {
		t.Errorf("default ReauthWindow = %v, want 15m", got)
	}
	f := newFlow(t, func(c *Config) { c.ReauthWindow, c.SessionIdleTimeout = -1, -1 }) // a day passes between requests
	b, _ := f.register("ada@example.com", goodPW)
	f.now = f.now.Add(23 * time.Hour)
	ctx := context.Background()
	if err := f.do(b, func(v *Visit) error { _, err := f.s.SetupTwoFactor(ctx, v); return err }); err != nil {
		t.Fatalf("setup with re-authentication off: %v", err)
	}
	var res ConfirmPasswordResult
	if err := f.do(b, func(v *Visit) (err error) {
		res, err = f.s.ConfirmPassword(ctx, v, ConfirmPasswordInput{Password: goodPW})
		return err
	}); err != nil || !res.Until.IsZero() {
		t.Fatalf("ConfirmPassword with re-authentication off: %+v, %v; want Until zero", res, err)
	}
	f = newFlow(t, func(c *Config) { c.ReauthWindow = time.Minute })
	b, _ = f.register("ada@example.com", goodPW)
	f.now = f.now.Add(time.Minute)
	if err := f.do(b, func(v *Visit) error { _, err := f.s.RegenerateRecoveryCodes(ctx, v); return err }); err != ErrReauthenticationRequired {
		t.Fatalf("regenerate a minute later with a 1-minute window: %v, want ErrReauthenticationRequired", err)
	}
}
