package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/token"
	"github.com/authkit-go/authkit/core/user"
)

// newWith is the Service of this package's tests: a user store without
// users, a fast hasher, logs discarded, changed by change; it is closed
// when the test ends.
func newWith(t testing.TB, change func(*Config)) (*Service, error) {
	t.Helper()
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	cfg := Config{Users: noUsers{}, Secrets: []string{strings.Repeat("k", 32)}, Keys: keys,
		AppURL: "http://app.test", Hasher: password.ForTesting(), Logger: slog.New(slog.DiscardHandler)}
	change(&cfg)
	s, err := New(cfg)
	if err == nil {
		t.Cleanup(func() { s.Close(context.Background()) })
	}
	return s, err
}

// mustNewWith is newWith for a Config that must be accepted.
func mustNewWith(t testing.TB, change func(*Config)) *Service {
	t.Helper()
	s, err := newWith(t, change)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDisabledFeatureMethods: every typed method of a switched-off feature
// fails with ErrFeatureDisabled before it reads anything, and its routes
// are not listed.
func TestDisabledFeatureMethods(t *testing.T) {
	all := []Feature{FeatureRegistration, FeatureTwoFactor, FeatureEmailChange, FeaturePasswordReset, FeaturePasswordChange,
		FeatureEmailVerification, FeatureLogoutEverywhere}
	s, err := newWith(t, func(c *Config) { c.Disable = all })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v := s.Visit(jsonReq(`{}`))
	_, e1 := s.Register(ctx, v, RegisterInput{Email: "a@example.com", Password: "long enough password", Name: "A"})
	_, e2 := s.SetupTwoFactor(ctx, v)
	_, e3 := s.ConfirmTwoFactor(ctx, v, ConfirmTwoFactorInput{Code: "123456"})
	_, e4 := s.RegenerateRecoveryCodes(ctx, v)
	e5 := s.ChangeEmail(ctx, v, ChangeEmailInput{NewEmail: "b@example.com", CurrentPassword: "x"})
	e6 := s.ForgotPassword(ctx, v, ForgotPasswordInput{Email: "a@example.com"})
	e7 := s.ResetPassword(ctx, v, ResetPasswordInput{Token: "t", Password: "long enough password", ConfirmPassword: "long enough password"})
	e8 := s.ChangePassword(ctx, v, ChangePasswordInput{CurrentPassword: "x", NewPassword: "long enough password"})
	_, e9 := s.VerifyEmail(ctx, v, VerifyEmailInput{Token: "t"})
	_, e10 := s.ResendVerification(ctx, v)
	e11 := s.LogoutEverywhere(ctx, v)
	for i, err := range []error{e1, e2, e3, e4, e5, e6, e7, e8, e9, e10, e11} {
		if !errors.Is(err, ErrFeatureDisabled) {
			t.Errorf("method %d: %v, want ErrFeatureDisabled", i+1, err)
		}
	}
	for _, rt := range s.Modules().Routes() {
		if rt.feature != "" {
			t.Errorf("route %s %s of the switched-off feature %q is listed", rt.Method, rt.Pattern, rt.feature)
		}
	}
	if got := len(s.Modules().Routes()); got != len(routes)-11-4-2-3-2-3 {
		t.Errorf("%d routes listed, want %d (every route but the 11 of the seven features, the 4 of Config.Sessions and Config.TrustedDevices, the 2 of Config.EmailCode, the 3 of Config.EmailSignIn, the 2 of Config.Tokens and the 3 of Config.APIKeys)", got, len(routes)-11-4-2-3-2-3)
	}
	for _, f := range all {
		if s.Enabled(f) {
			t.Errorf("Enabled(%q) = true", f)
		}
	}
	// The Visit's answer for a Go caller and for the routes alike.
	if r := s.failure(context.Background(), v, "test", e1); r.Status != http.StatusNotFound {
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

// TestTypedInputChecks: a typed method refuses the characters the JSON
// body decoder refuses, with the same code and text, before any work: an
// app's own forms get the rule too.
func TestTypedInputChecks(t *testing.T) {
	s, err := newWith(t, func(c *Config) { c.RegisterFields = []string{"company"} })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v := s.Visit(jsonReq(`{}`))
	rlo := "Ada\u202e evil" // a right-to-left override
	for name, err := range map[string]error{
		"register name": func() error {
			_, err := s.Register(ctx, v, RegisterInput{Email: "a@example.com", Password: "long enough password", Name: rlo})
			return err
		}(),
		"register field": func() error {
			_, err := s.Register(ctx, v, RegisterInput{Email: "a@example.com", Password: "long enough password", Name: "Ada", Fields: map[string]string{"company": "x\x00"}})
			return err
		}(),
		"login password": func() error {
			_, err := s.Login(ctx, v, LoginInput{Email: "a@example.com", Password: "bad\xffutf8"})
			return err
		}(),
		"verify code":      func() error { _, err := s.VerifyTwoFactor(ctx, v, TwoFactorInput{Code: "12\u200b3456"}); return err }(),
		"recover code":     func() error { _, err := s.RecoverTwoFactor(ctx, v, TwoFactorInput{Code: "abc\x07"}); return err }(),
		"forgot email":     s.ForgotPassword(ctx, v, ForgotPasswordInput{Email: "a@example.com\u2066"}),
		"reset password":   s.ResetPassword(ctx, v, ResetPasswordInput{Token: "t", Password: rlo + "123456", ConfirmPassword: rlo + "123456"}),
		"change password":  s.ChangePassword(ctx, v, ChangePasswordInput{CurrentPassword: "x", NewPassword: rlo + "123456"}),
		"change email":     s.ChangeEmail(ctx, v, ChangeEmailInput{NewEmail: "b@example.com", CurrentPassword: rlo}),
		"disable password": s.DisableTwoFactor(ctx, v, DisableTwoFactorInput{CurrentPassword: rlo}),
		"confirm code": func() error {
			_, err := s.ConfirmTwoFactor(ctx, v, ConfirmTwoFactorInput{Code: "\t123456"})
			return err
		}(),
	} {
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrInvalidCharacters.Code || e.Status != 400 || !strings.HasSuffix(e.Message, " contains invalid characters") {
			t.Errorf("%s: %v, want 400 invalid_characters", name, err)
		}
	}
}

// TestCheckOrigin: an app's own form posts get the routes' cross-origin
// check, with Config.TrustedOrigins.
func TestCheckOrigin(t *testing.T) {
	s, err := newWith(t, func(c *Config) { c.TrustedOrigins = []string{"https://front.example"} })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, origin, site string
		ok                   bool
	}{
		{"POST", "https://evil.example", "", false},
		{"POST", "", "cross-site", false},
		{"POST", "https://front.example", "cross-site", true},
		{"POST", "", "same-origin", true},
		{"POST", "", "", true},
		{"GET", "https://evil.example", "cross-site", true},
	} {
		r := &fakeRequest{method: tc.method, host: "app.example", headers: map[string]string{}}
		if tc.origin != "" {
			r.headers["Origin"] = tc.origin
		}
		if tc.site != "" {
			r.headers["Sec-Fetch-Site"] = tc.site
		}
		err := s.CheckOrigin(r)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrCrossOrigin)) {
			t.Errorf("%s Origin %q Sec-Fetch-Site %q: %v, want ok=%v", tc.method, tc.origin, tc.site, err, tc.ok)
		}
	}
}

