package auth

import (
	"context"
	"strings"
	"testing"

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
