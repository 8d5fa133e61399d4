package authtest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

// mustPendingCookie checks the attributes of docs/api.md "Cookies" on a 2fa_pending
// Set-Cookie line.
func mustPendingCookie(t *testing.T, r *reply, secure bool) {
	t.Helper()
	ck := r.setCookie(auth.PendingCookie)
	if ck == nil {
		t.Fatalf("%s: no Set-Cookie for %s", r, auth.PendingCookie)
	}
	if ck.Value == "" || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" ||
		ck.MaxAge != 300 || ck.Secure != secure || ck.Domain != "" {
		t.Errorf("%s: Set-Cookie %q; want a value, HttpOnly, SameSite=Lax, Path=/, Max-Age=300, Secure %v, no Domain",
			r, ck.Raw, secure)
	}
}

// mustSessionCookie checks the session Set-Cookie line of a login: the
// docs/api.md attributes, Max-Age 30 days with remember, none without.
func mustSessionCookie(t *testing.T, r *reply, remember, secure bool) {
	t.Helper()
	ck := r.setCookie(sessionCookie)
	if ck == nil {
		t.Fatalf("%s: no Set-Cookie for %s", r, sessionCookie)
	}
	if ck.Value == "" || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.Secure != secure || ck.Domain != "" {
		t.Errorf("%s: Set-Cookie %q; want a value, HttpOnly, SameSite=Lax, Path=/, Secure %v, no Domain", r, ck.Raw, secure)
	}
	switch {
	case remember && ck.MaxAge != rememberMaxAge:
		t.Errorf("%s: Set-Cookie %q; with remember want Max-Age=%d", r, ck.Raw, rememberMaxAge)
	case !remember && (ck.MaxAge != 0 || !ck.Expires.IsZero()):
		t.Errorf("%s: Set-Cookie %q; without remember want a browser-session cookie (no Max-Age, no Expires)", r, ck.Raw)
	}
}

func (s suite) loginWithout2FA(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	c := e.client()
	r := c.login("ADA@example.com", goodPassword)
	mustBody(t, r, obj{"success": true})
	mustSessionCookie(t, r, false, false)
	if r.setCookie(auth.PendingCookie) != nil {
		t.Errorf("%s: sets %s for a user without 2FA", r, auth.PendingCookie)
	}
	mustBeSignedIn(t, c, "ada@example.com")
}