// TestFinishPendingRefusesStale: the one place that turns a pending login
// into a session refuses a pending token older than the account's session
// version, sets no cookie, and accepts a current one. (The typed methods
// check too, earlier; this keeps the last check tested on its own.)
func TestFinishPendingRefusesStale(t *testing.T) {
	s := mustNewWith(t, func(*Config) {})
	u := &user.User{ID: "u1", Email: "ada@example.com", SessionVersion: 2}
	v := s.Visit(jsonReq(`{}`))
	stale := token.Claims{UserID: u.ID, Data: pendingData(0, 1, nil)}
	if err := s.finishPending(context.Background(), v, u, stale, LoginTOTP, nil); !errors.Is(err, ErrTwoFactorExpired) {
		t.Fatalf("stale pending login: %v, want ErrTwoFactorExpired", err)
	}
	if len(v.Cookies()) != 0 {
		t.Fatalf("stale pending login set cookies %v", v.Cookies())
	}
	current := token.Claims{UserID: u.ID, Data: pendingData(pendingRemember, 2, make([]byte, pendingNonceBytes))}
	if err := s.finishPending(context.Background(), v, u, current, LoginTOTP, nil); err != nil {
		t.Fatalf("current pending login: %v", err)
	}
	names := map[string]bool{}
	for _, c := range v.Cookies() {
		names[c.Name] = c.MaxAge >= 0 || c.Name == PendingCookie
	}
	if !names[s.Modules().SessionManager().CookieName()] || !names[PendingCookie] {
		t.Fatalf("current pending login: cookies %v, want a session and the pending cookie cleared", v.Cookies())
	}
}
