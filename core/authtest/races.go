package authtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/user"
)

// racers is how many browsers race for one thing.
const racers = 8

// race sends the n requests made by req at once and returns the replies.
func race(t *testing.T, n int, req func(i int) (*reply, error)) []*reply {
	t.Helper()
	out := make([]*reply, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i], errs[i] = req(i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return out
}

// mustOneWinner checks that exactly one reply has status 200 and every
// other one is status {"error": text}; it returns the winner's index.
func mustOneWinner(t *testing.T, rs []*reply, status int, text string) int {
	t.Helper()
	winner := -1
	for i, r := range rs {
		switch {
		case r.Status == http.StatusOK && winner < 0:
			winner = i
		case r.Status == http.StatusOK:
			t.Errorf("%s: a second request won the race (request %d did too)", r, winner)
		case r.Status != status || r.str("error") != text:
			t.Errorf("%s: want %d {\"error\":%q} for a request that lost the race", r, status, text)
		}
	}
	if winner < 0 {
		t.Fatalf("no request won the race: %v", rs)
	}
	return winner
}

// raceCode races bs, each posting {"code": code} to path once, and
// returns their replies in the order of bs.
func raceCode(t *testing.T, bs []*client, path, code string) []*reply {
	t.Helper()
	return race(t, len(bs), func(i int) (*reply, error) {
		return bs[i].try(http.MethodPost, path, "application/json", []byte(`{"code":"`+code+`"}`))
	})
}

func (s suite) oneTOTPCodeManyBrowsers(t *testing.T) {
	e := s.env(t, relaxed)
	_, _, secret, _ := e.twoFactorUser(t)
	bs := e.pendings(t, racers)
	e.nextStep()
	code := e.now(t, secret)
	rs := raceCode(t, bs, "/api/2fa/verify", code)
	w := mustOneWinner(t, rs, http.StatusBadRequest, errCodeUsed)
	mustBeSignedIn(t, bs[w], "ada@example.com")
}

func (s suite) oneRecoveryCodeManyBrowsers(t *testing.T) {
	e := s.env(t, relaxed)
	_, u, _, codes := e.twoFactorUser(t)
	bs := e.pendings(t, racers)
	rs := raceCode(t, bs, "/api/2fa/recover", codes[0])
	w := mustOneWinner(t, rs, http.StatusBadRequest, errInvalidRecovery)
	if rs[w].JSON["remainingCodes"] != float64(7) {
		t.Errorf("%s: want remainingCodes 7", rs[w])
	}
	if n := len(e.byID(t, u.ID).RecoveryCodeHashes); n != 7 {
		t.Errorf("store: %d recovery code hashes, want 7", n)
	}
}

func (s suite) oneResetLinkManyPasswords(t *testing.T) {
	e := s.env(t, relaxed)
	e.seed(t, "ada@example.com")
	tok := e.resetToken(t, "ada@example.com")
	c := e.client()
	pw := func(i int) string { return fmt.Sprintf("new passphrase number %d", i) }
	rs := race(t, racers, func(i int) (*reply, error) {
		return c.try(http.MethodPost, resetPath(tok), "application/json",
			[]byte(`{"password":"`+pw(i)+`","confirmPassword":"`+pw(i)+`"}`))
	})
	w := mustOneWinner(t, rs, http.StatusBadRequest, errResetUsed)
	for i := range racers {
		r := e.client().login("ada@example.com", pw(i))
		if want := i == w; (r.Status == http.StatusOK) != want {
			t.Errorf("login with racer %d's password: %s (winner %d)", i, r, w)
		}
	}
}

func (s suite) oneAddressManyRegistrations(t *testing.T) {
	e := s.env(t, relaxed)
	bs := e.clients(racers)
	rs := race(t, racers, func(i int) (*reply, error) {
		return bs[i].try(http.MethodPost, "/api/auth/register", "application/json",
			[]byte(fmt.Sprintf(`{"email":"ada@example.com","password":%q,"name":"Racer %d"}`, goodPassword, i)))
	})
	w := mustOneWinner(t, rs, http.StatusBadRequest, errEmailRegistered)
	if got := e.user(t, "ada@example.com").Name; got != fmt.Sprintf("Racer %d", w) {
		t.Errorf("store: name %q, want the winner's %q", got, fmt.Sprintf("Racer %d", w))
	}
	if n := len(e.mails(t, "ada@example.com", mail.KindVerifyEmail)); n != 1 {
		t.Errorf("%d verification mails, want 1", n)
	}
}

func (s suite) oneNewAddressManyAccounts(t *testing.T) {
	e := s.env(t, relaxed)
	bs := make([]*client, racers)
	for i := range bs {
		email := fmt.Sprintf("user%d@example.com", i)
		e.seed(t, email)
		bs[i] = e.loggedIn(t, email)
	}
	rs := race(t, racers, func(i int) (*reply, error) {
		return bs[i].try(http.MethodPost, "/api/auth/change-email", "application/json",
			[]byte(fmt.Sprintf(`{"newEmail":"wanted@example.com","password":%q}`, goodPassword)))
	})
	w := mustOneWinner(t, rs, http.StatusBadRequest, errEmailInUse)
	mustBeSignedIn(t, bs[w], "wanted@example.com")
	for i := range racers {
		if i != w {
			e.user(t, fmt.Sprintf("user%d@example.com", i))
		}
	}
}

func (s suite) oneSetupManyConfirmations(t *testing.T) {
	e := s.env(t, relaxed)
	c, u, secret := e.settingUp2FA(t)
	code := e.now(t, secret)
	rs := race(t, racers, func(i int) (*reply, error) {
		return c.try(http.MethodPost, "/api/2fa/confirm", "application/json", []byte(`{"code":"`+code+`"}`))
	})
	w := mustOneWinner(t, rs, http.StatusBadRequest, errNoPendingSetup)
	raw, _ := rs[w].JSON["recoveryCodes"].([]any)
	if len(raw) != 8 || len(e.byID(t, u.ID).RecoveryCodeHashes) != 8 {
		t.Fatalf("%s: want 8 codes, stored and returned", rs[w])
	}
	// The stored codes are the winner's.
	b := e.pending(t)
	first, _ := raw[0].(string)
	mustBody(t, b.recover(first), obj{"success": true, "remainingCodes": 7})
}

func (s suite) twoFactorLimitUnderConcurrency(t *testing.T) {
	e := s.env(t)
	_, _, secret, _ := e.twoFactorUser(t)
	bs := e.pendings(t, racers)
	wrong := e.wrongCode(t, secret)
	rs := raceCode(t, bs, "/api/2fa/verify", wrong)
	mustCounts(t, rs, map[int]int{http.StatusBadRequest: 5, http.StatusTooManyRequests: racers - 5})
}

func (s suite) loginEmailLimitUnderConcurrency(t *testing.T) {
	e := s.env(t, trustAll)
	e.seed(t, "ada@example.com")
	bs := make([]*client, racers)
	for i := range bs {
		bs[i] = e.clientFrom(fmt.Sprintf("203.0.113.%d", i+1))
	}
	body := []byte(fmt.Sprintf(`{"email":"ada@example.com","password":%q}`, wrongPassword))
	rs := race(t, racers, func(i int) (*reply, error) {
		return bs[i].try(http.MethodPost, "/api/login", "application/json", body)
	})
	mustCounts(t, rs, map[int]int{http.StatusUnauthorized: 5, http.StatusTooManyRequests: racers - 5})
}

// mustCounts checks how many replies have each status.
func mustCounts(t *testing.T, rs []*reply, want map[int]int) {
	t.Helper()
	got := map[int]int{}
	for _, r := range rs {
		got[r.Status]++
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("statuses %v, want %v: %v", got, want, rs)
	}
}

// The sizes of the attack races: how many requests race for one thing.
const (
	stormSize   = 50 // TOTP verifications, recoveries, bad logins
	resetStorm  = 20 // uses of one reset link
	raceUsers   = 16 // users racing two email changes at once
	setupUsers  = 6  // users racing two confirmations and a new setup at once
	loginsLimit = 5  // the per-email login limit the bad-login storm runs against
)

// storm sends the n requests made by req at the same moment: every
// goroutine starts, waits at one barrier, and sends when it opens. It
// returns the replies in request order.
func storm(t *testing.T, n int, req func(i int) (*reply, error)) []*reply {
	t.Helper()
	out := make([]*reply, n)
	errs := make([]error, n)
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			<-gate
			out[i], errs[i] = req(i)
		})
	}
	ready.Wait()
	close(gate)
	done.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d of %d: %v", i, n, err)
		}
	}
	return out
}

