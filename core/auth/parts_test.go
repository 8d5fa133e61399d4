package auth

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// findOnly is the smallest store of all: finding users, nothing else.
type findOnly struct{ user.Accounts }

// registrationOnly can find and create users, nothing else.
type registrationOnly struct {
	user.Accounts
	user.Registration
}

// TestNewNamesEveryMissingPart: New names every part the configuration
// needs and the store lacks, in one error, each with its way out, so an
// adopter fixes them all before the next start.
func TestNewNamesEveryMissingPart(t *testing.T) {
	_, err := newWith(t, func(c *Config) { c.Users = findOnly{store.NewMemory(store.MemoryConfig{})} })
	if err == nil {
		t.Fatal("New of a store with only user.Accounts: no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		"user.EmailVerification, which email verification needs: implement it, or add auth.FeatureEmailVerification to Config.Disable",
		"user.SessionVersions, which logout everywhere needs: implement it, or add auth.FeatureLogoutEverywhere to Config.Disable",
		"user.Registration, which public registration needs: implement it, or add auth.FeatureRegistration to Config.Disable",
		"user.EmailChange, which email change needs: implement it, or add auth.FeatureEmailChange to Config.Disable",
		"user.PasswordReset, which password reset needs: implement it, or add auth.FeaturePasswordReset to Config.Disable",
		"user.PasswordChange, which password change needs: implement it, or add auth.FeaturePasswordChange to Config.Disable",
		"user.TwoFactor, which two-factor authentication needs: implement it, or add auth.FeatureTwoFactor to Config.Disable",
		"user.Lockout, which the account lock-out (Config.Lockout) needs: implement it, or set Config.Lockout to auth.LockoutOff",
	}
	if len(lines) != len(want) {
		t.Fatalf("New named %d missing parts, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], "auth: Config.Users (auth.findOnly) does not implement ") || !strings.Contains(lines[i], w) {
			t.Errorf("line %d: %q, want it to name %q", i+1, lines[i], w)
		}
	}
}

// TestVerificationOff: with FeatureEmailVerification off (the app
// verifies addresses itself) a store with only user.Accounts and
// user.Registration is enough: registration mails no link, the
// verification methods and logout everywhere answer ErrFeatureDisabled and
// change nothing, and login works.
func TestVerificationOff(t *testing.T) {
	ctx := context.Background()
	m := store.NewMemory(store.MemoryConfig{})
	capture := &mail.Capture{}
	s := mustNewWith(t, func(c *Config) {
		c.Users = registrationOnly{m, m}
		c.Mailer = capture
		c.Disable = []Feature{FeatureEmailVerification, FeatureLogoutEverywhere, FeatureTwoFactor, FeatureEmailChange,
			FeaturePasswordReset, FeaturePasswordChange}
		c.Lockout = LockoutOff
	})
	v := s.Visit(jsonReq(`{}`))
	u, err := s.Register(ctx, v, RegisterInput{Email: "ada@example.com", Password: "correct horse battery", Name: "Ada"})
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	if err := s.FlushMail(ctx); err != nil {
		t.Fatal(err)
	}
	if msgs := capture.Messages(); len(msgs) != 0 {
		t.Fatalf("Register with verification off mailed %d messages (%q), want none", len(msgs), msgs[0].Subject)
	}
	if _, err := s.VerifyEmail(ctx, s.Visit(jsonReq(`{}`)), VerifyEmailInput{Token: "x"}); !errors.Is(err, ErrFeatureDisabled) {
		t.Errorf("VerifyEmail: %v, want ErrFeatureDisabled", err)
	}
	if _, err := s.ResendVerification(ctx, v); !errors.Is(err, ErrFeatureDisabled) {
		t.Errorf("ResendVerification: %v, want ErrFeatureDisabled", err)
	}
	if err := s.LogoutEverywhere(ctx, v); !errors.Is(err, ErrFeatureDisabled) {
		t.Errorf("LogoutEverywhere: %v, want ErrFeatureDisabled", err)
	}
	if got, _ := m.ByID(ctx, u.ID); got.SessionVersion != u.SessionVersion || !got.EmailVerifiedAt.IsZero() {
		t.Fatalf("the refused calls changed the user: version %d (was %d), verified at %v", got.SessionVersion, u.SessionVersion, got.EmailVerifiedAt)
	}
	res, err := s.Login(ctx, s.Visit(jsonReq(`{}`)), LoginInput{Email: "ada@example.com", Password: "correct horse battery"})
	if err != nil || res.User.ID != u.ID {
		t.Fatalf("Login: %+v, %v", res, err)
	}
	// Their routes are not listed, so no framework module serves them (404)
	// and the OpenAPI document leaves them out.
	for _, rt := range s.Modules().Routes() {
		switch rt.Pattern {
		case "/api/auth/verify-email/{token}", "/api/auth/resend-verification", "/api/auth/logout-all":
			t.Errorf("route %s %s listed with its feature off", rt.Method, rt.Pattern)
		}
	}
}

// TestAppURLOnlyForLinks: AppURL is required while a feature mails a link
// (verification, password reset) and not once both are off.
func TestAppURLOnlyForLinks(t *testing.T) {
	for _, disable := range [][]Feature{nil, {FeatureEmailVerification}, {FeaturePasswordReset}} {
		_, err := newWith(t, func(c *Config) { c.AppURL = ""; c.Disable = disable })
		if err == nil || !strings.HasPrefix(err.Error(), "auth: Config.AppURL is required") {
			t.Errorf("New without AppURL, %v off: %v, want AppURL required", disable, err)
		}
	}
	if _, err := newWith(t, func(c *Config) {
		c.AppURL = ""
		c.Disable = []Feature{FeatureEmailVerification, FeaturePasswordReset}
	}); err != nil {
		t.Errorf("New without AppURL, no link mailed: %v", err)
	}
}
