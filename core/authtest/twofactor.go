package authtest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// wrongCode returns a well-formed code that no step near the clock's
// accepts for secret, so a "wrong code" can never match by chance.
func (e *env) wrongCode(t *testing.T, secret string) string {
	t.Helper()
	near := map[string]bool{}
	for i := -3; i <= 3; i++ {
		near[e.code(t, secret, e.clock.Now().Add(time.Duration(i)*30*time.Second))] = true
	}
	for n := 0; ; n++ {
		c := fmt.Sprintf("%06d", n*7919%1000000)
		if !near[c] {
			return c
		}
	}
}

// mustKeepPending checks that an error reply of the 2FA flow leaves the
// pending cookie alone (docs/api.md, 2FA verify) and that c still holds it.
func mustKeepPending(t *testing.T, c *client, r *reply) {
	t.Helper()
	if ck := r.setCookie(auth.PendingCookie); ck != nil {
		t.Errorf("%s: sets %s (%q, Max-Age %d); an error in the 2FA flow must not delete it", r, ck.Name, ck.Value, ck.MaxAge)
	}
	if c.cookie(auth.PendingCookie) == nil {
		t.Errorf("%s: the browser lost its %s cookie", r, auth.PendingCookie)
	}
}

// mustDeletePending checks that a successful 2FA reply deletes the pending
// cookie.
func mustDeletePending(t *testing.T, c *client, r *reply) {
	t.Helper()
	ck := r.setCookie(auth.PendingCookie)
	if ck == nil || ck.MaxAge >= 0 || ck.Path != "/" {
		t.Errorf("%s: want a Set-Cookie deleting %s (Path=/, Max-Age=0), got %v", r, auth.PendingCookie, ck)
	}
	if c.cookie(auth.PendingCookie) != nil {
		t.Errorf("%s: the browser still holds %s", r, auth.PendingCookie)
	}
}

// twoFactorUser registers ada, enables 2FA from the returned browser (which
// stays logged in) and returns it with the secret and recovery codes.
func (e *env) twoFactorUser(t *testing.T) (c *client, u *user.User, secret string, codes []string) {
	t.Helper()
	c = e.client()
	u = e.signup(t, c, "ada@example.com")
	secret, codes = e.enable2FA(t, c)
	return c, u, secret, codes
}

// settingUp2FA signs ada@example.com up on a new browser and starts 2FA
// setup there. It returns the browser, her user and the pending secret.
func (e *env) settingUp2FA(t *testing.T) (c *client, u *user.User, secret string) {
	t.Helper()
	c = e.client()
	u = e.signup(t, c, "ada@example.com")
	return c, u, e.setup2FA(t, c)
}

// usedCode makes the 2FA user (twoFactorUser), logs them in once with a
// code of a new TOTP step and returns that code, now spent.
func (e *env) usedCode(t *testing.T) string {
	t.Helper()
	_, _, secret, _ := e.twoFactorUser(t)
	e.nextStep()
	code := e.now(t, secret)
	mustBody(t, e.pending(t).verify(code), obj{"success": true})
	return code
}

// mustRefuseUsed checks that c's pending login refuses code as used: 400
// with errCodeUsed, the pending cookie kept and c signed out.
func mustRefuseUsed(t *testing.T, c *client, code string) {
	t.Helper()
	r := c.verify(code)
	mustStatus(t, r, http.StatusBadRequest, errCodeUsed)
	mustKeepPending(t, c, r)
	mustBeSignedOut(t, c)
}

func (s suite) setupNeedsSession(t *testing.T) {
	e := s.env(t)
	mustStatus(t, e.client().post("/api/2fa/setup", nil), http.StatusUnauthorized, errNotAuthenticated)
}

