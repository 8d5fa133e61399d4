package passkeystest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/passkeys"
)

// testPasswordless: a passkey alone signs in on a new browser; its use is
// recorded (counter, last used) and audited, and the challenge cookie is
// deleted.
func testPasswordless(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	_, u, a, _ := e.signUpWithPasskey(t)
	e.clock.Advance(time.Hour)

	b := e.browser()
	begin := b.post(t, passkeys.Prefix+"/login/begin", nil)
	wantOK(t, "login/begin", begin)
	var o RequestOptions
	if err := json.Unmarshal(raw(begin), &o); err != nil {
		t.Fatal(err)
	}
	if o.PublicKey.RPID != RPID || len(o.PublicKey.AllowCredentials) != 0 || o.PublicKey.UserVerification != "required" {
		t.Errorf("login options %s: want rpId %s, no allow list, userVerification required", begin.Body, RPID)
	}
	wantSuccess(t, "login/finish", b.post(t, passkeys.Prefix+"/login/finish", a.Get(raw(begin), Origin, nil)))
	if b.signedInAs(t) != u.ID {
		t.Fatal("the passkey did not sign in")
	}
	if b.cookie(passkeys.ChallengeCookie) != "" {
		t.Error("the challenge cookie outlived the finish")
	}
	if p := e.stored(t, u.ID)[0]; p.SignCount != 1 || !sameTime(p.LastUsedAt, e.clock.Now()) {
		t.Errorf("stored count %d, last used %v; want 1, %v", p.SignCount, p.LastUsedAt, e.clock.Now())
	}
	e.mustEvent(t, auth.EventLoginSucceeded, u.ID, "passkey")
}

// testPasswordlessRefused: an assertion made on another origin, or without
// user verification, signs nobody in and is audited; the attempts count
// against the address's login limit, and past it a failing assertion gets
// the limit's 429 while a verified one still signs in: it cannot have been
// guessed (an office behind one address is not locked out of passkey
// sign-in by one client's guesses).
func testPasswordlessRefused(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, func(c *auth.Config) { c.Limits.LoginIP = auth.Limit{Max: 2, Window: time.Minute} })
	_, u, a, _ := e.signUpWithPasskey(t)
	b := e.browser()
	wantError(t, "assertion from another origin", e.passwordless(t, b, a, nil, "http://evil.example"), auth.ErrPasskeyInvalid)
	e.mustEvent(t, auth.EventLoginFailed, "", "passkey: passkey_invalid")
	a.UserVerified = false
	wantError(t, "assertion without user verification", e.passwordless(t, b, a, nil, Origin), auth.ErrPasskeyInvalid)
	wantError(t, "past the login limit, without user verification", e.passwordless(t, b, a, nil, Origin), auth.ErrTooManyLogins)
	a.UserVerified = true
	wantError(t, "past the login limit, from another origin", e.passwordless(t, b, a, nil, "http://evil.example"), auth.ErrTooManyLogins)
	if b.signedInAs(t) != "" {
		t.Fatal("a refused assertion signed in")
	}
	wantSuccess(t, "a verified assertion past the login limit", e.passwordless(t, b, a, nil, Origin))
	if got := b.signedInAs(t); got != u.ID {
		t.Fatalf("signed in as %q, want %q", got, u.ID)
	}
	// The password step from the same address stays refused: answering it
	// would tell a guesser whether the password was right.
	wantError(t, "a password past the login limit", e.browser().post(t, "/api/login",
		map[string]any{"email": "ada@example.com", "password": password}), auth.ErrTooManyLogins)
}

// testPasswordlessOff: with AllowPasswordless false the login ceremony is
// not there (404 feature_disabled); passkeys stay a second factor.
func testPasswordlessOff(t *testing.T, h Harness) {
	off := false
	e := newEnv(t, h, func(c *passkeys.Config) { c.AllowPasswordless = &off }, nil)
	b := e.browser()
	wantError(t, "login/begin", b.post(t, passkeys.Prefix+"/login/begin", nil), auth.ErrFeatureDisabled)
	wantError(t, "login/finish", b.post(t, passkeys.Prefix+"/login/finish", map[string]any{}), auth.ErrFeatureDisabled)
}

// testTwoFactor: at the 2FA step a passkey of the pending user, and only
// one of theirs, finishes the login like a TOTP code: the pending cookie
// goes, a session comes, the use is recorded and audited.
func testTwoFactor(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	u, a, c := e.twoFactorUser(t)
	b := e.pending(t, "ada@example.com")
	begin := b.post(t, passkeys.Prefix+"/2fa/begin", nil)
	wantOK(t, "2fa/begin", begin)
	var o RequestOptions
	if err := json.Unmarshal(raw(begin), &o); err != nil {
		t.Fatal(err)
	}
	if len(o.PublicKey.AllowCredentials) != 1 || o.PublicKey.AllowCredentials[0].ID != b64(c.ID) {
		t.Fatalf("2fa options %s: want the user's one credential allowed", begin.Body)
	}
	wantSuccess(t, "2fa/finish", b.post(t, passkeys.Prefix+"/2fa/finish", a.Get(raw(begin), Origin, nil)))
	if b.signedInAs(t) != u.ID || b.cookie(auth.PendingCookie) != "" {
		t.Fatal("the passkey step did not finish the login")
	}
	if p := e.stored(t, u.ID)[0]; p.SignCount != 1 {
		t.Errorf("stored count %d, want 1", p.SignCount)
	}
	e.mustEvent(t, auth.EventLoginSucceeded, u.ID, "passkey")
}

