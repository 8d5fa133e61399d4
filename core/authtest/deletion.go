package authtest

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// Account deletion and export (docs/api.md, "Delete account" and "Export"):
// POST /api/auth/delete-account deletes the signed-in user's account with
// everything authkit holds about it; GET /api/auth/export answers what it
// holds, without a secret or a hash. Both need a recent authentication.

// Texts of deletion.
const (
	msgAccountDeleted  = "Account deleted"
	errDeletionBlocked = "The account cannot be deleted now. Contact support."
)

// deletionEnv is env with session records and trusted devices when the
// harness has a record store, and relaxed limits; sessions and trusted are
// nil without one.
func (s suite) deletionEnv(t *testing.T, opts ...option) (e *env, sessions, trusted session.Store) {
	t.Helper()
	base := []option{relaxed}
	if s.h.NewSessions != nil {
		base = append(base, func(c *auth.Config) {
			sessions = s.h.NewSessions(t, c.Now)
			trusted = s.h.NewSessions(t, c.Now)
			c.Sessions, c.TrustedDevices = sessions, trusted
		})
	}
	return s.env(t, append(base, opts...)...), sessions, trusted
}

func (c *client) deleteAccount(body obj) *reply {
	c.t.Helper()
	if body == nil {
		body = obj{}
	}
	return c.post("/api/auth/delete-account", body)
}

// mustBeDeleted checks that the account of email is gone with everything
// authkit held for it: the user, its sessions and trusted devices.
func (e *env) mustBeDeleted(t *testing.T, u *user.User, sessions, trusted session.Store) {
	t.Helper()
	e.noUser(t, u.Email)
	if _, err := e.users.ByID(e.ctx(), u.ID); !errors.Is(err, user.ErrNotFound) {
		t.Errorf("store: ByID(%s) = %v, want user.ErrNotFound", u.ID, err)
	}
	for name, st := range map[string]session.Store{"session records": sessions, "trusted devices": trusted} {
		if st == nil {
			continue
		}
		if list, err := st.List(e.ctx(), u.ID); err != nil || len(list) != 0 {
			t.Errorf("%s of the deleted user: %d, %v; want none", name, len(list), err)
		}
	}
	if pk, ok := e.users.(user.Passkeys); ok {
		if list, err := pk.ListPasskeys(e.ctx(), u.ID); err == nil && len(list) != 0 {
			t.Errorf("passkeys of the deleted user: %d, want none", len(list))
		}
	}
	if ids, ok := e.users.(user.Identities); ok {
		if list, err := ids.ListIdentities(e.ctx(), u.ID); err == nil && len(list) != 0 {
			t.Errorf("identities of the deleted user: %d, want none", len(list))
		}
	}
}

// mustDeletionReported checks that the deletion of u mailed its address
// one notice and audited one account_deleted event.
func (e *env) mustDeletionReported(t *testing.T, u *user.User) {
	t.Helper()
	e.flush(t)
	if n := len(e.mails(t, u.Email, mail.KindAccountDeleted)); n != 1 {
		t.Errorf("%d deletion notices, want 1", n)
	}
	if n := e.audit.Count(auth.EventAccountDeleted, u.ID); n != 1 {
		t.Errorf("%d %s events, want 1", n, auth.EventAccountDeleted)
	}
}

// deleteNeedsRecentAuth: without a session 401; from a stale session 403
// reauthentication_required; a wrong password 401; each changes nothing.
// The password in the body, or a confirmation, is the re-authentication.
func (s suite) deleteNeedsRecentAuth(t *testing.T) {
	e, _, _ := s.deletionEnv(t)
	mustStatus(t, e.client().deleteAccount(nil), http.StatusUnauthorized, errNotAuthenticated)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	e.stale()
	mustNeedReauth(t, c.deleteAccount(nil))
	mustStatus(t, c.deleteAccount(obj{"password": wrongPassword}), http.StatusUnauthorized, errInvalidPassword)
	e.byID(t, u.ID)
	mustBeSignedIn(t, c, "ada@example.com")
	if n := len(e.mails(t, "ada@example.com", mail.KindAccountDeleted)); n != 0 {
		t.Errorf("%d deletion notices before any deletion, want 0", n)
	}
	r := c.deleteAccount(obj{"password": goodPassword})
	mustMessage(t, r, msgAccountDeleted)
	if ck := r.setCookie(sessionCookie); ck == nil || ck.MaxAge >= 0 {
		t.Errorf("%s: want the session cookie expired, got %v", r, ck)
	}
	e.noUser(t, "ada@example.com")

	// A confirmation makes a stale session recent: no password needed.
	b := e.client()
	e.signup(t, b, "bob@example.com")
	e.stale()
	mustConfirmPassword(t, b)
	mustMessage(t, b.deleteAccount(nil), msgAccountDeleted)
	e.noUser(t, "bob@example.com")
}

