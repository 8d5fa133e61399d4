package passkeys_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

// TestRegister: a signed-in, recently authenticated user registers a
// passkey: the options name the configured RP, a random user handle (not
// the id, not the email), attestation "none" and a discoverable
// credential; the finish stores it with its flags, audits and mails.
func TestRegister(t *testing.T) {
	e := newEnv(t, nil, nil)
	c, u := e.signUp("ada@example.com")
	begin := c.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	want(t, "register/begin", begin, http.StatusOK, "")
	if c.cookie(passkeys.ChallengeCookie) == "" {
		t.Fatal("register/begin set no challenge cookie")
	}
	var opts passkeystest.CreationOptions
	if err := json.Unmarshal(begin.body, &opts); err != nil {
		t.Fatal(err)
	}
	pk := opts.PublicKey
	handle := unb64(t, pk.User.ID)
	switch {
	case pk.RP.ID != "localhost" || pk.RP.Name != "Test":
		t.Errorf("rp %+v, want localhost / Test", pk.RP)
	case len(handle) != 32 || bytes.Equal(handle, []byte(u.ID)) || bytes.Contains(handle, []byte("ada")):
		t.Errorf("user handle %x: want 32 random bytes, not the id or the email", handle)
	case pk.Attestation != "none":
		t.Errorf("attestation %q, want none", pk.Attestation)
	case pk.AuthenticatorSelection.ResidentKey != "required":
		t.Errorf("residentKey %q, want required (passwordless is on)", pk.AuthenticatorSelection.ResidentKey)
	}
	a := passkeystest.NewAuthenticator(t)
	cred, _ := a.Create(begin.body, origin)
	cred["name"] = "  Laptop  "
	fin := c.do(http.MethodPost, passkeys.Prefix+"/register/finish", cred)
	want(t, "register/finish", fin, http.StatusOK, "")
	got := fin.json(t)
	if got["name"] != "Laptop" || got["backedUp"] != true || got["backupEligible"] != true || got["lastUsedAt"] != nil || got["id"] != cred["id"] {
		t.Errorf("finish answered %s", fin.body)
	}
	stored, err := e.users.ListPasskeys(context.Background(), u.ID)
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored %v, %v; want one passkey", stored, err)
	}
	if p := stored[0]; !bytes.Equal(p.UserHandle, handle) || p.AttestationType != "none" || !p.BackupEligible || !p.BackupState ||
		p.SignCount != 0 || strings.Join(p.Transports, ",") != "internal,hybrid" || len(p.PublicKey) == 0 {
		t.Errorf("stored %+v", p)
	}
	if ev, ok := e.audit.Last(auth.EventPasskeyAdded); !ok || ev.UserID != u.ID || ev.Detail != "Laptop" {
		t.Errorf("audit %+v, want passkey_added Laptop", ev)
	}
	if ms := e.mails(mail.KindPasskeyAdded); len(ms) != 1 || ms[0].To != "ada@example.com" || !strings.Contains(ms[0].Text, `"Laptop"`) {
		t.Errorf("passkey_added mails %v", ms)
	}
	list := c.do(http.MethodGet, passkeys.Prefix, nil)
	want(t, "list", list, http.StatusOK, "")
	var l struct{ Passkeys []passkeys.View }
	if err := json.Unmarshal(list.body, &l); err != nil || len(l.Passkeys) != 1 || l.Passkeys[0].Name != "Laptop" ||
		!l.Passkeys[0].CreatedAt.Equal(e.clock()) || l.Passkeys[0].LastUsedAt != nil {
		t.Fatalf("list %s", list.body)
	}
	// A new attestation whose credential id is swapped for the registered
	// one's: refused (the attested id is another).
	begin = c.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	want(t, "register/begin again", begin, http.StatusOK, "")
	k := a.Credentials()[0]
	dup, _ := passkeystest.NewAuthenticator(t).Create(begin.body, origin)
	dup = reuseID(t, dup, k.ID)
	want(t, "register the same credential id", c.do(http.MethodPost, passkeys.Prefix+"/register/finish", dup), http.StatusBadRequest, "passkey_invalid")
}

