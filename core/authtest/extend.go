package authtest

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/user"
)

// mustAppError checks an error answer with an app's own code (one that is
// not in auth.Codes()).
func mustAppError(t *testing.T, r *reply, status int, code, text string) {
	t.Helper()
	if r.Status != status || r.str("error") != text || r.str("code") != code || len(r.JSON) != 2 {
		t.Errorf("%s: want %d {\"error\":%q, \"code\":%q}", r, status, text, code)
	}
}

// disabledFeatures: a switched-off feature's routes answer 404 on every
// framework and change nothing; the routes that stay on still answer.
func (s suite) disabledFeatures(t *testing.T) {
	e := s.env(t, func(c *auth.Config) {
		c.Disable = []auth.Feature{auth.FeatureRegistration, auth.FeatureTwoFactor, auth.FeatureEmailChange,
			auth.FeaturePasswordReset, auth.FeaturePasswordChange, auth.FeatureNewDeviceNotice}
	})
	u := e.seed(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com") // no new-device notice, no device cookie: the feature is off
	if c.cookie(auth.DeviceCookie) != nil {
		t.Errorf("the device cookie was set with the new-device notice off")
	}
	for _, off := range []struct{ method, path string }{
		{http.MethodPost, "/api/auth/register"},
		{http.MethodPost, "/api/2fa/setup"},
		{http.MethodPost, "/api/2fa/confirm"},
		{http.MethodPost, "/api/2fa/regenerate-codes"},
		{http.MethodPost, "/api/auth/change-email"},
		{http.MethodPost, "/api/auth/forgot-password"},
		{http.MethodPost, "/api/auth/reset-password/sometoken"},
		{http.MethodPost, "/api/auth/change-password"},
	} {
		mustBeAbsent(t, c, off.method, off.path, everyFieldBody(), "the feature is off")
	}
	e.noUser(t, "bob@example.com")
	if got := e.byID(t, u.ID); got.Email != "ada@example.com" || got.PendingTOTPSecret != "" || got.PasswordHash != u.PasswordHash {
		t.Errorf("store: a switched-off route changed the account: %+v", got)
	}
	if n := e.mailCount(t); n != 0 {
		t.Errorf("%d mails sent, want none", n)
	}
	// What stays on: signing in and out, the second step, 2FA disable.
	mustBeSignedIn(t, c, "ada@example.com")
	mustStatus(t, e.client().verify("123456"), http.StatusUnauthorized, errNoPending2FA)
	mustStatus(t, c.post("/api/2fa/disable", obj{"password": goodPassword}), http.StatusBadRequest, err2FANotEnabled)
	mustMessage(t, c.post("/api/auth/logout", nil), msgLoggedOut)
}

// nameOptional: with Config.NameOptional a registration needs no name; a
// name that is given is still checked.
func (s suite) nameOptional(t *testing.T) {
	e := s.env(t, relaxed, func(c *auth.Config) { c.NameOptional = true })
	mustMessage(t, e.client().post("/api/auth/register", obj{"email": "ada@example.com", "password": goodPassword}), msgRegistered)
	if u := e.user(t, "ada@example.com"); u.Name != "" {
		t.Errorf("store: Name = %q, want \"\"", u.Name)
	}
	long := make([]byte, 201)
	for i := range long {
		long[i] = 'n'
	}
	mustStatus(t, e.client().post("/api/auth/register", obj{"email": "bob@example.com", "password": goodPassword, "name": string(long)}),
		http.StatusBadRequest, "Name is too long")
	e.noUser(t, "bob@example.com")
}

// beforeRegisterVetoes: BeforeRegister sees the extra fields and refuses
// with the app's own status, code and text; nothing is stored or mailed.
// Accepted, AfterRegister sees the new user and what BeforeRegister kept.
func (s suite) beforeRegisterVetoes(t *testing.T) {
	var mu sync.Mutex
	tenants := map[string]string{} // user id -> company
	e := s.env(t, relaxed, func(c *auth.Config) {
		c.RegisterFields = []string{"invite", "company"}
		c.Hooks.BeforeRegister = func(_ context.Context, r *auth.Registration) error {
			if r.Fields["invite"] != "open-sesame" {
				return &auth.Error{Status: http.StatusForbidden, Code: "invitation_required", Message: "An invitation is required"}
			}
			if r.Fields["company"] == "" {
				return &auth.Error{Status: http.StatusBadRequest, Code: "company_required", Message: "Company is required"}
			}
			r.Data = "tenant:" + r.Fields["company"]
			return nil
		}
		c.Hooks.AfterRegister = func(_ context.Context, u *user.User, r *auth.Registration) error {
			mu.Lock()
			defer mu.Unlock()
			tenants[u.ID] = r.Data.(string)
			return nil
		}
	})
	reg := func(fields obj) *reply {
		body := obj{"email": "ada@example.com", "password": goodPassword, "name": "Ada"}
		for k, v := range fields {
			body[k] = v
		}
		return e.client().post("/api/auth/register", body)
	}
	mustAppError(t, reg(nil), http.StatusForbidden, "invitation_required", "An invitation is required")
	mustAppError(t, reg(obj{"invite": "guess"}), http.StatusForbidden, "invitation_required", "An invitation is required")
	mustAppError(t, reg(obj{"invite": "open-sesame"}), http.StatusBadRequest, "company_required", "Company is required")
	mustStatus(t, reg(obj{"invite": "open-sesame", "company": 7}), http.StatusBadRequest, "company must be a string")
	e.noUser(t, "ada@example.com")
	if n := e.mailCount(t); n != 0 {
		t.Fatalf("%d mails after vetoed registrations, want none", n)
	}
	mustMessage(t, reg(obj{"invite": "open-sesame", "company": "Analytical Engines"}), msgRegistered)
	u := e.user(t, "ada@example.com")
	mu.Lock()
	defer mu.Unlock()
	if tenants[u.ID] != "tenant:Analytical Engines" || len(tenants) != 1 {
		t.Errorf("AfterRegister saw %v, want {%s: tenant:Analytical Engines}", tenants, u.ID)
	}
}

// afterRegisterFails: an AfterRegister that fails or panics leaves no
// account, no mail and no session, and the address can register again.
func (s suite) afterRegisterFails(t *testing.T) {
	var mode sync.Map // "fail" | "panic" | "ok"
	mode.Store("m", "fail")
	e := s.env(t, relaxed, func(c *auth.Config) {
		c.Hooks.AfterRegister = func(context.Context, *user.User, *auth.Registration) error {
			m, _ := mode.Load("m")
			switch m {
			case "fail":
				return errors.New("tenant database unreachable")
			case "panic":
				panic("tenant table missing")
			}
			return nil
		}
	})
	for _, m := range []string{"fail", "panic"} {
		mode.Store("m", m)
		c := e.client()
		r := c.post("/api/auth/register", obj{"email": "ada@example.com", "password": goodPassword, "name": "Ada"})
		mustStatus(t, r, http.StatusInternalServerError, "Internal server error")
		e.noUser(t, "ada@example.com")
		mustBeSignedOut(t, c)
		if n := e.mailCount(t); n != 0 {
			t.Fatalf("hook %s: %d mails, want none", m, n)
		}
	}
	mode.Store("m", "ok")
	c := e.client()
	mustMessage(t, c.post("/api/auth/register", obj{"email": "ada@example.com", "password": goodPassword, "name": "Ada"}), msgRegistered)
	mustBeSignedIn(t, c, "ada@example.com")
}

// afterLoginVetoes: AfterLogin refuses the session of a password login and
// of a 2FA login's second step, with the app's error; it is told which
// factor ended the login.
func (s suite) afterLoginVetoes(t *testing.T) {
	var mu sync.Mutex
	var seen []auth.LoginMethod
	suspended := "ada@example.com"
	e := s.env(t, relaxed, func(c *auth.Config) {
		c.Hooks.AfterLogin = func(_ context.Context, u *user.User, how auth.LoginMethod) error {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, how)
			if u.Email == suspended {
				return &auth.Error{Status: http.StatusForbidden, Code: "account_suspended", Message: "Account suspended"}
			}
			return nil
		}
	})
	// ada has 2FA; bob has not.
	owner, _, secret, codes := e.twoFactorUser(t)
	mustMessage(t, owner.post("/api/auth/logout", nil), msgLoggedOut)
	e.seed(t, "bob@example.com")
	mustLogin(t, e.client(), "bob@example.com", goodPassword)

	b := e.pending(t)
	e.nextStep()
	mustAppError(t, b.verify(e.now(t, secret)), http.StatusForbidden, "account_suspended", "Account suspended")
	mustBeSignedOut(t, b)
	x := e.pending(t)
	mustAppError(t, x.recover(codes[0]), http.StatusForbidden, "account_suspended", "Account suspended")
	mustBeSignedOut(t, x)

	mu.Lock()
	suspended = "bob@example.com"
	mu.Unlock()
	y := e.client()
	mustAppError(t, y.login("bob@example.com", goodPassword), http.StatusForbidden, "account_suspended", "Account suspended")
	mustBeSignedOut(t, y)

	mu.Lock()
	defer mu.Unlock()
	want := []auth.LoginMethod{auth.LoginPassword, auth.LoginTOTP, auth.LoginRecoveryCode, auth.LoginPassword}
	if len(seen) != len(want) {
		t.Fatalf("AfterLogin saw %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("AfterLogin saw %q, want %q", seen, want)
		}
	}
}

