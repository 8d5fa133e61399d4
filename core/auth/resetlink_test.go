package auth

import (
	"context"
	"testing"
)

// TestCheckResetLink: a link that can set a password checks out and the
// check changes nothing; a forged token, a used link and a link after any
// later password change are told apart as ResetPassword tells them.
func TestCheckResetLink(t *testing.T) {
	f := newFlow(t, nil)
	ctx := context.Background()
	check := func(tok string) error {
		return f.do(newBrowser(), func(v *Visit) error { return f.s.CheckResetLink(ctx, v, tok) })
	}
	_, u := f.register("ada@example.com", goodPW)
	tok, err := f.s.reset.CreateWith(u.ID, f.s.reset.Bind(u.Email, u.PasswordHash))
	if err != nil {
		t.Fatal(err)
	}
	if err := check(tok); err != nil {
		t.Fatalf("a fresh link: %v, want nil", err)
	}
	if err := check(tok); err != nil {
		t.Fatalf("a fresh link checked twice: %v, want nil (the check changes nothing)", err)
	}
	if got, _ := f.s.users.ByID(ctx, u.ID); got.PasswordHash != u.PasswordHash || !got.PasswordChangedAt.IsZero() {
		t.Fatal("the check changed the account")
	}
	if err := check(tok + "x"); err != ErrResetLinkInvalid {
		t.Fatalf("a forged token: %v, want ErrResetLinkInvalid", err)
	}
	if err := check(""); err != ErrResetLinkInvalid {
		t.Fatalf("no token: %v, want ErrResetLinkInvalid", err)
	}
	if err := f.do(newBrowser(), func(v *Visit) error {
		return f.s.ResetPassword(ctx, v, ResetPasswordInput{Token: tok, Password: "an uncommon new passphrase", ConfirmPassword: "an uncommon new passphrase"})
	}); err != nil {
		t.Fatal(err)
	}
	if err := check(tok); err != ErrResetLinkUsed {
		t.Fatalf("a used link: %v, want ErrResetLinkUsed", err)
	}

	off := newFlow(t, func(c *Config) { c.Disable = []Feature{FeaturePasswordReset} })
	if err := off.do(newBrowser(), func(v *Visit) error { return off.s.CheckResetLink(ctx, v, tok) }); err != ErrFeatureDisabled {
		t.Fatalf("with password reset off: %v, want ErrFeatureDisabled", err)
	}
}
