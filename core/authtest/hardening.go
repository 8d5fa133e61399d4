package authtest

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// methodNotAllowed: every path authkit serves answers the methods it does
// not serve with a JSON 405 and the same Allow header on every framework.
func (s suite) methodNotAllowed(t *testing.T) {
	e := s.env(t, emailCodesWhereStored, emailSignInWhereStored)
	c := e.client()
	for _, p := range e.svc.Modules().Paths() {
		path := strings.ReplaceAll(strings.ReplaceAll(p.Pattern, "{token}", "tok"), "{id}", "x")
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			if slices.Contains(strings.Split(p.Allow, ", "), m) {
				continue
			}
			r := c.do(m, path, "application/json", []byte("{}"))
			mustStatus(t, r, http.StatusMethodNotAllowed, errMethodNotAllowed)
			if got := r.Header.Get("Allow"); got != p.Allow {
				t.Errorf("%s: Allow %q, want %q", r, got, p.Allow)
			}
		}
	}
}

// opsLog records, in order, the hasher calls and store calls a Service
// makes. A store write that starts while a hash check runs is recorded
// before the check's end ("verify done"), one that starts after it, after.
type opsLog struct {
	mu  sync.Mutex
	ops []string
	// wantWrite, when set, makes the next Verify wait (up to 5 s) until a
	// store write has started, and a store write wait (up to 5 s) until a
	// Verify has started: a write made side by side with the hash check is
	// then recorded inside it, whichever goroutine runs first. A write made
	// before the hash check waits in vain and is recorded before it; one
	// made after, after.
	wantWrite bool
	wrote     chan struct{}
	verifying chan struct{}
}

func (l *opsLog) add(op string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, op)
	if strings.HasPrefix(op, "write:") && l.wrote != nil {
		close(l.wrote)
		l.wrote = nil
	}
	if op == "verify" && l.verifying != nil {
		close(l.verifying)
		l.verifying = nil
	}
}

// awaitVerify makes an armed store write wait until a hash check has
// started (see wantWrite).
func (l *opsLog) awaitVerify() {
	l.mu.Lock()
	wait, verifying := l.wantWrite, l.verifying
	l.mu.Unlock()
	if wait && verifying != nil {
		select {
		case <-verifying:
		case <-time.After(5 * time.Second):
		}
	}
}

// reset starts a new record; wantWrite arms the wait described above.
func (l *opsLog) reset(wantWrite bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = nil
	l.wantWrite = wantWrite
	l.wrote = make(chan struct{})
	l.verifying = make(chan struct{})
}

func (l *opsLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ops)
}

// recHasher records Hash and Verify calls.
type recHasher struct {
	password.Hasher
	log *opsLog
}

func (h recHasher) Hash(ctx context.Context, pw string) (string, error) {
	h.log.add("hash")
	return h.Hasher.Hash(ctx, pw)
}

func (h recHasher) Verify(ctx context.Context, pw, hash string) (bool, error) {
	h.log.add("verify")
	h.log.mu.Lock()
	wait, wrote := h.log.wantWrite, h.log.wrote
	h.log.mu.Unlock()
	if wait && wrote != nil {
		select {
		case <-wrote:
		case <-time.After(5 * time.Second):
		}
	}
	ok, err := h.Hasher.Verify(ctx, pw, hash)
	h.log.add("verify done")
	return ok, err
}

// recStore records every user-store call as "read:Name" or "write:Name"
// and, when before is set, calls it before each write (interleaving
// injection). Reads and writes reach the wrapped store unchanged.
type recStore struct {
	user.Store
	log    *opsLog
	before func(op string)
}

func (r *recStore) read(op string) {
	if r.log != nil {
		r.log.add("read:" + op)
	}
}

func (r *recStore) write(op string) {
	if r.log != nil {
		r.log.awaitVerify()
		r.log.add("write:" + op)
	}
	if r.before != nil {
		r.before(op)
	}
}

func (r *recStore) ByID(ctx context.Context, id string) (*user.User, error) {
	r.read("ByID")
	return r.Store.ByID(ctx, id)
}

func (r *recStore) ByEmail(ctx context.Context, email string) (*user.User, error) {
	r.read("ByEmail")
	return r.Store.ByEmail(ctx, email)
}

func (r *recStore) Create(ctx context.Context, u *user.User) (*user.User, error) {
	r.write("Create")
	return r.Store.Create(ctx, u)
}

func (r *recStore) BeginTOTPSetup(ctx context.Context, id, pending string) error {
	r.write("BeginTOTPSetup")
	return r.Store.BeginTOTPSetup(ctx, id, pending)
}

