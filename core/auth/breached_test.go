package auth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/password"
)

// downChecker is a password.Checker that cannot tell.
type downChecker struct{}

func (downChecker) Check(context.Context, string) error {
	return errors.New("range API: connection refused")
}

const commonPW = "password1234"

// TestBreachedPasswordRefused: registration, reset and change refuse a
// password the checker knows, with 400 password_breached, and store
// nothing.
func TestBreachedPasswordRefused(t *testing.T) {
	list := password.NewList([]string{commonPW})
	f := newFlow(t, func(c *Config) { c.PasswordChecker = list })
	ctx := context.Background()
	err := f.do(newBrowser(), func(v *Visit) error {
		_, err := f.s.Register(ctx, v, RegisterInput{Email: "bob@example.com", Password: "PASSWORD1234", Name: "Bob"})
		return err
	})
	var e *Error
	if !errors.As(err, &e) || e != ErrPasswordBreached || e.Status != 400 || e.Code != "password_breached" ||
		e.Message != "This password has appeared in a data breach or is too common. Choose a different password." {
		t.Fatalf("Register with a common password: %v, want ErrPasswordBreached", err)
	}
	if _, err := f.s.users.ByEmail(ctx, "bob@example.com"); err == nil {
		t.Fatal("a refused registration stored the user")
	}
	if n := len(f.mails("verify_email")); n != 0 {
		t.Fatalf("a refused registration mailed %d links", n)
	}

	b, u := f.register("ada@example.com", goodPW)
	err = f.do(b, func(v *Visit) error {
		return f.s.ChangePassword(ctx, v, ChangePasswordInput{CurrentPassword: goodPW, NewPassword: commonPW})
	})
	if err != ErrPasswordBreached {
		t.Fatalf("ChangePassword to a common password: %v, want ErrPasswordBreached", err)
	}
	tok, err := f.s.reset.CreateWith(u.ID, f.s.reset.Bind(u.Email, u.PasswordHash))
	if err != nil {
		t.Fatal(err)
	}
	err = f.do(newBrowser(), func(v *Visit) error {
		return f.s.ResetPassword(ctx, v, ResetPasswordInput{Token: tok, Password: commonPW, ConfirmPassword: commonPW})
	})
	if err != ErrPasswordBreached {
		t.Fatalf("ResetPassword to a common password: %v, want ErrPasswordBreached", err)
	}
	if got, _ := f.s.users.ByID(ctx, u.ID); got.PasswordHash != u.PasswordHash || !got.PasswordChangedAt.IsZero() {
		t.Fatal("a refused change or reset replaced the password")
	}
	// A password the list does not know goes through.
	if err := f.do(b, func(v *Visit) error {
		return f.s.ChangePassword(ctx, v, ChangePasswordInput{CurrentPassword: goodPW, NewPassword: "an uncommon new passphrase"})
	}); err != nil {
		t.Fatalf("ChangePassword to an uncommon password: %v", err)
	}
}

// TestBreachedCheckUnavailable: a checker that cannot tell lets the
// password through with a warning that holds no password, or with
// PasswordCheckFailClosed fails as a backend that is down (503).
func TestBreachedCheckUnavailable(t *testing.T) {
	var logs bytes.Buffer
	f := newFlow(t, func(c *Config) {
		c.PasswordChecker = downChecker{}
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	ctx := context.Background()
	const pw = "a secret passphrase 123"
	if err := f.do(newBrowser(), func(v *Visit) error {
		_, err := f.s.Register(ctx, v, RegisterInput{Email: "ada@example.com", Password: pw, Name: "Ada"})
		return err
	}); err != nil {
		t.Fatalf("Register while the checker is down: %v, want it let through", err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "breached-password check failed") {
		t.Errorf("no warning logged: %s", logs.String())
	}
	if strings.Contains(logs.String(), pw) {
		t.Errorf("the log holds the password: %s", logs.String())
	}

	f = newFlow(t, func(c *Config) { c.PasswordChecker = downChecker{}; c.PasswordCheckFailClosed = true })
	err := f.do(newBrowser(), func(v *Visit) error {
		_, err := f.s.Register(ctx, v, RegisterInput{Email: "ada@example.com", Password: pw, Name: "Ada"})
		return err
	})
	if AsError(err) != ErrUnavailable {
		t.Fatalf("Register fail-closed while the checker is down: %v, want ErrUnavailable", err)
	}
	if _, err := f.s.users.ByEmail(ctx, "ada@example.com"); err == nil {
		t.Fatal("a fail-closed refusal stored the user")
	}
}
