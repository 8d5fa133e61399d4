package auth

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// The stores of these tests each hold a memory store but implement only
// some parts of the contract, as an app's own store may.

// required is the smallest store New accepts: the parts every
// configuration needs.
type required struct {
	user.Accounts
	user.EmailVerification
	user.SessionVersions
}

// noTwoFactor is every part but user.TwoFactor (and user.PasswordRehash).
type noTwoFactor struct {
	required
	user.Registration
	user.EmailChange
	user.PasswordReset
	user.PasswordChange
	user.Lockout
}

// noLockout is every part but user.Lockout (and user.PasswordRehash).
type noLockout struct {
	required
	user.Registration
	user.EmailChange
	user.PasswordReset
	user.PasswordChange
	user.TwoFactor
}

// noVerification lacks a part that no configuration can do without.
type noVerification struct {
	user.Accounts
	user.SessionVersions
}

func requiredOf(m *store.Memory) required { return required{m, m, m} }

var allFeatures = []Feature{FeatureRegistration, FeatureTwoFactor, FeatureEmailChange, FeaturePasswordReset, FeaturePasswordChange}

// TestNewChecksStoreParts: New refuses a store that lacks a part an enabled
// feature needs, naming the interface and the way out, and accepts it once
// the feature is off.
func TestNewChecksStoreParts(t *testing.T) {
	m := store.NewMemory(store.MemoryConfig{})
	tests := []struct {
		name  string
		users user.Accounts
		want  string        // in New's error
		fix   func(*Config) // after which New accepts the store
	}{
		{"required parts only", requiredOf(m),
			"does not implement user.Registration, which public registration needs: implement it, or add auth.FeatureRegistration to Config.Disable",
			func(c *Config) { c.Disable = allFeatures; c.Lockout = LockoutOff }},
		{"no two-factor", noTwoFactor{requiredOf(m), m, m, m, m, m},
			"auth: Config.Users (auth.noTwoFactor) does not implement user.TwoFactor, which two-factor authentication needs: implement it, or add auth.FeatureTwoFactor to Config.Disable",
			func(c *Config) { c.Disable = []Feature{FeatureTwoFactor} }},
		{"no lock-out", noLockout{requiredOf(m), m, m, m, m, m},
			"does not implement user.Lockout, which the account lock-out (Config.Lockout) needs: implement it, or set Config.Lockout to auth.LockoutOff",
			func(c *Config) { c.Lockout = LockoutOff }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newWith(t, func(c *Config) { c.Users = tt.users })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an error containing %q", err, tt.want)
			}
			if _, err := newWith(t, func(c *Config) { c.Users = tt.users; tt.fix(c) }); err != nil {
				t.Fatalf("New after the way out: %v", err)
			}
		})
	}

	_, err := newWith(t, func(c *Config) { c.Users = noVerification{m, m}; c.Disable = allFeatures; c.Lockout = LockoutOff })
	want := "auth: Config.Users (auth.noVerification) does not implement user.EmailVerification, which email verification needs: implement it, " +
		"or add auth.FeatureEmailVerification to Config.Disable (the app verifies addresses itself)"
	if err == nil || err.Error() != want {
		t.Fatalf("New without user.EmailVerification: %v, want %q", err, want)
	}
}

