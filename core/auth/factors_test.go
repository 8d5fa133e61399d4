package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// pendingFlow is a flow whose user has 2FA on and a browser that passed
// the password step: it holds the 2fa_pending cookie.
func pendingFlow(t *testing.T, change func(*Config)) (*flow, *browser, *user.User) {
	t.Helper()
	f := newFlow(t, change)
	_, u := f.register("ada@example.com", goodPW)
	m := f.s.cfg.Users.(*store.Memory)
	ctx := context.Background()
	if err := m.BeginTOTPSetup(ctx, u.ID, "pending"); err != nil {
		t.Fatal(err)
	}
	if err := m.EnableTOTP(ctx, u.ID, user.EnableTOTP{Pending: "pending", Secret: "sealed", RecoveryCodeHashes: []string{"h1", "h2"}}); err != nil {
		t.Fatal(err)
	}
	b := newBrowser()
	var res LoginResult
	if err := f.do(b, func(v *Visit) (err error) {
		res, err = f.s.Login(ctx, v, LoginInput{Email: "ada@example.com", Password: goodPW})
		return err
	}); err != nil || !res.RequiresTwoFactor || b.cookies[PendingCookie] == "" {
		t.Fatalf("Login: %+v, %v; want a pending 2FA login", res, err)
	}
	return f, b, u
}

// signedInAs reports the user b's session belongs to, "" for none.
func (f *flow) signedInAs(b *browser) string {
	u, err := f.s.CurrentUser(context.Background(), f.visit(b))
	if err != nil {
		return ""
	}
	return u.ID
}

func (f *flow) finish(b *browser, verify func(context.Context, *user.User) error) error {
	return f.do(b, func(v *Visit) error {
		_, err := f.s.Modules().FinishTwoFactor(context.Background(), v, SecondFactorInput{Method: LoginPasskey, Verify: verify})
		return err
	})
}

// TestFinishTwoFactor: a failed verification keeps the pending cookie and
// audits 2fa_failed; a successful one ends the pending login like a TOTP
// code (session, AfterLogin with the method, login_succeeded, the
// new-device notice), and the pending login cannot be finished twice.
func TestFinishTwoFactor(t *testing.T) {
	var hooked []LoginMethod
	f, b, u := pendingFlow(t, func(c *Config) {
		c.Hooks.AfterLogin = func(_ context.Context, _ *user.User, how LoginMethod) error {
			hooked = append(hooked, how)
			return nil
		}
	})
	err := f.finish(b, func(_ context.Context, got *user.User) error {
		if got.ID != u.ID {
			t.Errorf("Verify got user %q, want %q", got.ID, u.ID)
		}
		return ErrPasskeyInvalid
	})
	if !errors.Is(err, ErrPasskeyInvalid) {
		t.Fatalf("failed verification: %v, want %v", err, ErrPasskeyInvalid)
	}
	if b.cookies[PendingCookie] == "" || f.signedInAs(b) != "" {
		t.Fatal("a failed verification dropped the pending cookie or signed in")
	}
	if ev, ok := f.event(EventTwoFactorFailed); !ok || ev.UserID != u.ID || ev.Detail != "passkey: passkey_invalid" {
		t.Fatalf("audit %+v, want 2fa_failed for %s with detail %q", ev, u.ID, "passkey: passkey_invalid")
	}

	if err := f.finish(b, func(context.Context, *user.User) error { return nil }); err != nil {
		t.Fatalf("FinishTwoFactor: %v", err)
	}
	if _, still := b.cookies[PendingCookie]; still {
		t.Error("the pending cookie survived the finished login")
	}
	if got := f.signedInAs(b); got != u.ID {
		t.Fatalf("signed in as %q, want %q", got, u.ID)
	}
	if len(hooked) != 1 || hooked[0] != LoginPasskey {
		t.Errorf("AfterLogin saw %v, want [passkey]", hooked)
	}
	if ev, ok := f.event(EventLoginSucceeded); !ok || ev.UserID != u.ID || ev.Detail != "passkey" {
		t.Errorf("audit %+v, want login_succeeded with detail passkey", ev)
	}
	if n := len(f.mails(mail.KindNewSignIn)); n != 1 {
		t.Errorf("%d new-device notices, want 1", n)
	}
	// The cookie is gone from this browser; an old copy of it still
	// verifies, so the finished login is no defence by itself: the session
	// version is (a second finish with a copied cookie is the caller's
	// single-use challenge's to refuse).
	err = f.finish(b, func(context.Context, *user.User) error { t.Error("Verify ran without a pending login"); return nil })
	if !errors.Is(err, ErrNoPendingTwoFactor) {
		t.Fatalf("finish again: %v, want %v", err, ErrNoPendingTwoFactor)
	}
}