func (r *recStore) EnableTOTP(ctx context.Context, id string, e user.EnableTOTP) error {
	r.write("EnableTOTP")
	return r.Store.EnableTOTP(ctx, id, e)
}

func (r *recStore) AcceptTOTPStep(ctx context.Context, id string, matched, current int64) error {
	r.write("AcceptTOTPStep")
	return r.Store.AcceptTOTPStep(ctx, id, matched, current)
}

func (r *recStore) ConsumeRecoveryCode(ctx context.Context, id string, old, remaining []string) error {
	r.write("ConsumeRecoveryCode")
	return r.Store.ConsumeRecoveryCode(ctx, id, old, remaining)
}

func (r *recStore) ReplaceRecoveryCodes(ctx context.Context, id string, hashes []string) error {
	r.write("ReplaceRecoveryCodes")
	return r.Store.ReplaceRecoveryCodes(ctx, id, hashes)
}

func (r *recStore) DisableTOTP(ctx context.Context, id string) error {
	r.write("DisableTOTP")
	return r.Store.DisableTOTP(ctx, id)
}

func (r *recStore) VerifyEmail(ctx context.Context, id, email string, at time.Time) error {
	r.write("VerifyEmail")
	return r.Store.VerifyEmail(ctx, id, email, at)
}

func (r *recStore) ChangeEmail(ctx context.Context, id, oldEmail, newEmail string, at time.Time) error {
	r.write("ChangeEmail")
	return r.Store.ChangeEmail(ctx, id, oldEmail, newEmail, at)
}

func (r *recStore) ResetPassword(ctx context.Context, id string, p user.Reset) error {
	r.write("ResetPassword")
	return r.Store.ResetPassword(ctx, id, p)
}

func (r *recStore) ChangePassword(ctx context.Context, id, oldHash, newHash string, at time.Time) error {
	r.write("ChangePassword")
	return r.Store.ChangePassword(ctx, id, oldHash, newHash, at)
}

func (r *recStore) RehashPassword(ctx context.Context, id, oldHash, newHash string) error {
	r.write("RehashPassword")
	return r.Store.RehashPassword(ctx, id, oldHash, newHash)
}

func (r *recStore) BumpSessionVersion(ctx context.Context, id string) (int64, error) {
	r.write("BumpSessionVersion")
	return r.Store.BumpSessionVersion(ctx, id)
}

func (r *recStore) RecordLoginFailure(ctx context.Context, id string, max int, lockFor time.Duration, at time.Time) (int, time.Time, error) {
	r.write("RecordLoginFailure")
	return r.Store.RecordLoginFailure(ctx, id, max, lockFor, at)
}

func (r *recStore) ClearLoginFailures(ctx context.Context, id string) error {
	r.write("ClearLoginFailures")
	return r.Store.ClearLoginFailures(ctx, id)
}

// recorded returns an option that puts the recorders around the hasher and
// the user store of a subtest's Service.
func recorded(log *opsLog) option {
	return func(c *auth.Config) {
		c.Hasher = recHasher{Hasher: c.Hasher, log: log}
		c.Users = &recStore{Store: c.Users.(user.Store), log: log}
	}
}

// critical is the part of a record an observer of the response time sees:
// every call except the store writes that started while the hash check ran
// (the answer waits for max(hash, write), and the hash is the longer).
func critical(ops []string) []string {
	var out []string
	hashing := false
	for _, op := range ops {
		switch {
		case op == "verify":
			hashing = true
		case op == "verify done":
			hashing = false
		case hashing && strings.HasPrefix(op, "write:"):
			continue
		}
		out = append(out, op)
	}
	return out
}

