package authtest

import (
	"net/http"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

// accountSafety covers what the other groups prove with a small Lockout or
// at one instant only: the default lock-out (100 consecutive failures, one
// hour, audited), and sessions made within the second of a password reset.
func (s suite) accountSafety(t *testing.T) {
	t.Parallel()

	// Rate limits off, so that nothing but the lock-out answers and the
	// replies carry no counter that differs between them; the lock-out
	// keeps its defaults.
	noLimits := func(c *auth.Config) {
		relaxed(c)
		c.Limits.LoginIP, c.Limits.LoginEmail = auth.Off, auth.Off
	}
	const defaultMax = 100

	// lock fails defaultMax logins for ada: all but the last at once (the
	// store counts them atomically), then the last, and returns its reply.
	lock := func(t *testing.T, e *env, id string) *reply {
		t.Helper()
		bs := make([]*client, defaultMax-1)
		for i := range bs {
			bs[i] = e.client()
		}
		rs := storm(t, len(bs), func(i int) (*reply, error) {
			return bs[i].send("/api/login", obj{"email": "ada@example.com", "password": wrongPassword})
		})
		mustTally(t, rs, map[string]int{"401 " + errInvalidCredentials: defaultMax - 1})
		if got := e.byID(t, id); got.FailedLogins != defaultMax-1 || !got.LockedUntil.IsZero() {
			t.Fatalf("store: after %d failures at once failedLogins %d, lockedUntil %v; want %d, none",
				defaultMax-1, got.FailedLogins, got.LockedUntil, defaultMax-1)
		}
		if n := e.audit.count(auth.EventAccountLocked, id); n != 0 {
			t.Fatalf("%d account_locked events after %d failures, want none", n, defaultMax-1)
		}
		r := e.client().login("ada@example.com", wrongPassword)
		mustStatus(t, r, http.StatusUnauthorized, errInvalidCredentials)
		return r
	}

	t.Run("100 consecutive failures lock for an hour, alike and audited once", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, noLimits, fast)
		u := e.seedFast(t, "ada@example.com")
		wrong := lock(t, e, u.ID)
		if got, want := e.byID(t, u.ID).LockedUntil, e.clock.Now().Add(time.Hour); !got.Equal(want.Truncate(time.Millisecond)) && !got.Equal(want) {
			t.Errorf("store: lockedUntil %s, want %s", got, want)
		}
		ev, ok := e.audit.last(auth.EventAccountLocked)
		if !ok || ev.UserID != u.ID {
			t.Fatalf("no account_locked event for the user: %+v", ev)
		}
		// Locked, the right password gets the wrong password's reply, and
		// no second account_locked event.
		c := e.client()
		for _, pw := range []string{goodPassword, wrongPassword, goodPassword} {
			r := c.login("ada@example.com", pw)
			e.mustSameReply(t, r, wrong)
			if r.setCookie(sessionCookie) != nil || r.setCookie(auth.PendingCookie) != nil {
				t.Errorf("%s: a locked account got a cookie", r)
			}
		}
		mustBeSignedOut(t, c)
		if n := e.audit.count(auth.EventAccountLocked, u.ID); n != 1 {
			t.Errorf("%d account_locked events, want 1", n)
		}
		e.clock.Advance(time.Hour - time.Millisecond)
		mustStatus(t, c.login("ada@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
		e.clock.Advance(time.Millisecond)
		mustLogin(t, c, "ada@example.com", goodPassword)
		if got := e.byID(t, u.ID); got.FailedLogins != 0 || !got.LockedUntil.IsZero() {
			t.Errorf("store: failedLogins %d, lockedUntil %v after the login; want 0, none", got.FailedLogins, got.LockedUntil)
		}
	})

	t.Run("a password reset lifts the default lock", func(t *testing.T) {
		t.Parallel()
		e := s.env(t, noLimits, fast)
		u := e.seedFast(t, "ada@example.com")
		lock(t, e, u.ID)
		mustStatus(t, e.client().login("ada@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
		mustMessage(t, e.client().post(resetPath(e.resetToken(t, "ada@example.com")), resetBody(newPassword)), msgPasswordReset)
		if got := e.byID(t, u.ID); got.FailedLogins != 0 || !got.LockedUntil.IsZero() {
			t.Errorf("store: failedLogins %d, lockedUntil %v after the reset; want 0, none", got.FailedLogins, got.LockedUntil)
		}
		mustLogin(t, e.client(), "ada@example.com", newPassword)
	})

	t.Run("sessions made in the reset's second: before it end, after it live", func(t *testing.T) {
		// start is 26.535897932 s past the minute: the reset at .635 and
		// the logins at .535 and .935 share its second, which the spec's
		// seconds comparison cannot tell apart; the session version can.
		t.Parallel()
		e := s.env(t, relaxed, fast)
		u := e.seedFast(t, "ada@example.com")
		tok := e.resetToken(t, "ada@example.com")
		before := e.loggedIn(t, "ada@example.com")
		e.clock.Advance(100 * time.Millisecond)
		mustMessage(t, e.client().post(resetPath(tok), resetBody(newPassword)), msgPasswordReset)
		resetAt := e.clock.Now()
		mustTime(t, "passwordChangedAt", e.byID(t, u.ID).PasswordChangedAt, resetAt)
		at := e.client()
		mustLogin(t, at, "ada@example.com", newPassword)
		e.clock.Advance(300 * time.Millisecond)
		if e.clock.Now().Truncate(time.Second) != resetAt.Truncate(time.Second) {
			t.Fatalf("the clock left the reset's second")
		}
		after := e.client()
		mustBody(t, after.post("/api/login", obj{"email": "ada@example.com", "password": newPassword, "remember": true}), obj{"success": true})
		mustBeSignedOut(t, before)
		for _, c := range []*client{at, after} {
			mustBeSignedIn(t, c, "ada@example.com")
		}
		e.clock.Advance(time.Hour)
		mustBeSignedIn(t, at, "ada@example.com")
		mustBeSignedIn(t, after, "ada@example.com")
		mustBeSignedOut(t, before)
	})
}
