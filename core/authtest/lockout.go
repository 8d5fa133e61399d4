package authtest

import (
	"net/http"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
)

// smallLockout locks an account after 3 consecutive failures, for an hour,
// with the rate limits out of the way.
func smallLockout(c *auth.Config) {
	relaxed(c)
	c.Lockout = auth.Lockout{Max: 3, Duration: time.Hour}
}

// lockSmall fails ada's login 3 times, which locks her out under
// smallLockout.
func lockSmall(t *testing.T, e *env) {
	t.Helper()
	c := e.client()
	for range 3 {
		mustStatus(t, c.login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
}

// mustLockedForAnHour checks on c that ada's lock, set at the clock's time,
// lasts an hour: the right password is refused until last before its end,
// and at its end logs in and leaves failedLogins 0 and no lockedUntil.
func (e *env) mustLockedForAnHour(t *testing.T, c *client, id string, last time.Duration) {
	t.Helper()
	e.clock.Advance(time.Hour - last)
	mustStatus(t, c.login("ada@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
	e.clock.Advance(last)
	mustLogin(t, c, "ada@example.com", goodPassword)
	if got := e.byID(t, id); got.FailedLogins != 0 || !got.LockedUntil.IsZero() {
		t.Errorf("store: failedLogins %d, lockedUntil %v after the login; want 0, none", got.FailedLogins, got.LockedUntil)
	}
}

func (s suite) lockedRefusesRightPassword(t *testing.T) {
	e := s.env(t, smallLockout)
	u := e.seed(t, "ada@example.com")
	lockSmall(t, e)
	if got := e.byID(t, u.ID).LockedUntil; !got.Equal(e.clock.Now().Add(time.Hour).Truncate(time.Millisecond)) && !got.Equal(e.clock.Now().Add(time.Hour)) {
		t.Errorf("store: lockedUntil %s, want %s", got, e.clock.Now().Add(time.Hour))
	}
	c := e.client()
	r := c.login("ada@example.com", goodPassword)
	mustStatus(t, r, http.StatusUnauthorized, errInvalidCredentials)
	if r.setCookie(sessionCookie) != nil {
		t.Errorf("%s: a locked account got a session cookie", r)
	}
	e.mustLockedForAnHour(t, c, u.ID, time.Minute)
}

func (s suite) resetUnlocks(t *testing.T) {
	e := s.env(t, smallLockout)
	e.seed(t, "ada@example.com")
	lockSmall(t, e)
	mustStatus(t, e.client().login("ada@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
	tok := e.resetToken(t, "ada@example.com")
	mustMessage(t, e.client().post(resetPath(tok), resetBody(newPassword)), msgPasswordReset)
	mustLogin(t, e.client(), "ada@example.com", newPassword)
}

func (s suite) lockoutSuccessClearsCount(t *testing.T) {
	e := s.env(t, smallLockout)
	e.seed(t, "ada@example.com")
	c := e.client()
	for range 2 {
		mustStatus(t, c.login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
	mustLogin(t, c, "ada@example.com", goodPassword)
	for range 2 {
		mustStatus(t, c.login("ada@example.com", wrongPassword), http.StatusUnauthorized, errInvalidCredentials)
	}
	mustLogin(t, c, "ada@example.com", goodPassword)
}

// noLimits turns the rate limits off, so that nothing but the lock-out
// answers and the replies carry no counter that differs between them; the
// lock-out keeps its defaults.
func noLimits(c *auth.Config) {
	relaxed(c)
	c.Limits.LoginIP, c.Limits.LoginEmail = auth.Off, auth.Off
}

// defaultMax is the default lock-out's number of consecutive failures.
const defaultMax = 100

// lockByDefault fails defaultMax logins for ada: all but the last at once
// (the store counts them atomically), then the last, and returns its reply.
func lockByDefault(t *testing.T, e *env, id string) *reply {
	t.Helper()
	bs := e.clients(defaultMax - 1)
	rs := storm(t, len(bs), func(i int) (*reply, error) {
		return bs[i].send("/api/login", obj{"email": "ada@example.com", "password": wrongPassword})
	})
	mustTally(t, rs, map[string]int{"401 " + errInvalidCredentials: defaultMax - 1})
	if got := e.byID(t, id); got.FailedLogins != defaultMax-1 || !got.LockedUntil.IsZero() {
		t.Fatalf("store: after %d failures at once failedLogins %d, lockedUntil %v; want %d, none",
			defaultMax-1, got.FailedLogins, got.LockedUntil, defaultMax-1)
	}
	if n := e.audit.Count(auth.EventAccountLocked, id); n != 0 {
		t.Fatalf("%d account_locked events after %d failures, want none", n, defaultMax-1)
	}
	r := e.client().login("ada@example.com", wrongPassword)
	mustStatus(t, r, http.StatusUnauthorized, errInvalidCredentials)
	return r
}

func (s suite) defaultLockout(t *testing.T) {
	e := s.env(t, noLimits, fast)
	u := e.seedFast(t, "ada@example.com")
	wrong := lockByDefault(t, e, u.ID)
	if got, want := e.byID(t, u.ID).LockedUntil, e.clock.Now().Add(time.Hour); !got.Equal(want.Truncate(time.Millisecond)) && !got.Equal(want) {
		t.Errorf("store: lockedUntil %s, want %s", got, want)
	}
	ev, ok := e.audit.Last(auth.EventAccountLocked)
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
	if n := e.audit.Count(auth.EventAccountLocked, u.ID); n != 1 {
		t.Errorf("%d account_locked events, want 1", n)
	}
	e.mustLockedForAnHour(t, c, u.ID, time.Millisecond)
}

func (s suite) resetLiftsDefaultLock(t *testing.T) {
	e := s.env(t, noLimits, fast)
	u := e.seedFast(t, "ada@example.com")
	lockByDefault(t, e, u.ID)
	mustStatus(t, e.client().login("ada@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
	mustMessage(t, e.client().post(resetPath(e.resetToken(t, "ada@example.com")), resetBody(newPassword)), msgPasswordReset)
	if got := e.byID(t, u.ID); got.FailedLogins != 0 || !got.LockedUntil.IsZero() {
		t.Errorf("store: failedLogins %d, lockedUntil %v after the reset; want 0, none", got.FailedLogins, got.LockedUntil)
	}
	mustLogin(t, e.client(), "ada@example.com", newPassword)
}
