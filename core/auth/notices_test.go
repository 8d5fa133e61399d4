package auth

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

func (f *flow) login(b *browser, email, pw string) {
	f.t.Helper()
	if err := f.do(b, func(v *Visit) error {
		_, err := f.s.Login(context.Background(), v, LoginInput{Email: email, Password: pw})
		return err
	}); err != nil {
		f.t.Fatalf("Login: %v", err)
	}
}

// TestNewDeviceNotice: registration marks its browser without a notice;
// a login from a browser without the device cookie mails one (address,
// cleaned User-Agent), audits it and marks the browser; a known browser
// mails nothing.
func TestNewDeviceNotice(t *testing.T) {
	f := newFlow(t, nil)
	home, u := f.register("ada@example.com", goodPW)
	if home.cookies[DeviceCookie] == "" {
		t.Fatal("registration set no device cookie")
	}
	f.login(home, "ada@example.com", goodPW)
	if n := len(f.mails(mail.KindNewSignIn)); n != 0 {
		t.Fatalf("%d new-device notices for the registering browser", n)
	}

	away := newBrowser()
	away.headers["User-Agent"] = "Evil\r\nBcc: x@example.com\tAgent " + strings.Repeat("é", 300)
	f.login(away, "ada@example.com", goodPW)
	ms := f.mails(mail.KindNewSignIn)
	if len(ms) != 1 || ms[0].To != "ada@example.com" {
		t.Fatalf("new-device notices %v, want one to ada@example.com", ms)
	}
	wantUA := "Evil Bcc: x@example.com Agent " + strings.Repeat("é", maxUserAgent-len("Evil Bcc: x@example.com Agent ")) + "…"
	if !strings.Contains(ms[0].Text, "Address: 192.0.2.7\n") || !strings.Contains(ms[0].Text, "Browser: "+wantUA+"\n") {
		t.Errorf("notice does not state the address and the cleaned browser:\n%s", ms[0].Text)
	}
	if ev, ok := f.event(EventNewDeviceSignIn); !ok || ev.UserID != u.ID || ev.Detail != wantUA {
		t.Errorf("audit: %+v, want %s for %s", ev, EventNewDeviceSignIn, u.ID)
	}
	if away.cookies[DeviceCookie] == "" {
		t.Fatal("the new browser got no device cookie")
	}
	f.login(away, "ada@example.com", goodPW)
	if n := len(f.mails(mail.KindNewSignIn)); n != 1 {
		t.Errorf("%d notices after a known browser signed in again, want 1", n)
	}
}

// TestNewDeviceNoticeOff: with FeatureNewDeviceNotice disabled no device
// cookie is set and no notice is mailed.
func TestNewDeviceNoticeOff(t *testing.T) {
	f := newFlow(t, func(c *Config) { c.Disable = []Feature{FeatureNewDeviceNotice} })
	home, _ := f.register("ada@example.com", goodPW)
	b := newBrowser()
	f.login(b, "ada@example.com", goodPW)
	if home.cookies[DeviceCookie] != "" || b.cookies[DeviceCookie] != "" {
		t.Error("a device cookie was set with the notice off")
	}
	if n := len(f.mails(mail.KindNewSignIn)); n != 0 {
		t.Errorf("%d new-device notices with the notice off", n)
	}
	if _, ok := f.event(EventNewDeviceSignIn); ok {
		t.Error("a new-device sign-in was audited with the notice off")
	}
}

func TestCleanUserAgent(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"Mozilla/5.0 (X11)":         "Mozilla/5.0 (X11)",
		"  a\x00b\x7f c\u0085d\r\n": "a b c d",
		"bad \xff utf8":             "bad utf8",
		strings.Repeat("x", 201):    strings.Repeat("x", 200) + "…",
		strings.Repeat("x", 200):    strings.Repeat("x", 200),
	} {
		if got := cleanUserAgent(in); got != want {
			t.Errorf("cleanUserAgent(%q) = %q, want %q", in, got, want)
		}
	}
}

