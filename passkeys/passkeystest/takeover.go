package passkeystest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
)

// The takeover tests: a passkey is a way in that needs neither the password
// nor a session, so it must not outlive the owner's taking the account
// back, nor be added by whoever holds an address nobody proved.

// testRegisterNeedsVerified: while the Service verifies addresses, an
// account whose address is not verified adds no passkey (403
// email_not_verified at begin and finish); once verified it does.
func testRegisterNeedsVerified(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b, u := e.signUpUnverified(t, "ada@example.com")
	wantError(t, "register/begin, unverified", b.post(t, passkeys.Prefix+"/register/begin", nil), auth.ErrEmailNotVerified)
	if b.cookie(passkeys.ChallengeCookie) != "" {
		t.Fatal("a refused begin set a challenge cookie")
	}
	wantOK(t, "verify-email", b.do(t, http.MethodGet, "/api/auth/verify-email/"+e.linkToken(t, mail.KindVerifyEmail, "ada@example.com"), nil))
	begin := b.post(t, passkeys.Prefix+"/register/begin", nil)
	wantOK(t, "register/begin, verified", begin)
	cred, _ := NewAuthenticator(t).Create(raw(begin), Origin)
	cred["name"] = "Laptop"
	wantOK(t, "register/finish, verified", b.post(t, passkeys.Prefix+"/register/finish", cred))
	if n := len(e.stored(t, u.ID)); n != 1 {
		t.Fatalf("%d passkeys stored, want 1", n)
	}
}

// attackerSignsUp signs up victim@example.com with a passkey, from a new
// browser, the attacker's: it returns that browser, the account made and
// the attacker's authenticator and passkey.
func (e *env) attackerSignsUp(t *testing.T) (*browser, *user.User, *Authenticator, *Credential) {
	t.Helper()
	attacker := e.browser()
	r, a, k := e.passkeySignUp(t, attacker, "victim@example.com")
	wantSuccess(t, "the attacker's sign-up", r)
	u, err := e.users.ByEmail(context.Background(), "victim@example.com")
	if err != nil {
		t.Fatal(err)
	}
	return attacker, u, a, k
}

// resetDeletesPasskey resets the password of victim@example.com from the
// browser victim, by the mailed link, and checks that the reset deleted
// the attacker's passkey k (of authenticator a, named name) from the
// account userID: audited, mailed to the owner, signing nobody in. It
// returns the new password.
func (e *env) resetDeletesPasskey(t *testing.T, victim *browser, userID, name string, a *Authenticator, k *Credential) string {
	t.Helper()
	wantOK(t, "forgot-password", victim.post(t, "/api/auth/forgot-password", map[string]string{"email": "victim@example.com"}))
	const newPassword = "the victim's own new password"
	wantOK(t, "reset-password", victim.post(t, "/api/auth/reset-password/"+e.linkToken(t, mail.KindResetPassword, "victim@example.com"),
		map[string]string{"password": newPassword, "confirmPassword": newPassword}))
	if n := len(e.stored(t, userID)); n != 0 {
		t.Fatalf("%d passkeys left after the reset, want 0", n)
	}
	e.mustEvent(t, auth.EventPasskeyDeleted, userID, name)
	e.mustMail(t, mail.KindPasskeyDeleted, "victim@example.com", name, 1)
	wantError(t, "the attacker's passkey after the reset", e.passwordless(t, e.browser(), a, k, Origin), auth.ErrPasskeyInvalid)
	return newPassword
}

// testPreAccountTakeover is the pre-account takeover: on an app that does
// not verify addresses, an attacker registers the victim's address and
// adds a passkey. The victim, told the address is taken, resets the
// password by the mailed link: the attacker's passkey is deleted (audited,
// the owner mailed its name) and signs nobody in, before or after the
// victim logs in.
func testPreAccountTakeover(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, func(c *auth.Config) { c.Disable = append(c.Disable, auth.FeatureEmailVerification) })
	attacker, u := e.signUpUnverified(t, "victim@example.com")
	a := NewAuthenticator(t)
	k, _ := e.addPasskey(t, attacker, a, "Victim's laptop")
	e.clock.Advance(24 * time.Hour)

	victim := e.browser()
	wantError(t, "the victim's sign-up", victim.post(t, "/api/auth/register",
		map[string]string{"email": "victim@example.com", "password": password, "name": "Vic"}), auth.ErrEmailRegistered)
	newPassword := e.resetDeletesPasskey(t, victim, u.ID, "Victim's laptop", a, k)

	wantSuccess(t, "the victim's login", victim.post(t, "/api/login", map[string]string{"email": "victim@example.com", "password": newPassword}))
	thief := e.browser()
	wantError(t, "the attacker's passkey after the victim's login", e.passwordless(t, thief, a, k, Origin), auth.ErrPasskeyInvalid)
	if thief.signedInAs(t) != "" || attacker.signedInAs(t) != "" {
		t.Fatal("the attacker is still signed in")
	}
}