func (s suite) loginWrongCredentials(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	c := e.client()
	mustStatus(t, c.login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	mustStatus(t, c.login("nobody@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
	mustBeSignedOut(t, c)
}

func (s suite) loginFailuresAlike(t *testing.T) {
	e := s.env(t, trustAll)
	e.seed(t, "ada@example.com")
	wrong := e.clientFrom("203.0.113.1").login("ada@example.com", wrongPassword)
	mustStatus(t, wrong, http.StatusUnauthorized, errInvalidCredentials)
	unknown := e.clientFrom("203.0.113.2").login("nobody@example.com", wrongPassword)
	e.mustSameReply(t, unknown, wrong)
}

func (s suite) login2FASetsPending(t *testing.T) {
	e := s.env(t)
	e.twoFactorUser(t)
	b := e.client()
	r := pendingLogin(t, b, "ada@example.com")
	mustPendingCookie(t, r, false)
	if r.setCookie(sessionCookie) != nil {
		t.Errorf("%s: sets a session cookie before the second factor", r)
	}
	mustBeSignedOut(t, b)
}

func (s suite) verifyLogsIn(t *testing.T) {
	e := s.env(t)
	_, u, secret, _ := e.twoFactorUser(t)
	b := e.pending(t)
	e.nextStep()
	r := b.verify(e.now(t, secret))
	mustBody(t, r, obj{"success": true})
	mustDeletePending(t, b, r)
	mustSessionCookie(t, r, false, false)
	mustBeSignedIn(t, b, "ada@example.com")
	if got, want := e.byID(t, u.ID).LastTOTPStep, e.totp.Step(e.clock.Now()); got != want {
		t.Errorf("store: lastTotpStep = %d, want the current step %d", got, want)
	}
}

func (s suite) pendingCookieLifetime(t *testing.T) {
	e := s.env(t)
	_, _, secret, _ := e.twoFactorUser(t)
	b := e.pending(t)
	e.clock.Advance(5*time.Minute - time.Second)
	mustBody(t, b.verify(e.now(t, secret)), obj{"success": true})
}

func (s suite) verifyWithoutPending(t *testing.T) {
	e := s.env(t)
	_, _, secret, _ := e.twoFactorUser(t)
	e.nextStep()
	mustStatus(t, e.client().verify(e.now(t, secret)), http.StatusUnauthorized, errNoPending2FA)
}

func (s suite) verifyTamperedPending(t *testing.T) {
	e := s.env(t)
	_, _, secret, _ := e.twoFactorUser(t)
	b := e.pending(t)
	b.setCookie(auth.PendingCookie, tamper(b.cookie(auth.PendingCookie).Value))
	e.nextStep()
	r := b.verify(e.now(t, secret))
	mustStatus(t, r, http.StatusUnauthorized, err2FAExpired)
	mustKeepPending(t, b, r)
	mustBeSignedOut(t, b)
}

func (s suite) verifyExpiredPending(t *testing.T) {
	e := s.env(t)
	_, _, secret, _ := e.twoFactorUser(t)
	b := e.pending(t)
	e.clock.Advance(5*time.Minute + time.Second)
	r := b.verify(e.now(t, secret))
	mustStatus(t, r, http.StatusUnauthorized, err2FAExpired)
	mustKeepPending(t, b, r)
	r = b.recover("aaaaaaaa-aaaaaaaa")
	mustStatus(t, r, http.StatusUnauthorized, err2FAExpired)
	mustBeSignedOut(t, b)
}

func (s suite) verifyDeletedUser(t *testing.T) {
	e := s.env(t)
	_, u, secret, codes := e.twoFactorUser(t)
	b := e.pending(t)
	if err := e.users.Delete(e.ctx(), u.ID); err != nil {
		t.Fatalf("store: Delete: %v", err)
	}
	e.mustRefuseOrphanedPending(t, b, secret)
	mustStatus(t, b.recover(codes[0]), http.StatusUnauthorized, errInvalidSession)
	mustBeSignedOut(t, b)
}

// mustRefuseOrphanedPending checks that b's pending login, whose user or
// 2FA has gone, refuses a right code of the next TOTP step: 401 with
// errInvalidSession, the pending cookie kept.
func (e *env) mustRefuseOrphanedPending(t *testing.T, b *client, secret string) {
	t.Helper()
	e.nextStep()
	r := b.verify(e.now(t, secret))
	mustStatus(t, r, http.StatusUnauthorized, errInvalidSession)
	mustKeepPending(t, b, r)
}

func (s suite) verifyAfterDisable(t *testing.T) {
	e := s.env(t)
	c, _, secret, codes := e.twoFactorUser(t)
	b := e.pending(t)
	mustMessage(t, c.post("/api/2fa/disable", obj{"password": goodPassword}), msg2FADisabled)
	e.mustRefuseOrphanedPending(t, b, secret)
	// Recover makes no twoFactorEnabled check (as the spec has it), but disabling
	// cleared the codes.
	mustStatus(t, b.recover(codes[0]), http.StatusBadRequest, errInvalidRecovery)
	mustBeSignedOut(t, b)
}

func (s suite) pendingFinishesOnce(t *testing.T) {
	e := s.env(t)
	_, u, secret, codes := e.twoFactorUser(t)
	b := e.pending(t)
	kept := e.client() // a copy of the pending cookie, kept past the second step
	kept.setCookie(auth.PendingCookie, b.cookie(auth.PendingCookie).Value)
	e.nextStep()
	mustBody(t, b.verify(e.now(t, secret)), obj{"success": true})
	// Within its 5 minutes, with another factor: refused, and the
	// recovery code is not spent.
	e.clock.Advance(time.Minute)
	mustStatus(t, kept.recover(codes[0]), http.StatusUnauthorized, err2FAExpired)
	e.nextStep()
	mustStatus(t, kept.verify(e.now(t, secret)), http.StatusUnauthorized, err2FAExpired)
	mustBeSignedOut(t, kept)
	if n := len(e.byID(t, u.ID).RecoveryCodeHashes); n != 8 {
		t.Errorf("store: %d recovery codes after the refused second try, want 8", n)
	}
	if n := e.audit.Count(auth.EventLoginSucceeded, u.ID); n != 1 {
		t.Errorf("%d login_succeeded events, want 1", n)
	}
	// A wrong code gives the pending login back: the next right one signs in.
	c := e.pending(t)
	mustStatus(t, c.recover("aaaaaaaa-aaaaaaaa"), http.StatusBadRequest, errInvalidRecovery)
	mustBody(t, c.recover(codes[0]), obj{"success": true, "remainingCodes": 7})
}

func (s suite) pendingEndedBySessionBump(t *testing.T) {
	e := s.env(t)
	c, _, secret, codes := e.twoFactorUser(t)
	b := e.pending(t)
	mustMessage(t, c.post("/api/auth/logout-all", nil), msgLoggedOutAll)
	e.nextStep()
	r := b.verify(e.now(t, secret))
	mustStatus(t, r, http.StatusUnauthorized, err2FAExpired)
	mustStatus(t, b.recover(codes[0]), http.StatusUnauthorized, err2FAExpired)
	mustBeSignedOut(t, b)
	// A pending login started after the change works.
	e.loginWith2FA(t, b, "ada@example.com", secret)
}

func (s suite) wrongCodeKeepsPending(t *testing.T) {
	e := s.env(t)
	_, u, secret, _ := e.twoFactorUser(t)
	b := e.pending(t)
	e.nextStep()
	before := e.byID(t, u.ID).LastTOTPStep
	r := b.verify(e.wrongCode(t, secret))
	mustStatus(t, r, http.StatusBadRequest, errInvalid2FACode)
	mustKeepPending(t, b, r)
	mustBeSignedOut(t, b)
	if got := e.byID(t, u.ID).LastTOTPStep; got != before {
		t.Errorf("store: lastTotpStep moved from %d to %d on a wrong code", before, got)
	}
	mustBody(t, b.verify(e.now(t, secret)), obj{"success": true})
}

func (s suite) confirmingCodeCannotLogIn(t *testing.T) {
	e := s.env(t)
	c, _, secret := e.settingUp2FA(t)
	confirming := e.now(t, secret)
	if r := c.post("/api/2fa/confirm", obj{"code": confirming}); r.Status != http.StatusOK {
		t.Fatalf("%s: want 200", r)
	}
	mustRefuseUsed(t, e.pending(t), confirming)
}

func (s suite) codeOncePerStep(t *testing.T) {
	e := s.env(t)
	code := e.usedCode(t)
	mustRefuseUsed(t, e.pending(t), code)
}

func (s suite) usedCodeNotReplayedNextStep(t *testing.T) {
	// The spec's rule alone (current step <= lastTotpStep) accepts a
	// code of step S again in step S+1, where it is still inside the
	// window; SECURITY.md deviation 2 refuses it (matched step S <= last).
	e := s.env(t)
	code := e.usedCode(t)
	e.nextStep()
	x := e.pending(t)
	mustStatus(t, x.verify(code), http.StatusBadRequest, errCodeUsed)
	mustBeSignedOut(t, x)
}

func (s suite) nextStepCodeNotReplayed(t *testing.T) {
	// SECURITY.md deviation 2: lastTotpStep = max(current, matched).
	e := s.env(t)
	_, u, secret, _ := e.twoFactorUser(t)
	e.nextStep()
	next := e.code(t, secret, e.clock.Now().Add(30*time.Second))
	b := e.pending(t)
	mustBody(t, b.verify(next), obj{"success": true})
	if got, want := e.byID(t, u.ID).LastTOTPStep, e.totp.Step(e.clock.Now())+1; got != want {
		t.Errorf("store: lastTotpStep = %d, want the matched step %d", got, want)
	}
	e.nextStep()
	x := e.pending(t)
	mustStatus(t, x.verify(next), http.StatusBadRequest, errCodeUsed)
	mustBeSignedOut(t, x)
	// The step after that takes a fresh code again.
	e.nextStep()
	mustBody(t, x.verify(e.now(t, secret)), obj{"success": true})
}

func (s suite) recoverSpendsCode(t *testing.T) {
	e := s.env(t)
	_, u, _, codes := e.twoFactorUser(t)
	b := e.pending(t)
	r := b.recover(codes[3])
	mustBody(t, r, obj{"success": true, "remainingCodes": 7})
	mustDeletePending(t, b, r)
	mustSessionCookie(t, r, false, false)
	mustBeSignedIn(t, b, "ada@example.com")
	if n := len(e.byID(t, u.ID).RecoveryCodeHashes); n != 7 {
		t.Errorf("store: %d recovery code hashes after one recovery, want 7", n)
	}
	x := e.pending(t)
	r = x.recover(codes[3])
	mustStatus(t, r, http.StatusBadRequest, errInvalidRecovery)
	mustKeepPending(t, x, r)
	mustBeSignedOut(t, x)
	if n := len(e.byID(t, u.ID).RecoveryCodeHashes); n != 7 {
		t.Errorf("store: %d recovery code hashes after a refused code, want 7", n)
	}
}

func (s suite) recoveryCodeForms(t *testing.T) {
	e := s.env(t)
	_, u, _, codes := e.twoFactorUser(t)
	b := e.pending(t)
	mustBody(t, b.recover(strings.ToUpper(codes[0])), obj{"success": true, "remainingCodes": 7})
	x := e.pending(t)
	mustBody(t, x.post("/api/2fa/recover", obj{"code": strings.ReplaceAll(codes[1], "-", "")}), obj{"success": true, "remainingCodes": 6})
	if n := len(e.byID(t, u.ID).RecoveryCodeHashes); n != 6 {
		t.Errorf("store: %d recovery code hashes, want 6", n)
	}
}

func (s suite) recoverBadPending(t *testing.T) {
	e := s.env(t)
	_, u, _, codes := e.twoFactorUser(t)
	b := e.client()
	mustStatus(t, b.recover(codes[0]), http.StatusUnauthorized, errNoPending2FA)
	pendingLogin(t, b, "ada@example.com")
	b.setCookie(auth.PendingCookie, tamper(b.cookie(auth.PendingCookie).Value))
	mustStatus(t, b.recover(codes[0]), http.StatusUnauthorized, err2FAExpired)
	if n := len(e.byID(t, u.ID).RecoveryCodeHashes); n != 8 {
		t.Errorf("store: %d recovery code hashes, want 8", n)
	}
	mustBeSignedOut(t, b)
}

func (s suite) rememberThirtyDays(t *testing.T) {
	e := s.env(t)
	e.seed(t, "bob@example.com")
	r := e.client().post("/api/login", obj{"email": "bob@example.com", "password": goodPassword, "remember": true})
	mustBody(t, r, obj{"success": true})
	mustSessionCookie(t, r, true, false)
	r = e.client().post("/api/login", obj{"email": "bob@example.com", "password": goodPassword, "remember": false})
	mustBody(t, r, obj{"success": true})
	mustSessionCookie(t, r, false, false)
}

func (s suite) rememberThrough2FA(t *testing.T) {
	e := s.env(t)
	_, _, secret, codes := e.twoFactorUser(t)
	// remember at login, nothing said at verify.
	b := e.client()
	mustBody(t, b.post("/api/login", obj{"email": "ada@example.com", "password": goodPassword, "remember": true}),
		obj{"requiresTwoFactor": true})
	e.nextStep()
	r := b.verify(e.now(t, secret))
	mustBody(t, r, obj{"success": true})
	mustSessionCookie(t, r, true, false)
	// remember at verify.
	x := e.pending(t)
	e.nextStep()
	r = x.post("/api/2fa/verify", obj{"code": e.now(t, secret), "remember": true})
	mustBody(t, r, obj{"success": true})
	mustSessionCookie(t, r, true, false)
	// neither: a browser-session cookie, also through recover.
	y := e.pending(t)
	r = y.recover(codes[0])
	mustBody(t, r, obj{"success": true, "remainingCodes": 7})
	mustSessionCookie(t, r, false, false)
}

// tamper changes one character in the middle of a token.
func tamper(tok string) string {
	if tok == "" {
		return "x"
	}
	b := []byte(tok)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}
