package passkeystest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/passkeys"
)

// sameTime reports whether a stored time is at, to the millisecond every
// store keeps.
func sameTime(got, at time.Time) bool {
	return got.Truncate(time.Millisecond).Equal(at.Truncate(time.Millisecond))
}

// testRegister: the options name the configured RP, a random user handle
// (not the id, not the email), attestation "none" and a discoverable
// credential; the finish answers the passkey as listed, stores it with its
// flags, deletes the challenge cookie, audits and mails.
func testRegister(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b, u := e.signUp(t, "ada@example.com")
	begin := b.post(t, passkeys.Prefix+"/register/begin", nil)
	wantOK(t, "register/begin", begin)
	var o CreationOptions
	if err := json.Unmarshal(raw(begin), &o); err != nil {
		t.Fatal(err)
	}
	pk := o.PublicKey
	handle, _ := base64.RawURLEncoding.DecodeString(pk.User.ID)
	switch {
	case pk.RP.ID != RPID || pk.RP.Name != "Passkeys Test":
		t.Errorf("rp %+v, want %s / Passkeys Test", pk.RP, RPID)
	case len(handle) != 32 || bytes.Equal(handle, []byte(u.ID)) || bytes.Contains(handle, []byte("ada")):
		t.Errorf("user handle %x: want 32 random bytes, not the id or the email", handle)
	case pk.User.Name != "ada@example.com" || pk.User.DisplayName != "Ada":
		t.Errorf("user %+v, want ada@example.com / Ada", pk.User)
	case pk.Attestation != "none" || pk.AuthenticatorSelection.ResidentKey != "required":
		t.Errorf("attestation %q, residentKey %q: want none, required", pk.Attestation, pk.AuthenticatorSelection.ResidentKey)
	case len(pk.Challenge) < 43:
		t.Errorf("challenge %q: want 32 bytes or more", pk.Challenge)
	}
	if b.cookie(passkeys.ChallengeCookie) == "" {
		t.Fatal("register/begin set no challenge cookie")
	}
	a := NewAuthenticator(t)
	cred, _ := a.Create(raw(begin), Origin)
	cred["name"] = "  Laptop  "
	fin := b.post(t, passkeys.Prefix+"/register/finish", cred)
	wantOK(t, "register/finish", fin)
	want := map[string]any{"id": cred["id"], "name": "Laptop", "createdAt": e.clock.Now().Format(time.RFC3339Nano),
		"lastUsedAt": nil, "backupEligible": true, "backedUp": true}
	if len(fin.JSON) != len(want) {
		t.Errorf("register/finish: %s, want %v", fin, want)
	}
	for k, v := range want {
		if fin.JSON[k] != v {
			t.Errorf("register/finish: %s = %v, want %v", k, fin.JSON[k], v)
		}
	}
	if b.cookie(passkeys.ChallengeCookie) != "" {
		t.Error("the challenge cookie outlived the finish")
	}
	ps := e.stored(t, u.ID)
	if len(ps) != 1 {
		t.Fatalf("%d passkeys stored, want 1", len(ps))
	}
	if p := ps[0]; !bytes.Equal(p.UserHandle, handle) || p.UserID != u.ID || p.Name != "Laptop" || p.AttestationType != "none" ||
		!p.BackupEligible || !p.BackupState || p.SignCount != 0 || len(p.PublicKey) == 0 || !sameTime(p.CreatedAt, e.clock.Now()) ||
		!p.LastUsedAt.IsZero() || base64.RawURLEncoding.EncodeToString(p.ID) != cred["id"] {
		t.Errorf("stored %+v", p)
	}
	e.mustEvent(t, auth.EventPasskeyAdded, u.ID, "Laptop")
	e.mustMail(t, mail.KindPasskeyAdded, "ada@example.com", "Laptop", 1)
}

// testRegisterNeedsRecent: without a session 401; with an old
// authentication 403 until the password is confirmed; a ceremony whose
// authentication grew old before the finish stores nothing.
func testRegisterNeedsRecent(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	wantError(t, "register/begin without a session", e.browser().post(t, passkeys.Prefix+"/register/begin", nil), auth.ErrNotAuthenticated)
	b, u := e.signUp(t, "ada@example.com")
	e.clock.Advance(auth.DefaultReauthWindow)
	wantError(t, "register/begin, stale", b.post(t, passkeys.Prefix+"/register/begin", nil), auth.ErrReauthenticationRequired)
	if b.cookie(passkeys.ChallengeCookie) != "" {
		t.Fatal("a refused begin set a challenge cookie")
	}
	wantOK(t, "confirm-password", b.post(t, "/api/auth/confirm-password", map[string]string{"password": password}))
	e.clock.Advance(auth.DefaultReauthWindow - time.Minute)
	begin := b.post(t, passkeys.Prefix+"/register/begin", nil)
	wantOK(t, "register/begin a minute before the window ends", begin)
	cred, _ := NewAuthenticator(t).Create(raw(begin), Origin)
	e.clock.Advance(time.Minute) // the ceremony is live, the authentication is not recent
	wantError(t, "register/finish, stale", b.post(t, passkeys.Prefix+"/register/finish", cred), auth.ErrReauthenticationRequired)
	if n := len(e.stored(t, u.ID)); n != 0 {
		t.Fatalf("%d passkeys stored by a stale finish", n)
	}
}

// testRegisterOtherOrigin: an attestation made on another origin, or for
// another RP ID (a phishing page's), is refused and stores nothing.
func testRegisterOtherOrigin(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b, u := e.signUp(t, "ada@example.com")
	a := NewAuthenticator(t)
	begin := b.post(t, passkeys.Prefix+"/register/begin", nil)
	cred, _ := a.Create(raw(begin), "http://evil.example")
	wantError(t, "registration from another origin", b.post(t, passkeys.Prefix+"/register/finish", cred), auth.ErrPasskeyInvalid)
	begin = b.post(t, passkeys.Prefix+"/register/begin", nil)
	cred, _ = a.CreateFor(raw(begin), Origin, "evil.example")
	wantError(t, "registration for another RP ID", b.post(t, passkeys.Prefix+"/register/finish", cred), auth.ErrPasskeyInvalid)
	if n := len(e.stored(t, u.ID)); n != 0 {
		t.Fatalf("%d passkeys stored", n)
	}
	if n := len(e.audit.Of(auth.EventPasskeyAdded)); n != 0 {
		t.Errorf("%d passkey_added events", n)
	}
	if n := len(e.mails(t, mail.KindPasskeyAdded)); n != 0 {
		t.Errorf("%d passkey_added mails", n)
	}
}
