package authtest

import (
	"encoding/binary"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/token"
)

// Re-authentication ("sudo mode", SECURITY.md deviation 12): 2FA setup,
// confirm and regenerate need an authentication within Config.ReauthWindow
// (15 minutes by default); POST /api/auth/confirm-password renews it; the
// routes that take the current password count it as one.

// Texts of re-authentication.
const (
	errReauthRequired    = "Please confirm your password to continue"
	msgPasswordConfirmed = "Password confirmed"
	reauthWindow         = 15 * time.Minute
)

// mustNeedReauth checks a 403 {"error", "code": "reauthentication_required"}
// that sets no cookie.
func mustNeedReauth(t *testing.T, r *reply) {
	t.Helper()
	mustStatus(t, r, http.StatusForbidden, errReauthRequired)
	if code := r.str("code"); code != "reauthentication_required" {
		t.Errorf("%s: code %q, want reauthentication_required", r, code)
	}
	if len(r.cookies) != 0 {
		t.Errorf("%s: sets cookies %v, want none", r, r.cookies)
	}
}

// confirmPassword posts pw to /api/auth/confirm-password.
func (c *client) confirmPassword(pw string) *reply {
	c.t.Helper()
	return c.post("/api/auth/confirm-password", obj{"password": pw})
}

// mustConfirmPassword confirms goodPassword on c: 200 {"message"} and a
// fresh session cookie.
func mustConfirmPassword(t *testing.T, c *client) {
	t.Helper()
	r := c.confirmPassword(goodPassword)
	mustMessage(t, r, msgPasswordConfirmed)
	if ck := r.setCookie(sessionCookie); ck == nil || ck.Value == "" || ck.MaxAge < 0 {
		t.Errorf("%s: want a fresh %s cookie, got %v", r, sessionCookie, ck)
	}
}

// stale moves the clock to the end of the window: a session that
// authenticated at the clock's time is no longer recent.
func (e *env) stale() { e.clock.Advance(reauthWindow) }