// testTwoFactorErrorKeepsPending: a failed passkey step keeps the pending
// cookie (the user may try again, or use TOTP), signs nobody in and is
// audited as a failed second factor; the next try succeeds.
func testTwoFactorErrorKeepsPending(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	u, a, _ := e.twoFactorUser(t)
	b := e.pending(t, "ada@example.com")
	pending := b.cookie(auth.PendingCookie)
	begin := b.post(t, passkeys.Prefix+"/2fa/begin", nil)
	wantError(t, "2fa/finish from another origin", b.post(t, passkeys.Prefix+"/2fa/finish", a.Get(raw(begin), "http://evil.example", nil)), auth.ErrPasskeyInvalid)
	if b.cookie(auth.PendingCookie) != pending || b.signedInAs(t) != "" {
		t.Fatal("a failed passkey step dropped the pending login or signed in")
	}
	e.mustEvent(t, auth.EventTwoFactorFailed, u.ID, "passkey: passkey_invalid")
	wantError(t, "the same finish again", b.post(t, passkeys.Prefix+"/2fa/finish", a.Get(raw(begin), Origin, nil)), auth.ErrPasskeyChallengeInvalid)
	if b.cookie(auth.PendingCookie) != pending {
		t.Fatal("a spent challenge dropped the pending login")
	}
	begin = b.post(t, passkeys.Prefix+"/2fa/begin", nil)
	wantSuccess(t, "2fa/finish, again", b.post(t, passkeys.Prefix+"/2fa/finish", a.Get(raw(begin), Origin, nil)))
	if b.signedInAs(t) != u.ID {
		t.Fatal("the second try did not sign in")
	}
}

// testTwoFactorNeedsPending: without a pending login the 2FA ceremony
// does not begin or finish; a 2FA user without passkeys has none to
// allow.
func testTwoFactorNeedsPending(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b := e.browser()
	wantError(t, "2fa/begin without a pending login", b.post(t, passkeys.Prefix+"/2fa/begin", nil), auth.ErrNoPendingTwoFactor)
	wantError(t, "2fa/finish without a ceremony", b.post(t, passkeys.Prefix+"/2fa/finish", map[string]any{}), auth.ErrPasskeyChallengeInvalid)
	home, _ := e.signUp(t, "bob@example.com")
	e.enable2FA(t, home)
	wantError(t, "2fa/begin of a user without passkeys", e.pending(t, "bob@example.com").post(t, passkeys.Prefix+"/2fa/begin", nil), auth.ErrPasskeyNotFound)
}

// testTwoFactorBound: a ceremony begun under one pending login does not
// finish another pending login of the same user.
func testTwoFactorBound(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	_, a, _ := e.twoFactorUser(t)
	b := e.pending(t, "ada@example.com")
	e.clock.Advance(time.Second) // a pending token of its own
	other := e.pending(t, "ada@example.com")
	begin := other.post(t, passkeys.Prefix+"/2fa/begin", nil)
	wantOK(t, "2fa/begin", begin)
	mixed := b.clone()
	mixed.setCookie(passkeys.ChallengeCookie, other.cookie(passkeys.ChallengeCookie))
	wantError(t, "challenge of another pending login", mixed.post(t, passkeys.Prefix+"/2fa/finish", a.Get(raw(begin), Origin, nil)), auth.ErrPasskeyChallengeInvalid)
	if mixed.signedInAs(t) != "" {
		t.Fatal("a ceremony of another pending login signed in")
	}
}

// testTwoFactorLimit: failed passkey steps count against the per-user 2FA
// limit, which TOTP codes share.
func testTwoFactorLimit(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, func(c *auth.Config) { c.Limits.TwoFactor = auth.Limit{Max: 2, Window: time.Minute} })
	_, a, _ := e.twoFactorUser(t)
	b := e.pending(t, "ada@example.com")
	for range 2 {
		begin := b.post(t, passkeys.Prefix+"/2fa/begin", nil)
		wantError(t, "a failed step", b.post(t, passkeys.Prefix+"/2fa/finish", a.Get(raw(begin), "http://evil.example", nil)), auth.ErrPasskeyInvalid)
	}
	begin := b.post(t, passkeys.Prefix+"/2fa/begin", nil)
	wantError(t, "past the limit", b.post(t, passkeys.Prefix+"/2fa/finish", a.Get(raw(begin), Origin, nil)), auth.ErrTooManyTwoFactor)
	wantError(t, "TOTP shares the limit", b.post(t, "/api/2fa/verify", map[string]string{"code": "123456"}), auth.ErrTooManyTwoFactor)
	if b.signedInAs(t) != "" || b.cookie(auth.PendingCookie) == "" {
		t.Fatal("the limited step signed in or dropped the pending login")
	}
}
