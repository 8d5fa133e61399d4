package pages

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestTwoFactorSetupShowsQRAndKey(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	p := b.post("/settings/2fa/setup", nil)
	p.wantPage(t, http.StatusOK, "security")
	if !regexp.MustCompile(`<img id="qr-image" src="data:image/png;base64,[^"]+" alt="QR code for your authenticator app"`).MatchString(p.Body) {
		t.Errorf("no QR image\n%s", p.Body)
	}
	key := p.text(t, "totp-secret")
	if !regexp.MustCompile(`^([A-Z2-7]{4} )+[A-Z2-7]{1,4}$`).MatchString(key) {
		t.Errorf("the key %q is not in groups of four", key)
	}
	if e.user(adaEmail).PendingTOTPSecret == "" {
		t.Error("no pending secret in the store")
	}
	if !strings.Contains(p.Body, `autocomplete="one-time-code"`) {
		t.Error("the confirm code field lacks autocomplete=one-time-code")
	}
}

func TestTwoFactorConfirmWrongCodeKeepsTheQR(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	p, uri, secret := b.startTwoFactor()
	key := p.text(t, "totp-secret")
	wrong := "000000"
	if e.code(secret) == wrong {
		wrong = "111111"
	}
	p = b.post("/settings/2fa/confirm", form("code", wrong, "uri", uri))
	p.wantPage(t, http.StatusBadRequest, "security")
	p.wantFieldError(t, "confirm-code", "Invalid code")
	if p.text(t, "totp-secret") != key || !strings.Contains(p.Body, `id="qr-image"`) {
		t.Error("the QR code and key are not shown again for another try")
	}
	if e.user(adaEmail).TwoFactorEnabled {
		t.Error("a wrong code turned 2FA on")
	}
}

func TestTwoFactorConfirmShowsCodes(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	_, uri, secret := b.startTwoFactor()
	p := b.post("/settings/2fa/confirm", form("code", e.code(secret), "uri", uri))
	p.wantPage(t, http.StatusOK, "security")
	p.wantText(t, "twofa-state", "Two-factor authentication is on. Recovery codes left: 8.")
	if strings.Contains(p.Body, `id="setup-form"`) || !strings.Contains(p.Body, `id="disable-form"`) {
		t.Error("the answer to the confirmation offers setup instead of the 2FA-on settings")
	}
	var codes []string
	for _, li := range regexp.MustCompile(`<li>([0-9a-z]{8}-[0-9a-z]{8})</li>`).FindAllStringSubmatch(p.Body, -1) {
		codes = append(codes, li[1])
	}
	u := e.user(adaEmail)
	if !u.TwoFactorEnabled || len(u.RecoveryCodeHashes) != 8 {
		t.Fatalf("store: enabled %v, %d codes", u.TwoFactorEnabled, len(u.RecoveryCodeHashes))
	}
	// The codes page is gone once left: shown only in the answer to the
	// confirmation, which no cache keeps.
	p = b.get("/settings/security")
	if len(codes) != 8 || strings.Contains(p.Body, codes[0]) {
		t.Error("the recovery codes show again on the settings page")
	}
	p.wantText(t, "twofa-state", "Two-factor authentication is on. Recovery codes left: 8.")
}