// loginParity: every failed login, for an account or not and whatever the
// password's length, makes the same calls on the path the response waits
// for: one email lookup, one hash check, and no store write after the
// check. The lock-out's failure count of an existing account is made while
// the hash check runs. The lock-out is on (the default), as in production.
func (s suite) loginParity(t *testing.T) {
	log := &opsLog{}
	e := s.env(t, relaxed, recorded(log))
	e.twoFactorUser(t) // ada, with 2FA
	e.seed(t, "bob@example.com")
	locked := e.seed(t, "locked@example.com")
	if _, _, err := e.users.RecordLoginFailure(e.ctx(), locked.ID, 1, time.Hour, e.clock.Now()); err != nil {
		t.Fatalf("store: lock: %v", err)
	}
	if _, err := e.users.Create(e.ctx(), &user.User{Email: "nopass@example.com", Name: "No Password"}); err != nil {
		t.Fatalf("store: create a password-less account: %v", err)
	}

	want := []string{"read:ByEmail", "verify", "verify done"}
	pw := func(n int) string { return strings.Repeat("w", n) }
	cases := []struct {
		name, email, password string
		counts                bool // the account's failure is counted (inside the hash check)
	}{
		{"unknown email", "nobody@example.com", pw(8), false},
		{"unknown email, 72 bytes", "nobody@example.com", pw(72), false},
		{"unknown email, 73 bytes", "nobody@example.com", pw(73), false},
		{"unknown email, 1024 bytes", "nobody@example.com", pw(1024), false},
		{"unknown email, 1025 bytes", "nobody@example.com", pw(1025), false},
		{"wrong password, 8 bytes", "bob@example.com", pw(8), true},
		{"wrong password, 72 bytes", "bob@example.com", pw(72), true},
		{"wrong password, 73 bytes", "bob@example.com", pw(73), true},
		{"wrong password, 1024 bytes", "bob@example.com", pw(1024), true},
		{"wrong password, 1025 bytes", "bob@example.com", pw(1025), false},
		{"2FA account, wrong password", "ada@example.com", pw(8), true},
		{"locked account, wrong password", "locked@example.com", pw(8), false},
		{"locked account, right password", "locked@example.com", goodPassword, false},
		{"account without a password", "nopass@example.com", pw(8), false},
	}
	for _, tc := range cases {
		log.reset(tc.counts)
		c := e.client()
		r := c.login(tc.email, tc.password)
		mustStatus(t, r, http.StatusUnauthorized, errInvalidCredentials)
		ops := log.snapshot()
		if got := critical(ops); !slices.Equal(got, want) {
			t.Errorf("%s: calls on the response's path %q, want %q (all calls %q)", tc.name, got, want, ops)
		}
		counted := slices.Contains(ops, "write:RecordLoginFailure")
		if counted != tc.counts {
			t.Errorf("%s: failure counted %v, want %v (calls %q)", tc.name, counted, tc.counts, ops)
		}
	}
	if u := e.user(t, "bob@example.com"); u.FailedLogins != 4 {
		t.Errorf("store: bob's FailedLogins = %d, want 4 (the four checked wrong passwords)", u.FailedLogins)
	}

	// A right password clears the count it made while checking, so it is
	// never seen as a failure.
	log.reset(true)
	mustLogin(t, e.client(), "bob@example.com", goodPassword)
	if u := e.user(t, "bob@example.com"); u.FailedLogins != 0 || !u.LockedUntil.IsZero() {
		t.Errorf("store: after a right password FailedLogins = %d, LockedUntil = %v, want 0 and zero", u.FailedLogins, u.LockedUntil)
	}
	if ops := log.snapshot(); !slices.Contains(ops, "write:ClearLoginFailures") {
		t.Errorf("right password: calls %q, want ClearLoginFailures after the count", ops)
	}
}

// forgotParity: forgot-password makes the same calls for an unknown
// address, an account, an account with 2FA and an address over its
// per-email limit: one lookup, no hash, no store write.
func (s suite) forgotParity(t *testing.T) {
	log := &opsLog{}
	perEmailOnly := func(c *auth.Config) { c.Limits.ResetIP = auth.Limit{Max: 100, Window: time.Hour} }
	e := s.env(t, perEmailOnly, recorded(log))
	e.seed(t, "ada@example.com")
	e.seed(t, "limited@example.com")
	for range 3 { // the per-email limit (the default: 3 per 15 minutes)
		mustMessage(t, e.client().post("/api/auth/forgot-password", obj{"email": "limited@example.com"}), msgForgotSent)
	}
	want := []string{"read:ByEmail"}
	for _, email := range []string{"nobody@example.com", "ada@example.com", "limited@example.com"} {
		log.reset(false)
		mustMessage(t, e.client().post("/api/auth/forgot-password", obj{"email": email}), msgForgotSent)
		if got := log.snapshot(); !slices.Equal(got, want) {
			t.Errorf("forgot-password for %s: calls %q, want %q", email, got, want)
		}
	}
}