// deletePasswordLimited: the password of a deletion is limited as every
// re-entry of the current password (5 per 15 minutes per user).
func (s suite) deletePasswordLimited(t *testing.T) {
	e := s.env(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	e.stale()
	begin := e.clock.Now()
	for range 5 {
		mustStatus(t, c.deleteAccount(obj{"password": wrongPassword}), http.StatusUnauthorized, errInvalidPassword)
	}
	e.mustLimited(t, c.deleteAccount(obj{"password": goodPassword}), msgTooManyPasswords, begin.Add(15*time.Minute))
	e.byID(t, u.ID)
}

// deleteTwoFactorNeedsCode: a 2FA account needs its second factor even
// from a recent session; wrong codes answer 400, change nothing and count
// against the 2FA limit (5 per 5 minutes), so the right code is refused
// once it is reached.
func (s suite) deleteTwoFactorNeedsCode(t *testing.T) {
	e := s.env(t)
	c, u, secret, _ := e.twoFactorUser(t)
	r := c.deleteAccount(nil)
	mustStatus(t, r, http.StatusForbidden, "Enter your 2FA code to confirm")
	if r.str("code") != "two_factor_code_required" {
		t.Errorf("%s: code %q, want two_factor_code_required", r, r.str("code"))
	}
	begin := e.clock.Now()
	for range 5 {
		mustStatus(t, c.deleteAccount(obj{"code": e.wrongCode(t, secret)}), http.StatusBadRequest, errInvalid2FACode)
	}
	e.byID(t, u.ID)
	e.nextStep()
	e.mustLimited(t, c.deleteAccount(obj{"code": e.now(t, secret)}), msgTooMany2FA, begin.Add(5*time.Minute))
	e.byID(t, u.ID)
	e.skipRealTime()
	e.waitOut(t, c.deleteAccount(obj{"code": e.now(t, secret)}))
	e.nextStep()
	c = e.client()
	e.loginWith2FA(t, c, "ada@example.com", secret)
	// The login's code is spent: a replay is refused.
	mustStatus(t, c.deleteAccount(obj{"code": e.now(t, secret)}), http.StatusBadRequest, "Code already used")
	e.nextStep()
	mustMessage(t, c.deleteAccount(obj{"code": e.now(t, secret)}), msgAccountDeleted)
	e.noUser(t, "ada@example.com")
}

// deleteErasesEverything: the deletion takes the user, every session (on
// every browser) and trusted device, mails one notice and audits one
// event; a login after it answers as for an unknown address, and the
// address can register again as a new account.
func (s suite) deleteErasesEverything(t *testing.T) {
	e, sessions, trusted := s.deletionEnv(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	other := e.client()
	mustLogin(t, other, "ada@example.com", goodPassword)
	e.mail.Reset()
	r := c.deleteAccount(nil)
	mustMessage(t, r, msgAccountDeleted)
	mustBeSignedOut(t, c)
	mustBeSignedOut(t, other)
	e.mustBeDeleted(t, u, sessions, trusted)
	e.mustDeletionReported(t, u)
	known := e.client().login("ada@example.com", goodPassword)
	unknown := e.client().login("nobody@example.com", goodPassword)
	mustStatus(t, known, http.StatusUnauthorized, errInvalidCredentials)
	if known.str("code") != unknown.str("code") || known.str("error") != unknown.str("error") {
		t.Errorf("login after deletion %s, unknown address %s: want the same answer", known, unknown)
	}
	n := e.client()
	mustMessage(t, n.post("/api/auth/register", obj{"email": "ada@example.com", "password": goodPassword, "name": "Ada"}), msgRegistered)
	if again := e.user(t, "ada@example.com"); again.ID == u.ID || again.TwoFactorEnabled || again.EmailVerified() {
		t.Errorf("store: the new account %+v is the old one or carries its state", again.Public())
	}
}

// deleteRace: 50 browsers of one account delete it at once: one 200, the
// others 401, one notice, one event, and the account gone.
func (s suite) deleteRace(t *testing.T) {
	e, sessions, trusted := s.deletionEnv(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	const n = 50
	bs := make([]*client, n)
	for i := range bs {
		bs[i] = e.client()
		for _, ck := range c.jar.Cookies(c.baseURL()) {
			bs[i].setCookie(ck.Name, ck.Value)
		}
	}
	rs := race(t, n, func(i int) (*reply, error) {
		return bs[i].try(http.MethodPost, "/api/auth/delete-account", "application/json", []byte(`{}`))
	})
	mustOneWinner(t, rs, http.StatusUnauthorized, errNotAuthenticated)
	e.mustBeDeleted(t, u, sessions, trusted)
	e.mustDeletionReported(t, u)
}

// deleteHook: Hooks.BeforeDeleteAccount sees the user before it is
// deleted; an *auth.Error it returns is the answer and nothing is deleted;
// any other error answers 409 account_deletion_blocked, never its text.
func (s suite) deleteHook(t *testing.T) {
	veto := &auth.Error{Status: http.StatusForbidden, Code: "open_invoices", Message: "Settle your open invoices first"}
	var answer error
	var seen []string
	e, _, _ := s.deletionEnv(t, func(c *auth.Config) {
		c.Hooks.BeforeDeleteAccount = func(ctx context.Context, u *user.User) error {
			seen = append(seen, u.Email)
			return answer
		}
	})
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	answer = veto
	r := c.deleteAccount(nil)
	if r.Status != http.StatusForbidden || r.str("code") != "open_invoices" || r.str("error") != "Settle your open invoices first" {
		t.Errorf("%s: want the hook's 403 open_invoices", r)
	}
	answer = errors.New("pq: update or delete on table \"users\" violates foreign key constraint")
	r = c.deleteAccount(nil)
	mustStatus(t, r, http.StatusConflict, errDeletionBlocked)
	if r.str("code") != "account_deletion_blocked" || strings.Contains(r.Body, "pq:") {
		t.Errorf("%s: want code account_deletion_blocked and no database text", r)
	}
	e.byID(t, u.ID)
	mustBeSignedIn(t, c, "ada@example.com")
	e.flush(t)
	if got := len(e.mails(t, "ada@example.com", mail.KindAccountDeleted)); got != 0 {
		t.Errorf("%d deletion notices after vetoed deletions, want 0", got)
	}
	answer = nil
	mustMessage(t, c.deleteAccount(nil), msgAccountDeleted)
	e.noUser(t, "ada@example.com")
	if len(seen) != 3 || seen[2] != "ada@example.com" {
		t.Errorf("the hook saw %v, want ada@example.com three times", seen)
	}
}

// exportNoSecrets: the export needs a recent authentication and answers
// the account, its sessions and trusted devices, and never a password
// hash, a TOTP secret, a recovery code or its hash, or a session id.
func (s suite) exportNoSecrets(t *testing.T) {
	e, sessions, _ := s.deletionEnv(t)
	mustStatus(t, e.client().get("/api/auth/export"), http.StatusUnauthorized, errNotAuthenticated)
	c, u, secret, codes := e.twoFactorUser(t)
	r := c.get("/api/auth/export")
	if r.Status != http.StatusOK {
		t.Fatalf("%s: want 200", r)
	}
	acc, _ := r.JSON["account"].(map[string]any)
	if acc["email"] != "ada@example.com" || acc["twoFactorEnabled"] != true {
		t.Errorf("%s: account %v, want ada@example.com with 2FA on", r, acc)
	}
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") {
		t.Errorf("%s: Content-Disposition %q, want an attachment", r, cd)
	}
	stored := e.byID(t, u.ID)
	secrets := []string{stored.PasswordHash, stored.TOTPSecret, secret, goodPassword}
	secrets = append(secrets, stored.RecoveryCodeHashes...)
	secrets = append(secrets, codes...)
	for _, ck := range c.jar.Cookies(c.baseURL()) {
		secrets = append(secrets, ck.Value)
	}
	if sessions != nil {
		list, err := sessions.List(e.ctx(), u.ID)
		if err != nil || len(list) == 0 {
			t.Fatalf("session records: %v, %v", list, err)
		}
		for _, rec := range list {
			secrets = append(secrets, rec.ID)
		}
		if got, _ := r.JSON["sessions"].([]any); len(got) != len(list) {
			t.Errorf("%s: %d sessions, want %d", r, len(got), len(list))
		}
	}
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		for _, form := range []string{sec, base64.StdEncoding.EncodeToString([]byte(sec))} {
			if strings.Contains(r.Body, form) {
				t.Errorf("the export holds a secret or hash: %q", form)
			}
		}
	}
	e.stale()
	mustNeedReauth(t, c.get("/api/auth/export"))
}
