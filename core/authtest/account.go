package authtest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/user"
)

// mustClearCookies checks that r deletes every named cookie and that c no
// longer holds them.
func mustClearCookies(t *testing.T, c *client, r *reply, names ...string) {
	t.Helper()
	for _, name := range names {
		if ck := r.setCookie(name); ck == nil || ck.MaxAge >= 0 || ck.Path != "/" {
			t.Errorf("%s: want a Set-Cookie deleting %s (Path=/, Max-Age=0), got %v", r, name, ck)
		}
		if c.cookie(name) != nil {
			t.Errorf("%s: the browser still holds %s", r, name)
		}
	}
}

func (s suite) logoutClearsCookies(t *testing.T) {
	e := s.env(t)
	// Without any session.
	anon := e.client()
	r := anon.post("/api/auth/logout", nil)
	mustMessage(t, r, msgLoggedOut)
	// With a session.
	e.seed(t, "bob@example.com")
	c := e.loggedIn(t, "bob@example.com")
	r = c.post("/api/auth/logout", nil)
	mustMessage(t, r, msgLoggedOut)
	mustClearCookies(t, c, r, sessionCookie, auth.PendingCookie)
	mustBeSignedOut(t, c)
	// With a pending 2FA login: the pending cookie no longer works.
	e.twoFactorUser(t)
	b := e.pending(t)
	r = b.post("/api/auth/logout", nil)
	mustMessage(t, r, msgLoggedOut)
	mustClearCookies(t, b, r, sessionCookie, auth.PendingCookie)
	mustStatus(t, b.verify("123456"), http.StatusUnauthorized, errNoPending2FA)
}

func (s suite) logoutAllEndsSessions(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	e.seed(t, "bob@example.com")
	a, b := e.loggedIn(t, "ada@example.com"), e.loggedIn(t, "ada@example.com")
	bob := e.loggedIn(t, "bob@example.com")
	mustStatus(t, e.client().post("/api/auth/logout-all", nil), http.StatusUnauthorized, errNotAuthenticated)
	version := e.byID(t, u.ID).SessionVersion
	r := a.post("/api/auth/logout-all", nil)
	mustMessage(t, r, msgLoggedOutAll)
	mustClearCookies(t, a, r, sessionCookie)
	mustBeSignedOut(t, a)
	mustBeSignedOut(t, b)
	mustBeSignedIn(t, bob, "bob@example.com")
	if got := e.byID(t, u.ID).SessionVersion; got <= version {
		t.Errorf("store: sessionVersion %d, want above %d", got, version)
	}
	mustLogin(t, a, "ada@example.com", goodPassword)
	mustBeSignedIn(t, a, "ada@example.com")
}

func (s suite) meSafeView(t *testing.T) {
	e := s.env(t)
	mustStatus(t, e.client().me(), http.StatusUnauthorized, errNotAuthenticated)
	c, u, secret, _ := e.twoFactorUser(t)
	r := c.me()
	if r.Status != http.StatusOK {
		t.Fatalf("%s: want 200", r)
	}
	for key, want := range map[string]any{"id": u.ID, "email": "ada@example.com", "name": "Ada",
		"emailVerified": false, "emailVerifiedAt": nil, "twoFactorEnabled": true, "recoveryCodesRemaining": float64(8)} {
		if got, ok := r.JSON[key]; !ok || got != want {
			t.Errorf("%s: %s = %v, want %v", r, key, got, want)
		}
	}
	for _, key := range []string{"password", "passwordHash", "totpSecret", "pendingTotpSecret", "recoveryCodeHashes",
		"lastTotpStep", "sessionVersion", "failedLogins", "lockedUntil"} {
		if _, ok := r.JSON[key]; ok {
			t.Errorf("%s: the safe view has %q", r, key)
		}
	}
	stored := e.byID(t, u.ID)
	for _, secretText := range append([]string{secret, stored.PasswordHash, stored.TOTPSecret}, stored.RecoveryCodeHashes...) {
		if strings.Contains(r.Body, secretText) {
			t.Errorf("%s: the body holds a secret", r)
		}
	}
}

