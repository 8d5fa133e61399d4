package authtest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// Notices (docs/api.md, Tokens and mailed links): the account hears of 2FA turned on,
// recovery codes replaced or used, of a sign-in from a browser that had
// not signed in to it before (the device cookie, not every login), and of
// a spent TOTP code entered again from such a browser.

const testUserAgent = "AuthTest/1.0 (suite browser)"

// noticeTime is how the notices word the clock's time in English.
func (e *env) noticeTime() string { return e.clock.Now().UTC().Format("2 January 2006 at 15:04 UTC") }

// mustNotice checks the latest mail of kind to addr: sent, stating want
// in the text and the HTML part, and the time of the event.
func (e *env) mustNotice(t *testing.T, addr string, kind mail.Kind, subject string, want ...string) mail.Message {
	t.Helper()
	m := e.lastMail(t, addr, kind)
	if m.Subject != "authkit: "+subject {
		t.Errorf("%s mail: subject %q, want %q", kind, m.Subject, "authkit: "+subject)
	}
	for _, w := range append(want, e.noticeTime()) {
		if !strings.Contains(m.Text, w) || !strings.Contains(m.HTML, w) {
			t.Errorf("%s mail: does not state %q:\n%s\n%s", kind, w, m.Text, m.HTML)
		}
	}
	return m
}

// mustMailCount checks how many mails of kind addr got.
func (e *env) mustMailCount(t *testing.T, addr string, kind mail.Kind, want int) {
	t.Helper()
	if n := len(e.mails(t, addr, kind)); n != want {
		t.Errorf("%d %s mails to %s, want %d", n, kind, addr, want)
	}
}

func (s suite) noticeTwoFactorEnabled(t *testing.T) {
	e := s.env(t)
	_, u, _, _ := e.twoFactorUser(t)
	e.mustNotice(t, "ada@example.com", mail.KindTwoFactorEnabled, "Two-factor authentication was turned on",
		"Two-factor authentication was turned on for your account at authkit on")
	e.mustMailCount(t, "ada@example.com", mail.KindTwoFactorEnabled, 1)
	if ev, ok := e.audit.Last(auth.EventTwoFactorEnabled); !ok || ev.UserID != u.ID {
		t.Errorf("audit: no %s event for %s", auth.EventTwoFactorEnabled, u.ID)
	}
}

func (s suite) noticeCodesRegenerated(t *testing.T) {
	e := s.env(t)
	c, u, _, _ := e.twoFactorUser(t)
	e.mustMailCount(t, "ada@example.com", mail.KindRecoveryCodesRegenerated, 0)
	if r := c.post("/api/2fa/regenerate-codes", nil); r.Status != http.StatusOK {
		t.Fatalf("%s: want 200", r)
	}
	e.mustNotice(t, "ada@example.com", mail.KindRecoveryCodesRegenerated, "Your recovery codes were replaced",
		"New recovery codes were made for your account", "The earlier codes no longer work")
	if ev, ok := e.audit.Last(auth.EventRecoveryCodesRegenerated); !ok || ev.UserID != u.ID {
		t.Errorf("audit: no %s event for %s", auth.EventRecoveryCodesRegenerated, u.ID)
	}
	// A refused regeneration (stale session) mails nothing.
	e.stale()
	mustNeedReauth(t, c.post("/api/2fa/regenerate-codes", nil))
	e.mustMailCount(t, "ada@example.com", mail.KindRecoveryCodesRegenerated, 1)
}