// changeHooks: AfterPasswordChange and AfterEmailChange run once the
// change is stored, told what changed; their failure changes nothing.
func (s suite) changeHooks(t *testing.T) {
	var mu sync.Mutex
	var got []string
	e := s.env(t, relaxed, func(c *auth.Config) {
		c.Hooks.AfterPasswordChange = func(_ context.Context, u *user.User, how auth.PasswordChange) {
			mu.Lock()
			got = append(got, "password "+string(how)+" "+u.Email)
			mu.Unlock()
			panic("the hook's own bug") // logged; the change stands
		}
		c.Hooks.AfterEmailChange = func(_ context.Context, u *user.User, newEmail string) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, "email "+u.Email+" -> "+newEmail)
		}
	})
	e.seed(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com")
	mustMessage(t, c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": "a brand new password"}), msgPasswordChanged)
	mustMessage(t, c.post("/api/auth/change-email", obj{"newEmail": "ada@lovelace.example", "password": "a brand new password"}), msgEmailChanged)
	e.clock.Advance(time.Second) // a reset link made in the instant of the change counts as used
	mustMessage(t, e.client().post("/api/auth/forgot-password", obj{"email": "ada@lovelace.example"}), msgForgotSent)
	tok := e.resetToken(t, "ada@lovelace.example")
	mustMessage(t, e.client().post("/api/auth/reset-password/"+tok, obj{"password": goodPassword, "confirmPassword": goodPassword}), msgPasswordReset)
	mustLogin(t, e.client(), "ada@lovelace.example", goodPassword)
	mu.Lock()
	defer mu.Unlock()
	want := []string{"password changed ada@example.com", "email ada@example.com -> ada@lovelace.example", "password reset ada@lovelace.example"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("hooks saw %q, want %q", got, want)
	}
}