// TestFinishTwoFactorChecks: the pending-login checks and the per-user 2FA
// limit run before the verifier, which does not run when they refuse.
func TestFinishTwoFactorChecks(t *testing.T) {
	never := func(t *testing.T) func(context.Context, *user.User) error {
		return func(context.Context, *user.User) error { t.Error("Verify ran"); return nil }
	}
	t.Run("NoPendingLogin", func(t *testing.T) {
		f, _, _ := pendingFlow(t, nil)
		if err := f.finish(newBrowser(), never(t)); !errors.Is(err, ErrNoPendingTwoFactor) {
			t.Fatalf("got %v, want %v", err, ErrNoPendingTwoFactor)
		}
	})
	t.Run("StalePendingLogin", func(t *testing.T) {
		f, b, u := pendingFlow(t, nil)
		if _, err := f.s.cfg.Users.(*store.Memory).BumpSessionVersion(context.Background(), u.ID); err != nil {
			t.Fatal(err)
		}
		if err := f.finish(b, never(t)); !errors.Is(err, ErrTwoFactorExpired) {
			t.Fatalf("got %v, want %v", err, ErrTwoFactorExpired)
		}
	})
	t.Run("TwoFactorLimit", func(t *testing.T) {
		f, b, _ := pendingFlow(t, func(c *Config) { c.Limits.TwoFactor = Limit{Max: 3} })
		calls := 0
		fail := func(context.Context, *user.User) error { calls++; return ErrPasskeyInvalid }
		for i := range 3 {
			if err := f.finish(b, fail); !errors.Is(err, ErrPasskeyInvalid) {
				t.Fatalf("attempt %d: %v, want %v", i+1, err, ErrPasskeyInvalid)
			}
		}
		err := f.finish(b, fail)
		if !errors.Is(err, ErrTooManyTwoFactor) || calls != 3 {
			t.Fatalf("attempt 4: %v after %d verifications, want %v after 3", err, calls, ErrTooManyTwoFactor)
		}
	})
	t.Run("PendingTwoFactorUser", func(t *testing.T) {
		f, b, u := pendingFlow(t, func(c *Config) { c.Limits.TwoFactor = Limit{Max: 1} })
		for range 3 { // counts nothing: the limit of 1 is never reached
			got, err := f.s.Modules().PendingTwoFactorUser(context.Background(), f.visit(b))
			if err != nil || got.ID != u.ID {
				t.Fatalf("PendingTwoFactorUser: %v, %v; want %s", got, err, u.ID)
			}
		}
		if err := f.finish(b, func(context.Context, *user.User) error { return nil }); err != nil {
			t.Fatalf("finish after PendingTwoFactorUser: %v", err)
		}
		if _, err := f.s.Modules().PendingTwoFactorUser(context.Background(), f.visit(newBrowser())); !errors.Is(err, ErrNoPendingTwoFactor) {
			t.Fatalf("without a pending login: %v, want %v", err, ErrNoPendingTwoFactor)
		}
	})
}

func (f *flow) passwordless(b *browser, verify func(context.Context) (string, error)) (*user.User, error) {
	var u *user.User
	err := f.do(b, func(v *Visit) (err error) {
		u, err = f.s.Modules().SignInWithoutPassword(context.Background(), v, PasswordlessInput{Method: LoginPasskey, Verify: verify})
		return err
	})
	return u, err
}

