package passkeystest

import (
	"encoding/json"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/passkeys"
)

// testReplay: a finish takes its challenge; the same cookie and body again
// (a copied cookie: a replay) are refused and sign nobody in, and so is a
// finish without a begun ceremony.
func testReplay(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	_, _, a, _ := e.signUpWithPasskey(t)
	b := e.browser()
	begin := b.post(t, passkeys.Prefix+"/login/begin", nil)
	body := a.Get(raw(begin), Origin, nil)
	thief := b.clone()
	wantSuccess(t, "finish", b.post(t, passkeys.Prefix+"/login/finish", body))
	wantError(t, "replayed finish", thief.post(t, passkeys.Prefix+"/login/finish", body), auth.ErrPasskeyChallengeInvalid)
	if thief.signedInAs(t) != "" {
		t.Fatal("the replay signed in")
	}
	wantError(t, "finish without begin", e.browser().post(t, passkeys.Prefix+"/login/finish", body), auth.ErrPasskeyChallengeInvalid)
}

// testExpired: a ceremony finished after the challenge lifetime is
// refused.
func testExpired(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	_, _, a, _ := e.signUpWithPasskey(t)
	b := e.browser()
	begin := b.post(t, passkeys.Prefix+"/login/begin", nil)
	e.clock.Advance(passkeys.DefaultChallengeLifetime)
	wantError(t, "expired", b.post(t, passkeys.Prefix+"/login/finish", a.Get(raw(begin), Origin, nil)), auth.ErrPasskeyChallengeInvalid)
	if b.signedInAs(t) != "" {
		t.Fatal("an expired ceremony signed in")
	}
}

// testRace: of several finishes of one challenge sent at once (the same
// cookie, the same assertion), exactly one signs in; the others get
// passkey_challenge_invalid, and the use is recorded once.
func testRace(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	_, u, a, _ := e.signUpWithPasskey(t)
	b := e.browser()
	begin := b.post(t, passkeys.Prefix+"/login/begin", nil)
	var body json.RawMessage
	body, err := json.Marshal(a.Get(raw(begin), Origin, nil))
	if err != nil {
		t.Fatal(err)
	}
	const racers = 8
	browsers, bodies := make([]*browser, racers), make([]any, racers)
	for i := range browsers {
		browsers[i], bodies[i] = b.clone(), body // one challenge, one assertion
	}
	if won := raceFinishes(t, browsers, passkeys.Prefix+"/login/finish", bodies, auth.ErrPasskeyChallengeInvalid); won != 1 {
		t.Fatalf("%d racing finishes of one challenge signed in, want exactly 1", won)
	}
	if n := len(e.audit.Of(auth.EventLoginSucceeded)); n != 1 {
		t.Errorf("%d login_succeeded events, want 1", n)
	}
	if p := e.stored(t, u.ID)[0]; p.SignCount != 1 {
		t.Errorf("stored count %d, want 1 (one use recorded)", p.SignCount)
	}
}

// testOtherPurpose: a ceremony finishes only what it was begun for: a
// login challenge does not register, a registration challenge does not
// sign in.
func testOtherPurpose(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	home, u, a, _ := e.signUpWithPasskey(t)
	begin := home.post(t, passkeys.Prefix+"/login/begin", nil)
	var o RequestOptions
	if err := json.Unmarshal(raw(begin), &o); err != nil {
		t.Fatal(err)
	}
	forged := []byte(`{"publicKey":{"challenge":"` + o.PublicKey.Challenge + `","rp":{"id":"` + RPID + `"},"user":{"id":"AAAA"}}}`)
	cred, _ := NewAuthenticator(t).Create(forged, Origin)
	wantError(t, "login challenge at register/finish", home.post(t, passkeys.Prefix+"/register/finish", cred), auth.ErrPasskeyChallengeInvalid)
	if n := len(e.stored(t, u.ID)); n != 1 {
		t.Fatalf("%d passkeys stored, want the first only", n)
	}
	b := e.browser()
	reg := home.post(t, passkeys.Prefix+"/register/begin", nil)
	var co CreationOptions
	if err := json.Unmarshal(raw(reg), &co); err != nil {
		t.Fatal(err)
	}
	b.setCookie(passkeys.ChallengeCookie, home.cookie(passkeys.ChallengeCookie))
	wantError(t, "registration challenge at login/finish", b.post(t, passkeys.Prefix+"/login/finish",
		a.Sign(a.Credentials()[0], co.PublicKey.Challenge, Origin, 5)), auth.ErrPasskeyChallengeInvalid)
	if b.signedInAs(t) != "" {
		t.Fatal("a registration challenge signed in")
	}
}
