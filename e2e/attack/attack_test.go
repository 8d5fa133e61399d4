// Package attack proves the example server under backend faults: while a
// bounded load of registrations, 2FA confirmations, logins and recoveries
// runs against a real server process, its PostgreSQL and its Redis are cut
// off and restored through TCP proxies the test controls (the machine's
// servers are never touched). Every answer must be the normal one or 503
// {"error":"Service temporarily unavailable. Try again later.",
// "code":"service_unavailable"}, exactly as the outage at that moment
// allows; the service must recover once the path is restored; and the
// stored 2FA state must be whole afterwards.
//
// It also fills the server's in-memory rate-limit stores from many real
// source addresses and checks what a user who is not under attack still
// gets (exhaustion_test.go).
//
// The races and the hostile-input corpus run in core/authtest, on every
// framework and store (e2e/matrix).
package attack

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/redisstore/redistest"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/e2e/servertest"
)

// The 503 body of every backend failure (docs/api.md, Conventions).
const unavailable = "Service temporarily unavailable. Try again later."

// How the load runs.
const (
	workers        = 4
	requestTimeout = 10 * time.Second        // a request that takes longer is a hang
	warmup         = 1500 * time.Millisecond // the load before the first cut
	// go-redis takes about 1.7 s to give up on a Redis it cannot reach
	// (its dial and command retries), so the Redis outage is longer, to
	// hold some requests whole.
	dbOutage    = 2 * time.Second
	redisOutage = 5 * time.Second
	pause       = 25 * time.Millisecond // after a 503, before the next iteration
	// recoveryBound is how soon after a restore every request must get
	// its normal answer again. go-redis, once it has given up dialling,
	// tries again about once a second in the background: up to a second
	// of 503s after the path is back (measured: 0.3 to 0.8 s).
	recoveryBound = 2500 * time.Millisecond
	settle        = 3500 * time.Millisecond // after a restore: recovery, then clean time
	password      = "correct horse battery"
)

