package passkeystest

import (
	"fmt"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/passkeys"
)

// testCounter: an assertion whose signature counter did not go up (a
// cloned authenticator lagging behind) is audited; it signs in by default
// and is refused with RefuseCounterRegression. The stored count is kept
// either way, and the genuine authenticator goes on working.
func testCounter(t *testing.T, h Harness, refuse bool) {
	e := newEnv(t, h, func(c *passkeys.Config) { c.RefuseCounterRegression = refuse }, nil)
	_, u, a, genuine := e.signUpWithPasskey(t)
	genuine.Counter = 6
	wantSuccess(t, "sign-in at 7", e.passwordless(t, e.browser(), a, genuine, Origin))

	clone := genuine.Copy()
	clone.Counter = 2 // signs with 3
	b := e.browser()
	r := e.passwordless(t, b, a, clone, Origin)
	e.mustEvent(t, auth.EventPasskeyCountRegressed, u.ID, fmt.Sprintf("stored 7, received 3, refused %t", refuse))
	if p := e.stored(t, u.ID)[0]; p.SignCount != 7 {
		t.Errorf("stored count %d, want 7 kept", p.SignCount)
	}
	if refuse {
		wantError(t, "the clone's sign-in", r, auth.ErrPasskeyCountRegressed)
		if b.signedInAs(t) != "" {
			t.Fatal("a refused clone signed in")
		}
		e.mustEvent(t, auth.EventLoginFailed, u.ID, "passkey: passkey_sign_count_regressed")
	} else {
		wantSuccess(t, "the clone's sign-in", r)
		if b.signedInAs(t) != u.ID {
			t.Fatal("the audited clone did not sign in")
		}
	}
	wantSuccess(t, "the genuine key at 8", e.passwordless(t, e.browser(), a, genuine, Origin))
}