func (s suite) noticeRecoveryCodeUsed(t *testing.T) {
	e := s.env(t)
	_, u, _, codes := e.twoFactorUser(t)
	p := e.pending(t)
	mustStatus(t, p.recover("0000000000000000"), http.StatusBadRequest, errInvalidRecovery)
	e.mustMailCount(t, "ada@example.com", mail.KindRecoveryCodeUsed, 0)
	mustBody(t, p.recover(codes[0]), obj{"success": true, "remainingCodes": 7})
	e.mustNotice(t, "ada@example.com", mail.KindRecoveryCodeUsed, "A recovery code was used to sign in",
		"A recovery code was used to sign in to your account", "You have 7 recovery codes left")
	if ev, ok := e.audit.Last(auth.EventRecoveryCodeUsed); !ok || ev.UserID != u.ID || ev.Detail != "remaining 7" {
		t.Errorf("audit: %+v, want %s for %s, remaining 7", ev, auth.EventRecoveryCodeUsed, u.ID)
	}
	for i := 1; i < 7; i++ {
		mustBody(t, e.pending(t).recover(codes[i]), obj{"success": true, "remainingCodes": 7 - i})
	}
	e.mustNotice(t, "ada@example.com", mail.KindRecoveryCodeUsed, "A recovery code was used to sign in",
		"You have 1 recovery code left; each works once. Make new ones soon")
	e.mustMailCount(t, "ada@example.com", mail.KindRecoveryCodeUsed, 7)
}

// noticeNewDevice: registration marks its browser; a login from it mails
// nothing, a login from another browser mails the notice with the time,
// the address and the browser, and marks that browser too.
func (s suite) noticeNewDevice(t *testing.T) {
	e := s.env(t)
	home := e.client()
	u := e.signup(t, home, "ada@example.com")
	ck := home.cookie(auth.DeviceCookie)
	if ck == nil || ck.Value == "" {
		t.Fatalf("registration set no %s cookie", auth.DeviceCookie)
	}
	mustMessage(t, home.post("/api/auth/logout", nil), msgLoggedOut)
	if home.cookie(auth.DeviceCookie) == nil {
		t.Errorf("logout deleted the %s cookie", auth.DeviceCookie)
	}
	mustLogin(t, home, "ada@example.com", goodPassword)
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, 0)

	e.clock.Advance(time.Hour)
	away := e.client()
	away.header.Set("User-Agent", testUserAgent)
	r := away.login("ada@example.com", goodPassword)
	mustBody(t, r, obj{"success": true})
	dc := r.setCookie(auth.DeviceCookie)
	if dc == nil || !dc.HttpOnly || dc.SameSite != http.SameSiteLaxMode || dc.Path != "/" || dc.MaxAge != 365*24*60*60 {
		t.Errorf("%s: device cookie %v, want HttpOnly, SameSite=Lax, Path=/, Max-Age=31536000", r, dc)
	}
	e.mustNotice(t, "ada@example.com", mail.KindNewSignIn, "New sign-in to your account",
		"from a device or browser that had not signed in to it before", "Address: 127.0.0.1", "Browser: "+testUserAgent)
	if ev, ok := e.audit.Last(auth.EventNewDeviceSignIn); !ok || ev.UserID != u.ID || ev.Detail != testUserAgent {
		t.Errorf("audit: %+v, want %s for %s with the User-Agent", ev, auth.EventNewDeviceSignIn, u.ID)
	}
	// Both browsers are known now.
	mustLogin(t, away, "ada@example.com", goodPassword)
	mustLogin(t, home, "ada@example.com", goodPassword)
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, 1)
	// A failed login mails nothing.
	mustStatus(t, e.client().login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, 1)
}

// noticeNewDeviceTwoFactor: with 2FA the notice follows the second step,
// not the password step.
func (s suite) noticeNewDeviceTwoFactor(t *testing.T) {
	e := s.env(t)
	_, _, secret, codes := e.twoFactorUser(t)
	c := e.client()
	pendingLogin(t, c, "ada@example.com")
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, 0)
	e.nextStep()
	mustBody(t, c.verify(e.now(t, secret)), obj{"success": true})
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, 1)
	// The same browser again, by recovery code: known.
	pendingLogin(t, c, "ada@example.com")
	mustBody(t, c.recover(codes[0]), obj{"success": true, "remainingCodes": 7})
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, 1)
}