// testThiefPersistence: a thief with a copy of the owner's session and the
// password confirms it and adds a passkey; the owner changes the password
// and logs out everywhere: the thief's passkey is deleted with every
// session, and neither signs in again.
func testThiefPersistence(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	owner, u := e.signUp(t, "ada@example.com")
	e.clock.Advance(20 * time.Minute) // past the re-authentication window, within the idle timeout
	thief := owner.clone()
	wantOK(t, "the thief's confirm-password", thief.post(t, "/api/auth/confirm-password", map[string]string{"password": password}))
	a := NewAuthenticator(t)
	k, _ := e.addPasskey(t, thief, a, "Laptop")

	const newPassword = "the owner's own new password"
	wantOK(t, "change-password", owner.post(t, "/api/auth/change-password",
		map[string]string{"currentPassword": password, "newPassword": newPassword}))
	wantOK(t, "logout-all", owner.post(t, "/api/auth/logout-all", nil))
	if n := len(e.stored(t, u.ID)); n != 0 {
		t.Fatalf("%d passkeys left after logout-everywhere, want 0", n)
	}
	e.mustEvent(t, auth.EventPasskeyDeleted, u.ID, "Laptop")
	e.mustMail(t, mail.KindPasskeyDeleted, "ada@example.com", "Laptop", 1)
	wantError(t, "the thief's passkey", e.passwordless(t, e.browser(), a, k, Origin), auth.ErrPasskeyInvalid)
	if thief.signedInAs(t) != "" || owner.signedInAs(t) != "" {
		t.Fatal("a session outlived logout-everywhere")
	}
}

// testLogoutAllNeedsRecent: logout-everywhere deletes the passkeys, so a
// session whose authentication is old gets 403 reauthentication_required
// and changes nothing; after confirming the password it works.
func testLogoutAllNeedsRecent(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	home, u, _, _ := e.signUpWithPasskey(t)
	e.clock.Advance(auth.DefaultReauthWindow)
	wantError(t, "logout-all, stale", home.post(t, "/api/auth/logout-all", nil), auth.ErrReauthenticationRequired)
	if n := len(e.stored(t, u.ID)); n != 1 || home.signedInAs(t) != u.ID {
		t.Fatalf("a refused logout-all changed something: %d passkeys, signed in %t", n, home.signedInAs(t) == u.ID)
	}
	wantOK(t, "confirm-password", home.post(t, "/api/auth/confirm-password", map[string]string{"password": password}))
	wantOK(t, "logout-all, confirmed", home.post(t, "/api/auth/logout-all", nil))
	if n := len(e.stored(t, u.ID)); n != 0 || home.signedInAs(t) != "" {
		t.Fatalf("after logout-all: %d passkeys, signed in %t", n, home.signedInAs(t) != "")
	}
}

// testRegisterRacesLogoutAll races a registration's finish with
// logout-everywhere in another tab of the same session: whichever wins, no
// passkey is left once both answered, and the finish answers 200 or 401,
// never a server error.
func testRegisterRacesLogoutAll(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, func(c *auth.Config) { c.Limits.Register = auth.Limit{Max: 100, Window: time.Hour} })
	for i := range 12 {
		email := fmt.Sprintf("ada%d@example.com", i)
		home, u := e.signUp(t, email)
		begin := home.post(t, passkeys.Prefix+"/register/begin", nil)
		wantOK(t, "register/begin", begin)
		cred, _ := NewAuthenticator(t).Create(raw(begin), Origin)
		cred["name"] = "Laptop"
		tab := home.clone()
		var fin, out authtest.Reply
		var finErr, outErr error
		var wg sync.WaitGroup
		wg.Go(func() { fin, finErr = home.fetch(http.MethodPost, passkeys.Prefix+"/register/finish", cred) })
		wg.Go(func() { out, outErr = tab.fetch(http.MethodPost, "/api/auth/logout-all", nil) })
		wg.Wait()
		if finErr != nil || outErr != nil {
			t.Fatal(finErr, outErr)
		}
		if out.Status != http.StatusOK || (fin.Status != http.StatusOK && fin.Status != http.StatusUnauthorized) {
			t.Fatalf("round %d: finish %s, logout-all %s", i, fin, out)
		}
		if n := len(e.stored(t, u.ID)); n != 0 {
			t.Fatalf("round %d: finish %s, logout-all %s: %d passkeys left, want 0", i, fin, out, n)
		}
	}
}