// reuseID rewrites the credential ids of a create answer; the attestation
// still names the new key's id.
func reuseID(t *testing.T, cred map[string]any, id []byte) map[string]any {
	cred["id"], cred["rawId"] = b64(id), b64(id)
	return cred
}

// TestRegisterNeedsRecentAuthentication: no session: 401; an old one:
// 403 reauthentication_required at begin and at finish.
func TestRegisterNeedsRecentAuthentication(t *testing.T) {
	e := newEnv(t, func(c *passkeys.Config) { c.ChallengeLifetime = time.Hour }, nil)
	want(t, "anonymous begin", e.client().do(http.MethodPost, passkeys.Prefix+"/register/begin", nil), http.StatusUnauthorized, "not_authenticated")
	c, u := e.signUp("ada@example.com")
	begin := c.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	want(t, "begin", begin, http.StatusOK, "")
	e.advance(auth.DefaultReauthWindow + time.Second)
	cred, _ := passkeystest.NewAuthenticator(t).Create(begin.body, origin)
	want(t, "finish after the window", c.do(http.MethodPost, passkeys.Prefix+"/register/finish", cred), http.StatusForbidden, "reauthentication_required")
	want(t, "begin after the window", c.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil), http.StatusForbidden, "reauthentication_required")
	if ps, _ := e.users.ListPasskeys(context.Background(), u.ID); len(ps) != 0 {
		t.Fatalf("%d passkeys stored without a recent authentication", len(ps))
	}
	// A password confirmation makes it recent again.
	want(t, "confirm password", c.do(http.MethodPost, "/api/auth/confirm-password", map[string]string{"password": goodPW}), http.StatusOK, "")
	e.addPasskey(c, passkeystest.NewAuthenticator(t), "Phone")
}

// TestPasswordless: a discoverable passkey signs in on its own, the
// counter and last use are recorded, and the event names the method.
func TestPasswordless(t *testing.T) {
	e := newEnv(t, nil, nil)
	home, u := e.signUp("ada@example.com")
	a := passkeystest.NewAuthenticator(t)
	e.addPasskey(home, a, "Laptop")
	e.advance(time.Minute)

	c := e.client()
	begin := c.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	want(t, "login/begin", begin, http.StatusOK, "")
	var opts passkeystest.RequestOptions
	_ = json.Unmarshal(begin.body, &opts)
	if opts.PublicKey.RPID != "localhost" || len(opts.PublicKey.AllowCredentials) != 0 {
		t.Fatalf("login options %s: want rpId localhost and no allow list (discoverable)", begin.body)
	}
	fin := c.do(http.MethodPost, passkeys.Prefix+"/login/finish", a.Get(begin.body, origin, nil))
	want(t, "login/finish", fin, http.StatusOK, "")
	if got := c.signedInAs(); got != u.ID {
		t.Fatalf("signed in as %q, want %q", got, u.ID)
	}
	if c.cookie(passkeys.ChallengeCookie) != "" {
		t.Error("the challenge cookie survived the finish")
	}
	if ev, ok := e.audit.Last(auth.EventLoginSucceeded); !ok || ev.UserID != u.ID || ev.Detail != "passkey" {
		t.Errorf("audit %+v, want login_succeeded passkey", ev)
	}
	ps, _ := e.users.ListPasskeys(context.Background(), u.ID)
	if ps[0].SignCount != 1 || !ps[0].LastUsedAt.Equal(e.clock()) {
		t.Errorf("after use: count %d, last used %v; want 1, %v", ps[0].SignCount, ps[0].LastUsedAt, e.clock())
	}
}