// noticeDeviceCookieBound: a device cookie counts only for its own user
// and only while it verifies.
func (s suite) noticeDeviceCookieBound(t *testing.T) {
	e := s.env(t, relaxed)
	// Both accounts signed in under authkit before, elsewhere: an account's
	// first sign-in mails nothing when the store implements user.SignIns.
	for _, addr := range []string{"ada@example.com", "bob@example.com"} {
		e.seed(t, addr)
		e.loggedIn(t, addr)
	}
	off := len(e.mails(t, "ada@example.com", mail.KindNewSignIn)) // 0 with user.SignIns, else 1
	c := e.loggedIn(t, "ada@example.com")
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, off+1)
	adas := c.cookie(auth.DeviceCookie).Value

	// Ada's cookie is no device of Bob's.
	mustLogin(t, c, "bob@example.com", goodPassword)
	e.mustMailCount(t, "bob@example.com", mail.KindNewSignIn, off+1)
	// The browser is Bob's now; Ada is new to it again.
	mustLogin(t, c, "ada@example.com", goodPassword)
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, off+2)

	// A tampered cookie, or Ada's in a browser that is not hers, for
	// another purpose: the session cookie is no device cookie.
	for i, v := range []string{adas[:len(adas)-2] + "xx", "garbage", c.cookie(sessionCookie).Value} {
		b := e.client()
		b.setCookie(auth.DeviceCookie, v)
		mustLogin(t, b, "ada@example.com", goodPassword)
		e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, off+3+i)
	}

	// A device cookie ends after a year; every sign-in renews it.
	old := e.client()
	old.setCookie(auth.DeviceCookie, adas)
	e.clock.Advance(364 * 24 * time.Hour)
	mustLogin(t, old, "ada@example.com", goodPassword) // renewed now
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, off+5)
	stale := e.client()
	stale.setCookie(auth.DeviceCookie, adas)
	e.clock.Advance(2 * 24 * time.Hour)
	mustLogin(t, old, "ada@example.com", goodPassword)
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, off+5)
	mustLogin(t, stale, "ada@example.com", goodPassword)
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, off+6)
}

// noticeFirstSignIn: the first sign-in of an account from before
// authkit (seeded in the store) mails no new-device notice when the store
// implements user.SignIns, and audits it; a second browser afterwards is
// mailed. A store without the part mails the first one too.
func (s suite) noticeFirstSignIn(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	e.loggedIn(t, "ada@example.com")
	if _, ok := e.users.(user.SignIns); !ok {
		e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, 1)
		return
	}
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, 0)
	if ev, ok := e.audit.Last(auth.EventNewDeviceSignIn); !ok || ev.UserID != u.ID || ev.Detail != "first sign-in" {
		t.Errorf("audit: %+v, want %s for %s with the detail %q", ev, auth.EventNewDeviceSignIn, u.ID, "first sign-in")
	}
	e.clock.Advance(time.Minute)
	e.loggedIn(t, "ada@example.com")
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, 1)
}

// noticeNewSignInLimit: a client without a cookie jar that signs in 20
// times in two minutes causes one new-device notice, which says so; the
// first sign-in after the hour is mailed again.
func (s suite) noticeNewSignInLimit(t *testing.T) {
	e := s.env(t, func(c *auth.Config) {
		big := auth.Limit{Max: 1000, Window: time.Hour}
		c.Limits.LoginIP, c.Limits.LoginEmail = big, big
	})
	e.signup(t, e.client(), "ada@example.com")
	for range 20 {
		e.loggedIn(t, "ada@example.com")
		e.clock.Advance(6 * time.Second)
	}
	const window = "Further sign-ins from new browsers within 1 hour get no mail of their own"
	if m := e.lastMail(t, "ada@example.com", mail.KindNewSignIn); !strings.Contains(m.Text, window) {
		t.Errorf("new_sign_in mail does not say %q:\n%s", window, m.Text)
	}
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, 1)
	if e.h.RealTimeLimits {
		return // the hour below passes on the suite's clock, not the limit store's
	}
	e.clock.Advance(time.Hour)
	e.loggedIn(t, "ada@example.com")
	e.mustMailCount(t, "ada@example.com", mail.KindNewSignIn, 2)
}