// passwordlessAccount: an account whose store has no password hash (a
// custom store's NULL column, or a sign-up by email, a social provider or
// a passkey) answers a login like an unknown email, a password re-entry
// like a wrong password, and a password change with password_not_set (it
// sets one through the reset), never 500.
func (s suite) passwordlessAccount(t *testing.T) {
	e := s.env(t)
	u, err := e.users.Create(e.ctx(), &user.User{Email: "nopass@example.com", Name: "No Password"})
	if err != nil {
		t.Fatalf("store: create: %v", err)
	}
	mustStatus(t, e.client().login("nopass@example.com", goodPassword), http.StatusUnauthorized, errInvalidCredentials)
	mustStatus(t, e.client().login("nopass@example.com", ""), http.StatusBadRequest, "Email and password are required")
	if got := e.byID(t, u.ID); got.FailedLogins != 0 {
		t.Errorf("store: FailedLogins = %d, want 0 (no password was checked)", got.FailedLogins)
	}
	// Signed in some other way (the app's own login), the account's
	// password re-entry fails like a wrong password, and it has no
	// password to change.
	c := e.client()
	e.sessionFor(t, c, u)
	mustStatus(t, c.post("/api/auth/change-email", obj{"newEmail": "other@example.com", "password": goodPassword}),
		http.StatusUnauthorized, errInvalidPassword)
	mustStatus(t, c.post("/api/auth/change-password", obj{"currentPassword": goodPassword, "newPassword": "another-good-password"}),
		http.StatusBadRequest, auth.ErrPasswordNotSet.Message)
	if got := e.byID(t, u.ID); got.PasswordHash != "" || got.Email != "nopass@example.com" {
		t.Errorf("store: %+v, want no password and the address unchanged", got)
	}
}

// sessionFor signs c in as u the way an app's own handler would, through
// Modules.SessionManager, without a password.
func (e *env) sessionFor(t *testing.T, c *client, u *user.User) {
	t.Helper()
	b := &plantBridge{}
	if err := e.svc.Modules().SessionManager().Session(b).Login(e.ctx(), u, false); err != nil {
		t.Fatalf("session: Login: %v", err)
	}
	if b.name == "" {
		t.Fatal("session: Login set no cookie")
	}
	c.setCookie(b.name, b.value)
}

// plantBridge keeps the cookie a session sets.
type plantBridge struct{ name, value string }

func (b *plantBridge) Set(name, value string, _ session.CookieOptions) { b.name, b.value = name, value }
func (b *plantBridge) Get(string) (string, bool)                       { return "", false }
func (b *plantBridge) Delete(string, session.CookieOptions)            {}

// account is the account of one interleaving test.
type account struct {
	e     *env
	u     *user.User
	codes []string
}

// interleavingEvent is a change made to the account.
type interleavingEvent struct {
	name  string
	ends  bool // the event ends the account's sessions and pending logins
	apply func(t *testing.T, a *account)
}

// interleavingEvents change the account through the store itself, as another
// request on another instance would.
var interleavingEvents = []interleavingEvent{
	{"logout everywhere", true, func(t *testing.T, a *account) {
		if _, err := a.e.users.BumpSessionVersion(a.e.ctx(), a.u.ID); err != nil {
			t.Errorf("event: %v", err)
		}
	}},
	{"password change", true, func(t *testing.T, a *account) {
		cur := a.e.byID(t, a.u.ID)
		h, err := password.ForTesting().Hash(a.e.ctx(), "a-new-password-123")
		if err == nil {
			err = a.e.users.ChangePassword(a.e.ctx(), a.u.ID, cur.PasswordHash, h, a.e.clock.Now())
		}
		if err != nil {
			t.Errorf("event: %v", err)
		}
	}},
	{"email change", true, func(t *testing.T, a *account) {
		cur := a.e.byID(t, a.u.ID)
		if err := a.e.users.ChangeEmail(a.e.ctx(), a.u.ID, cur.Email, "moved-"+cur.Email, a.e.clock.Now()); err != nil {
			t.Errorf("event: %v", err)
		}
	}},
	{"2FA disable", true, func(t *testing.T, a *account) {
		if err := a.e.users.DisableTOTP(a.e.ctx(), a.u.ID); err != nil {
			t.Errorf("event: %v", err)
		}
	}},
	{"another code spent and logout everywhere", true, func(t *testing.T, a *account) {
		cur := a.e.byID(t, a.u.ID)
		if err := a.e.users.ConsumeRecoveryCode(a.e.ctx(), a.u.ID, cur.RecoveryCodeHashes, cur.RecoveryCodeHashes[:len(cur.RecoveryCodeHashes)-1]); err != nil {
			t.Errorf("event: %v", err)
		}
		if _, err := a.e.users.BumpSessionVersion(a.e.ctx(), a.u.ID); err != nil {
			t.Errorf("event: %v", err)
		}
	}},
	{"another code spent", false, func(t *testing.T, a *account) {
		cur := a.e.byID(t, a.u.ID)
		if err := a.e.users.ConsumeRecoveryCode(a.e.ctx(), a.u.ID, cur.RecoveryCodeHashes, cur.RecoveryCodeHashes[:len(cur.RecoveryCodeHashes)-1]); err != nil {
			t.Errorf("event: %v", err)
		}
	}},
}

