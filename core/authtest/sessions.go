package authtest

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/session"
)

// Server-side session records (auth.Config.Sessions, Harness.NewSessions):
// GET /api/auth/sessions lists the user's sessions, DELETE
// /api/auth/sessions/{id} ends one; logout and the changes that end
// sessions delete their records; Config.SessionIdleTimeout ends idle ones.

// Texts of the session routes.
const (
	msgSessionEnded    = "Session ended"
	errSessionNotFound = "Session not found"
)

// recordEnv is env with a record store from the harness; it skips the
// test when the harness has none.
func (s suite) recordEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	if s.h.NewSessions == nil {
		t.Skip("authtest: the harness has no session-record store (Harness.NewSessions)")
	}
	return s.env(t, append([]option{func(c *auth.Config) {
		c.Sessions = s.h.NewSessions(t, c.Now)
		relaxed(c)
	}}, opts...)...)
}

// del sends a DELETE.
func (c *client) del(path string) *reply {
	c.t.Helper()
	return c.do(http.MethodDelete, path, "", nil)
}

// browser returns a new browser that sends User-Agent ua, logged in as
// email.
func (e *env) browser(t *testing.T, email, ua string) *client {
	t.Helper()
	c := e.client()
	c.header.Set("User-Agent", ua)
	mustLogin(t, c, email, goodPassword)
	return c
}

// listed is one session of the list, as sent.
type listed struct {
	ID, CreatedAt, LastSeenAt, IP, UserAgent string
	Current                                  bool
}

var sessionIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// malformedRecordIDs are path segments of 32 bytes that are not 32
// lowercase hex characters, escaped for a URL: a NUL (which PostgreSQL
// refuses in a text value), invalid UTF-8, a two-byte character, upper
// case, a letter past f. Each names no record: 404, before any store
// sees it.
var malformedRecordIDs = []string{
	strings.Repeat("a", 31) + "%00",
	strings.Repeat("a", 31) + "%FF",
	"%C3%A9" + strings.Repeat("a", 30),
	strings.Repeat("A", 32),
	strings.Repeat("g", 32),
}

// sessions lists c's sessions and checks the shape of every entry.
func sessions(t *testing.T, c *client) []listed {
	t.Helper()
	r := c.get("/api/auth/sessions")
	if r.Status != http.StatusOK || len(r.JSON) != 1 {
		t.Fatalf("%s: want 200 {\"sessions\": [...]}", r)
	}
	raw, ok := r.JSON["sessions"].([]any)
	if !ok {
		t.Fatalf("%s: sessions is not an array", r)
	}
	out := make([]listed, 0, len(raw))
	for _, v := range raw {
		m, ok := v.(map[string]any)
		if !ok || len(m) != 6 {
			t.Fatalf("%s: entry %v: want an object of 6 fields", r, v)
		}
		var l listed
		l.Current, ok = m["current"].(bool)
		for k, dst := range map[string]*string{"id": &l.ID, "createdAt": &l.CreatedAt, "lastSeenAt": &l.LastSeenAt, "ip": &l.IP, "userAgent": &l.UserAgent} {
			s, isStr := m[k].(string)
			ok = ok && isStr
			*dst = s
		}
		if !ok || !sessionIDPattern.MatchString(l.ID) {
			t.Fatalf("%s: entry %v: want id (32 hex), current (bool) and strings", r, v)
		}
		out = append(out, l)
	}
	return out
}

// ids returns the ids of a list.
func ids(list []listed) []string {
	out := []string{}
	for _, l := range list {
		out = append(out, l.ID)
	}
	return out
}

// current returns the entry marked current.
func current(t *testing.T, list []listed) listed {
	t.Helper()
	var cur []listed
	for _, l := range list {
		if l.Current {
			cur = append(cur, l)
		}
	}
	if len(cur) != 1 {
		t.Fatalf("%d sessions marked current in %+v, want 1", len(cur), list)
	}
	return cur[0]
}

func wantIDList(t *testing.T, what string, got []listed, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if fmt.Sprint(ids(got)) != fmt.Sprint(want) {
		t.Errorf("%s: session ids %v, want %v", what, ids(got), want)
	}
}

func mustSessionNotFound(t *testing.T, r *reply) {
	t.Helper()
	mustStatus(t, r, http.StatusNotFound, errSessionNotFound)
	if code := r.str("code"); code != "session_not_found" {
		t.Errorf("%s: code %q, want session_not_found", r, code)
	}
}