// TestSmallestStore: the flows that stay on run on a store with only the
// required parts: login (without a lock-out count or a rehash), and logout
// everywhere.
func TestSmallestStore(t *testing.T) {
	ctx := context.Background()
	m := store.NewMemory(store.MemoryConfig{})
	old, err := password.ForTesting().Hash(ctx, "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	u, err := m.Create(ctx, &user.User{Email: "ada@example.com", Name: "Ada", PasswordHash: old})
	if err != nil {
		t.Fatal(err)
	}
	s := mustNewWith(t, func(c *Config) {
		c.Users = requiredOf(m)
		c.Disable = allFeatures
		c.Lockout = LockoutOff
		c.Hasher = costFive(t) // a stronger cost than the stored hash: a store with PasswordRehash would upgrade it
	})

	v := s.Visit(jsonReq(`{}`))
	if _, err := s.Login(ctx, v, LoginInput{Email: "ada@example.com", Password: "wrong password here"}); !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("wrong password: %v, want ErrInvalidCredentials", err)
	}
	v = s.Visit(jsonReq(`{}`))
	res, err := s.Login(ctx, v, LoginInput{Email: "ada@example.com", Password: "correct horse battery"})
	if err != nil || res.RequiresTwoFactor || res.User.ID != u.ID {
		t.Fatalf("login: %+v, %v", res, err)
	}
	got, _ := m.ByID(ctx, u.ID)
	if got.PasswordHash != old || got.FailedLogins != 0 {
		t.Fatalf("a store without PasswordRehash or Lockout was written to: hash changed %v, failures %d", got.PasswordHash != old, got.FailedLogins)
	}
	w := httptest.NewRecorder()
	v.WriteHeaders(w)
	sid := setCookie(t, w, SecureSessionCookie)
	v = s.Visit(&fakeRequest{method: "POST", cookies: map[string]string{SecureSessionCookie: sid}})
	if err := s.LogoutEverywhere(ctx, v); err != nil {
		t.Fatalf("logout everywhere: %v", err)
	}
	if got, _ := m.ByID(ctx, u.ID); got.SessionVersion != u.SessionVersion+1 {
		t.Fatalf("session version %d after logout everywhere, want %d", got.SessionVersion, u.SessionVersion+1)
	}
}

// TestTwoFactorFailsClosedWithoutStorePart: a store without user.TwoFactor
// that reports an account with 2FA on (a broken store) gets a pending login
// whose second step fails; the factor is never skipped.
func TestTwoFactorFailsClosedWithoutStorePart(t *testing.T) {
	ctx := context.Background()
	m := store.NewMemory(store.MemoryConfig{})
	hash, _ := password.ForTesting().Hash(ctx, "correct horse battery")
	u, _ := m.Create(ctx, &user.User{Email: "ada@example.com", Name: "Ada", PasswordHash: hash})
	if err := m.BeginTOTPSetup(ctx, u.ID, "p"); err != nil {
		t.Fatal(err)
	}
	if err := m.EnableTOTP(ctx, u.ID, user.EnableTOTP{Pending: "p", Secret: "s", Step: 1}); err != nil {
		t.Fatal(err)
	}
	s := mustNewWith(t, func(c *Config) {
		c.Users = noTwoFactor{requiredOf(m), m, m, m, m, m}
		c.Disable = []Feature{FeatureTwoFactor}
	})
	v := s.Visit(jsonReq(`{}`))
	res, err := s.Login(ctx, v, LoginInput{Email: "ada@example.com", Password: "correct horse battery"})
	if err != nil || !res.RequiresTwoFactor {
		t.Fatalf("login of a 2FA account: %+v, %v; want the second step", res, err)
	}
	w := httptest.NewRecorder()
	v.WriteHeaders(w)
	pending := setCookie(t, w, PendingCookie)
	for _, step := range []func(*Visit) error{
		func(v *Visit) error { _, err := s.VerifyTwoFactor(ctx, v, TwoFactorInput{Code: "123456"}); return err },
		func(v *Visit) error {
			_, err := s.RecoverTwoFactor(ctx, v, TwoFactorInput{Code: "abcd-efgh"})
			return err
		},
	} {
		v := s.Visit(&fakeRequest{method: "POST", cookies: map[string]string{PendingCookie: pending}})
		if err := step(v); !errors.Is(err, errNoTwoFactor) {
			t.Fatalf("second step on a store without user.TwoFactor: %v, want errNoTwoFactor", err)
		}
	}
}

// costFive is a bcrypt hasher one cost above password.ForTesting's.
func costFive(t *testing.T) password.Hasher {
	t.Helper()
	h, err := password.New(password.Config{BcryptCost: 5, AllowLowCost: true})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// setCookie returns the value of the cookie name that w set.
func setCookie(t *testing.T, w *httptest.ResponseRecorder, name string) string {
	t.Helper()
	for _, c := range w.Result().Cookies() {
		if c.Name == name && c.Value != "" {
			return c.Value
		}
	}
	t.Fatalf("no %s cookie set", name)
	return ""
}