// interleavingFlow is a login, and the store calls at which an event is
// injected.
type interleavingFlow struct {
	name   string
	twoFA  bool
	points []string
	run    func(t *testing.T, a *account, b *client, secret string) *reply
}

// interleavingFlows are the logins: the store calls of each at which an
// event is injected, and the login itself, which answers with the client's
// last reply.
var interleavingFlows = []interleavingFlow{
	{"password login", false, []string{"RecordLoginFailure", "ClearLoginFailures"},
		func(t *testing.T, a *account, b *client, _ string) *reply {
			return b.login(a.u.Email, goodPassword)
		}},
	{"2FA verify", true, []string{"RecordLoginFailure", "ClearLoginFailures", "AcceptTOTPStep"},
		func(t *testing.T, a *account, b *client, secret string) *reply {
			r := b.login(a.u.Email, goodPassword)
			if r.Status != http.StatusOK || b.cookie(auth.PendingCookie) == nil {
				return r
			}
			a.e.nextStep()
			return b.verify(a.e.now(t, secret))
		}},
	{"2FA recover", true, []string{"RecordLoginFailure", "ClearLoginFailures", "ConsumeRecoveryCode"},
		func(t *testing.T, a *account, b *client, _ string) *reply {
			r := b.login(a.u.Email, goodPassword)
			if r.Status != http.StatusOK || b.cookie(auth.PendingCookie) == nil {
				return r
			}
			return b.recover(a.codes[0])
		}},
}

// interleaving: a concurrent change to the account, made just before a
// conditional store call of a login (the password step, the TOTP step or
// the recovery step), must never leave a working session issued from a
// login older than the change. Each case injects one event before one
// store call, once, on a fresh account.
func (s suite) interleaving(t *testing.T) {
	for _, f := range interleavingFlows {
		for _, point := range f.points {
			for _, ev := range interleavingEvents {
				switch {
				case !f.twoFA && ev.name == "2FA disable":
					continue // nothing to disable
				case strings.HasPrefix(ev.name, "another code spent") && point != "ConsumeRecoveryCode":
					continue // a code spent elsewhere matters only to a recovery
				}
				t.Run(f.name+"/"+ev.name+" before "+point, func(t *testing.T) {
					t.Parallel()
					s.interleave(t, f, point, ev)
				})
			}
		}
	}
}

// interleave runs flow f for a fresh account and injects ev just before
// the store call point, once.
func (s suite) interleave(t *testing.T, f interleavingFlow, point string, ev interleavingEvent) {
	a := &account{}
	var armed, fired atomic.Bool
	inject := func(c *auth.Config) {
		c.Users = &recStore{Store: c.Users.(user.Store), before: func(op string) {
			if op == point && armed.Load() && fired.CompareAndSwap(false, true) {
				ev.apply(t, a)
			}
		}}
	}
	a.e = s.env(t, relaxed, inject)
	owner := a.e.client()
	a.u = a.e.signup(t, owner, "ada@example.com")
	var secret string
	if f.twoFA {
		secret, a.codes = a.e.enable2FA(t, owner)
	}
	b := a.e.client()
	armed.Store(true)
	r := f.run(t, a, b, secret)
	if !fired.Load() {
		t.Fatalf("%s: the flow never reached %s, where the event was to be injected", r, point)
	}
	if !ev.ends {
		// Nothing ended: the login must still work.
		mustBody(t, r, obj{"success": true, "remainingCodes": float64(len(a.codes) - 2)})
		mustBeSignedIn(t, b, a.u.Email)
		return
	}
	if b.me().Status == http.StatusOK {
		t.Errorf("%s: the session issued after the event works (/api/auth/me 200): a login older than %q was turned into a session", r, ev.name)
	}
}

// noStore checks that every authkit route answers with Cache-Control:
// no-store, signed in or not (the client checks every reply; this subtest
// makes sure every route is asked at least once).
func (s suite) noStore(t *testing.T) {
	e := s.env(t, emailCodesWhereStored, emailSignInWhereStored)
	e.seed(t, "ada@example.com")
	anon, signed := e.client(), e.loggedIn(t, "ada@example.com")
	for _, rt := range e.svc.Modules().Routes() {
		path := strings.ReplaceAll(rt.Pattern, "{token}", "x")
		for _, c := range []*client{anon, signed} {
			var r *reply
			if rt.Method == http.MethodGet {
				r = c.get(path)
			} else {
				r = c.post(path, obj{})
			}
			if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: Cache-Control %q, want no-store", r, cc)
			}
		}
	}
}