func TestRecoveryCodesDownload(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	_, uri, secret := b.startTwoFactor()
	p := b.post("/settings/2fa/confirm", form("code", e.code(secret), "uri", uri))
	m := regexp.MustCompile(`<a class="button secondary" id="codes-download" download="recovery-codes.txt" href="data:text/plain;charset=utf-8,([^"]+)">`).FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no download link\n%s", p.Body)
	}
	file, err := url.PathUnescape(unescape(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	shown := regexp.MustCompile(`<li>([0-9a-z-]+)</li>`).FindAllStringSubmatch(p.Body, -1)
	var want []string
	for _, s := range shown {
		want = append(want, s[1])
	}
	if file != strings.Join(want, "\n")+"\n" || len(want) != 8 {
		t.Errorf("download %q, want the 8 shown codes %q", file, want)
	}
	if p.Header.Get("Cache-Control") != "no-store" {
		t.Error("the page of the codes may be cached")
	}
}

// TestRegenerateNeedsConfirmation: the page asks first; only its post
// replaces the codes.
func TestRegenerateNeedsConfirmation(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	_, old := b.enableTwoFactor()
	before := e.user(adaEmail).RecoveryCodeHashes
	p := b.get("/settings/recovery-codes")
	p.wantPage(t, http.StatusOK, "codes")
	if got := p.text(t, "codes-left"); got != "Recovery codes left: 8." || !strings.Contains(p.Body, `id="regenerate-cancel" href="/settings/security"`) {
		t.Errorf("confirmation page: %q\n%s", got, p.Body)
	}
	if strings.Join(e.user(adaEmail).RecoveryCodeHashes, ",") != strings.Join(before, ",") {
		t.Fatal("opening the confirmation page replaced the codes")
	}
	p = b.post("/settings/recovery-codes", nil)
	p.wantPage(t, http.StatusOK, "codes")
	shown := regexp.MustCompile(`<li>([0-9a-z]{8}-[0-9a-z]{8})</li>`).FindAllStringSubmatch(p.Body, -1)
	if len(shown) != 8 {
		t.Fatalf("%d new codes shown", len(shown))
	}
	for _, s := range shown {
		for _, o := range old {
			if s[1] == o {
				t.Errorf("new code %s is an old one", o)
			}
		}
	}
	if strings.Contains(p.Body, `id="regenerate-form"`) {
		t.Error("the Replace button is still offered")
	}
}

func TestRegenerateWithoutTwoFactor(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	p := b.get("/settings/recovery-codes")
	p.wantText(t, "codes-left", "Two-factor authentication is off: there are no recovery codes to replace.")
	p = b.post("/settings/recovery-codes", nil)
	p.wantPage(t, http.StatusBadRequest, "codes")
	p.wantSummary(t, "2FA is not enabled")
}

func TestDisableTwoFactor(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	b.enableTwoFactor()
	p := b.post("/settings/2fa/disable", form("password", "wrong password"))
	p.wantPage(t, http.StatusUnauthorized, "security")
	p.wantFieldError(t, "disable-password", "Invalid password")
	if !e.user(adaEmail).TwoFactorEnabled {
		t.Fatal("a wrong password turned 2FA off")
	}
	b.post("/settings/2fa/disable", form("password", adaPass)).wantRedirect(t, "/settings/security?done=2fa-disabled")
	u := e.user(adaEmail)
	if u.TwoFactorEnabled || u.TOTPSecret != "" || len(u.RecoveryCodeHashes) != 0 {
		t.Errorf("after disabling: %+v", u)
	}
	p = b.get("/settings/security?done=2fa-disabled")
	if got := p.text(t, "notice"); got != "Two-factor authentication is off." || !strings.Contains(p.Body, `id="setup-start"`) {
		t.Errorf("notice %q\n%s", got, p.Body)
	}
}

// TestSignedOutSettingsPost: a settings form posted after the session
// ended goes to the login page and changes nothing.
func TestSignedOutSettingsPost(t *testing.T) {
	e := setup(t, nil)
	e.browser().register()
	b := e.browser()
	for _, path := range []string{"/settings/2fa/setup", "/settings/2fa/disable", "/settings/recovery-codes", "/settings/email",
		"/settings/password", "/logout-all"} {
		b.post(path, form("password", adaPass, "newEmail", "x@example.com", "currentPassword", adaPass, "newPassword", "new password 1")).
			wantRedirect(t, "/login?done=session-ended")
	}
	if u := e.user(adaEmail); u.PendingTOTPSecret != "" {
		t.Error("a signed-out post started a 2FA setup")
	}
}

// TestTwoFactorSetupAfterAnOldSignIn: a sign-in older than the
// re-authentication window sends 2FA setup to the password confirmation;
// a wrong password is shown beside the field, the right one returns to the
// security page, where setup then works.
func TestTwoFactorSetupAfterAnOldSignIn(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	e.clock.Advance(16 * time.Minute)

	p := b.post("/settings/2fa/setup", nil)
	p.wantRedirect(t, "/settings/confirm-password?next=security")
	if e.user(adaEmail).PendingTOTPSecret != "" {
		t.Fatal("a stale sign-in started a 2FA setup")
	}
	p = b.get("/settings/confirm-password?next=security")
	p.wantPage(t, http.StatusOK, "confirm")
	if !strings.Contains(p.Body, `name="next" value="security"`) || !strings.Contains(p.Body, `autocomplete="current-password"`) {
		t.Errorf("the confirmation form lacks its next key or autocomplete\n%s", p.Body)
	}

	p = b.post("/settings/confirm-password", form("password", "not the password", "next", "security"))
	p.wantPage(t, http.StatusUnauthorized, "confirm")
	p.wantFieldError(t, "confirm-password", "Invalid password")
	p = b.post("/settings/confirm-password", form("password", adaPass, "next", "https://evil.example/"))
	p.wantRedirect(t, "/settings/security?done=password-confirmed")

	p = b.post("/settings/2fa/setup", nil)
	p.wantPage(t, http.StatusOK, "security")
	if e.user(adaEmail).PendingTOTPSecret == "" || !strings.Contains(p.Body, `id="qr-image"`) {
		t.Error("setup after the confirmation shows no QR code or stored no pending secret")
	}
}

// TestConfirmAsksTwoFactorCode: a 2FA account's stale sign-in confirms
// with the password and a second factor: the page shows the code field,
// the password alone is refused beside it, a recovery code confirms, and
// 2FA disable then works.
func TestConfirmAsksTwoFactorCode(t *testing.T) {
	e := setup(t, nil)
	b := e.browser()
	b.register()
	_, codes := b.enableTwoFactor()
	e.clock.Advance(16 * time.Minute)
	b.post("/settings/2fa/disable", form("password", adaPass)).wantRedirect(t, "/settings/confirm-password?next=security")
	if !e.user(adaEmail).TwoFactorEnabled {
		t.Fatal("a stale sign-in turned 2FA off")
	}
	p := b.get("/settings/confirm-password?next=security")
	p.wantPage(t, http.StatusOK, "confirm")
	if !strings.Contains(p.Body, `name="code"`) || !strings.Contains(p.Body, `autocomplete="one-time-code"`) {
		t.Errorf("the confirmation form of a 2FA account has no code field\n%s", p.Body)
	}
	p = b.post("/settings/confirm-password", form("password", adaPass, "next", "security"))
	p.wantPage(t, http.StatusForbidden, "confirm")
	if got := p.fieldError(t, "confirm-code"); got != "Enter your 2FA code to confirm" {
		t.Errorf("beside the code: %q", got)
	}
	b.post("/settings/confirm-password", form("password", adaPass, "code", codes[0], "next", "security")).
		wantRedirect(t, "/settings/security?done=password-confirmed")
	b.post("/settings/2fa/disable", form("password", adaPass)).wantRedirect(t, "/settings/security?done=2fa-disabled")
	if e.user(adaEmail).TwoFactorEnabled {
		t.Fatal("2FA still on")
	}
}
