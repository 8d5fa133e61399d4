package passkeystest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
)

// reauth re-authenticates b with a's credential c (nil: the newest one the
// options allow) and returns the finish reply.
func (e *env) reauth(t *testing.T, b *browser, a *Authenticator, c *Credential) authtest.Reply {
	t.Helper()
	begin := b.post(t, passkeys.Prefix+"/reauth/begin", nil)
	wantOK(t, "reauth/begin", begin)
	return b.post(t, passkeys.Prefix+"/reauth/finish", a.Get(raw(begin), Origin, c))
}

// signUpWithoutPassword makes a verified account of email without a
// password, as a social or email sign-up makes one, signs it in on a new
// browser (recently authenticated) and adds a passkey "Laptop" of a new
// authenticator.
func (e *env) signUpWithoutPassword(t *testing.T, email string) (*browser, *user.User, *Authenticator, *Credential) {
	t.Helper()
	ctx := context.Background()
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	v := e.svc.Visit(auth.HTTPRequest(req, nil))
	u, err := e.svc.Modules().RegisterExternal(ctx, v, auth.ExternalRegistration{Email: email, Name: "Ada", EmailVerified: true})
	if err != nil {
		t.Fatalf("RegisterExternal: %v", err)
	}
	if _, err := e.svc.Modules().SignInExternal(ctx, v, auth.ExternalSignInInput{
		Verify: func(context.Context) (string, error) { return u.ID, nil },
	}); err != nil {
		t.Fatalf("SignInExternal: %v", err)
	}
	b := e.browser()
	for _, c := range v.Cookies() {
		if c.MaxAge >= 0 && c.Value != "" {
			b.setCookie(c.Name, c.Value)
		}
	}
	if b.signedInAs(t) != u.ID {
		t.Fatal("the account without a password is not signed in")
	}
	a := NewAuthenticator(t)
	k, _ := e.addPasskey(t, b, a, "Laptop")
	return b, u, a, k
}

// testReauth: a stale session re-authenticates with a passkey, user
// verification required: the changes that need a recent authentication
// work again, the event is audited; an assertion without user
// verification, or a replayed one, is refused and leaves the session
// stale.
func testReauth(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b, u, a, c := e.signUpWithPasskey(t)
	e.clock.Advance(auth.DefaultReauthWindow)
	wantError(t, "register/begin, stale", b.post(t, passkeys.Prefix+"/register/begin", nil), auth.ErrReauthenticationRequired)

	a.UserVerified = false
	wantError(t, "reauth without user verification", e.reauth(t, b, a, c), auth.ErrPasskeyInvalid)
	wantError(t, "register/begin after a refused reauth", b.post(t, passkeys.Prefix+"/register/begin", nil), auth.ErrReauthenticationRequired)
	a.UserVerified = true

	begin := b.post(t, passkeys.Prefix+"/reauth/begin", nil)
	wantOK(t, "reauth/begin", begin)
	assertion := a.Get(raw(begin), Origin, c)
	replay := b.clone()
	wantSuccess(t, "reauth/finish", b.post(t, passkeys.Prefix+"/reauth/finish", assertion))
	e.mustEvent(t, auth.EventReauthenticated, u.ID, string(auth.LoginPasskey))
	wantOK(t, "register/begin after the reauth", b.post(t, passkeys.Prefix+"/register/begin", nil))
	wantError(t, "reauth replayed", replay.post(t, passkeys.Prefix+"/reauth/finish", assertion), auth.ErrPasskeyChallengeInvalid)
	wantError(t, "register/begin on the replaying browser", replay.post(t, passkeys.Prefix+"/register/begin", nil), auth.ErrReauthenticationRequired)

	wantError(t, "reauth/begin signed out", e.browser().post(t, passkeys.Prefix+"/reauth/begin", nil), auth.ErrNotAuthenticated)
	plain, _ := e.signUp(t, "bob@example.com")
	wantError(t, "reauth/begin without a passkey", plain.post(t, passkeys.Prefix+"/reauth/begin", nil), auth.ErrPasskeyNotFound)
}

// testReauthOtherUser: a ceremony begun for one user does not
// re-authenticate another's session, even with the right passkey.
func testReauthOtherUser(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	ada, _, a, c := e.signUpWithPasskey(t)
	begin := ada.post(t, passkeys.Prefix+"/reauth/begin", nil)
	wantOK(t, "reauth/begin", begin)
	bob, _ := e.signUp(t, "bob@example.com")
	e.clock.Advance(auth.DefaultReauthWindow)
	bob.setCookie(passkeys.ChallengeCookie, ada.cookie(passkeys.ChallengeCookie))
	wantError(t, "ada's ceremony on bob's session", bob.post(t, passkeys.Prefix+"/reauth/finish", a.Get(raw(begin), Origin, c)), auth.ErrPasskeyChallengeInvalid)
	wantError(t, "bob still stale", bob.post(t, "/api/2fa/setup", nil), auth.ErrReauthenticationRequired)
}