func (s suite) sessionsOffWithoutStore(t *testing.T) {
	e := s.env(t, stateless)
	e.seed(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com")
	// Not registered: 404 like any unknown path (a JSON body only where
	// the framework module owns the not-found answer).
	mustListRoutesAbsent(t, c, "/api/auth/sessions", "no record store")
	mustBeSignedIn(t, c, "ada@example.com")
}

func (s suite) sessionsNeedSession(t *testing.T) {
	e := s.recordEnv(t)
	e.seed(t, "ada@example.com")
	a := e.loggedIn(t, "ada@example.com")
	id := current(t, sessions(t, a)).ID
	anon := e.client()
	mustStatus(t, anon.get("/api/auth/sessions"), http.StatusUnauthorized, errNotAuthenticated)
	mustStatus(t, anon.del("/api/auth/sessions/"+id), http.StatusUnauthorized, errNotAuthenticated)
	mustBeSignedIn(t, a, "ada@example.com")
}

func (s suite) sessionsList(t *testing.T) {
	e := s.recordEnv(t)
	e.seed(t, "ada@example.com")
	e.seed(t, "bob@example.com")
	first := e.browser(t, "ada@example.com", "Firefox/133")
	loginAt := e.clock.Now()
	e.clock.Advance(time.Second)
	second := e.browser(t, "ada@example.com", "Safari/18")
	e.clock.Advance(time.Second)
	e.browser(t, "bob@example.com", "Bob's browser")
	list := sessions(t, second)
	if len(list) != 2 {
		t.Fatalf("ada's list %+v: want her 2 sessions, not bob's", list)
	}
	want := []listed{
		{ID: list[0].ID, Current: true, CreatedAt: isoMs(loginAt.Add(time.Second)), LastSeenAt: isoMs(loginAt.Add(time.Second)), IP: "127.0.0.1", UserAgent: "Safari/18"},
		{ID: list[1].ID, Current: false, CreatedAt: isoMs(loginAt), LastSeenAt: isoMs(loginAt), IP: "127.0.0.1", UserAgent: "Firefox/133"},
	}
	if fmt.Sprint(list) != fmt.Sprint(want) {
		t.Errorf("list from the second browser:\n got %+v\nwant %+v", list, want)
	}
	if list[0].ID == list[1].ID {
		t.Errorf("two sessions share the id %s", list[0].ID)
	}
	if cur := current(t, sessions(t, first)); cur.ID != list[1].ID {
		t.Errorf("the first browser's current session is %s, want %s", cur.ID, list[1].ID)
	}
}

// isoMs is an instant as the routes write it.
func isoMs(t time.Time) string {
	return t.UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z")
}

func (s suite) sessionsLastSeen(t *testing.T) {
	e := s.recordEnv(t)
	e.seed(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com")
	at := e.clock.Now()
	e.clock.Advance(59 * time.Second)
	mustBeSignedIn(t, c, "ada@example.com")
	if got := current(t, sessions(t, c)).LastSeenAt; got != isoMs(at) {
		t.Errorf("lastSeenAt %s after a request 59 s later, want %s (written at most once a minute)", got, isoMs(at))
	}
	e.clock.Advance(time.Second)
	mustBeSignedIn(t, c, "ada@example.com")
	if got := current(t, sessions(t, c)).LastSeenAt; got != isoMs(at.Add(time.Minute)) {
		t.Errorf("lastSeenAt %s a minute later, want %s", got, isoMs(at.Add(time.Minute)))
	}
}

// copiedSession logs Ada (seeded) in twice: c, whose session cookie
// copied also holds, and other, a session of its own.
func (e *env) copiedSession(t *testing.T) (c, copied, other *client) {
	t.Helper()
	e.seed(t, "ada@example.com")
	c = e.loggedIn(t, "ada@example.com")
	other = e.loggedIn(t, "ada@example.com")
	copied = e.client()
	copied.setCookie(sessionCookie, c.cookie(sessionCookie).Value)
	return c, copied, other
}

func (s suite) sessionsEndCurrent(t *testing.T) {
	e := s.recordEnv(t)
	c, copied, other := e.copiedSession(t)
	id := current(t, sessions(t, c)).ID
	e.stale() // ending one's own session needs no recent authentication
	r := c.del("/api/auth/sessions/" + id)
	mustMessage(t, r, msgSessionEnded)
	mustClearCookies(t, c, r, sessionCookie)
	mustBeSignedOut(t, c)
	mustBeSignedOut(t, copied)
	mustBeSignedIn(t, other, "ada@example.com")
	wantIDList(t, "the other browser's list", sessions(t, other), current(t, sessions(t, other)).ID)
}

func (s suite) sessionsLogoutEndsCopies(t *testing.T) {
	e := s.recordEnv(t)
	c, copied, other := e.copiedSession(t)
	mustBeSignedIn(t, copied, "ada@example.com")
	mustMessage(t, c.post("/api/auth/logout", nil), msgLoggedOut)
	mustBeSignedOut(t, copied)
	mustStatus(t, copied.get("/api/auth/sessions"), http.StatusUnauthorized, errNotAuthenticated)
	if list := sessions(t, other); len(list) != 1 || !list[0].Current {
		t.Errorf("list after the other browser's logout: %+v, want only this session", list)
	}
}

func (s suite) sessionsReauthRetiresCookie(t *testing.T) {
	e := s.recordEnv(t)
	c, copied, other := e.copiedSession(t)
	before := current(t, sessions(t, c)).ID
	otherID := current(t, sessions(t, other)).ID
	e.stale() // the login is no longer recent: only a confirmation makes a cookie so
	mustConfirmPassword(t, c)
	mustBeSignedIn(t, c, "ada@example.com")
	// The cookie the confirmation came with, and its copy, are retired:
	// requests already under way with it finish, then it stops working,
	// so whoever holds a copy never shares the recent session.
	e.clock.Advance(session.RetireGrace - time.Millisecond)
	mustBeSignedIn(t, copied, "ada@example.com")
	mustNeedReauth(t, copied.post("/api/2fa/setup", nil))
	e.clock.Advance(time.Millisecond)
	mustBeSignedOut(t, copied)
	mustStatus(t, copied.get("/api/auth/sessions"), http.StatusUnauthorized, errNotAuthenticated)
	list := sessions(t, c)
	after := current(t, list).ID
	if after == before {
		t.Errorf("session id %s after the confirmation: want a new one", after)
	}
	if got := ids(list); len(got) != 2 || !slices.Contains(got, after) || !slices.Contains(got, otherID) {
		t.Errorf("list after the confirmation: session ids %v, want %s and %s", got, after, otherID)
	}
	mustBeSignedIn(t, other, "ada@example.com")
}

func (s suite) sessionsEndOtherNeedsReauth(t *testing.T) {
	e := s.recordEnv(t)
	e.seed(t, "ada@example.com")
	thief := e.loggedIn(t, "ada@example.com")
	owner := e.loggedIn(t, "ada@example.com")
	thiefID := current(t, sessions(t, thief)).ID
	ownerID := current(t, sessions(t, owner)).ID
	e.stale()
	mustNeedReauth(t, owner.del("/api/auth/sessions/"+thiefID))
	mustNeedReauth(t, thief.del("/api/auth/sessions/"+ownerID))
	mustBeSignedIn(t, thief, "ada@example.com")
	mustBeSignedIn(t, owner, "ada@example.com")
	mustConfirmPassword(t, owner)
	e.clock.Advance(session.RetireGrace)        // the record the confirmation retired ends
	ownerID = current(t, sessions(t, owner)).ID // the confirmation moved the session to a new record
	mustMessage(t, owner.del("/api/auth/sessions/"+thiefID), msgSessionEnded)
	mustBeSignedOut(t, thief)
	mustBeSignedIn(t, owner, "ada@example.com")
	wantIDList(t, "list after ending the other session", sessions(t, owner), ownerID)
	mustSessionNotFound(t, owner.del("/api/auth/sessions/"+thiefID)) // already ended
}

func (s suite) sessionsOthersNotFound(t *testing.T) {
	e := s.recordEnv(t)
	e.seed(t, "ada@example.com")
	e.seed(t, "bob@example.com")
	ada := e.loggedIn(t, "ada@example.com")
	bob := e.loggedIn(t, "bob@example.com")
	bobID := current(t, sessions(t, bob)).ID
	unknown := fmt.Sprintf("%032x", 7)
	for _, id := range append([]string{bobID, unknown, "not-an-id", bobID + "0"}, malformedRecordIDs...) {
		mustSessionNotFound(t, ada.del("/api/auth/sessions/"+id))
	}
	mustBeSignedIn(t, bob, "bob@example.com")
	wantIDList(t, "bob's list", sessions(t, bob), bobID)
}

func (s suite) sessionsChangesKeepCurrent(t *testing.T) {
	e := s.recordEnv(t)
	e.seed(t, "ada@example.com")
	c := e.loggedIn(t, "ada@example.com")
	secret, _ := e.enable2FA(t, c)
	for _, change := range []struct {
		name string
		do   func() *reply
		msg  string
	}{
		{"2FA disable", func() *reply { return c.post("/api/2fa/disable", obj{"password": goodPassword}) }, msg2FADisabled},
		{"password change", func() *reply {
			return c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": newPassword})
		}, msgPasswordChanged},
		{"email change", func() *reply {
			return c.post("/api/auth/change-email", obj{"newEmail": "new@example.com", "password": newPassword})
		}, msgEmailChanged},
	} {
		email, pw := "ada@example.com", goodPassword
		if change.name == "email change" {
			pw = newPassword
		}
		other := e.client()
		if change.name == "2FA disable" {
			e.loginWith2FA(t, other, email, secret)
		} else {
			mustLogin(t, other, email, pw)
		}
		if n := len(sessions(t, c)); n != 2 {
			t.Fatalf("before the %s: %d sessions, want 2", change.name, n)
		}
		e.clock.Advance(time.Second)
		mustMessage(t, change.do(), change.msg)
		mustBeSignedOut(t, other)
		// Only the current session stays (under a new id when the
		// change re-authenticated it: the old cookie is retired).
		if list := sessions(t, c); len(list) != 1 || !list[0].Current {
			t.Errorf("list after the %s: %+v, want only the current session", change.name, list)
		}
	}
}

func (s suite) sessionsResetAndLogoutAllEndAll(t *testing.T) {
	e := s.recordEnv(t)
	e.seed(t, "ada@example.com")
	a, b := e.loggedIn(t, "ada@example.com"), e.loggedIn(t, "ada@example.com")
	e.clock.Advance(time.Second)
	mustMessage(t, e.client().post(resetPath(e.resetToken(t, "ada@example.com")), resetBody(newPassword)), msgPasswordReset)
	mustBeSignedOut(t, a)
	mustBeSignedOut(t, b)
	c := e.client()
	mustLogin(t, c, "ada@example.com", newPassword)
	wantIDList(t, "list after the reset and a new login", sessions(t, c), current(t, sessions(t, c)).ID)

	d := e.client()
	mustLogin(t, d, "ada@example.com", newPassword)
	copied := e.client()
	copied.setCookie(sessionCookie, c.cookie(sessionCookie).Value)
	mustMessage(t, c.post("/api/auth/logout-all", nil), msgLoggedOutAll)
	for _, x := range []*client{c, d, copied} {
		mustBeSignedOut(t, x)
	}
	f := e.client()
	mustLogin(t, f, "ada@example.com", newPassword)
	if list := sessions(t, f); len(list) != 1 {
		t.Errorf("list after logout-all and a new login: %+v, want only the new session", list)
	}
}

func (s suite) sessionsIdleTimeout(t *testing.T) {
	e := s.recordEnv(t, func(c *auth.Config) { c.SessionIdleTimeout = 30 * time.Minute })
	e.seed(t, "ada@example.com")
	busy := e.loggedIn(t, "ada@example.com")
	idle := e.loggedIn(t, "ada@example.com")
	idleID := current(t, sessions(t, idle)).ID
	for range 3 { // busy is used every 20 minutes, idle never
		e.clock.Advance(20 * time.Minute)
		mustBeSignedIn(t, busy, "ada@example.com")
	}
	list := sessions(t, busy)
	for _, l := range list {
		if l.ID == idleID {
			t.Errorf("the idle session is still listed: %+v", list)
		}
	}
	mustBeSignedOut(t, idle)
}

// sessionsIdleByDefault: with records and no idle timeout configured, a
// session no request used for 30 minutes ends, while a "remember me"
// session, the user's choice of 30 days, lives on however seldom it is
// used; an idle timeout the app sets applies to remembered sessions too.
func (s suite) sessionsIdleByDefault(t *testing.T) {
	e := s.recordEnv(t)
	e.seed(t, "ada@example.com")
	short := e.loggedIn(t, "ada@example.com")
	long := e.client()
	mustBody(t, long.post("/api/login", obj{"email": "ada@example.com", "password": goodPassword, "remember": true}), obj{"success": true})
	e.clock.Advance(auth.DefaultSessionIdleTimeout - time.Second)
	mustBeSignedIn(t, short, "ada@example.com")
	e.clock.Advance(auth.DefaultSessionIdleTimeout)
	mustBeSignedOut(t, short)
	e.clock.Advance(7 * 24 * time.Hour)
	mustBeSignedIn(t, long, "ada@example.com")

	set := s.recordEnv(t, func(c *auth.Config) { c.SessionIdleTimeout = time.Hour })
	set.seed(t, "bob@example.com") // a store of a harness may be shared by the subtest's Services
	kept := set.client()
	mustBody(t, kept.post("/api/login", obj{"email": "bob@example.com", "password": goodPassword, "remember": true}), obj{"success": true})
	set.clock.Advance(time.Hour)
	mustBeSignedOut(t, kept)
}

// sessionsEndRace: a session is ended while requests use it. Whatever the
// order, once the end has answered no request with its cookie succeeds, and
// it is gone from the list.
func (s suite) sessionsEndRace(t *testing.T) {
	e := s.recordEnv(t)
	e.seed(t, "ada@example.com")
	owner := e.loggedIn(t, "ada@example.com")
	for round := range 5 {
		victim := e.loggedIn(t, "ada@example.com")
		id := current(t, sessions(t, victim)).ID
		e.clock.Advance(time.Minute) // every use writes last-seen: the write races the delete
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := victim.try(http.MethodGet, "/api/auth/me", "", nil)
				if err == nil && r.Status != http.StatusOK && r.Status != http.StatusUnauthorized {
					t.Errorf("round %d: %s: want 200 or 401", round, r)
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := owner.try(http.MethodDelete, "/api/auth/sessions/"+id, "", nil)
			if err != nil || r.Status != http.StatusOK {
				t.Errorf("round %d: ending the session: %v %v", round, r, err)
			}
		}()
		wg.Wait()
		mustBeSignedOut(t, victim)
		for _, l := range sessions(t, owner) {
			if l.ID == id {
				t.Fatalf("round %d: the ended session %s is listed again", round, id)
			}
		}
	}
}

// mustListRoutesAbsent checks that the list route at path (GET) and its
// end-one route (DELETE path/{id}) answer 404: not registered, because the
// store they need is not configured (why).
func mustListRoutesAbsent(t *testing.T, c *client, path, why string) {
	t.Helper()
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		p := path
		if m == http.MethodDelete {
			p += "/" + fmt.Sprintf("%032x", 1)
		}
		mustBeAbsent(t, c, m, p, nil, why)
	}
}

// sessionsBounded: with MaxSessionsPerUser 3, a fourth login ends the
// account's oldest session (its cookie answers 401), keeps the other
// three, and leaves another account's sessions alone; logins racing from
// many browsers leave, once answered, three records.
func (s suite) sessionsBounded(t *testing.T) {
	e := s.recordEnv(t, func(c *auth.Config) { c.MaxSessionsPerUser = 3 })
	e.seed(t, "ada@example.com")
	e.seed(t, "bob@example.com")
	bob := e.loggedIn(t, "bob@example.com")
	var ada []*client
	for range 4 {
		ada = append(ada, e.loggedIn(t, "ada@example.com"))
		e.clock.Advance(time.Second)
	}
	mustBeSignedOut(t, ada[0])
	for _, c := range ada[1:] {
		mustBeSignedIn(t, c, "ada@example.com")
	}
	if got := sessions(t, ada[3]); len(got) != 3 {
		t.Errorf("ada's sessions after 4 logins under a bound of 3: %d, want 3", len(got))
	}
	mustBeSignedIn(t, bob, "bob@example.com")
	if got := sessions(t, bob); len(got) != 1 {
		t.Errorf("bob's sessions: %d, want 1", len(got))
	}

	var wg sync.WaitGroup
	racers := make([]*client, 8)
	for i := range racers {
		racers[i] = e.client()
		wg.Go(func() {
			body := fmt.Sprintf(`{"email":%q,"password":%q}`, "ada@example.com", goodPassword)
			r, err := racers[i].try(http.MethodPost, "/api/login", "application/json", []byte(body))
			if err != nil || r.Status != http.StatusOK {
				t.Errorf("racing login: %v %v", r, err)
			}
		})
	}
	wg.Wait()
	alive := 0
	for _, c := range append(ada[1:], racers...) {
		if c.get("/api/auth/me").Status == http.StatusOK {
			alive++
		}
	}
	if alive != 3 {
		t.Errorf("%d of ada's browsers signed in after 8 racing logins under a bound of 3, want 3", alive)
	}
}