// TestPasswordlessOff: with AllowPasswordless false the login routes are
// off and registration asks for a non-discoverable credential.
func TestPasswordlessOff(t *testing.T) {
	off := false
	e := newEnv(t, func(c *passkeys.Config) { c.AllowPasswordless = &off }, nil)
	c, _ := e.signUp("ada@example.com")
	want(t, "login/begin", c.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil), http.StatusNotFound, "feature_disabled")
	want(t, "login/finish", c.do(http.MethodPost, passkeys.Prefix+"/login/finish", map[string]any{}), http.StatusNotFound, "feature_disabled")
	begin := c.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	if !bytes.Contains(begin.body, []byte(`"residentKey":"preferred"`)) {
		t.Errorf("register options %s: want residentKey preferred", begin.body)
	}
}

// TestChallengeSingleUse: a finish consumes its challenge whatever the
// outcome; the same cookie and body again (a replay), and a finish without
// a begun ceremony, are refused; of two racing finishes of one challenge
// exactly one signs in.
func TestChallengeSingleUse(t *testing.T) {
	e := newEnv(t, nil, nil)
	home, _ := e.signUp("ada@example.com")
	a := passkeystest.NewAuthenticator(t)
	e.addPasskey(home, a, "Laptop")

	c := e.client()
	begin := c.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	body := a.Get(begin.body, origin, nil)
	thief := c.clone() // the challenge cookie, copied
	want(t, "finish", c.do(http.MethodPost, passkeys.Prefix+"/login/finish", body), http.StatusOK, "")
	want(t, "replayed finish", thief.do(http.MethodPost, passkeys.Prefix+"/login/finish", body), http.StatusBadRequest, "passkey_challenge_invalid")
	if thief.signedInAs() != "" {
		t.Fatal("the replay signed in")
	}
	want(t, "finish without begin", e.client().do(http.MethodPost, passkeys.Prefix+"/login/finish", body), http.StatusBadRequest, "passkey_challenge_invalid")

	// Expired: the lifetime passed between begin and finish.
	c = e.client()
	begin = c.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	e.advance(passkeys.DefaultChallengeLifetime + time.Second)
	want(t, "expired", c.do(http.MethodPost, passkeys.Prefix+"/login/finish", a.Get(begin.body, origin, nil)), http.StatusBadRequest, "passkey_challenge_invalid")

	// A challenge of another purpose: a login challenge does not
	// register.
	begin = home.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	cred, _ := passkeystest.NewAuthenticator(t).Create([]byte(`{"publicKey":{"challenge":"`+challengeOf(t, begin.body)+`","rp":{"id":"localhost"},"user":{"id":"AAAA"}}}`), origin)
	want(t, "login challenge at register/finish", home.do(http.MethodPost, passkeys.Prefix+"/register/finish", cred), http.StatusBadRequest, "passkey_challenge_invalid")

	// The race.
	c = e.client()
	begin = c.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	body = a.Get(begin.body, origin, nil)
	const racers = 8
	statuses := make(chan int, racers)
	var wg sync.WaitGroup
	for range racers {
		d := c.clone()
		wg.Go(func() { statuses <- d.do(http.MethodPost, passkeys.Prefix+"/login/finish", body).status })
	}
	wg.Wait()
	close(statuses)
	ok := 0
	for s := range statuses {
		switch s {
		case http.StatusOK:
			ok++
		case http.StatusBadRequest:
		default:
			t.Errorf("racing finish: status %d", s)
		}
	}
	if ok != 1 {
		t.Fatalf("%d racing finishes of one challenge signed in, want 1", ok)
	}
}

func challengeOf(t *testing.T, opts []byte) string {
	var o passkeystest.RequestOptions
	if err := json.Unmarshal(opts, &o); err != nil {
		t.Fatal(err)
	}
	return o.PublicKey.Challenge
}