// testReauthTwoFactor: on a 2FA account a user-verified passkey is both
// factors: after it, turning 2FA off (a change of the MFA configuration)
// is allowed with the password, as after a confirmation with the code.
func testReauthTwoFactor(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b, u, a, c := e.signUpWithPasskey(t)
	e.enable2FA(t, b)
	e.clock.Advance(auth.DefaultReauthWindow)
	wantError(t, "2fa/disable, stale", b.post(t, "/api/2fa/disable", map[string]string{"password": password}), auth.ErrReauthenticationRequired)
	wantSuccess(t, "reauth", e.reauth(t, b, a, c))
	r := b.post(t, "/api/2fa/disable", map[string]string{"password": password})
	wantOK(t, "2fa/disable after the passkey", r)
	if got, err := e.users.ByID(context.Background(), u.ID); err != nil || got.TwoFactorEnabled {
		t.Fatalf("after disable: %+v, %v: want 2FA off", got, err)
	}
}

// testWithoutPassword: an account without a password does every
// sensitive change through a passkey re-authentication: the email change
// and 2FA off take no password then; the password change answers
// password_not_set (a password is set by the reset flow).
func testWithoutPassword(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b, u, a, c := e.signUpWithoutPassword(t, "ada@example.com")
	e.clock.Advance(auth.DefaultReauthWindow)
	wantError(t, "change-email, stale", b.post(t, "/api/auth/change-email", map[string]string{"newEmail": "ada2@example.com"}), auth.ErrReauthenticationRequired)
	wantError(t, "2fa/setup, stale", b.post(t, "/api/2fa/setup", nil), auth.ErrReauthenticationRequired)
	wantSuccess(t, "reauth", e.reauth(t, b, a, c))
	e.enable2FA(t, b)
	wantOK(t, "2fa/disable", b.post(t, "/api/2fa/disable", map[string]string{}))
	wantOK(t, "change-email", b.post(t, "/api/auth/change-email", map[string]string{"newEmail": "ada2@example.com"}))
	wantError(t, "change-password", b.post(t, "/api/auth/change-password", map[string]string{"currentPassword": "", "newPassword": "another long passphrase"}), auth.ErrPasswordNotSet)
	got, err := e.users.ByID(context.Background(), u.ID)
	if err != nil || got.TwoFactorEnabled || got.PasswordHash != "" {
		t.Fatalf("after the changes: %+v, %v: want 2FA off and still no password", got, err)
	}
	if b.signedInAs(t) != u.ID {
		t.Fatal("the changes ended the session")
	}
	// The changes re-entered no password: they did not make the session
	// recent again.
	e.clock.Advance(auth.DefaultReauthWindow)
	wantError(t, "2fa/setup, stale again", b.post(t, "/api/2fa/setup", nil), auth.ErrReauthenticationRequired)
}

// testLastPasskey: the last passkey of an account without a password is
// refused (400 last_sign_in_method) and stays; with a second passkey
// either may go, and 50 racing deletions of the last two leave at least
// one, with at most one deletion answered as done.
func testLastPasskey(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b, u, a, c := e.signUpWithoutPassword(t, "ada@example.com")
	wantError(t, "delete the only passkey", b.post(t, passkeys.Prefix+"/delete", map[string]string{"id": b64(c.ID)}), auth.ErrLastSignInMethod)
	if n := len(e.stored(t, u.ID)); n != 1 {
		t.Fatalf("a refused delete left %d passkeys, want 1", n)
	}
	c2, _ := e.addPasskey(t, b, a, "Phone")
	ids := []string{b64(c.ID), b64(c2.ID)}
	const racers = 50
	var wg sync.WaitGroup
	statuses := make([]int, racers)
	codes := make([]any, racers)
	for i := range racers {
		r := b.clone()
		wg.Go(func() {
			rep, err := r.fetch(http.MethodPost, passkeys.Prefix+"/delete", map[string]string{"id": ids[i%2]})
			if err != nil {
				t.Errorf("racer %d: %v", i, err)
				return
			}
			statuses[i], codes[i] = rep.Status, rep.JSON["code"]
		})
	}
	wg.Wait()
	won := 0
	for i, s := range statuses {
		switch {
		case s == http.StatusOK:
			won++
		case s == http.StatusBadRequest && codes[i] == string(auth.ErrLastSignInMethod.Code),
			s == http.StatusNotFound && codes[i] == string(auth.ErrPasskeyNotFound.Code):
		default:
			t.Errorf("racer %d: %d %v", i, s, codes[i])
		}
	}
	left := e.stored(t, u.ID)
	if won > 1 || len(left) != 2-won || len(left) == 0 {
		t.Fatalf("%d deletions won, %d passkeys left: want at most one won and a passkey left", won, len(left))
	}
	// The one left still signs in.
	k := c
	if string(left[0].ID) == string(c2.ID) {
		k = c2
	}
	if r := e.passwordless(t, e.browser(), a, k, Origin); r.Status != http.StatusOK {
		t.Fatalf("the passkey left does not sign in: %s", r)
	}
}