func (s suite) setupStoresPendingSecret(t *testing.T) {
	e := s.env(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	r := c.post("/api/2fa/setup", nil)
	if r.Status != http.StatusOK || len(r.JSON) != 2 || !strings.HasPrefix(r.str("qrImage"), "data:image/png;base64,") {
		t.Fatalf("%s: want 200 {qrUri, qrImage (a PNG data URL)}", r)
	}
	q, err := url.Parse(r.str("qrUri"))
	if err != nil {
		t.Fatalf("%s: qrUri: %v", r, err)
	}
	if q.Scheme != "otpauth" || q.Host != "totp" || q.Path != "/authkit:ada@example.com" ||
		q.Query().Get("issuer") != "authkit" || q.Query().Get("secret") == "" {
		t.Errorf("qrUri %q: want otpauth://totp/authkit:ada@example.com?secret=...&issuer=authkit", q)
	}
	secret := q.Query().Get("secret")
	got := e.byID(t, u.ID)
	if got.PendingTOTPSecret == "" || strings.Contains(got.PendingTOTPSecret, secret) {
		t.Errorf("store: pendingTotpSecret = %q, want the secret encrypted", got.PendingTOTPSecret)
	}
	if got.TwoFactorEnabled || got.TOTPSecret != "" || got.RecoveryCodeHashes != nil {
		t.Errorf("store: setup changed more than pendingTotpSecret: %+v", got)
	}
}

func (s suite) secondSetupReplaces(t *testing.T) {
	e := s.env(t)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	first := e.setup2FA(t, c)
	second := e.setup2FA(t, c)
	if first == second {
		t.Fatalf("two setups returned the same secret")
	}
	if e.now(t, first) != e.now(t, second) {
		mustStatus(t, c.post("/api/2fa/confirm", obj{"code": e.now(t, first)}), http.StatusBadRequest, errInvalidCode)
	}
	r := c.post("/api/2fa/confirm", obj{"code": e.now(t, second)})
	if r.Status != http.StatusOK {
		t.Fatalf("%s: want 200", r)
	}
}

func (s suite) confirmWithoutSetup(t *testing.T) {
	e := s.env(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	mustStatus(t, c.post("/api/2fa/confirm", obj{"code": "123456"}), http.StatusBadRequest, errNoPendingSetup)
	if got := e.byID(t, u.ID); got.TwoFactorEnabled || got.TOTPSecret != "" {
		t.Errorf("store: 2FA state changed: %+v", got)
	}
}

func (s suite) confirmWrongCode(t *testing.T) {
	e := s.env(t)
	c, u, secret := e.settingUp2FA(t)
	before := e.byID(t, u.ID)
	mustStatus(t, c.post("/api/2fa/confirm", obj{"code": e.wrongCode(t, secret)}), http.StatusBadRequest, errInvalidCode)
	got := e.byID(t, u.ID)
	if got.TwoFactorEnabled || got.TOTPSecret != "" || got.PendingTOTPSecret != before.PendingTOTPSecret || got.RecoveryCodeHashes != nil {
		t.Errorf("store: state changed by a wrong code: %+v", got)
	}
}

func (s suite) confirmEnables2FA(t *testing.T) {
	e := s.env(t, realHashing) // the stored hashes are bcrypt's
	c, u, secret := e.settingUp2FA(t)
	pending := e.byID(t, u.ID).PendingTOTPSecret
	r := c.post("/api/2fa/confirm", obj{"code": e.now(t, secret)})
	if r.Status != http.StatusOK || r.str("message") != msg2FAEnabled || len(r.JSON) != 2 {
		t.Fatalf("%s: want 200 {message %q, recoveryCodes}", r, msg2FAEnabled)
	}
	raw, _ := r.JSON["recoveryCodes"].([]any)
	if len(raw) != 8 {
		t.Fatalf("%s: %d recovery codes, want 8", r, len(raw))
	}
	seen := map[string]bool{}
	for _, v := range raw {
		code, _ := v.(string)
		if !recoveryCodeFormat.MatchString(code) {
			t.Errorf("recovery code %q: want the form xxxxxxxx-xxxxxxxx", code)
		}
		if seen[code] {
			t.Errorf("recovery code %q returned twice", code)
		}
		seen[code] = true
	}
	got := e.byID(t, u.ID)
	if !got.TwoFactorEnabled || got.TOTPSecret == "" || got.PendingTOTPSecret != "" {
		t.Errorf("store: twoFactorEnabled %v, totpSecret %q, pendingTotpSecret %q; want true, set, cleared",
			got.TwoFactorEnabled, got.TOTPSecret, got.PendingTOTPSecret)
	}
	if strings.Contains(got.TOTPSecret, secret) || got.TOTPSecret == pending {
		t.Errorf("store: totpSecret %q is not the secret encrypted anew", got.TOTPSecret)
	}
	if len(got.RecoveryCodeHashes) != 8 {
		t.Errorf("store: %d recovery code hashes, want 8", len(got.RecoveryCodeHashes))
	}
	for _, h := range got.RecoveryCodeHashes {
		if !strings.HasPrefix(h, "$2") || seen[h] {
			t.Errorf("store: recovery code hash %q is not a bcrypt hash", h)
		}
	}
	if want := e.totp.Step(e.clock.Now()); got.LastTOTPStep != want {
		t.Errorf("store: lastTotpStep = %d, want the confirming code's step %d", got.LastTOTPStep, want)
	}
	mustStatus(t, c.post("/api/2fa/confirm", obj{"code": e.now(t, secret)}), http.StatusBadRequest, errNoPendingSetup)
	mustBeSignedIn(t, c, "ada@example.com")
}

func (s suite) setupWhileEnabledRefused(t *testing.T) {
	e := s.env(t)
	c, u, _, _ := e.twoFactorUser(t)
	before := e.byID(t, u.ID)
	mustStatus(t, c.post("/api/2fa/setup", nil), http.StatusBadRequest, msg2FAAlreadyEnabled)
	if got := e.byID(t, u.ID); got.PendingTOTPSecret != "" || got.TOTPSecret != before.TOTPSecret {
		t.Errorf("store: setup while enabled changed the secrets")
	}
}

func (s suite) regenerateReplacesCodes(t *testing.T) {
	e := s.env(t)
	c, u, _, old := e.twoFactorUser(t)
	oldHashes := e.byID(t, u.ID).RecoveryCodeHashes
	r := c.post("/api/2fa/regenerate-codes", nil)
	if r.Status != http.StatusOK || len(r.JSON) != 1 {
		t.Fatalf("%s: want 200 {recoveryCodes}", r)
	}
	raw, _ := r.JSON["recoveryCodes"].([]any)
	var fresh []string
	for _, v := range raw {
		code, _ := v.(string)
		if !recoveryCodeFormat.MatchString(code) || slices.Contains(old, code) {
			t.Errorf("regenerated code %q: want a new code of the form xxxxxxxx-xxxxxxxx", code)
		}
		fresh = append(fresh, code)
	}
	if len(fresh) != 8 {
		t.Fatalf("%s: %d codes, want 8", r, len(fresh))
	}
	got := e.byID(t, u.ID)
	if len(got.RecoveryCodeHashes) != 8 {
		t.Errorf("store: %d hashes, want 8", len(got.RecoveryCodeHashes))
	}
	for _, h := range got.RecoveryCodeHashes {
		if slices.Contains(oldHashes, h) {
			t.Errorf("store: old hash %q survived regeneration", h)
		}
	}
	if !got.TwoFactorEnabled || got.TOTPSecret == "" {
		t.Errorf("store: regeneration turned 2FA off")
	}
	// An old code no longer works; a new one does.
	b := e.pending(t)
	r = b.recover(old[0])
	mustStatus(t, r, http.StatusBadRequest, errInvalidRecovery)
	mustKeepPending(t, b, r)
	mustBody(t, b.recover(fresh[0]), obj{"success": true, "remainingCodes": 7})
}

func (s suite) regenerateDisableNeed2FA(t *testing.T) {
	e := s.env(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	mustStatus(t, c.post("/api/2fa/regenerate-codes", nil), http.StatusBadRequest, err2FANotEnabled)
	mustStatus(t, c.post("/api/2fa/disable", obj{"password": goodPassword}), http.StatusBadRequest, err2FANotEnabled)
	if got := e.byID(t, u.ID); got.RecoveryCodeHashes != nil || got.TwoFactorEnabled {
		t.Errorf("store: changed by a refused request: %+v", got)
	}
}

func (s suite) regenerateDisableNeedSession(t *testing.T) {
	e := s.env(t)
	c := e.client()
	mustStatus(t, c.post("/api/2fa/regenerate-codes", nil), http.StatusUnauthorized, errNotAuthenticated)
	mustStatus(t, c.post("/api/2fa/disable", obj{"password": goodPassword}), http.StatusUnauthorized, errNotAuthenticated)
	mustStatus(t, c.post("/api/2fa/confirm", obj{"code": "123456"}), http.StatusUnauthorized, errNotAuthenticated)
}

func (s suite) disableWrongPassword(t *testing.T) {
	e := s.env(t)
	c, u, _, _ := e.twoFactorUser(t)
	before := e.byID(t, u.ID)
	mustStatus(t, c.post("/api/2fa/disable", obj{"password": wrongPassword}), http.StatusUnauthorized, errInvalidPassword)
	got := e.byID(t, u.ID)
	if !got.TwoFactorEnabled || got.TOTPSecret != before.TOTPSecret || len(got.RecoveryCodeHashes) != 8 {
		t.Errorf("store: a wrong password changed the 2FA state: %+v", got)
	}
}

func (s suite) disableClears2FA(t *testing.T) {
	e := s.env(t)
	c, u, secret, _ := e.twoFactorUser(t)
	other := e.client()
	e.loginWith2FA(t, other, "ada@example.com", secret)
	mustMessage(t, c.post("/api/2fa/disable", obj{"password": goodPassword}), msg2FADisabled)
	got := e.byID(t, u.ID)
	if got.TwoFactorEnabled || got.TOTPSecret != "" || got.PendingTOTPSecret != "" || got.RecoveryCodeHashes != nil || got.LastTOTPStep != 0 {
		t.Errorf("store: after disable twoFactorEnabled %v, totpSecret %q, pendingTotpSecret %q, recoveryCodeHashes %q, lastTotpStep %d; want all cleared",
			got.TwoFactorEnabled, got.TOTPSecret, got.PendingTOTPSecret, got.RecoveryCodeHashes, got.LastTOTPStep)
	}
	mustBeSignedIn(t, c, "ada@example.com")
	mustBeSignedOut(t, other)
	e.lastMail(t, "ada@example.com", mail.KindTwoFactorDisabled)
	mustBody(t, e.client().login("ada@example.com", goodPassword), obj{"success": true})
}