// TestOriginAndRPID: an assertion or attestation made for another origin
// or another RP ID (a phishing site's) is refused and signs nobody in.
func TestOriginAndRPID(t *testing.T) {
	e := newEnv(t, nil, nil)
	home, u := e.signUp("ada@example.com")
	a := passkeystest.NewAuthenticator(t)
	k, _ := e.addPasskey(home, a, "Laptop")

	c := e.client()
	want(t, "assertion from another origin", e.passwordless(c, a, k, "http://evil.example"), http.StatusBadRequest, "passkey_invalid")
	if c.signedInAs() != "" {
		t.Fatal("signed in from another origin")
	}
	if ev, ok := e.audit.Last(auth.EventLoginFailed); !ok || ev.Detail != "passkey: passkey_invalid" {
		t.Errorf("audit %+v, want login_failed passkey: passkey_invalid", ev)
	}
	phished := k.Copy()
	phished.RPID = "evil.example"
	want(t, "assertion for another RP ID", e.passwordless(c, a, phished, origin), http.StatusBadRequest, "passkey_invalid")

	begin := home.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	cred, _ := a.Create(begin.body, "http://evil.example")
	want(t, "registration from another origin", home.do(http.MethodPost, passkeys.Prefix+"/register/finish", cred), http.StatusBadRequest, "passkey_invalid")
	begin = home.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	cred, _ = a.CreateFor(begin.body, origin, "evil.example")
	want(t, "registration for another RP ID", home.do(http.MethodPost, passkeys.Prefix+"/register/finish", cred), http.StatusBadRequest, "passkey_invalid")
	if ps, _ := e.users.ListPasskeys(context.Background(), u.ID); len(ps) != 1 {
		t.Fatalf("%d passkeys, want only the first", len(ps))
	}
	// A user handle that is not the credential's owner's.
	stranger := k.Copy()
	stranger.UserHandle = []byte("not-a-handle")
	want(t, "unknown user handle", e.passwordless(c, a, stranger, origin), http.StatusBadRequest, "passkey_invalid")
	// User verification is required for passwordless.
	a.UserVerified = false
	want(t, "without user verification", e.passwordless(c, a, k, origin), http.StatusBadRequest, "passkey_invalid")
}

// TestCounterRegression: a counter that does not go up is audited; by
// default the sign-in goes on (keeping the higher stored count), with
// RefuseCounterRegression it is refused.
func TestCounterRegression(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(map[bool]string{false: "Audited", true: "Refused"}[refuse], func(t *testing.T) {
			e := newEnv(t, func(c *passkeys.Config) { c.RefuseCounterRegression = refuse }, nil)
			home, u := e.signUp("ada@example.com")
			a := passkeystest.NewAuthenticator(t)
			k, _ := e.addPasskey(home, a, "Laptop")
			k.Counter = 6
			want(t, "sign-in at 7", e.passwordless(e.client(), a, k, origin), http.StatusOK, "")
			k.Counter = 2 // a clone that lags behind
			c := e.client()
			r := e.passwordless(c, a, k, origin)
			ev, ok := e.audit.Last(auth.EventPasskeyCountRegressed)
			wantDetail := "stored 7, received 3, refused " + map[bool]string{false: "false", true: "true"}[refuse]
			if !ok || ev.UserID != u.ID || ev.Detail != wantDetail {
				t.Errorf("audit %+v, want %s %q", ev, auth.EventPasskeyCountRegressed, wantDetail)
			}
			ps, _ := e.users.ListPasskeys(context.Background(), u.ID)
			if ps[0].SignCount != 7 {
				t.Errorf("stored count %d, want 7 kept", ps[0].SignCount)
			}
			if refuse {
				want(t, "regressed sign-in", r, http.StatusBadRequest, "passkey_sign_count_regressed")
				if c.signedInAs() != "" {
					t.Fatal("a refused assertion signed in")
				}
				return
			}
			want(t, "regressed sign-in", r, http.StatusOK, "")
		})
	}
}