// TestSignInWithoutPassword: a verified method signs in an account with or
// without 2FA and ends a pending login; a failure is audited and signs in
// nobody; the client address's login limit counts failures before the
// verifier runs and gives successes back, and past it refuses failures
// only; the lock-out does not apply.
func TestSignInWithoutPassword(t *testing.T) {
	f, b, u := pendingFlow(t, func(c *Config) { c.Limits.LoginIP = Limit{Max: 3} })
	// The 2FA account, with a pending login on b: passwordless finishes
	// the sign-in by itself and the pending cookie goes.
	got, err := f.passwordless(b, func(context.Context) (string, error) { return u.ID, nil })
	if err != nil || got.ID != u.ID {
		t.Fatalf("SignInWithoutPassword: %v, %v", got, err)
	}
	if _, still := b.cookies[PendingCookie]; still || f.signedInAs(b) != u.ID {
		t.Fatalf("after passwordless: pending cookie kept %v, signed in as %q", still, f.signedInAs(b))
	}
	if ev, ok := f.event(EventLoginSucceeded); !ok || ev.Detail != "passkey" || ev.UserID != u.ID {
		t.Errorf("audit %+v, want login_succeeded passkey", ev)
	}
	// Successes are given back: more of them than the limit of 3 pass.
	for range 4 {
		if _, err := f.passwordless(newBrowser(), func(context.Context) (string, error) { return u.ID, nil }); err != nil {
			t.Fatalf("another success: %v", err)
		}
	}
	// A locked account signs in with a verified passkey.
	m := f.s.cfg.Users.(*store.Memory)
	if _, _, err := m.RecordLoginFailure(context.Background(), u.ID, 1, 3600e9, f.now); err != nil {
		t.Fatal(err)
	}
	if _, err := f.passwordless(newBrowser(), func(context.Context) (string, error) { return u.ID, nil }); err != nil {
		t.Fatalf("locked account: %v, want a sign-in", err)
	}
	// Failures: audited, nobody signed in; three use the limit up (every
	// success so far was given back), and the next attempt never verifies.
	c := newBrowser()
	_, err = f.passwordless(c, func(context.Context) (string, error) { return "", ErrPasskeyInvalid })
	if !errors.Is(err, ErrPasskeyInvalid) || f.signedInAs(c) != "" {
		t.Fatalf("failure: %v, signed in as %q", err, f.signedInAs(c))
	}
	if ev, ok := f.event(EventLoginFailed); !ok || ev.Detail != "passkey: passkey_invalid" {
		t.Errorf("audit %+v, want login_failed passkey: passkey_invalid", ev)
	}
	for i := 2; i <= 3; i++ {
		_, err = f.passwordless(c, func(context.Context) (string, error) { return "", ErrPasskeyInvalid })
		if !errors.Is(err, ErrPasskeyInvalid) {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	// Past the limit a failure is refused with the limit's 429 and audited.
	_, err = f.passwordless(c, func(context.Context) (string, error) { return "", ErrPasskeyInvalid })
	if !errors.Is(err, ErrTooManyLogins) || f.signedInAs(c) != "" {
		t.Fatalf("failure past the limit: %v, signed in as %q; want %v", err, f.signedInAs(c), ErrTooManyLogins)
	}
	// A verified credential is not refused by a limit meant for guessing.
	d := newBrowser()
	if got, err := f.passwordless(d, func(context.Context) (string, error) { return u.ID, nil }); err != nil || got.ID != u.ID || f.signedInAs(d) != u.ID {
		t.Fatalf("verified past the limit: %v, %v; want a sign-in as %s", got, err, u.ID)
	}
	if _, err := f.passwordless(newBrowser(), func(context.Context) (string, error) { return "", ErrPasskeyInvalid }); !errors.Is(err, ErrTooManyLogins) {
		t.Fatalf("a failure after that success: %v, want %v (the success bought no attempt)", err, ErrTooManyLogins)
	}
	// A deleted account does not sign in.
	f2 := newFlow(t, nil)
	_, err = f2.passwordless(newBrowser(), func(context.Context) (string, error) { return "no-such-user", nil })
	if !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("deleted account: %v, want %v", err, ErrInvalidCredentials)
	}
}

// TestSignInWithoutPasswordSharedAddress: one client guessing passwords
// behind an address (an office's) uses its login limit up; the passwords
// of everyone there are refused, a verified passkey of anyone there is
// not.
func TestSignInWithoutPasswordSharedAddress(t *testing.T) {
	f := newFlow(t, func(c *Config) { c.Limits.LoginIP = Limit{Max: 3} })
	_, u := f.register("ada@example.com", goodPW)
	guesser := newBrowser()
	for i := range 4 {
		err := f.do(guesser, func(v *Visit) error {
			_, err := f.s.Login(context.Background(), v, LoginInput{Email: "ada@example.com", Password: "not the password"})
			return err
		})
		want := ErrInvalidCredentials
		if i == 3 {
			want = ErrTooManyLogins
		}
		if !errors.Is(err, want) {
			t.Fatalf("guess %d: %v, want %v", i+1, err, want)
		}
	}
	colleague := newBrowser()
	err := f.do(colleague, func(v *Visit) error {
		_, err := f.s.Login(context.Background(), v, LoginInput{Email: "ada@example.com", Password: goodPW})
		return err
	})
	if !errors.Is(err, ErrTooManyLogins) {
		t.Fatalf("the right password from the address: %v, want %v (an answer would tell a guesser it is right)", err, ErrTooManyLogins)
	}
	got, err := f.passwordless(colleague, func(context.Context) (string, error) { return u.ID, nil })
	if err != nil || got.ID != u.ID || f.signedInAs(colleague) != u.ID {
		t.Fatalf("a verified passkey from the address: %v, %v; want a sign-in", got, err)
	}
	var ra string
	if err := f.do(newBrowser(), func(v *Visit) error {
		_, err := f.s.Modules().SignInWithoutPassword(context.Background(), v, PasswordlessInput{Method: LoginPasskey,
			Verify: func(context.Context) (string, error) { return u.ID, nil }})
		ra = v.Header().Get("Retry-After")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if ra != "" {
		t.Errorf("a verified sign-in past the limit answers Retry-After %q", ra)
	}
}