// existingUser stores an account as the app had it before authkit: a
// password hash, no sign-in under authkit, no browser with its device
// cookie.
func (f *flow) existingUser(email string) *user.User {
	f.t.Helper()
	ctx := context.Background()
	hash, err := f.s.hasher.Hash(ctx, goodPW)
	if err != nil {
		f.t.Fatal(err)
	}
	u, err := f.s.cfg.Users.(user.Registration).Create(ctx, &user.User{Email: email, Name: "Ada", PasswordHash: hash, EmailVerifiedAt: f.now})
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

// TestFirstSignInIsNoNewDevice: the first sign-in of an account from
// before authkit mails no "New sign-in" (the rollout would mail every
// user), audits it as the first and marks the browser; a second browser
// afterwards is a new device and is mailed.
func TestFirstSignInIsNoNewDevice(t *testing.T) {
	f := newFlow(t, nil)
	u := f.existingUser("ada@example.com")
	first := newBrowser()
	f.login(first, "ada@example.com", goodPW)
	if n := len(f.mails(mail.KindNewSignIn)); n != 0 {
		t.Fatalf("%d new-device notices for the first sign-in under authkit, want 0", n)
	}
	if ev, ok := f.event(EventNewDeviceSignIn); !ok || ev.UserID != u.ID || ev.Detail != "first sign-in" {
		t.Errorf("audit: %+v, want %s for %s with detail %q", ev, EventNewDeviceSignIn, u.ID, "first sign-in")
	}
	if first.cookies[DeviceCookie] == "" {
		t.Fatal("the first sign-in set no device cookie")
	}
	f.login(first, "ada@example.com", goodPW)
	f.login(newBrowser(), "ada@example.com", goodPW)
	if ms := f.mails(mail.KindNewSignIn); len(ms) != 1 || ms[0].To != "ada@example.com" {
		t.Fatalf("notices after a second browser signed in: %v, want one to ada@example.com", ms)
	}
}

// withoutSignIns is a store without user.SignIns.
type withoutSignIns struct{ user.Store }

// TestFirstSignInWithoutSignIns: a store without user.SignIns cannot tell
// the first sign-in, so it is mailed as any other.
func TestFirstSignInWithoutSignIns(t *testing.T) {
	f := newFlow(t, func(c *Config) { c.Users = withoutSignIns{store.NewMemory(store.MemoryConfig{})} })
	f.existingUser("ada@example.com")
	f.login(newBrowser(), "ada@example.com", goodPW)
	if n := len(f.mails(mail.KindNewSignIn)); n != 1 {
		t.Fatalf("%d new-device notices without user.SignIns, want 1", n)
	}
}

// TestNewSignInNoticeLimit: a client without a cookie jar that signs in 74
// times in two minutes causes one "New sign-in" mail, which says that
// further ones within the hour get none of their own; every sign-in is
// audited; the first sign-in after the hour is mailed again.
func TestNewSignInNoticeLimit(t *testing.T) {
	f := newFlow(t, func(c *Config) { c.Limits.LoginIP, c.Limits.LoginEmail = Off, Off })
	_, u := f.register("ada@example.com", goodPW)
	for i := range 74 {
		f.now = flowStart.Add(time.Duration(i) * 2 * time.Minute / 74)
		f.login(newBrowser(), "ada@example.com", goodPW)
	}
	ms := f.mails(mail.KindNewSignIn)
	if len(ms) != 1 {
		t.Fatalf("74 sign-ins without a cookie jar in two minutes mailed %d notices, want 1", len(ms))
	}
	for _, want := range []string{
		"someone else knows your password: reset it now and turn on two-factor authentication.\n",
		"Further sign-ins from new browsers within 1 hour get no mail of their own; your security settings list where your account is signed in.\n",
	} {
		if !strings.Contains(ms[0].Text, want) {
			t.Errorf("notice lacks %q:\n%s", want, ms[0].Text)
		}
	}
	audited := 0
	for _, e := range f.events {
		if e.Type == EventNewDeviceSignIn && e.UserID == u.ID {
			audited++
		}
	}
	if audited != 74 {
		t.Errorf("%d new-device sign-ins audited, want 74", audited)
	}
	f.now = flowStart.Add(time.Hour)
	f.login(newBrowser(), "ada@example.com", goodPW)
	if n := len(f.mails(mail.KindNewSignIn)); n != 2 {
		t.Errorf("%d notices after the hour, want 2", n)
	}
}

// TestNewSignInNoticeLimitOff: with Limits.NewSignInNotice off every
// sign-in from a new browser is mailed, and no mail speaks of a window.
func TestNewSignInNoticeLimitOff(t *testing.T) {
	f := newFlow(t, func(c *Config) { c.Limits.NewSignInNotice = Off })
	f.register("ada@example.com", goodPW)
	for range 3 {
		f.login(newBrowser(), "ada@example.com", goodPW)
	}
	ms := f.mails(mail.KindNewSignIn)
	if len(ms) != 3 {
		t.Fatalf("%d notices with the limit off, want 3", len(ms))
	}
	if strings.Contains(ms[0].Text, "Further sign-ins") {
		t.Errorf("a notice without a limit names a window:\n%s", ms[0].Text)
	}
}

// TestNewSignInNoticeTwoFactor: the notice of an account with 2FA on does
// not tell its owner to turn 2FA on.
func TestNewSignInNoticeTwoFactor(t *testing.T) {
	f, b, _ := pendingFlow(t, nil)
	if err := f.finish(b, func(context.Context, *user.User) error { return nil }); err != nil {
		t.Fatal(err)
	}
	ms := f.mails(mail.KindNewSignIn)
	if len(ms) != 1 {
		t.Fatalf("%d notices, want 1", len(ms))
	}
	want := "someone else knows your password and got past your two-factor authentication: reset your password now, " +
		"end the sessions you do not know in your security settings and replace your recovery codes.\n"
	if !strings.Contains(ms[0].Text, want) || strings.Contains(ms[0].Text, "turn on two-factor") {
		t.Errorf("notice of a 2FA account, want %q and no advice to turn 2FA on:\n%s", want, ms[0].Text)
	}
}