// noticesInGerman: the notices go out in the visit's language.
func (s suite) noticesInGerman(t *testing.T) {
	e := s.env(t, withGerman(t))
	c := e.client()
	e.signup(t, c, "ada@example.com")
	b := e.client()
	b.header.Set("Accept-Language", "de")
	mustLogin(t, b, "ada@example.com", goodPassword)
	m := e.lastMail(t, "ada@example.com", mail.KindNewSignIn)
	if m.Subject != "authkit: Neue Anmeldung bei Ihrem Konto" || !strings.Contains(m.Text, "Adresse: 127.0.0.1") ||
		!strings.Contains(m.HTML, `<html lang="de">`) {
		t.Errorf("new-device notice not in German:\n%s\n%s", m.Subject, m.Text)
	}
	secret := e.setup2FA(t, c)
	c.header.Set("Accept-Language", "de")
	if r := c.post("/api/2fa/confirm", obj{"code": e.now(t, secret)}); r.Status != http.StatusOK {
		t.Fatalf("%s: want 200", r)
	}
	if m := e.lastMail(t, "ada@example.com", mail.KindTwoFactorEnabled); m.Subject != "authkit: Die Zwei-Faktor-Anmeldung wurde eingeschaltet" {
		t.Errorf("2FA notice subject %q, want German", m.Subject)
	}
}

// noticeCodeReused (ASVS 2.8.5): a TOTP code that signed in already,
// entered again at the 2FA step from a browser that never signed in to
// the account, is refused and mailed to the holder with the address and
// the browser; the holder's own browser entering it twice mails nothing.
func (s suite) noticeCodeReused(t *testing.T) {
	e := s.env(t)
	_, u, secret, _ := e.twoFactorUser(t)
	e.nextStep()
	code := e.now(t, secret)
	owner := e.pending(t)
	mustBody(t, owner.verify(code), obj{"success": true})
	e.mustMailCount(t, "ada@example.com", mail.KindTwoFactorCodeReused, 0)

	// The owner's browser (it holds the device cookie now) enters the
	// spent code again: refused, and no mail.
	mustMessage(t, owner.post("/api/auth/logout", nil), msgLoggedOut)
	pendingLogin(t, owner, "ada@example.com")
	mustRefuseUsed(t, owner, code)
	e.mustMailCount(t, "ada@example.com", mail.KindTwoFactorCodeReused, 0)

	// Another browser with the password and the seen code: refused, the
	// holder told.
	thief := e.client()
	thief.header.Set("User-Agent", testUserAgent)
	pendingLogin(t, thief, "ada@example.com")
	mustRefuseUsed(t, thief, code)
	e.mustNotice(t, "ada@example.com", mail.KindTwoFactorCodeReused, "Your two-factor code was entered twice",
		"that had already signed in was entered again", "It was refused.", "Address: 127.0.0.1", "Browser: "+testUserAgent)
	e.mustMailCount(t, "ada@example.com", mail.KindTwoFactorCodeReused, 1)
	if ev, ok := e.audit.Last(auth.EventTwoFactorFailed); !ok || ev.UserID != u.ID || ev.Detail != "code already used" {
		t.Errorf("audit: %+v, want %s for %s, code already used", ev, auth.EventTwoFactorFailed, u.ID)
	}
	mustBeSignedOut(t, thief)
	// A wrong code is no reuse: no mail.
	mustStatus(t, thief.verify("000000"), http.StatusBadRequest, errInvalid2FACode)
	e.mustMailCount(t, "ada@example.com", mail.KindTwoFactorCodeReused, 1)
}