// send posts body as JSON without failing the test, for requests made
// from a storm's goroutines.
func (c *client) send(path string, body obj) (*reply, error) {
	if body == nil {
		return c.try(http.MethodPost, path, "", nil)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return c.try(http.MethodPost, path, "application/json", b)
}

// outcome names a reply for tallies: "200" for a success, else the status
// and the error text.
func outcome(r *reply) string {
	if r.Status == http.StatusOK {
		return "200"
	}
	return fmt.Sprintf("%d %s", r.Status, r.str("error"))
}

// mustTally checks how many replies have each outcome.
func mustTally(t *testing.T, rs []*reply, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, r := range rs {
		got[outcome(r)]++
	}
	if !maps.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}

// countWins counts the replies with status win and checks that every other
// one is status {"error": text}.
func countWins(t *testing.T, rs []*reply, win, status int, text string) int {
	t.Helper()
	wins := 0
	for _, r := range rs {
		if r.Status == win {
			wins++
			continue
		}
		mustStatus(t, r, status, text)
	}
	return wins
}

// mustSoleWinner checks that exactly one reply is 200 with body win (any
// body when win is nil) and that every other one is status {"error": text}.
// It returns the winner's index.
func mustSoleWinner(t *testing.T, rs []*reply, win obj, status int, text string) int {
	t.Helper()
	mustTally(t, rs, map[string]int{"200": 1, fmt.Sprintf("%d %s", status, text): len(rs) - 1})
	winner := -1
	for i, r := range rs {
		switch {
		case r.Status == http.StatusOK && winner < 0:
			winner = i
			if win != nil {
				mustBody(t, r, win)
			}
		case r.Status == http.StatusOK:
			t.Errorf("%s: request %d won too (request %d won first)", r, i, winner)
		default:
			mustStatus(t, r, status, text)
		}
	}
	if winner < 0 {
		t.Fatalf("no request won")
	}
	return winner
}

// pendings returns n new browsers that have passed ada's password step
// one after another (unlike pendingBrowsers, whose logins race).
func (e *env) pendings(t *testing.T, n int) []*client {
	t.Helper()
	bs := make([]*client, n)
	for i := range bs {
		bs[i] = e.pending(t)
	}
	return bs
}

// pendingBrowsers returns n browsers, each with its own pending 2FA login
// for email.
func (e *env) pendingBrowsers(t *testing.T, email string, n int) []*client {
	t.Helper()
	emails := make([]string, n)
	for i := range emails {
		emails[i] = email
	}
	return e.logins(t, emails, obj{"requiresTwoFactor": true})
}

// logins logs a new browser in as each of emails (goodPassword), all at
// once, and checks that each login answered want: {"success": true}, or
// {"requiresTwoFactor": true} for users with 2FA.
func (e *env) logins(t *testing.T, emails []string, want obj) []*client {
	t.Helper()
	bs := e.clients(len(emails))
	rs := storm(t, len(bs), func(i int) (*reply, error) {
		return bs[i].send("/api/login", obj{"email": emails[i], "password": goodPassword})
	})
	for _, r := range rs {
		mustBody(t, r, want)
	}
	return bs
}

// mustOneSession checks that of bs only bs[winner] is signed in, as email.
func mustOneSession(t *testing.T, bs []*client, winner int, email string) {
	t.Helper()
	rs := storm(t, len(bs), func(i int) (*reply, error) { return bs[i].try(http.MethodGet, "/api/auth/me", "", nil) })
	for i, r := range rs {
		if i == winner {
			if r.Status != http.StatusOK || r.str("email") != email {
				t.Errorf("browser %d (the winner): %s, want 200 as %s", i, r, email)
			}
			continue
		}
		if r.Status != http.StatusUnauthorized || r.str("error") != errNotAuthenticated {
			t.Errorf("browser %d (a loser): %s, want 401 %q", i, r, errNotAuthenticated)
		}
	}
}

// wrapHasher replaces the Service's password hasher by wrap(hasher).
func wrapHasher(wrap func(password.Hasher) password.Hasher) option {
	return func(c *auth.Config) { c.Hasher = wrap(c.Hasher) }
}

// fastHasher is a hasher for tests only: an unsalted SHA-256, no cost at
// all. The subtests that use it count checks or race store updates, and
// make hundreds of password and recovery-code hashes; at bcrypt's minimum
// cost under the race detector they would take most of the suite's time.
type fastHasher struct{}

const fastPrefix = "authtest-sha256$"

func (fastHasher) Hash(_ context.Context, pw string) (string, error) {
	sum := sha256.Sum256([]byte(pw))
	return fastPrefix + hex.EncodeToString(sum[:]), nil
}

func (h fastHasher) Verify(ctx context.Context, pw, hash string) (bool, error) {
	if !strings.HasPrefix(hash, fastPrefix) {
		return false, fmt.Errorf("authtest: %q is not a fastHasher hash", hash)
	}
	want, _ := h.Hash(ctx, pw)
	return subtle.ConstantTimeCompare([]byte(want), []byte(hash)) == 1, nil
}

// dualHasher is the hasher of Harness.FastHashing: fastHasher's hashes,
// and bcrypt's (or argon2id's) verified as password.ForTesting does, for
// the hashes a test wrote into the store itself.
type dualHasher struct{}

func (dualHasher) Hash(ctx context.Context, pw string) (string, error) {
	return fastHasher{}.Hash(ctx, pw)
}

func (dualHasher) Verify(ctx context.Context, pw, hash string) (bool, error) {
	if strings.HasPrefix(hash, fastPrefix) {
		return fastHasher{}.Verify(ctx, pw, hash)
	}
	return password.ForTesting().Verify(ctx, pw, hash)
}

// realHashing keeps bcrypt in a topic about the hashes themselves, where
// the harness asks for FastHashing: the suite's default hasher, and the
// Service's default recovery-code hasher.
func realHashing(c *auth.Config) { c.Hasher, c.RecoveryHasher = password.ForTesting(), nil }

// fast makes the Service hash passwords and recovery codes with
// fastHasher; seed users with seedFast.
func fast(c *auth.Config) { c.Hasher, c.RecoveryHasher = fastHasher{}, fastHasher{} }

// seedFast is seed for a Service configured with fast.
func (e *env) seedFast(t *testing.T, email string) *user.User {
	t.Helper()
	h, _ := fastHasher{}.Hash(e.ctx(), goodPassword)
	u, err := e.users.Create(e.ctx(), &user.User{Email: email, Name: "Seeded", PasswordHash: h})
	if err != nil {
		t.Fatalf("store: Create(%q): %v", email, err)
	}
	return u
}

// countingHasher counts the password checks that reach the hasher.
type countingHasher struct {
	password.Hasher
	verifies *atomic.Int64
}

func (h countingHasher) Verify(ctx context.Context, pw, hash string) (bool, error) {
	h.verifies.Add(1)
	return h.Hasher.Verify(ctx, pw, hash)
}

func (s suite) raceVerifyOneCode(t *testing.T) {
	e := s.env(t, relaxed, fast)
	_, u, secret, _ := e.twoFactorUser(t)
	bs := e.pendingBrowsers(t, "ada@example.com", stormSize)
	e.nextStep()
	code := e.now(t, secret)
	rs := storm(t, stormSize, func(i int) (*reply, error) { return bs[i].send("/api/2fa/verify", obj{"code": code}) })
	w := mustSoleWinner(t, rs, obj{"success": true}, http.StatusBadRequest, errCodeUsed)
	mustOneSession(t, bs, w, "ada@example.com")
	if n := e.audit.Count(auth.EventLoginSucceeded, u.ID); n != 1 {
		t.Errorf("%d login_succeeded events, want 1", n)
	}
	if got, want := e.byID(t, u.ID).LastTOTPStep, e.totp.Step(e.clock.Now()); got != want {
		t.Errorf("store: lastTotpStep %d, want %d", got, want)
	}
}

func (s suite) raceSpendRecoveryCode(t *testing.T) {
	e := s.env(t, relaxed, fast)
	_, u, _, codes := e.twoFactorUser(t)
	bs := e.pendingBrowsers(t, "ada@example.com", stormSize)
	rs := storm(t, stormSize, func(i int) (*reply, error) { return bs[i].send("/api/2fa/recover", obj{"code": codes[0]}) })
	w := mustSoleWinner(t, rs, obj{"success": true, "remainingCodes": 7}, http.StatusBadRequest, errInvalidRecovery)
	mustOneSession(t, bs, w, "ada@example.com")
	hashes := e.byID(t, u.ID).RecoveryCodeHashes
	if len(hashes) != 7 || len(slices.Compact(slices.Sorted(slices.Values(hashes)))) != 7 {
		t.Errorf("store: recovery code hashes %q, want 7 distinct", hashes)
	}
	if n := e.audit.Count(auth.EventRecoveryCodeUsed, u.ID); n != 1 {
		t.Errorf("%d recovery_code_used events, want 1", n)
	}
	b := e.pending(t)
	mustStatus(t, b.recover(codes[0]), http.StatusBadRequest, errInvalidRecovery)
	mustBody(t, b.recover(codes[1]), obj{"success": true, "remainingCodes": 6})
}

func (s suite) raceOnePendingLogin(t *testing.T) {
	e := s.env(t, relaxed, fast)
	_, u, secret, codes := e.twoFactorUser(t)
	pending := e.pending(t).cookie(auth.PendingCookie).Value
	bs := e.cookieCopies(stormSize, auth.PendingCookie, pending)
	e.nextStep()
	totpCode := e.now(t, secret)
	// Every racer brings a factor that is right on its own: the TOTP
	// code, or one of the recovery codes.
	rs := storm(t, stormSize, func(i int) (*reply, error) {
		if i%(len(codes)+1) == len(codes) {
			return bs[i].send("/api/2fa/verify", obj{"code": totpCode})
		}
		return bs[i].send("/api/2fa/recover", obj{"code": codes[i%(len(codes)+1)]})
	})
	winner := mustSoleWinner(t, rs, nil, http.StatusUnauthorized, err2FAExpired)
	mustOneSession(t, bs, winner, "ada@example.com")
	fresh := e.byID(t, u.ID)
	spent := len(codes) - len(fresh.RecoveryCodeHashes)
	if fresh.LastTOTPStep == e.totp.Step(e.clock.Now()) {
		spent++
	}
	if spent != 1 {
		t.Errorf("%d factors spent (recovery codes left %d, last TOTP step %d), want 1", spent, len(fresh.RecoveryCodeHashes), fresh.LastTOTPStep)
	}
	// A TOTP sign-in is audited as login_succeeded, a recovery as
	// recovery_code_used.
	if n, m := e.audit.Count(auth.EventLoginSucceeded, u.ID), e.audit.Count(auth.EventRecoveryCodeUsed, u.ID); n+m != 1 {
		t.Errorf("%d login_succeeded and %d recovery_code_used events, want 1 in all", n, m)
	}
}

func (s suite) raceResetLink(t *testing.T) {
	e := s.env(t, relaxed, fast)
	u := e.seedFast(t, "ada@example.com")
	tok := e.resetToken(t, "ada@example.com")
	pw := func(i int) string { return fmt.Sprintf("racing passphrase %02d", i) }
	bs := e.clients(resetStorm)
	rs := storm(t, resetStorm, func(i int) (*reply, error) { return bs[i].send(resetPath(tok), resetBody(pw(i))) })
	w := mustSoleWinner(t, rs, obj{"message": msgPasswordReset}, http.StatusBadRequest, errResetUsed)
	if n := e.audit.Count(auth.EventPasswordReset, u.ID); n != 1 {
		t.Errorf("%d password_reset events, want 1", n)
	}
	if n := len(e.mails(t, "ada@example.com", mail.KindPasswordResetDone)); n != 1 {
		t.Errorf("%d password-reset notices, want 1", n)
	}
	if got := e.byID(t, u.ID); got.SessionVersion != u.SessionVersion+1 {
		t.Errorf("store: sessionVersion %d, want %d (raised once)", got.SessionVersion, u.SessionVersion+1)
	}
	for i := range resetStorm {
		r := e.client().login("ada@example.com", pw(i))
		if i == w {
			mustBody(t, r, obj{"success": true})
		} else {
			mustStatus(t, r, http.StatusUnauthorized, errInvalidCredentials)
		}
	}
}

func (s suite) raceBadLogins(t *testing.T) {
	var checks atomic.Int64
	e := s.env(t, relaxed, fast,
		func(c *auth.Config) { c.Limits.LoginEmail = auth.Limit{Max: loginsLimit, Window: 15 * time.Minute} },
		wrapHasher(func(h password.Hasher) password.Hasher { return countingHasher{Hasher: h, verifies: &checks} }))
	u := e.seedFast(t, "ada@example.com")
	bs := e.clients(stormSize)
	rs := storm(t, stormSize, func(i int) (*reply, error) {
		return bs[i].send("/api/login", obj{"email": "ada@example.com", "password": wrongPassword})
	})
	mustTally(t, rs, map[string]int{
		"401 " + errInvalidCredentials: loginsLimit,
		"429 " + msgTooManyLogins:      stormSize - loginsLimit,
	})
	for _, r := range rs {
		if r.Status == http.StatusTooManyRequests {
			e.mustLimited(t, r, msgTooManyLogins, start.Add(15*time.Minute))
		}
	}
	if n := checks.Load(); n > loginsLimit {
		t.Errorf("%d password checks, want at most %d", n, loginsLimit)
	} else if n != loginsLimit {
		t.Errorf("%d password checks for %d refused passwords", n, loginsLimit)
	}
	if got := e.byID(t, u.ID).FailedLogins; got != loginsLimit {
		t.Errorf("store: failedLogins %d, want %d (one per checked password)", got, loginsLimit)
	}
}

func (s suite) raceEmailChanges(t *testing.T) {
	e := s.env(t, relaxed, fast)
	rc := make([]emailRacer, raceUsers)
	var emails []string
	for i := range rc {
		email := fmt.Sprintf("user%d@example.com", i)
		rc[i] = emailRacer{id: e.seedFast(t, email).ID,
			addrs: [2]string{fmt.Sprintf("user%d.a@example.com", i), fmt.Sprintf("user%d.b@example.com", i)}}
		emails = append(emails, email, email)
	}
	bs := e.logins(t, emails, obj{"success": true})
	for i := range rc {
		rc[i].bs = [2]*client{bs[2*i], bs[2*i+1]}
	}
	rs := storm(t, 2*raceUsers, func(k int) (*reply, error) {
		r := rc[k/2]
		return r.bs[k%2].send("/api/auth/change-email", obj{"newEmail": r.addrs[k%2], "password": goodPassword})
	})
	for i, r := range rc {
		e.mustOneEmailChange(t, i, r, [2]*reply{rs[2*i], rs[2*i+1]})
	}
}

// emailRacer is one user of raceEmailChanges: two browsers of the user,
// each changing the address to its own.
type emailRacer struct {
	id    string
	bs    [2]*client
	addrs [2]string
}

// mustOneEmailChange checks user i of raceEmailChanges after the race, rs
// the replies to its two changes: one change or both won, the store holds
// the address of one that won, unverified, and only the link mailed to
// that address verifies it.
func (e *env) mustOneEmailChange(t *testing.T, i int, r emailRacer, rs [2]*reply) {
	t.Helper()
	final := e.byID(t, r.id)
	won := [2]bool{}
	for j := range 2 {
		switch rep := rs[j]; outcome(rep) {
		case "200":
			won[j] = true
			mustMessage(t, rep, msgEmailChanged)
		case fmt.Sprintf("%d %s", http.StatusConflict, errEmailChangedRace), "401 " + errNotAuthenticated:
		default:
			t.Errorf("user %d, change to %s: %s; want 200, 409 %q or 401 %q", i, r.addrs[j], rep, errEmailChangedRace, errNotAuthenticated)
		}
	}
	if !won[0] && !won[1] {
		t.Errorf("user %d: neither change won", i)
		return
	}
	if (final.Email != r.addrs[0] || !won[0]) && (final.Email != r.addrs[1] || !won[1]) {
		t.Errorf("user %d: store: email %q, want the address of a change that won (%q %v, %q %v)", i, final.Email, r.addrs[0], won[0], r.addrs[1], won[1])
		return
	}
	if !final.EmailVerifiedAt.IsZero() {
		t.Errorf("user %d: store: the new address is verified already", i)
	}
	// The link mailed to the address the account no longer has
	// is dead, and verifies nothing.
	var live string
	for j, addr := range r.addrs {
		ms := e.mails(t, addr, mail.KindVerifyEmail)
		want := 0
		if won[j] {
			want = 1
		}
		if len(ms) != want {
			t.Errorf("user %d: %d verification mails to %s, want %d (one if its change won)", i, len(ms), addr, want)
		}
		for _, m := range ms {
			tok := linkToken(t, m, "/verify-email/", "24 hours")
			if addr == final.Email {
				live = tok
				return
			}
			mustStatus(t, e.client().get(verifyPath(tok)), http.StatusBadRequest, errVerifyStale)
		}
	}
	if got := e.byID(t, r.id); got.Email != final.Email || !got.EmailVerifiedAt.IsZero() {
		t.Errorf("user %d: store: email %q verified %v after the other address's link; want %q unverified",
			i, got.Email, got.EmailVerifiedAt, final.Email)
	}
	mustMessage(t, e.client().get(verifyPath(live)), msgEmailVerified)
	if got := e.byID(t, r.id); got.Email != final.Email || got.EmailVerifiedAt.IsZero() {
		t.Errorf("user %d: store: email %q verified %v; want %q verified", i, got.Email, got.EmailVerifiedAt, final.Email)
	}
}

func (s suite) raceVerifyAndChangeEmail(t *testing.T) {
	e := s.env(t, relaxed, fast)
	type racer struct {
		id       string
		c        *client
		old, new string
		link     string
	}
	rc := make([]racer, raceUsers)
	for i := range rc {
		rc[i] = racer{c: e.client(), old: fmt.Sprintf("user%d@example.com", i), new: fmt.Sprintf("user%d.new@example.com", i)}
	}
	for _, r := range storm(t, raceUsers, func(i int) (*reply, error) {
		return rc[i].c.send("/api/auth/register", obj{"email": rc[i].old, "password": goodPassword, "name": "Ada"})
	}) {
		mustMessage(t, r, msgRegistered)
	}
	for i := range rc {
		rc[i].id = e.user(t, rc[i].old).ID
		rc[i].link = e.verifyToken(t, rc[i].old)
	}
	rs := storm(t, 2*raceUsers, func(k int) (*reply, error) {
		r := rc[k/2]
		if k%2 == 0 {
			return e.client().try(http.MethodGet, verifyPath(r.link), "", nil)
		}
		return r.c.send("/api/auth/change-email", obj{"newEmail": r.new, "password": goodPassword})
	})
	for i, r := range rc {
		verify, change := rs[2*i], rs[2*i+1]
		mustMessage(t, change, msgEmailChanged)
		if o := outcome(verify); o != "200" && o != "400 "+errVerifyStale {
			t.Errorf("user %d: %s, want 200 or 400 %q", i, verify, errVerifyStale)
		} else if o == "200" {
			mustMessage(t, verify, msgEmailVerified)
		}
		if got := e.byID(t, r.id); got.Email != r.new || !got.EmailVerifiedAt.IsZero() {
			t.Errorf("user %d: store: email %q verified at %v; want %q unverified", i, got.Email, got.EmailVerifiedAt, r.new)
		}
		mustStatus(t, e.client().get(verifyPath(r.link)), http.StatusBadRequest, errVerifyStale)
		e.verifyEmailFromMail(t, e.client(), r.new)
	}
}

func (s suite) raceConfirmAndSetup(t *testing.T) {
	e := s.env(t, relaxed, fast)
	type racer struct {
		email  string
		before *user.User
		bs     [3]*client // two confirm the pending setup, the third starts a new one
		secret string
		code   string
	}
	rc := make([]racer, setupUsers)
	var emails []string
	for i := range rc {
		email := fmt.Sprintf("user%d@example.com", i)
		e.seedFast(t, email)
		emails = append(emails, email, email, email)
	}
	bs := e.logins(t, emails, obj{"success": true})
	for i := range rc {
		email := emails[3*i]
		r := racer{email: email, bs: [3]*client{bs[3*i], bs[3*i+1], bs[3*i+2]}}
		r.secret = e.setup2FA(t, r.bs[0])
		r.code = e.now(t, r.secret)
		r.before = e.user(t, email)
		rc[i] = r
	}
	rs := storm(t, 3*setupUsers, func(k int) (*reply, error) {
		r := rc[k/3]
		if k%3 == 2 {
			return r.bs[2].send("/api/2fa/setup", nil)
		}
		return r.bs[k%3].send("/api/2fa/confirm", obj{"code": r.code})
	})
	var then []func()
	for i, r := range rc {
		then = append(then, e.mustConfirmRace(t, i, r.email, r.before, r.bs, r.secret, rs[3*i:3*i+3]))
	}
	// Then, a step later (the confirming code's step is used up), the
	// state each user ended in works as a whole.
	e.nextStep()
	for _, f := range then {
		f()
	}
}

// mustConfirmRace checks one user's race of two confirmations of the
// pending secret (replies 0 and 1) with a new setup (reply 2): exactly
// one of the three won, and the stored 2FA state is all of one side. It
// returns the checks to run a TOTP step later, which use the state.
func (e *env) mustConfirmRace(t *testing.T, i int, email string, before *user.User, bs [3]*client, secret string, rs []*reply) func() {
	t.Helper()
	got := e.byID(t, before.ID)
	// Never in between: the enabled flag, the secret and the codes go
	// together.
	if on := got.TwoFactorEnabled; on != (got.TOTPSecret != "") || on != (len(got.RecoveryCodeHashes) == 8) || (on && got.PendingTOTPSecret != "") {
		t.Errorf("user %d: store: twoFactorEnabled %v, totpSecret %q, pendingTotpSecret %q, %d recovery code hashes: a state in between",
			i, on, got.TOTPSecret, got.PendingTOTPSecret, len(got.RecoveryCodeHashes))
	}
	setup := rs[2]
	switch setup.Status {
	case http.StatusOK:
		return e.mustSetupWon(t, i, before, got, bs, secret, rs)
	case http.StatusBadRequest:
		return e.mustConfirmationWon(t, i, email, got, secret, rs)
	default:
		t.Errorf("user %d: setup %s; want 200, or 400 %q", i, setup, msg2FAAlreadyEnabled)
		return func() {}
	}
}

// mustSetupWon is mustConfirmRace when the new setup won: both
// confirmations lost, 2FA is still off and the new secret is the pending
// one.
func (e *env) mustSetupWon(t *testing.T, i int, before, got *user.User, bs [3]*client, secret string, rs []*reply) func() {
	t.Helper()
	newSecret := qrSecret(t, rs[2])
	for _, r := range rs[:2] {
		if o := outcome(r); o == "200" && e.sameCode(t, secret, newSecret) {
			t.Logf("user %d: the old secret's code is also the new secret's; the race proves nothing", i)
			return func() {}
		} else if o != "400 "+errInvalidCode && o != "400 "+errNoPendingSetup {
			t.Errorf("user %d: %s; want 400 %q or %q after the new setup won", i, r, errInvalidCode, errNoPendingSetup)
		}
	}
	if got.TwoFactorEnabled || got.PendingTOTPSecret == "" || got.PendingTOTPSecret == before.PendingTOTPSecret {
		t.Errorf("user %d: store: twoFactorEnabled %v, pending secret replaced %v; want 2FA off with the new pending secret",
			i, got.TwoFactorEnabled, got.PendingTOTPSecret != before.PendingTOTPSecret)
	}
	return func() {
		mustStatus(t, bs[0].post("/api/2fa/confirm", obj{"code": e.now(t, secret)}), http.StatusBadRequest, errInvalidCode)
		r := bs[2].post("/api/2fa/confirm", obj{"code": e.now(t, newSecret)})
		if r.Status != http.StatusOK || r.str("message") != msg2FAEnabled {
			t.Errorf("user %d: %s; want the new pending secret to confirm", i, r)
		}
	}
}

// mustConfirmationWon is mustConfirmRace when a confirmation won: the
// setup came too late, and the stored codes are the winner's.
func (e *env) mustConfirmationWon(t *testing.T, i int, email string, got *user.User, secret string, rs []*reply) func() {
	t.Helper()
	mustStatus(t, rs[2], http.StatusBadRequest, msg2FAAlreadyEnabled)
	w := -1
	for j, r := range rs[:2] {
		switch o := outcome(r); {
		case o == "200" && w < 0:
			w = j
		case o != "400 "+errNoPendingSetup:
			t.Errorf("user %d: %s; want 400 %q for the confirmation that lost", i, r, errNoPendingSetup)
		}
	}
	if w < 0 {
		t.Errorf("user %d: the setup lost, yet no confirmation won: %v", i, rs)
		return func() {}
	}
	raw, _ := rs[w].JSON["recoveryCodes"].([]any)
	if rs[w].str("message") != msg2FAEnabled || len(raw) != 8 {
		t.Errorf("user %d: %s; want {message %q, 8 recoveryCodes}", i, rs[w], msg2FAEnabled)
		return func() {}
	}
	if !got.TwoFactorEnabled {
		t.Errorf("user %d: store: 2FA off after a confirmation won", i)
	}
	// The stored codes are the winner's, the secret the confirmed one.
	first, _ := raw[0].(string)
	return func() {
		b := e.client()
		pendingLogin(t, b, email)
		mustBody(t, b.recover(first), obj{"success": true, "remainingCodes": 7})
		b = e.client()
		pendingLogin(t, b, email)
		mustBody(t, b.verify(e.now(t, secret)), obj{"success": true})
	}
}

// sameCode reports whether two secrets share a code in the steps around
// the clock.
func (e *env) sameCode(t *testing.T, a, b string) bool {
	t.Helper()
	for d := -1; d <= 1; d++ {
		at := e.clock.Now().Add(time.Duration(d) * 30 * time.Second)
		if e.code(t, a, at) == e.code(t, b, at) {
			return true
		}
	}
	return false
}

// mustCleanMail checks every mail sent so far: To and Subject are single
// lines, no mail goes to evil.test, a real mailer would accept it, and
// rendered it has exactly the To and Subject header lines.
func (e *env) mustCleanMail(t *testing.T) {
	t.Helper()
	e.flush(t)
	for _, m := range e.mail.Messages() {
		if strings.ContainsAny(m.To, "\r\n") || strings.ContainsAny(m.Subject, "\r\n") {
			t.Errorf("%s mail: To %q, Subject %q hold a line break", m.Kind, m.To, m.Subject)
		}
		if strings.HasSuffix(strings.ToLower(strings.TrimRight(m.To, ">")), "evil.test") {
			t.Errorf("%s mail sent to %q", m.Kind, m.To)
		}
		var b bytes.Buffer
		if err := mail.NewConsole(&b).Send(e.ctx(), m); err != nil {
			t.Errorf("%s mail: a mailer refuses it: %v", m.Kind, err)
			continue
		}
		// "===== mail: kind =====", then the header lines up to a blank line.
		head, _, _ := strings.Cut(b.String(), "\n\n")
		lines := strings.Split(head, "\n")[1:]
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "To: ") || !strings.HasPrefix(lines[1], "Subject: ") {
			t.Errorf("%s mail: rendered header lines %q, want To and Subject only", m.Kind, lines)
		}
	}
}

// errEmailChangedRace is the 409 text of an email change that lost to
// another change of the same account (core/auth/messages.go).
const errEmailChangedRace = "Your email address was changed by another request"