func (s suite) reauthFreshSessionsPass(t *testing.T) {
	e := s.env(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	// Registration is an authentication: setup and confirm work at once,
	// and up to the last millisecond of the window.
	e.clock.Advance(reauthWindow - time.Millisecond)
	secret := e.setup2FA(t, c)
	r := c.post("/api/2fa/confirm", obj{"code": e.now(t, secret)})
	if r.Status != http.StatusOK || r.str("message") != msg2FAEnabled {
		t.Fatalf("%s: want 200 {message %q, recoveryCodes}", r, msg2FAEnabled)
	}
	// A login with both factors is an authentication.
	e.stale()
	b := e.client()
	e.loginWith2FA(t, b, "ada@example.com", secret)
	if r := b.post("/api/2fa/regenerate-codes", nil); r.Status != http.StatusOK {
		t.Fatalf("%s: want 200 after a fresh 2FA login", r)
	}
	// A login with the password alone, for an account without 2FA.
	e.seed(t, "bob@example.com")
	e.stale()
	bob := e.loggedIn(t, "bob@example.com")
	e.setup2FA(t, bob)
	if !e.byID(t, u.ID).TwoFactorEnabled {
		t.Errorf("store: 2FA is off after a confirmation")
	}
}

func (s suite) reauthStaleRefused(t *testing.T) {
	e := s.env(t)
	// Setup.
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	e.stale()
	mustNeedReauth(t, c.post("/api/2fa/setup", nil))
	if got := e.byID(t, u.ID); got.PendingTOTPSecret != "" {
		t.Errorf("store: a refused setup stored a pending secret")
	}
	// Confirm: a setup made while recent cannot be confirmed once stale.
	mustConfirmPassword(t, c)
	secret := e.setup2FA(t, c)
	e.stale()
	mustNeedReauth(t, c.post("/api/2fa/confirm", obj{"code": e.now(t, secret)}))
	if got := e.byID(t, u.ID); got.TwoFactorEnabled || got.PendingTOTPSecret == "" {
		t.Errorf("store: a refused confirm changed 2FA: enabled %v, pending %q", got.TwoFactorEnabled, got.PendingTOTPSecret)
	}
	// Regenerate.
	mustConfirmPassword(t, c)
	_, codes := e.enable2FAWith(t, c, secret)
	before := e.byID(t, u.ID).RecoveryCodeHashes
	e.stale()
	mustNeedReauth(t, c.post("/api/2fa/regenerate-codes", nil))
	if got := e.byID(t, u.ID).RecoveryCodeHashes; !slices.Equal(got, before) {
		t.Errorf("store: a refused regenerate replaced the recovery codes")
	}
	// The old codes still work.
	p := e.pending(t)
	mustBody(t, p.recover(codes[0]), obj{"success": true, "remainingCodes": 7})
	// The stale session still authenticates for everything else.
	mustBeSignedIn(t, c, "ada@example.com")
}

func (s suite) reauthConfirmPasswordRenews(t *testing.T) {
	e := s.env(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	e.stale()
	mustNeedReauth(t, c.post("/api/2fa/setup", nil))
	mustConfirmPassword(t, c)
	if ev, ok := e.audit.Last(auth.EventPasswordConfirmed); !ok || ev.UserID != u.ID {
		t.Errorf("audit: no %s event for %s (got %+v)", auth.EventPasswordConfirmed, u.ID, ev)
	}
	e.clock.Advance(reauthWindow - time.Millisecond)
	e.setup2FA(t, c)
	e.clock.Advance(time.Millisecond)
	mustNeedReauth(t, c.post("/api/2fa/setup", nil))
	// Form posts work too.
	r := c.postForm("/api/auth/confirm-password", map[string][]string{"password": {goodPassword}})
	mustMessage(t, r, msgPasswordConfirmed)
	e.setup2FA(t, c)
}

func (s suite) reauthConfirmPasswordWrong(t *testing.T) {
	e := s.env(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	e.stale()
	for _, pw := range []string{wrongPassword, ""} {
		r := c.confirmPassword(pw)
		mustStatus(t, r, http.StatusUnauthorized, errInvalidPassword)
		if len(r.cookies) != 0 {
			t.Errorf("%s: sets cookies %v, want none", r, r.cookies)
		}
	}
	if ev, ok := e.audit.Last(auth.EventPasswordCheckFailed); !ok || ev.UserID != u.ID {
		t.Errorf("audit: no %s event for %s", auth.EventPasswordCheckFailed, u.ID)
	}
	if _, ok := e.audit.Last(auth.EventPasswordConfirmed); ok {
		t.Errorf("audit: a wrong password was reported as %s", auth.EventPasswordConfirmed)
	}
	mustNeedReauth(t, c.post("/api/2fa/setup", nil))
	mustBeSignedIn(t, c, "ada@example.com")
}

func (s suite) reauthConfirmPasswordNeedsSession(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	r := e.client().confirmPassword(goodPassword)
	mustStatus(t, r, http.StatusUnauthorized, errNotAuthenticated)
	if ck := r.setCookie(sessionCookie); ck != nil && ck.MaxAge >= 0 {
		t.Errorf("%s: sets a session cookie without a session", r)
	}
}

// reauthConfirmPasswordLimited: confirm-password shares the per-user limit
// of every re-entry of the current password (5 per 15 minutes).
func (s suite) reauthConfirmPasswordLimited(t *testing.T) {
	e := s.env(t)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	begin := e.clock.Now()
	for range 3 {
		mustStatus(t, c.post("/api/auth/change-password", obj{"currentPassword": wrongPassword, "newPassword": newPassword}),
			http.StatusUnauthorized, errInvalidPassword)
	}
	for range 2 {
		mustStatus(t, c.confirmPassword(wrongPassword), http.StatusUnauthorized, errInvalidPassword)
	}
	r := c.confirmPassword(goodPassword)
	e.mustLimited(t, r, msgTooManyPasswords, begin.Add(15*time.Minute))
	if len(r.cookies) != 0 {
		t.Errorf("%s: a limited confirmation sets cookies %v", r, r.cookies)
	}
	e.skipRealTime()
	e.waitOut(t, r)
	mustConfirmPassword(t, c)
}

// reauthPasswordRoutesCount: the routes that take the current password
// work from a stale session, and their correct password makes it recent.
func (s suite) reauthPasswordRoutesCount(t *testing.T) {
	e := s.env(t)
	for _, tc := range []struct {
		name string
		do   func(c *client) *reply
		msg  string
	}{
		{"change-password", func(c *client) *reply {
			return c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": newPassword})
		}, msgPasswordChanged},
		{"change-email", func(c *client) *reply {
			return c.post("/api/auth/change-email", obj{"newEmail": "moved@example.com", "password": goodPassword})
		}, msgEmailChanged},
	} {
		c := e.client()
		e.signup(t, c, tc.name+"@example.com")
		e.stale()
		mustNeedReauth(t, c.post("/api/2fa/setup", nil))
		mustMessage(t, tc.do(c), tc.msg)
		e.setup2FA(t, c) // recent again
	}
	// 2FA disable changes the MFA configuration: from a stale session of
	// a 2FA user it needs a full re-authentication first, and the password
	// alone is not one.
	c, u, secret, _ := e.twoFactorUser(t)
	e.stale()
	mustNeedReauth(t, c.post("/api/2fa/regenerate-codes", nil))
	mustNeedReauth(t, c.post("/api/2fa/disable", obj{"password": goodPassword}))
	if !e.byID(t, u.ID).TwoFactorEnabled {
		t.Fatalf("store: a refused disable turned 2FA off")
	}
	mustMessage(t, c.post("/api/auth/confirm-password", obj{"password": goodPassword, "code": e.now(t, secret)}), msgPasswordConfirmed)
	mustMessage(t, c.post("/api/2fa/disable", obj{"password": goodPassword}), msg2FADisabled)
	if e.byID(t, u.ID).TwoFactorEnabled {
		t.Fatalf("store: 2FA still on")
	}
	e.setup2FA(t, c)
}

// reauthTwoFactorNeedsCode: on a 2FA account re-authentication is the
// password and the second factor (ASVS 5.0 7.5.1): without a code 403
// two_factor_code_required, a wrong or reused code 400, each changing
// nothing; a TOTP code or a recovery code (spent, mailed) makes the
// session recent. The password of change-password does not.
func (s suite) reauthTwoFactorNeedsCode(t *testing.T) {
	e := s.env(t, relaxed)
	c, u, secret, _ := e.twoFactorUser(t)
	e.stale()
	r := c.post("/api/auth/confirm-password", obj{"password": goodPassword})
	mustStatus(t, r, http.StatusForbidden, "Enter your 2FA code to confirm")
	if r.str("code") != "two_factor_code_required" || len(r.cookies) != 0 {
		t.Errorf("%s: want code two_factor_code_required and no cookie", r)
	}
	wrong := "000000"
	if e.now(t, secret) == wrong {
		wrong = "111111"
	}
	mustStatus(t, c.post("/api/auth/confirm-password", obj{"password": goodPassword, "code": wrong}), http.StatusBadRequest, "Invalid 2FA code")
	mustNeedReauth(t, c.post("/api/2fa/regenerate-codes", nil))
	code := e.now(t, secret)
	mustMessage(t, c.post("/api/auth/confirm-password", obj{"password": goodPassword, "code": code}), msgPasswordConfirmed)
	mustStatus(t, c.post("/api/auth/confirm-password", obj{"password": goodPassword, "code": code}), http.StatusBadRequest, "Code already used")
	r = c.post("/api/2fa/regenerate-codes", nil)
	fresh, _ := r.JSON["recoveryCodes"].([]any)
	if r.Status != http.StatusOK || len(fresh) == 0 {
		t.Fatalf("regenerate after a full confirmation: %s", r)
	}
	// A recovery code is a second factor too: spent and mailed.
	e.stale()
	before := len(e.byID(t, u.ID).RecoveryCodeHashes)
	mustMessage(t, c.post("/api/auth/confirm-password", obj{"password": goodPassword, "code": fresh[0]}), msgPasswordConfirmed)
	if after := len(e.byID(t, u.ID).RecoveryCodeHashes); after != before-1 {
		t.Errorf("store: %d recovery codes after confirming with one, want %d", after, before-1)
	}
	if n := len(e.mails(t, "ada@example.com", mail.KindRecoveryCodeUsed)); n != 1 {
		t.Errorf("%d recovery-code-used mails, want 1", n)
	}
	// The current password of change-password is one factor of two: the
	// stale session stays stale.
	e.stale()
	mustMessage(t, c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": newPassword}), msgPasswordChanged)
	mustNeedReauth(t, c.post("/api/2fa/regenerate-codes", nil))
}

// reauthOldCookie: a session cookie of the format before the time of
// authentication was recorded still signs in, is never recent, and a
// password confirmation makes it so.
func (s suite) reauthOldCookie(t *testing.T) {
	e := s.env(t, stateless) // a cookie of that format has no record
	u := e.seed(t, "ada@example.com")
	forger, err := token.NewVerifier(token.Config{Secrets: []string{testSecret}, Purpose: session.Purpose, Expiry: time.Hour, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	old, err := forger.CreateWith(u.ID, binary.AppendVarint([]byte{0}, u.SessionVersion))
	if err != nil {
		t.Fatal(err)
	}
	c := e.client()
	c.setCookie(sessionCookie, old)
	mustBeSignedIn(t, c, "ada@example.com")
	mustNeedReauth(t, c.post("/api/2fa/setup", nil))
	mustConfirmPassword(t, c)
	e.setup2FA(t, c)
}

// reauthOff: a negative ReauthWindow lets a session of any age through.
func (s suite) reauthOff(t *testing.T) {
	e := s.env(t, noIdle, func(c *auth.Config) { c.ReauthWindow = -1 })
	c := e.client()
	e.signup(t, c, "ada@example.com")
	e.clock.Advance(23 * time.Hour)
	e.enable2FA(t, c)
	if r := c.post("/api/2fa/regenerate-codes", nil); r.Status != http.StatusOK {
		t.Fatalf("%s: want 200 with re-authentication off", r)
	}
}

// reauthRace: the owner confirms the password while the holder of a copy
// of the stale cookie sends sensitive requests at the same moment. The
// time of authentication is signed into each request's own cookie, so no
// stale request gets through, whatever the order.
func (s suite) reauthRace(t *testing.T) {
	e := s.env(t, relaxed)
	owner := e.client()
	u := e.signup(t, owner, "ada@example.com")
	e.stale()
	stale := owner.cookie(sessionCookie).Value
	const n = 40
	thieves := e.cookieCopies(n, sessionCookie, stale)
	owners := e.cookieCopies(n, sessionCookie, stale)
	rs := storm(t, 3*n, func(i int) (*reply, error) {
		switch i % 3 {
		case 0:
			return owners[i/3].send("/api/auth/confirm-password", obj{"password": goodPassword})
		case 1:
			return thieves[i/3].send("/api/2fa/setup", nil)
		default:
			return thieves[i/3].send("/api/2fa/regenerate-codes", nil)
		}
	})
	for i, r := range rs {
		want := http.StatusForbidden
		if i%3 == 0 {
			want = http.StatusOK
		}
		if r.Status != want {
			t.Errorf("request %d: %s, want %d", i, r, want)
		}
	}
	if got := e.byID(t, u.ID); got.PendingTOTPSecret != "" || got.TwoFactorEnabled {
		t.Errorf("store: a stale session changed 2FA: pending %q, enabled %v", got.PendingTOTPSecret, got.TwoFactorEnabled)
	}
	// The owner's confirmed sessions are recent; the thieves' are not.
	e.setup2FA(t, owners[0])
	mustNeedReauth(t, thieves[0].post("/api/2fa/setup", nil))
}

// reauthKeepsLifetime: a 24-hour session whose password is confirmed
// every eight hours, and changed once, still ends 24 hours after its
// login: a re-authentication makes the session recent, never longer.
func (s suite) reauthKeepsLifetime(t *testing.T) {
	e := s.env(t, relaxed, noIdle)
	e.seed(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com")
	e.clock.Advance(8 * time.Hour)
	mustConfirmPassword(t, c)
	e.clock.Advance(8 * time.Hour)
	mustMessage(t, c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": newPassword}), msgPasswordChanged)
	e.clock.Advance(8*time.Hour - time.Second)
	mustMessage(t, c.confirmPassword(newPassword), msgPasswordConfirmed)
	if r := c.me(); r.Status != http.StatusOK {
		t.Fatalf("a second before its 24 hours: %s, want 200", r)
	}
	e.clock.Advance(time.Second)
	mustBeSignedOut(t, c)
}
