package auth

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// TestTwoFactorRequirement: the policy covers the accounts For picks that
// have no 2FA, with a grace period from the account's creation or from
// Since, whichever is later.
func TestTwoFactorRequirement(t *testing.T) {
	created := flowStart
	noTwoFA := &user.User{ID: "1", Email: "ada@example.com", CreatedAt: created}
	withTwoFA := &user.User{ID: "2", Email: "bob@example.com", CreatedAt: created, TwoFactorEnabled: true}
	admins := func(u *user.User) bool { return strings.HasPrefix(u.Email, "ada@") }
	tests := []struct {
		name   string
		policy TwoFactorPolicy
		u      *user.User
		at     time.Time
		want   TwoFactorRequirement
	}{
		{"off", TwoFactorPolicy{}, noTwoFA, created, TwoFactorRequirement{}},
		{"2FA on", TwoFactorPolicy{Enabled: true}, withTwoFA, created.Add(30 * 24 * time.Hour), TwoFactorRequirement{}},
		{"in the default grace", TwoFactorPolicy{Enabled: true}, noTwoFA, created.Add(DefaultTwoFactorGrace - time.Nanosecond),
			TwoFactorRequirement{Required: true, Deadline: created.Add(DefaultTwoFactorGrace)}},
		{"at the end of the grace", TwoFactorPolicy{Enabled: true}, noTwoFA, created.Add(DefaultTwoFactorGrace),
			TwoFactorRequirement{Required: true, Deadline: created.Add(DefaultTwoFactorGrace), Overdue: true}},
		{"no grace", TwoFactorPolicy{Enabled: true, Grace: -1}, noTwoFA, created,
			TwoFactorRequirement{Required: true, Deadline: created, Overdue: true}},
		{"picked by For", TwoFactorPolicy{Enabled: true, Grace: time.Hour, For: admins}, noTwoFA, created,
			TwoFactorRequirement{Required: true, Deadline: created.Add(time.Hour)}},
		{"not picked by For", TwoFactorPolicy{Enabled: true, Grace: -1, For: admins}, &user.User{ID: "3", Email: "eve@example.com", CreatedAt: created}, created,
			TwoFactorRequirement{}},
		{"an older account has its grace from Since", TwoFactorPolicy{Enabled: true, Grace: time.Hour, Since: created.Add(24 * time.Hour)}, noTwoFA, created.Add(24*time.Hour + 59*time.Minute),
			TwoFactorRequirement{Required: true, Deadline: created.Add(25 * time.Hour)}},
		{"a newer account has its grace from its creation", TwoFactorPolicy{Enabled: true, Grace: time.Hour, Since: created.Add(-24 * time.Hour)}, noTwoFA, created.Add(time.Hour),
			TwoFactorRequirement{Required: true, Deadline: created.Add(time.Hour), Overdue: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := tt.at
			s := mustNewWith(t, func(c *Config) {
				c.RequireTwoFactor = tt.policy
				c.Now = func() time.Time { return at }
			})
			if got := s.TwoFactorRequirement(tt.u); got != tt.want {
				t.Errorf("TwoFactorRequirement = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestAuthenticateTwoFactorRequired: during the grace period RequireUser
// lets an account without 2FA through; after it, RequireUser and
// RequireVerifiedEmail answer 403 two_factor_required; once 2FA is on,
// the account passes again.
func TestAuthenticateTwoFactorRequired(t *testing.T) {
	var f *flow
	f = newFlow(t, func(c *Config) {
		c.RequireTwoFactor = TwoFactorPolicy{Enabled: true, Grace: 2 * time.Hour}
		c.SessionIdleTimeout = -1 // hours pass between requests
		// The store stamps CreatedAt with the flow's clock too.
		c.Users = store.NewMemory(store.MemoryConfig{Now: func() time.Time { return f.now }})
	})
	b, u := f.register("ada@example.com", goodPW)
	req := func() Request {
		return &fakeRequest{method: http.MethodGet, remote: "192.0.2.7:4711", headers: b.headers, cookies: b.cookies}
	}
	f.now = f.now.Add(2*time.Hour - time.Minute)
	if got, deny := f.s.Authenticate(req()); deny != nil || got.ID != u.ID {
		t.Fatalf("in the grace period: %v, %+v; want %s", got, deny, u.ID)
	}
	f.now = f.now.Add(time.Minute)
	for name, check := range map[string]func(Request) (*user.User, *Response){"Authenticate": f.s.Authenticate, "AuthenticateVerified": f.s.AuthenticateVerified} {
		got, deny := check(req())
		if got != nil || deny == nil || deny.Status != http.StatusForbidden {
			t.Fatalf("%s past the grace period: %v, %+v; want 403", name, got, deny)
		}
		var body map[string]string
		if err := json.Unmarshal(deny.Body, &body); err != nil || body["code"] != "two_factor_required" ||
			body["error"] != "Set up two-factor authentication to continue" {
			t.Errorf("%s past the grace period: body %s", name, deny.Body)
		}
	}
	m := f.s.cfg.Users.(*store.Memory)
	ctx := context.Background()
	if err := m.BeginTOTPSetup(ctx, u.ID, "pending"); err != nil {
		t.Fatal(err)
	}
	if err := m.EnableTOTP(ctx, u.ID, user.EnableTOTP{Pending: "pending", Secret: "sealed", RecoveryCodeHashes: []string{"h1"}}); err != nil {
		t.Fatal(err)
	}
	if got, deny := f.s.Authenticate(req()); deny != nil || got.ID != u.ID {
		t.Fatalf("with 2FA on: %v, %+v; want %s", got, deny, u.ID)
	}
}

// TestRequireTwoFactorNeedsTheFeature: New refuses a policy no one could
// comply with.
func TestRequireTwoFactorNeedsTheFeature(t *testing.T) {
	_, err := newWith(t, func(c *Config) {
		c.RequireTwoFactor = TwoFactorPolicy{Enabled: true}
		c.Disable = []Feature{FeatureTwoFactor}
	})
	if err == nil || !strings.Contains(err.Error(), "RequireTwoFactor") {
		t.Fatalf("New: %v, want an error naming RequireTwoFactor", err)
	}
}