// twoFactorUser gives u 2FA (TOTP on, as the 2FA routes would leave it)
// and a client past the password step.
func (e *env) twoFactorLogin(u *user.User) *client {
	e.t.Helper()
	ctx := context.Background()
	if !u.TwoFactorEnabled {
		if err := e.users.BeginTOTPSetup(ctx, u.ID, "pending"); err != nil {
			e.t.Fatal(err)
		}
		if err := e.users.EnableTOTP(ctx, u.ID, user.EnableTOTP{Pending: "pending", Secret: "sealed", RecoveryCodeHashes: []string{"h"}}); err != nil {
			e.t.Fatal(err)
		}
		u.TwoFactorEnabled = true
	}
	c := e.client()
	r := c.do(http.MethodPost, "/api/auth/login", map[string]string{"email": u.Email, "password": goodPW})
	if r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"requiresTwoFactor":true`)) || c.cookie(auth.PendingCookie) == "" {
		e.t.Fatalf("login: %d %s, want a pending 2FA login", r.status, r.body)
	}
	return c
}

// TestTwoFactorStep: at the 2FA step a passkey of the pending user is
// accepted like a TOTP code; a failed assertion keeps the pending cookie;
// a ceremony begun under another pending login does not finish this one.
func TestTwoFactorStep(t *testing.T) {
	e := newEnv(t, nil, nil)
	home, u := e.signUp("ada@example.com")
	a := passkeystest.NewAuthenticator(t)
	k, _ := e.addPasskey(home, a, "Laptop")
	c := e.twoFactorLogin(u)

	want(t, "2fa/begin without a pending login", e.client().do(http.MethodPost, passkeys.Prefix+"/2fa/begin", nil), http.StatusUnauthorized, "no_pending_two_factor")
	begin := c.do(http.MethodPost, passkeys.Prefix+"/2fa/begin", nil)
	want(t, "2fa/begin", begin, http.StatusOK, "")
	var opts passkeystest.RequestOptions
	_ = json.Unmarshal(begin.body, &opts)
	if len(opts.PublicKey.AllowCredentials) != 1 || opts.PublicKey.AllowCredentials[0].ID != b64(k.ID) {
		t.Fatalf("2fa options %s: want the user's one credential allowed", begin.body)
	}
	pending := c.cookie(auth.PendingCookie)
	bad := c.do(http.MethodPost, passkeys.Prefix+"/2fa/finish", a.Get(begin.body, "http://evil.example", nil))
	want(t, "2fa/finish from another origin", bad, http.StatusBadRequest, "passkey_invalid")
	if c.cookie(auth.PendingCookie) != pending || c.signedInAs() != "" {
		t.Fatal("a failed passkey step dropped the pending login or signed in")
	}
	if ev, ok := e.audit.Last(auth.EventTwoFactorFailed); !ok || ev.UserID != u.ID || ev.Detail != "passkey: passkey_invalid" {
		t.Errorf("audit %+v, want 2fa_failed passkey: passkey_invalid", ev)
	}

	// A ceremony begun under another pending login of the same user.
	e.advance(time.Second) // a pending token of its own
	other := e.twoFactorLogin(u)
	begin = other.do(http.MethodPost, passkeys.Prefix+"/2fa/begin", nil)
	mixed := c.clone()
	mixed.cookies[passkeys.ChallengeCookie] = other.cookie(passkeys.ChallengeCookie)
	want(t, "challenge of another pending login", mixed.do(http.MethodPost, passkeys.Prefix+"/2fa/finish", a.Get(begin.body, origin, nil)), http.StatusBadRequest, "passkey_challenge_invalid")

	begin = c.do(http.MethodPost, passkeys.Prefix+"/2fa/begin", nil)
	want(t, "2fa/finish", c.do(http.MethodPost, passkeys.Prefix+"/2fa/finish", a.Get(begin.body, origin, nil)), http.StatusOK, "")
	if c.signedInAs() != u.ID || c.cookie(auth.PendingCookie) != "" {
		t.Fatal("the passkey step did not finish the login")
	}
	if ev, ok := e.audit.Last(auth.EventLoginSucceeded); !ok || ev.Detail != "passkey" {
		t.Errorf("audit %+v, want login_succeeded passkey", ev)
	}
}

// TestTwoFactorTrustDevice: a passkey at the 2FA step with "trustDevice"
// trusts the browser as a TOTP code does: its next password login skips
// the second step; without the flag, or from another browser, the second
// step is asked again.
func TestTwoFactorTrustDevice(t *testing.T) {
	e := newEnv(t, nil, func(c *auth.Config) { c.TrustedDevices = store.NewMemorySessions(store.MemoryConfig{}) })
	home, u := e.signUp("ada@example.com")
	a := passkeystest.NewAuthenticator(t)
	e.addPasskey(home, a, "Laptop")
	passkeyStep := func(trust bool) *client {
		t.Helper()
		c := e.twoFactorLogin(u)
		begin := c.do(http.MethodPost, passkeys.Prefix+"/2fa/begin", nil)
		want(t, "2fa/begin", begin, http.StatusOK, "")
		body := a.Get(begin.body, origin, nil)
		if trust {
			body["trustDevice"] = true
		}
		want(t, "2fa/finish", c.do(http.MethodPost, passkeys.Prefix+"/2fa/finish", body), http.StatusOK, "")
		want(t, "logout", c.do(http.MethodPost, "/api/auth/logout", nil), http.StatusOK, "")
		return c
	}
	again := func(c *client) string {
		t.Helper()
		r := c.do(http.MethodPost, "/api/auth/login", map[string]string{"email": u.Email, "password": goodPW})
		want(t, "login again", r, http.StatusOK, "")
		return string(r.body)
	}
	trusted := passkeyStep(true)
	if body := again(trusted); strings.Contains(body, "requiresTwoFactor") || trusted.signedInAs() != u.ID {
		t.Errorf("login from the trusted browser: %s, want a session without the second step", body)
	}
	if ev, ok := e.audit.Last(auth.EventLoginSucceeded); !ok || ev.Detail != "trusted device" {
		t.Errorf("audit %+v, want login_succeeded by a trusted device", ev)
	}
	untrusted := passkeyStep(false)
	if body := again(untrusted); !strings.Contains(body, `"requiresTwoFactor":true`) {
		t.Errorf("login from a browser not trusted: %s, want the second step", body)
	}
	stranger := e.client()
	stranger.cookies = map[string]string{}
	if body := again(stranger); !strings.Contains(body, `"requiresTwoFactor":true`) {
		t.Errorf("login from another browser: %s, want the second step", body)
	}
}

// TestTwoFactorLimit: failed passkey steps count against the per-user 2FA
// limit, shared with TOTP codes.
func TestTwoFactorLimit(t *testing.T) {
	e := newEnv(t, nil, func(c *auth.Config) { c.Limits.TwoFactor = auth.Limit{Max: 2, Window: time.Minute} })
	home, u := e.signUp("ada@example.com")
	a := passkeystest.NewAuthenticator(t)
	e.addPasskey(home, a, "Laptop")
	c := e.twoFactorLogin(u)
	for i := range 2 {
		begin := c.do(http.MethodPost, passkeys.Prefix+"/2fa/begin", nil)
		want(t, "failure "+string(rune('1'+i)), c.do(http.MethodPost, passkeys.Prefix+"/2fa/finish", a.Get(begin.body, "http://evil.example", nil)), http.StatusBadRequest, "passkey_invalid")
	}
	begin := c.do(http.MethodPost, passkeys.Prefix+"/2fa/begin", nil)
	want(t, "past the limit", c.do(http.MethodPost, passkeys.Prefix+"/2fa/finish", a.Get(begin.body, origin, nil)), http.StatusTooManyRequests, "too_many_two_factor_attempts")
	want(t, "TOTP shares the limit", c.do(http.MethodPost, "/api/2fa/verify", map[string]string{"code": "123456"}), http.StatusTooManyRequests, "too_many_two_factor_attempts")
}

// TestBeginLimit: the begin routes are limited per client address.
func TestBeginLimit(t *testing.T) {
	e := newEnv(t, func(c *passkeys.Config) { c.BeginLimit = auth.Limit{Max: 2, Window: time.Minute} }, nil)
	c := e.client()
	for range 2 {
		want(t, "begin", c.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil), http.StatusOK, "")
	}
	want(t, "past the limit", c.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil), http.StatusTooManyRequests, "too_many_requests")
}

// TestRenameAndDelete: rename needs a session; delete a recent
// authentication; neither reaches another user's passkey; delete audits
// and mails.
func TestRenameAndDelete(t *testing.T) {
	e := newEnv(t, nil, nil)
	c, u := e.signUp("ada@example.com")
	_, view := e.addPasskey(c, passkeystest.NewAuthenticator(t), "Laptop")
	id := view["id"].(string)
	bob, _ := e.signUp("bob@example.com")

	r := c.do(http.MethodPost, passkeys.Prefix+"/rename", map[string]string{"id": id, "name": "Work laptop"})
	want(t, "rename", r, http.StatusOK, "")
	if r.json(t)["name"] != "Work laptop" {
		t.Fatalf("rename answered %s", r.body)
	}
	want(t, "rename to nothing", c.do(http.MethodPost, passkeys.Prefix+"/rename", map[string]string{"id": id, "name": " "}), http.StatusBadRequest, "name_required")
	want(t, "rename too long", c.do(http.MethodPost, passkeys.Prefix+"/rename", map[string]string{"id": id, "name": strings.Repeat("x", 65)}), http.StatusBadRequest, "name_too_long")
	want(t, "rename another's", bob.do(http.MethodPost, passkeys.Prefix+"/rename", map[string]string{"id": id, "name": "mine"}), http.StatusNotFound, "passkey_not_found")
	want(t, "delete another's", bob.do(http.MethodPost, passkeys.Prefix+"/delete", map[string]string{"id": id}), http.StatusNotFound, "passkey_not_found")
	want(t, "rename anonymous", e.client().do(http.MethodPost, passkeys.Prefix+"/rename", map[string]string{"id": id, "name": "x"}), http.StatusUnauthorized, "not_authenticated")

	e.advance(auth.DefaultReauthWindow + time.Second)
	want(t, "rename, not recent", c.do(http.MethodPost, passkeys.Prefix+"/rename", map[string]string{"id": id, "name": "Old laptop"}), http.StatusOK, "")
	want(t, "delete, not recent", c.do(http.MethodPost, passkeys.Prefix+"/delete", map[string]string{"id": id}), http.StatusForbidden, "reauthentication_required")
	want(t, "confirm password", c.do(http.MethodPost, "/api/auth/confirm-password", map[string]string{"password": goodPW}), http.StatusOK, "")
	want(t, "delete", c.do(http.MethodPost, passkeys.Prefix+"/delete", map[string]string{"id": id}), http.StatusOK, "")
	want(t, "delete again", c.do(http.MethodPost, passkeys.Prefix+"/delete", map[string]string{"id": id}), http.StatusNotFound, "passkey_not_found")
	if ps, _ := e.users.ListPasskeys(context.Background(), u.ID); len(ps) != 0 {
		t.Fatalf("%d passkeys after delete", len(ps))
	}
	if ev, ok := e.audit.Last(auth.EventPasskeyDeleted); !ok || ev.UserID != u.ID || ev.Detail != "Old laptop" {
		t.Errorf("audit %+v, want passkey_deleted Old laptop", ev)
	}
	if ms := e.mails(mail.KindPasskeyDeleted); len(ms) != 1 || ms[0].To != "ada@example.com" {
		t.Errorf("passkey_deleted mails %v", ms)
	}
}

// TestCrossOrigin: the state-changing routes refuse another site's
// request.
func TestCrossOrigin(t *testing.T) {
	e := newEnv(t, nil, nil)
	c, _ := e.signUp("ada@example.com")
	req := passkeys.Prefix + "/register/begin"
	r := c.doFrom("https://evil.example", http.MethodPost, req)
	want(t, "cross-origin begin", r, http.StatusForbidden, "cross_origin_blocked")
}

// TestOtherRequests: a known path with another method answers 405 with
// Allow, an unknown path 404, both as JSON.
func TestOtherRequests(t *testing.T) {
	e := newEnv(t, nil, nil)
	r := e.client().do(http.MethodGet, passkeys.Prefix+"/login/begin", nil)
	want(t, "GET login/begin", r, http.StatusMethodNotAllowed, "method_not_allowed")
	want(t, "POST list", e.client().do(http.MethodPost, passkeys.Prefix, nil), http.StatusMethodNotAllowed, "method_not_allowed")
	want(t, "unknown", e.client().do(http.MethodPost, passkeys.Prefix+"/nope", nil), http.StatusNotFound, "not_found")
}

// TestScript: the handler serves the script.
func TestScript(t *testing.T) {
	e := newEnv(t, nil, nil)
	r := e.client().do(http.MethodGet, passkeys.Prefix+"/passkeys.js", nil)
	if r.status != http.StatusOK || !bytes.Equal(r.body, passkeys.Script()) || !bytes.Contains(r.body, []byte("navigator.credentials.create")) {
		t.Fatalf("script: %d, %d bytes", r.status, len(r.body))
	}
}

// faultyChallenges fails Put and panics in Take.
type faultyChallenges struct{}

func (faultyChallenges) Put(context.Context, string, []byte, time.Time) error {
	return errors.New("connection refused")
}

func (faultyChallenges) Take(context.Context, string, time.Time) ([]byte, error) {
	panic("boom")
}

// TestBackendFaults: a challenge store that fails answers 503, one that
// panics 500; the cause is never in the answer.
func TestBackendFaults(t *testing.T) {
	e := newEnv(t, func(c *passkeys.Config) {
		c.Challenges = faultyChallenges{}
		c.Logger = slog.New(slog.DiscardHandler)
	}, nil)
	c := e.client()
	r := c.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	want(t, "begin with the store down", r, http.StatusServiceUnavailable, "service_unavailable")
	c.cookies[passkeys.ChallengeCookie] = "x"
	r = c.do(http.MethodPost, passkeys.Prefix+"/login/finish", map[string]any{})
	want(t, "finish with a panicking store", r, http.StatusInternalServerError, "internal_error")
	if bytes.Contains(r.body, []byte("boom")) {
		t.Fatalf("the panic reached the client: %s", r.body)
	}
}

// TestNewAddsRoutesOnce: New adds the passkey routes to the Service's
// table; a second Handler of the Service, or one made after the routes
// were served, is an error.
func TestNewAddsRoutesOnce(t *testing.T) {
	e := newEnv(t, nil, nil) // its harness served the routes
	_, err := passkeys.New(e.svc, passkeys.Config{RPID: "localhost", Origins: []string{origin}})
	if !errors.Is(err, auth.ErrRoutesServed) {
		t.Errorf("New after the routes were served: err = %v, want auth.ErrRoutesServed", err)
	}
	svc, err := auth.New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	for i, want := range []string{"", "passkeys: auth: AddRoutes POST /api/passkeys/register/begin: the Service has that route already"} {
		h, err := passkeys.New(svc, passkeys.Config{RPID: "localhost", Origins: []string{origin}})
		if got := fmt.Sprint(err); (want == "" && err != nil) || (want != "" && got != want) {
			t.Errorf("New #%d: err = %v, want %q", i+1, err, want)
		}
		if h != nil {
			_ = h.Close()
		}
	}
}