// TestBackendOutagesUnderLoad cuts PostgreSQL, restores it, then cuts
// Redis and restores it, while the load runs, and checks every answer
// against the outage it met, then the stored state.
func TestBackendOutagesUnderLoad(t *testing.T) {
	pgURL := servertest.Need(t, "AUTHKIT_TEST_POSTGRES")
	redisURL := servertest.Need(t, "AUTHKIT_TEST_REDIS")

	// A schema of its own, reached directly by the test too, and a Redis
	// key prefix of its own; both cleaned up after the server stops.
	db, schema, schemaURL := servertest.PostgresSchema(t, pgURL, "attack")
	prefix := servertest.RedisPrefix(t, redisURL, "attack")

	// The server reaches both through proxies.
	pgu, err := url.Parse(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	pgProxy := redistest.StartProxy(t, pgu.Host)
	pgu.Host = pgProxy.Addr()
	ru, err := url.Parse(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	redisProxy := redistest.StartProxy(t, ru.Host)
	ru.Host = redisProxy.Addr()

	// TRUST_PROXY=true: each simulated client sends its own address in
	// X-Forwarded-For, so the per-address limits stay out of the way.
	srv := servertest.Start(t, "nethttp", append(servertest.Secrets(t),
		"DATABASE_URL="+pgu.String(), "REDIS_URL="+ru.String(), "REDIS_PREFIX="+prefix, "TRUST_PROXY=true")...)
	if !strings.Contains(srv.FirstLine, "users: postgres") || !strings.Contains(srv.FirstLine, "rate limits: redis") {
		t.Fatalf("first log line %q: want users on postgres and limits on redis", srv.FirstLine)
	}

	l := newLoad(t, srv.URL)
	l.prepare(t)
	began := time.Now()
	l.start()
	time.Sleep(warmup)
	l.fault("postgres", pgProxy, dbOutage)
	time.Sleep(settle)
	l.fault("redis", redisProxy, redisOutage)
	time.Sleep(settle)
	l.stop()
	t.Logf("load: %s, %d requests", time.Since(began).Round(time.Millisecond), len(l.calls))

	l.check(t)
	l.checkStore(t, db, schema)
	l.checkSpentCode(t)
}

// step is one kind of request of the load, and what it needs.
type step struct {
	name    string
	db      bool // needs PostgreSQL
	limited bool // passes a rate limit (Redis)
}

var (
	stepMe       = step{"me", true, false}
	stepRegister = step{"register", true, true}
	stepSetup    = step{"2fa setup", true, false}
	stepConfirm  = step{"2fa confirm", true, false}
	stepLogout   = step{"logout", false, false}
	stepLogin    = step{"login", true, true}
	stepRecover  = step{"2fa recover", true, true}
)

// call is one request of the load and its answer.
type call struct {
	step       step
	user       string
	start, end time.Time
	status     int
	body       string
	normal     bool // the answer the request gets without any fault
	err        error
}

// event is a moment of the fault schedule.
type event struct {
	backend string
	cut     bool // a cut; else a restore
	from    time.Time
	to      time.Time // when the cut or restore had taken effect
}

// account is what the load knows about one user it made.
type account struct {
	email           string
	confirmed       bool // confirm answered 200
	confirmUnknown  bool // confirm answered 503: it may have happened
	recovered       bool
	recoverUnknown  bool
	usedCode        string
	registerUnknown bool
}

// load runs the workers and records every call.
type load struct {
	t    *testing.T
	base string
	totp *totp.TOTP

	mu       sync.Mutex
	calls    []call
	events   []event
	accounts map[string]*account
	home     [workers]*browser // signed in: asks who it is at each iteration
	homes    [workers]string
	spares   [workers][]spare // signed in, 2FA off: setups while Redis is out

	stopping atomic.Bool
	redisOut atomic.Bool
	wg       sync.WaitGroup
	next     atomic.Int64 // numbers users and client addresses
}

func newLoad(t *testing.T, base string) *load {
	tp, err := totp.New(totp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &load{t: t, base: base, totp: tp, accounts: map[string]*account{}}
}

// spare is a signed-in user kept for a setup while Redis is out.
type spare struct {
	b     *browser
	email string
}

// browser is one client with its own cookies and address.
type browser struct {
	l   *load
	hc  *http.Client
	xff string
}

func (l *load) browser() *browser {
	jar, _ := cookiejar.New(nil)
	n := l.next.Add(1)
	return &browser{l: l, hc: &http.Client{Jar: jar, Timeout: requestTimeout},
		xff: fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)}
}

// do sends one request, records it, and reports whether it got the
// normal answer (checked by normal on the decoded body).
func (b *browser) do(st step, user, method, path string, body any, normal func(status int, m map[string]any) bool) (map[string]any, bool) {
	var rd io.Reader = http.NoBody
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			b.l.t.Error(err)
			return nil, false
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.l.base+path, rd)
	if err != nil {
		b.l.t.Error(err)
		return nil, false
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Forwarded-For", b.xff)
	c := call{step: st, user: user, start: time.Now()}
	resp, err := b.hc.Do(req)
	var m map[string]any
	if err == nil {
		var raw []byte
		raw, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		c.status, c.body = resp.StatusCode, string(raw)
		_ = json.Unmarshal(raw, &m)
		c.normal = err == nil && normal(c.status, m)
	}
	c.end, c.err = time.Now(), err
	b.l.mu.Lock()
	b.l.calls = append(b.l.calls, c)
	b.l.mu.Unlock()
	return m, c.normal
}

// message is the normal-answer check of a 200 {"message": text}.
func message(text string) func(int, map[string]any) bool {
	return func(status int, m map[string]any) bool { return status == 200 && len(m) == 1 && m["message"] == text }
}

// prepare makes, before any fault, one signed-in user per worker and
// spare users for the setups run while Redis is out.
func (l *load) prepare(t *testing.T) {
	for w := range workers {
		l.home[w] = l.browser()
		var ok bool
		if l.homes[w], ok = l.home[w].register(); !ok {
			t.Fatalf("register %s before any fault failed: %v", l.homes[w], l.calls[len(l.calls)-1])
		}
		for range 3 {
			b := l.browser()
			email, ok := b.register()
			if !ok {
				t.Fatalf("register %s before any fault failed: %v", email, l.calls[len(l.calls)-1])
			}
			l.accounts[email] = &account{email: email}
			l.spares[w] = append(l.spares[w], spare{b, email})
		}
	}
}

func (b *browser) register() (string, bool) {
	email := fmt.Sprintf("user%d@example.com", b.l.next.Add(1))
	_, ok := b.do(stepRegister, email, http.MethodPost, "/api/auth/register",
		map[string]string{"email": email, "password": password, "name": "Load"},
		message("Registration successful. Check your email to verify your address."))
	return email, ok
}

func (l *load) start() {
	for w := range workers {
		l.wg.Go(func() {
			for !l.stopping.Load() {
				if !l.iteration(w) {
					time.Sleep(pause)
				}
			}
		})
	}
}

func (l *load) stop() {
	l.stopping.Store(true)
	l.wg.Wait()
}

// fault cuts backend through p for the outage, then restores it and
// records both moments.
func (l *load) fault(backend string, p *redistest.Proxy, outage time.Duration) {
	from := time.Now()
	p.Refuse()
	l.redisOut.Store(backend == "redis")
	l.record(event{backend: backend, cut: true, from: from, to: time.Now()})
	time.Sleep(outage)
	from = time.Now()
	if err := p.Restore(); err != nil {
		l.t.Fatalf("restore %s: %v", backend, err)
	}
	l.redisOut.Store(false)
	l.record(event{backend: backend, from: from, to: time.Now()})
}

func (l *load) record(e event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// iteration is one round of a worker: two probes (the worker's own user
// asks who it is; a login for an unknown address); while Redis is out, a
// spare user sets up and confirms 2FA (no rate limit on the way); then a
// new user registers, sets up and confirms 2FA, logs out, logs in with a
// recovery code and looks at the account. In that flow the first answer
// that is not the normal one ends the iteration (what follows would
// depend on a step that may or may not have happened); iteration reports
// whether the flow ran to the end.
func (l *load) iteration(w int) bool {
	// Probes whose answers nothing else depends on: a signed-in user asks
	// who it is, and a login for an address nobody has.
	home := l.homes[w]
	l.home[w].do(stepMe, home, http.MethodGet, "/api/auth/me", nil, func(s int, m map[string]any) bool {
		return s == 200 && m["email"] == home
	})
	nobody := fmt.Sprintf("nobody%d@example.com", l.next.Add(1))
	l.browser().do(stepLogin, nobody, http.MethodPost, "/api/login", map[string]string{"email": nobody, "password": password},
		func(s int, m map[string]any) bool {
			return s == 401 && len(m) == 2 && m["error"] == "Invalid credentials" && m["code"] == "invalid_credentials"
		})
	if l.redisOut.Load() {
		l.mu.Lock()
		var sp spare
		if n := len(l.spares[w]); n > 0 {
			sp, l.spares[w] = l.spares[w][n-1], l.spares[w][:n-1]
		}
		l.mu.Unlock()
		if sp.b != nil {
			codes, sent := sp.b.enable2FA(sp.email)
			l.mu.Lock()
			l.accounts[sp.email] = &account{email: sp.email, confirmed: codes != nil, confirmUnknown: codes == nil && sent}
			l.mu.Unlock()
		}
	}
	b := l.browser()
	email, ok := b.register()
	acct := &account{email: email, registerUnknown: !ok}
	l.mu.Lock()
	l.accounts[email] = acct
	l.mu.Unlock()
	if !ok {
		return false
	}
	if _, ok := b.do(stepMe, email, http.MethodGet, "/api/auth/me", nil, func(s int, m map[string]any) bool {
		return s == 200 && m["email"] == email && m["twoFactorEnabled"] == false
	}); !ok {
		return false
	}
	codes, sent := b.enable2FA(email)
	l.mu.Lock()
	acct.confirmed, acct.confirmUnknown = codes != nil, codes == nil && sent
	l.mu.Unlock()
	if codes == nil {
		return false
	}
	if _, ok := b.do(stepLogout, email, http.MethodPost, "/api/auth/logout", nil, message("Logged out")); !ok {
		return false
	}
	if _, ok := b.do(stepLogin, email, http.MethodPost, "/api/login", map[string]string{"email": email, "password": password},
		func(s int, m map[string]any) bool { return s == 200 && len(m) == 1 && m["requiresTwoFactor"] == true }); !ok {
		return false
	}
	_, ok = b.do(stepRecover, email, http.MethodPost, "/api/2fa/recover", map[string]string{"code": codes[0]},
		func(s int, m map[string]any) bool {
			return s == 200 && len(m) == 2 && m["success"] == true && m["remainingCodes"] == float64(7)
		})
	l.mu.Lock()
	acct.recovered, acct.recoverUnknown, acct.usedCode = ok, !ok, codes[0]
	l.mu.Unlock()
	if !ok {
		return false
	}
	_, ok = b.do(stepMe, email, http.MethodGet, "/api/auth/me", nil, func(s int, m map[string]any) bool {
		return s == 200 && m["email"] == email && m["twoFactorEnabled"] == true && m["recoveryCodesRemaining"] == float64(7)
	})
	return ok
}

// enable2FA runs setup and confirmation. It returns the recovery codes on
// success, and whether the confirmation was sent at all.
func (b *browser) enable2FA(email string) (codes []string, confirmSent bool) {
	m, ok := b.do(stepSetup, email, http.MethodPost, "/api/2fa/setup", nil, func(s int, m map[string]any) bool {
		uri, _ := m["qrUri"].(string)
		return s == 200 && len(m) == 2 && strings.HasPrefix(uri, "otpauth://totp/")
	})
	if !ok {
		return nil, false
	}
	u, err := url.Parse(m["qrUri"].(string))
	if err != nil {
		b.l.t.Errorf("qrUri: %v", err)
		return nil, false
	}
	code, err := b.l.totp.Code(u.Query().Get("secret"), time.Now())
	if err != nil {
		b.l.t.Errorf("TOTP code: %v", err)
		return nil, false
	}
	m, ok = b.do(stepConfirm, email, http.MethodPost, "/api/2fa/confirm", map[string]string{"code": code}, func(s int, m map[string]any) bool {
		codes, _ := m["recoveryCodes"].([]any)
		return s == 200 && len(m) == 2 && m["message"] == "2FA enabled" && len(codes) == 8
	})
	if !ok {
		return nil, true
	}
	for _, c := range m["recoveryCodes"].([]any) {
		s, _ := c.(string)
		codes = append(codes, s)
	}
	return codes, true
}

// check judges every call by the fault it met:
//
//   - sent after a cut took effect and answered before the restore began
//     ("postgres cut", "redis cut"): a request that needs the cut backend
//     answers 503 {error}, exactly; one that does not (logout during the
//     database cut; me, setup and confirm, which pass no rate limit,
//     during the Redis cut) answers as if nothing had happened;
//   - sent within recoveryBound of a restore taking effect ("recovering"):
//     the same, but a request that needs the restored backend may also
//     get its normal answer: clients reconnect on their own schedule;
//   - sent later, or before any cut began, and answered before the next
//     cut began ("clean"): the normal answer, nothing else;
//   - overlapping a cut or a restore: the normal answer or 503 {error}.
//
// Never a transport error (a hang ends in the client's timeout), never
// any other status.
func (l *load) check(t *testing.T) {
	type key struct{ phase, step, outcome string }
	seen := map[key]int{}
	lag := map[string]time.Duration{} // the latest 503 after each restore
	for _, c := range l.calls {
		phase, backend := l.phase(c)
		outcome := "normal"
		switch {
		case c.err != nil:
			outcome = "error"
			t.Errorf("%s %s (%s): %v", c.step.name, c.user, phase, c.err)
		case c.normal:
		case c.status == http.StatusServiceUnavailable && c.body == `{"error":"`+unavailable+`","code":"service_unavailable"}`:
			outcome = "503"
		default:
			outcome = fmt.Sprintf("%d", c.status)
			t.Errorf("%s %s (%s): %d %s; want the normal answer or 503 {error}", c.step.name, c.user, phase, c.status, c.body)
		}
		seen[key{phase, c.step.name, outcome}]++
		needs := backend == "postgres" && c.step.db || backend == "redis" && c.step.limited
		recovering := strings.HasPrefix(phase, "recovering")
		switch {
		case outcome != "normal" && outcome != "503":
		case phase == "clean" && outcome != "normal":
			t.Errorf("%s %s: %d %s while no backend was cut (%s); want the normal answer",
				c.step.name, c.user, c.status, c.body, l.sinceEvent(c.start))
		case backend != "" && !needs && outcome != "normal":
			t.Errorf("%s %s: %d %s (%s), which does not need %s; want the normal answer", c.step.name, c.user, c.status, c.body, phase, backend)
		case backend != "" && needs && !recovering && outcome != "503":
			t.Errorf("%s %s: %d %s while %s was cut; want 503 {error}", c.step.name, c.user, c.status, c.body, backend)
		case recovering && outcome == "503":
			lag[backend] = max(lag[backend], c.start.Sub(l.restoreOf(backend)))
		}
	}
	keys := slices.SortedFunc(maps.Keys(seen), func(a, b key) int {
		return strings.Compare(a.phase+"/"+a.step+"/"+a.outcome, b.phase+"/"+b.step+"/"+b.outcome)
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-22s %-12s %-7s %d", k.phase, k.step, k.outcome, seen[k])
	}
	t.Logf("calls by phase, step and outcome:%s", b.String())
	t.Logf("the latest 503 after a restore was sent: postgres %s, redis %s after it", lag["postgres"], lag["redis"])
	// The faults were met, and the service came back from each.
	for _, want := range []key{
		{"postgres cut", "me", "503"},
		{"postgres cut", "login", "503"},
		{"postgres cut", "register", "503"},
		{"redis cut", "login", "503"},
		{"redis cut", "register", "503"},
		{"redis cut", "me", "normal"},
		{"redis cut", "2fa setup", "normal"},
		{"redis cut", "2fa confirm", "normal"},
		{"clean", "2fa recover", "normal"},
	} {
		if seen[want] == 0 {
			t.Errorf("no %s %s answered %s: the fault schedule proved nothing there", want.phase, want.step, want.outcome)
		}
	}
	recovered := 0
	for _, c := range l.calls {
		if c.step == stepRecover && c.start.After(l.restoreOf("redis").Add(recoveryBound)) && c.normal {
			recovered++
		}
	}
	if recovered == 0 {
		t.Errorf("no 2FA recovery succeeded after the service recovered from the last outage")
	}
}

// restoreOf returns when the restore of backend took effect.
func (l *load) restoreOf(backend string) time.Time {
	for _, ev := range l.events {
		if !ev.cut && ev.backend == backend {
			return ev.to
		}
	}
	return time.Time{}
}

// phase names the part of the fault schedule call c met (see check), and
// the backend that part is about.
func (l *load) phase(c call) (name, backend string) {
	// events: cut postgres, restore postgres, cut redis, restore redis.
	for i := 0; i+1 < len(l.events); i += 2 {
		down, up := l.events[i], l.events[i+1]
		var next time.Time // the next cut's start
		if i+2 < len(l.events) {
			next = l.events[i+2].from
		}
		switch {
		case !c.start.Before(down.to) && !c.end.After(up.from):
			return down.backend + " cut", down.backend
		case !c.start.Before(up.to) && c.start.Before(up.to.Add(recoveryBound)) && (next.IsZero() || !c.end.After(next)):
			return "recovering (" + up.backend + ")", up.backend
		case !c.start.Before(up.to.Add(recoveryBound)) && (next.IsZero() || !c.end.After(next)):
			return "clean", ""
		}
	}
	if len(l.events) > 0 && !c.end.After(l.events[0].from) {
		return "clean", ""
	}
	return "overlapping a fault", ""
}

// checkStore reads the users straight from the schema and checks that
// the 2FA state of each is whole, and agrees with what the load saw.
func (l *load) checkStore(t *testing.T, db *sql.DB, schema string) {
	rows, err := db.QueryContext(context.Background(), `SELECT email, two_factor_enabled, COALESCE(totp_secret, ''),
		COALESCE(pending_totp_secret, ''), COALESCE(recovery_code_hashes, ''), last_totp_step IS NOT NULL FROM `+schema+`.authkit_users`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type stored struct {
		enabled         bool
		secret, pending string
		hashes          []string
		hasStep         bool
	}
	users := map[string]stored{}
	enabled := 0
	for rows.Next() {
		var email, hashes string
		var s stored
		if err := rows.Scan(&email, &s.enabled, &s.secret, &s.pending, &hashes, &s.hasStep); err != nil {
			t.Fatal(err)
		}
		if hashes != "" {
			if err := json.Unmarshal([]byte(hashes), &s.hashes); err != nil {
				t.Errorf("%s: recovery_code_hashes %q is not a JSON array of strings: %v", email, hashes, err)
			}
		}
		users[email] = s
		distinct := slices.Compact(slices.Sorted(slices.Values(s.hashes)))
		switch {
		case s.enabled:
			enabled++
			if s.secret == "" || s.pending != "" || len(s.hashes) == 0 || len(s.hashes) > 8 || len(distinct) != len(s.hashes) ||
				slices.Contains(s.hashes, "") || !s.hasStep {
				t.Errorf("%s: 2FA on with totp_secret %d bytes, pending %d bytes, %d recovery code hashes (%d distinct), step recorded %v",
					email, len(s.secret), len(s.pending), len(s.hashes), len(distinct), s.hasStep)
			}
		default:
			if s.secret != "" || len(s.hashes) != 0 || s.hasStep {
				t.Errorf("%s: 2FA off with totp_secret %d bytes, %d recovery code hashes, step recorded %v",
					email, len(s.secret), len(s.hashes), s.hasStep)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for email, a := range l.accounts {
		s, ok := users[email]
		switch {
		case !ok && !a.registerUnknown:
			t.Errorf("%s: registered (200) but not stored", email)
		case !ok:
		case a.confirmed && !s.enabled:
			t.Errorf("%s: confirmed (200) but 2FA is off", email)
		case a.recovered && len(s.hashes) != 7:
			t.Errorf("%s: recovered (200) but %d codes left, want 7", email, len(s.hashes))
		case a.recoverUnknown && s.enabled && len(s.hashes) != 7 && len(s.hashes) != 8:
			t.Errorf("%s: recovery of unknown outcome left %d codes, want 7 or 8", email, len(s.hashes))
		case a.confirmUnknown && s.enabled && len(s.hashes) != 8:
			t.Errorf("%s: confirmation of unknown outcome left 2FA on with %d codes, want 8", email, len(s.hashes))
		case a.confirmUnknown && !s.enabled && s.pending == "":
			t.Errorf("%s: confirmation of unknown outcome left 2FA off without the pending secret", email)
		}
	}
	t.Logf("store: %d users, %d with 2FA on", len(users), enabled)
}

// checkSpentCode logs in, after the faults, as a user whose recovery
// succeeded during the load: the spent code stays spent.
func (l *load) checkSpentCode(t *testing.T) {
	for email, a := range l.accounts {
		if !a.recovered {
			continue
		}
		b := l.browser()
		if _, ok := b.do(stepLogin, email, http.MethodPost, "/api/login", map[string]string{"email": email, "password": password},
			func(s int, m map[string]any) bool { return s == 200 && m["requiresTwoFactor"] == true }); !ok {
			t.Fatalf("login as %s after the faults: %+v", email, l.calls[len(l.calls)-1])
		}
		if _, ok := b.do(stepRecover, email, http.MethodPost, "/api/2fa/recover", map[string]string{"code": a.usedCode},
			func(s int, m map[string]any) bool { return s == 400 && m["error"] == "Invalid recovery code" }); !ok {
			t.Errorf("the spent recovery code of %s: %+v; want 400 Invalid recovery code", email, l.calls[len(l.calls)-1])
		}
		return
	}
	t.Errorf("no recovery succeeded during the load")
}

// sinceEvent describes how long after the last fault event before at.
func (l *load) sinceEvent(at time.Time) string {
	for i := len(l.events) - 1; i >= 0; i-- {
		if ev := l.events[i]; !at.Before(ev.to) {
			what := "restore"
			if ev.cut {
				what = "cut"
			}
			return fmt.Sprintf("%s after the %s %s", at.Sub(ev.to).Round(time.Millisecond), ev.backend, what)
		}
	}
	return "before any fault"
}