func (s suite) sessionCookieNotToken(t *testing.T) {
	e := s.env(t)
	e.seed(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com")
	c.setCookie(sessionCookie, tamper(c.cookie(sessionCookie).Value))
	r := c.me()
	mustStatus(t, r, http.StatusUnauthorized, errNotAuthenticated)
}

func (s suite) sessionLifetime(t *testing.T) {
	e := s.env(t, relaxed, noIdle)
	e.seed(t, "ada@example.com")
	short := e.loggedIn(t, "ada@example.com")
	long := e.client()
	mustBody(t, long.post("/api/login", obj{"email": "ada@example.com", "password": goodPassword, "remember": true}), obj{"success": true})
	e.clock.Advance(24*time.Hour - time.Second)
	mustBeSignedIn(t, short, "ada@example.com")
	e.clock.Advance(2 * time.Second)
	mustBeSignedOut(t, short)
	mustBeSignedIn(t, long, "ada@example.com")
	e.clock.Advance(29 * 24 * time.Hour)
	mustBeSignedOut(t, long)
}

func (s suite) loginUpgradesHash(t *testing.T) {
	e := s.env(t, realHashing) // the upgrade is to bcrypt
	old, err := password.New(password.Config{Algorithm: password.Argon2id, AllowLowCost: true,
		Argon2: password.Argon2Params{Memory: 64, Iterations: 1, Parallelism: 1}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := old.Hash(e.ctx(), goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	u, err := e.users.Create(e.ctx(), &user.User{Email: "old@example.com", Name: "Old", PasswordHash: h})
	if err != nil {
		t.Fatal(err)
	}
	mustBody(t, e.client().login("old@example.com", goodPassword), obj{"success": true})
	got := e.byID(t, u.ID)
	if got.PasswordHash == h || !strings.HasPrefix(got.PasswordHash, "$2") {
		t.Fatalf("stored hash %q: want it upgraded to the configured bcrypt", got.PasswordHash)
	}
	if !got.PasswordChangedAt.IsZero() || got.SessionVersion != u.SessionVersion {
		t.Fatalf("rehash touched passwordChangedAt (%v) or the session version (%d -> %d)",
			got.PasswordChangedAt, u.SessionVersion, got.SessionVersion)
	}
	mustBody(t, e.client().login("old@example.com", goodPassword), obj{"success": true})
}

func (s suite) changePassword(t *testing.T) {
	e := s.env(t)
	u := e.seed(t, "ada@example.com")
	mustStatus(t, e.client().post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": newPassword}),
		http.StatusUnauthorized, errNotAuthenticated)
	c := e.loggedIn(t, "ada@example.com")
	other := e.loggedIn(t, "ada@example.com")
	sent := e.mailCount(t) // the logins' new-device notices
	mustStatus(t, c.post("/api/auth/change-password", obj{"currentPassword": wrongPassword, "newPassword": newPassword}),
		http.StatusUnauthorized, errInvalidPassword)
	mustStatus(t, c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": "short"}),
		http.StatusBadRequest, msgPasswordTooShort)
	e.mustUnchanged(t, u)
	if n := e.mailCount(t) - sent; n != 0 {
		t.Errorf("%d mails after refused changes, want none", n)
	}
	e.clock.Advance(time.Minute)
	mustMessage(t, c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": newPassword}), msgPasswordChanged)
	got := e.byID(t, u.ID)
	if got.PasswordHash == u.PasswordHash {
		t.Errorf("store: password hash unchanged")
	}
	mustTime(t, "passwordChangedAt", got.PasswordChangedAt, e.clock.Now())
	mustBeSignedIn(t, c, "ada@example.com")
	mustBeSignedOut(t, other)
	m := e.lastMail(t, "ada@example.com", mail.KindPasswordChanged)
	if m.Link != "" && !strings.HasPrefix(m.Link, appURL) {
		t.Errorf("password-changed notice links to %q", m.Link)
	}
	mustStatus(t, e.client().login("ada@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
	mustLogin(t, e.client(), "ada@example.com", newPassword)
}
