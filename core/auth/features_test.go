package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
)

func newWith(t *testing.T, change func(*Config)) (*Service, error) {
	t.Helper()
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	cfg := Config{Users: noUsers{}, Secrets: []string{strings.Repeat("k", 32)}, Keys: keys,
		AppURL: "http://app.test", Hasher: password.ForTesting()}
	change(&cfg)
	s, err := New(cfg)
	if err == nil {
		t.Cleanup(func() { s.Close(context.Background()) })
	}
	return s, err
}

// TestDisabledFeatureMethods: every typed method of a switched-off feature
// fails with ErrFeatureDisabled before it reads anything, and its routes
// are not listed.
func TestDisabledFeatureMethods(t *testing.T) {
	all := []Feature{FeatureRegistration, FeatureTwoFactor, FeatureEmailChange, FeaturePasswordReset, FeaturePasswordChange}
	s, err := newWith(t, func(c *Config) { c.Disable = all })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v := s.Visit(jsonReq(`{}`))
	_, e1 := s.Register(ctx, v, RegisterInput{Email: "a@example.com", Password: "long enough password", Name: "A"})
	_, e2 := s.SetupTwoFactor(ctx, v)
	_, e3 := s.ConfirmTwoFactor(ctx, v, "123456")
	_, e4 := s.RegenerateRecoveryCodes(ctx, v)
	e5 := s.ChangeEmail(ctx, v, ChangeEmailInput{NewEmail: "b@example.com", CurrentPassword: "x"})
	e6 := s.ForgotPassword(ctx, v, "a@example.com")
	e7 := s.ResetPassword(ctx, v, ResetPasswordInput{Token: "t", Password: "long enough password", ConfirmPassword: "long enough password"})
	e8 := s.ChangePassword(ctx, v, ChangePasswordInput{CurrentPassword: "x", NewPassword: "long enough password"})
	for i, err := range []error{e1, e2, e3, e4, e5, e6, e7, e8} {
		if !errors.Is(err, ErrFeatureDisabled) {
			t.Errorf("method %d: %v, want ErrFeatureDisabled", i+1, err)
		}
	}
	for _, rt := range s.Routes() {
		if rt.feature != "" {
			t.Errorf("route %s %s of the switched-off feature %q is listed", rt.Method, rt.Pattern, rt.feature)
		}
	}
	if got := len(s.Routes()); got != len(routes)-8 {
		t.Errorf("%d routes listed, want %d (every route but the 8 of the five features)", got, len(routes)-8)
	}
	for _, f := range all {
		if s.Enabled(f) {
			t.Errorf("Enabled(%q) = true", f)
		}
	}
	// The Visit's answer for a Go caller and for the routes alike.
	if r := s.failure(v, "test", e1); r.Status != http.StatusNotFound {
		t.Errorf("ErrFeatureDisabled answers %d, want 404", r.Status)
	}
}

// TestConfigChecks: New refuses an unknown feature and extra registration
// fields that are empty, repeated or the body's own.
func TestConfigChecks(t *testing.T) {
	for name, change := range map[string]func(*Config){
		"unknown feature":   func(c *Config) { c.Disable = []Feature{"signup"} },
		"empty field":       func(c *Config) { c.RegisterFields = []string{""} },
		"field twice":       func(c *Config) { c.RegisterFields = []string{"company", "company"} },
		"field of the body": func(c *Config) { c.RegisterFields = []string{"password"} },
	} {
		if _, err := newWith(t, change); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	// New keeps its own copy of the lists.
	disable := []Feature{FeatureRegistration}
	s, err := newWith(t, func(c *Config) { c.Disable = disable })
	if err != nil {
		t.Fatal(err)
	}
	disable[0] = FeatureEmailChange
	if s.Enabled(FeatureRegistration) || !s.Enabled(FeatureEmailChange) {
		t.Error("changing the caller's Config.Disable changed the Service")
	}
}
