package bench_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clock"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/nethttpauth"
)

// scalePassword is every loaded user's password; its one hash
// (scaleEnv.hash, by plainHasher) is computed once and written into every
// row.
const scalePassword = "correct horse battery staple"

// scalePool is how many users of each size sign in with a TOTP code
// (verify) and how many signed-in browsers RequireUser serves, spread
// over the users of that size.
const scalePool = 32

// scalePlansFile is where BenchmarkScale writes the plans of the flows'
// queries, relative to the package directory (results/ is git-ignored).
const scalePlansFile = "results/scale-plans.txt"

// BenchmarkScale times the flows a signed-in app runs most, over
// sqlxstore on PostgreSQL (AUTHKIT_TEST_POSTGRES), at 1,000 users and at
// 1,000,000 users in the same run: two sets of tables (two Services), each
// with as many distinct expired keys in its rate-limit table as users,
// beside the flows' own. Each flow is one sub-benchmark whose every
// iteration makes one call at each size, in alternating order, so that the
// two sizes see the same load on a shared machine: besides sec/op (the two
// calls), 1k-ns/op and 1M-ns/op are each size's wall time per call, and
// 1k-cpu-ns/op and 1M-cpu-ns/op the process's CPU time per call (the
// client's; the server's is in the plans). Not part of
// `make bench-compare`: run it with `make bench-scale` (-count applies to
// the sub-benchmarks: the rows are loaded once, in about 20 seconds).
//
//   - flow=login: Service.Login of a random user without 2FA (email and
//     password, both limits counted in the SQL limit store, the failed-
//     login counter cleared, the session cookie and the new-device
//     notice), from a new client address each time.
//   - flow=verify: Service.VerifyTwoFactor by TOTP code, the second step
//     of a pending login, for one of scalePool users with 2FA (turned on
//     through SetupTwoFactor and ConfirmTwoFactor); the password step that
//     makes the pending login runs with the timer stopped.
//   - flow=require-user: a GET through nethttpauth.RequireUser with the
//     session cookie of one of scalePool signed-in users (stateless
//     session cookies, the default: the check reads the user by id).
//
// Passwords are checked by plainHasher, so the figures are the store's
// and authkit's, not bcrypt's (BenchmarkLogin times the hash). The rows
// are loaded by INSERT ... SELECT generate_series with the one hash, not
// by Register calls. Before the timing, every flow runs once at each size
// with its SQL recorded (a pgx tracer), and each statement runs again
// under EXPLAIN (ANALYZE, BUFFERS) with the arguments it ran with, rolled
// back; at one million users the set-up fails if any plan holds a
// sequential scan on one of the benchmark's tables. Last, the time of
// LimitStore.Cleanup deleting each size's expired keys is logged. The
// plans and the cleanup times go to results/scale-plans.txt. The tables
// have prefixes of their own and are dropped at the end.
func BenchmarkScale(b *testing.B) {
	sizes := []struct {
		label string
		n     int
		env   *scaleEnv
	}{{label: "1k", n: 1_000}, {label: "1M", n: 1_000_000}}
	var report strings.Builder
	for i := range sizes {
		size := &sizes[i]
		size.env = newScaleEnv(b)
		start := time.Now()
		size.env.grow(b, size.n)
		fmt.Fprintf(&report, "== users=%s: %d users and %d expired limit keys loaded in %s\n\n",
			size.label, size.n, size.n, time.Since(start).Round(time.Millisecond))
		size.env.preparePools(b, size.n)
		report.WriteString(size.env.plans(b, size.label, size.n == 1_000_000))
	}
	flows := []struct {
		name string
		call func(*scaleEnv, testing.TB) func() error
	}{
		{"login", (*scaleEnv).login},
		{"verify", (*scaleEnv).verify},
		{"require-user", func(e *scaleEnv, _ testing.TB) func() error { return e.requireUser() }},
	}
	for _, f := range flows {
		b.Run("flow="+f.name, func(b *testing.B) {
			pairTimed(b, sizes[0].label, sizes[1].label, func(small bool) func() error {
				if small {
					return f.call(sizes[0].env, b)
				}
				return f.call(sizes[1].env, b)
			})
		})
	}
	for _, size := range sizes {
		report.WriteString(size.env.cleanup(b))
	}
	if err := os.MkdirAll(filepath.Dir(scalePlansFile), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(scalePlansFile, []byte(report.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("plans and cleanup times written to %s", scalePlansFile)
}

// pairTimed runs b's iterations, each one call at each of two sizes, made
// ready by prepare with the timer stopped, in alternating order; a call's
// error fails b. Besides sec/op (both calls), it reports each size's wall
// time and process CPU time per call ("<a>-ns/op", "<a>-cpu-ns/op", and the
// same for z), a being the size prepare(true) makes ready.
// Timed side by side, the two sizes see the same load on a shared machine.
func pairTimed(b *testing.B, a, z string, prepare func(small bool) (call func() error)) {
	b.ReportAllocs()
	var wall, cpu [2]time.Duration
	i := 0
	for b.Loop() {
		for k := range 2 {
			small := (i+k)%2 == 0
			b.StopTimer()
			call := prepare(small)
			b.StartTimer()
			c0, t0 := cpuNanos(), time.Now()
			err := call()
			d, c := time.Since(t0), cpuNanos()-c0
			if err != nil {
				b.Fatal(err)
			}
			j := 1
			if small {
				j = 0
			}
			wall[j] += d
			cpu[j] += time.Duration(c)
		}
		i++
	}
	n := float64(b.N)
	b.ReportMetric(float64(wall[0])/n, a+"-ns/op")
	b.ReportMetric(float64(wall[1])/n, z+"-ns/op")
	if cpuNanos() >= 0 {
		b.ReportMetric(float64(cpu[0])/n, a+"-cpu-ns/op")
		b.ReportMetric(float64(cpu[1])/n, z+"-cpu-ns/op")
	}
}

// TestScaleSetUp runs BenchmarkScale's set-up and each flow a few times
// at 1,000 users, and the cleanup, so that `go test` proves them without
// loading a million rows. It needs AUTHKIT_TEST_POSTGRES.
func TestScaleSetUp(t *testing.T) {
	e := newScaleEnv(t)
	e.grow(t, 1_000)
	e.preparePools(t, 1_000)
	plans := e.plans(t, "1k", true)
	for _, want := range []string{"-- flow=login", "-- flow=verify", "-- flow=require-user", "Index Scan using " + e.prefix + "users_email_key"} {
		if !strings.Contains(plans, want) {
			t.Errorf("the plans lack %q:\n%s", want, plans)
		}
	}
	for i := range 2 * scalePool {
		for name, call := range map[string]func() error{"login": e.login(t), "verify": e.verify(t), "require-user": e.requireUser()} {
			if err := call(); err != nil {
				t.Fatalf("%s %d: %v", name, i, err)
			}
		}
	}
	// Every login succeeded: no failed-login count is left, and exactly
	// the verify pool has 2FA on.
	var twoFA, failed int
	if err := e.sql.QueryRow(`SELECT count(*) FILTER (WHERE two_factor_enabled), coalesce(sum(failed_logins), 0) FROM `+e.prefix+`users`).Scan(&twoFA, &failed); err != nil {
		t.Fatal(err)
	}
	if twoFA != scalePool || failed != 0 {
		t.Errorf("users: %d with 2FA (want %d), %d failed logins counted (want 0)", twoFA, scalePool, failed)
	}
	// The flows' windows (5 and 15 minutes) outlive the few minutes the
	// clock moved: the cleanup deletes the loaded keys and only those.
	report := e.cleanup(t)
	if want := "deleted 1000 expired rows (1000 loaded keys and 0 of the flows')"; !strings.Contains(report, want) {
		t.Errorf("cleanup report %q, want %q", report, want)
	}
}

// scaleEnv is a Service over sqlxstore tables of their own on
// AUTHKIT_TEST_POSTGRES, on a settable clock, and the pools of users the
// flows sign in.
type scaleEnv struct {
	db     *sqlxstore.DB
	sql    *sql.DB
	prefix string
	log    *queryLog
	clock  *clock.Clock
	svc    *auth.Service
	limits *sqlxstore.LimitStore
	guard  http.Handler // a 200 behind nethttpauth.RequireUser
	loaded int          // users (and expired limit keys) in the tables
	hash   string
	totp   *totp.TOTP

	twoFA    []*scaleUser    // users with TOTP on, of the size being timed
	verified int             // verifications prepared with this pool
	required int             // GETs through RequireUser prepared
	twoFASet map[string]bool // emails of every user with TOTP on
	signedIn []*http.Request // a GET with a signed-in user's session cookie each
}

// scaleUser is one user of a pool, with its browser and TOTP secret.
type scaleUser struct {
	email   string
	browser *browser
	secret  string
}

func newScaleEnv(tb testing.TB) *scaleEnv {
	tb.Helper()
	dsn := os.Getenv("AUTHKIT_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("AUTHKIT_REQUIRE_SERVICES") == "1" {
			tb.Fatal("AUTHKIT_TEST_POSTGRES is not set and AUTHKIT_REQUIRE_SERVICES=1")
		}
		tb.Skip("AUTHKIT_TEST_POSTGRES is not set")
	}
	ctx := context.Background()
	e := &scaleEnv{
		prefix:   "bscale_" + randomHex(tb, 4) + "_",
		log:      &queryLog{},
		clock:    clock.New(time.Now().UTC().Truncate(time.Millisecond)),
		twoFASet: map[string]bool{},
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Tracer = e.log
	e.sql = stdlib.OpenDB(*cfg)
	tb.Cleanup(func() { _ = e.sql.Close() })
	e.db, err = sqlxstore.NewSQL(e.sql, sqlxstore.Postgres, sqlxstore.Config{
		TablePrefix: e.prefix, Now: e.clock.Now, CleanupInterval: -1,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		// Last in, first out: this runs after the Service is closed.
		_ = e.db.Close()
		e.dropTables(tb)
	})
	if err := e.db.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	e.limits = e.db.Limits()

	keys, err := secretbox.NewKeyring(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		tb.Fatal(err)
	}
	// Every limit counts in the SQL store, but none bites: the pools sign
	// in far more often than a person would.
	many := auth.Limit{Max: 1 << 30}
	e.svc, err = auth.New(auth.Config{
		Users:          e.db.Users(),
		Secrets:        []string{randomHex(tb, 32)},
		Keys:           keys,
		AppURL:         rpOrigin,
		Mailer:         discardMail{},
		Hasher:         plainHasher{},
		RecoveryHasher: plainHasher{},
		Limits: auth.Limits{
			LoginIP: many, LoginEmail: many, Register: many, ResetIP: many, ResetEmail: many,
			Resend: many, TwoFactor: many, Password: many, EmailCode: many,
		},
		LimitStore: func(string) ratelimit.Store { return e.limits },
		Logger:     slog.New(slog.DiscardHandler),
		Now:        e.clock.Now,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.svc.Close(context.Background()) })
	e.guard = nethttpauth.RequireUser(e.svc)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	if e.hash, err = (plainHasher{}).Hash(ctx, scalePassword); err != nil {
		tb.Fatal(err)
	}
	if e.totp, err = totp.New(totp.Config{}); err != nil {
		tb.Fatal(err)
	}
	return e
}

// dropTables drops every table whose name starts with the prefix.
func (e *scaleEnv) dropTables(tb testing.TB) {
	ctx := context.Background()
	rows, err := e.sql.QueryContext(ctx, `SELECT tablename FROM pg_tables
		WHERE schemaname = current_schema() AND starts_with(tablename, $1)`, e.prefix)
	if err != nil {
		tb.Errorf("listing the benchmark's tables: %v", err)
		return
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			tb.Error(err)
		}
		names = append(names, pgx.Identifier{n}.Sanitize())
	}
	_ = rows.Close()
	if len(names) == 0 {
		return
	}
	if _, err := e.sql.ExecContext(ctx, "DROP TABLE "+strings.Join(names, ", ")); err != nil {
		tb.Errorf("dropping the benchmark's tables: %v", err)
	}
}

// grow loads users and expired rate-limit keys up to n of each, in one
// INSERT ... SELECT generate_series per table, then ANALYZEs both tables
// so that the planner knows their size. User i has the id u0000000i and
// the email user-i@scale.example, a verified address and the one hash.
func (e *scaleEnv) grow(tb testing.TB, n int) {
	tb.Helper()
	ctx := context.Background()
	now := e.clock.Now().UnixMilli()
	stmts := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO ` + e.prefix + `users (id, email, name, password_hash, email_verified_at, created_at)
			SELECT 'u' || lpad(i::text, 9, '0'), 'user-' || i || '@scale.example', 'User ' || i, $1, $2, $2
			FROM generate_series($3::bigint, $4::bigint) AS i`, []any{e.hash, now, e.loaded + 1, n}},
		// Expired an hour ago: in the table for every lookup, and what the
		// cleanup deletes at the end.
		{`INSERT INTO ` + e.prefix + `rate_limits (limit_key, hits, reset_at)
			SELECT 'scale:expired:' || i, 1, $1 FROM generate_series($2::bigint, $3::bigint) AS i`,
			[]any{now - time.Hour.Milliseconds(), e.loaded + 1, n}},
		{`ANALYZE ` + e.prefix + `users, ` + e.prefix + `rate_limits`, nil},
	}
	for _, s := range stmts {
		if _, err := e.sql.ExecContext(ctx, s.sql, s.args...); err != nil {
			tb.Fatalf("loading %d users: %v", n, err)
		}
	}
	e.loaded = n
}

// scaleEmail is the email of user i.
func scaleEmail(i int) string { return fmt.Sprintf("user-%d@scale.example", i) }

// preparePools picks scalePool users spread over the n loaded and turns
// TOTP on for them through the typed methods (the verify pool), and signs
// in scalePool others (the RequireUser pool).
func (e *scaleEnv) preparePools(tb testing.TB, n int) {
	tb.Helper()
	e.twoFA, e.signedIn, e.verified = nil, nil, 0
	for j := range scalePool {
		// Users n/scalePool*j + 1 (verify) and + 2 (RequireUser): spread
		// from the first rows to the last.
		base := n / scalePool * j
		u := &scaleUser{email: scaleEmail(base + 1), browser: &browser{cookies: map[string]string{}}}
		e.signIn(tb, u.browser, u.email)
		u.secret = u.browser.turnOnTOTP(tb, e.svc, e.totp, e.clock.Now())
		e.twoFA = append(e.twoFA, u)
		e.twoFASet[u.email] = true

		br := &browser{cookies: map[string]string{}}
		e.signIn(tb, br, scaleEmail(base+2))
		r := httptest.NewRequest(http.MethodGet, rpOrigin+"/", nil)
		r.RemoteAddr = "192.0.2.7:40000"
		br.addCookies(r)
		e.signedIn = append(e.signedIn, r)
	}
	// The confirming codes' steps are used: the first verify moves on.
	e.clock.Advance(2 * 30 * time.Second)
}

// signIn makes a password login of email from br, which must sign in.
func (e *scaleEnv) signIn(tb testing.TB, br *browser, email string) {
	tb.Helper()
	v := br.visit(e.svc)
	res, err := e.svc.Login(context.Background(), v, auth.LoginInput{Email: email, Password: scalePassword})
	if err != nil || res.RequiresTwoFactor {
		tb.Fatalf("login of %s: %+v, %v", email, res, err)
	}
	br.keep(v)
}

// login prepares the login of a random user without TOTP, from a new
// browser at a random address, a millisecond after the last: a thousand
// logins a second, so the limit rows' window ends differ as they would.
func (e *scaleEnv) login(tb testing.TB) func() error {
	e.clock.Advance(time.Millisecond)
	email := scaleEmail(randomInt(tb, e.loaded) + 1)
	for e.twoFASet[email] {
		email = scaleEmail(randomInt(tb, e.loaded) + 1)
	}
	r := httptest.NewRequest(http.MethodPost, rpOrigin+"/api/auth/login", nil)
	r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:40000", randomInt(tb, 256), randomInt(tb, 256), randomInt(tb, 256))
	v := e.svc.Visit(auth.HTTPRequest(r, nil))
	return func() error {
		res, err := e.svc.Login(context.Background(), v, auth.LoginInput{Email: email, Password: scalePassword})
		if err == nil && res.RequiresTwoFactor {
			err = fmt.Errorf("login of %s asks for a second factor", email)
		}
		return err
	}
}

// verify prepares the next TOTP verification: the pool's users in turn,
// each with its password step made here. Each round of the pool moves the
// clock on two steps, so that every code is one not used yet.
func (e *scaleEnv) verify(tb testing.TB) func() error {
	i := e.verified
	e.verified++
	u := e.twoFA[i%len(e.twoFA)]
	if i%len(e.twoFA) == 0 && i > 0 {
		e.clock.Advance(2 * 30 * time.Second)
	}
	code, err := e.totp.Code(u.secret, e.clock.Now())
	if err != nil {
		tb.Fatal(err)
	}
	u.browser.signOut()
	v := u.browser.visit(e.svc)
	res, err := e.svc.Login(context.Background(), v, auth.LoginInput{Email: u.email, Password: scalePassword})
	if err != nil || !res.RequiresTwoFactor {
		tb.Fatalf("password step of %s: %+v, %v; want a pending login", u.email, res, err)
	}
	u.browser.keep(v)
	v = u.browser.visit(e.svc)
	return func() error {
		_, err := e.svc.VerifyTwoFactor(context.Background(), v, auth.TwoFactorInput{Code: code})
		return err
	}
}

// requireUser prepares the next GET through RequireUser: the pool's
// signed-in users in turn.
func (e *scaleEnv) requireUser() func() error {
	r := e.signedIn[e.required%len(e.signedIn)]
	e.required++
	return func() error {
		w := &discardWriter{h: http.Header{}}
		e.guard.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			return fmt.Errorf("GET through RequireUser: status %d", w.status)
		}
		return nil
	}
}

// plans runs each flow once with its SQL recorded, runs every statement
// on the benchmark's tables again under EXPLAIN ANALYZE with the arguments
// it ran with (rolled back), and returns the plans as text. With strict, a sequential scan on one of the
// tables fails tb.
func (e *scaleEnv) plans(tb testing.TB, label string, strict bool) string {
	tb.Helper()
	var out strings.Builder
	flows := []struct {
		name string
		call func() error
	}{
		{"login", e.login(tb)},
		{"verify", e.verify(tb)},
		{"require-user", e.requireUser()},
	}
	for _, f := range flows {
		e.log.start(e.prefix)
		err := f.call()
		queries := e.log.stop()
		if err != nil {
			tb.Fatalf("flow %s: %v", f.name, err)
		}
		var body strings.Builder
		var ms float64
		var pages int
		for _, q := range queries {
			plan := e.explain(tb, q, true)
			fmt.Fprintf(&body, "%s\n%s\n", strings.Join(strings.Fields(q.sql), " "), plan)
			if strict && strings.Contains(plan, "Seq Scan on "+e.prefix) {
				tb.Fatalf("flow %s at %s users: a sequential scan:\n%s\n%s", f.name, label, q.sql, plan)
			}
			// A flow finds a limit row by its key; the reset_at index is
			// the cleanup's. Served by it, a statement reads every row
			// whose window ends in the same millisecond.
			if strict && strings.Contains(plan, e.prefix+"rate_limits_reset_at_idx") {
				tb.Fatalf("flow %s at %s users: a limit row found by its window's end, not its key:\n%s\n%s", f.name, label, q.sql, plan)
			}
			t, p := planCost(plan)
			ms += t
			pages += p
		}
		fmt.Fprintf(&out, "-- flow=%s (users=%s): %d statements, %.3f ms executing on the server, %d pages (shared buffers hit or read)\n\n%s",
			f.name, label, len(queries), ms, pages, body.String())
	}
	return out.String()
}

// planCost reads an EXPLAIN ANALYZE plan's execution time and the pages
// its top node touched: hit or read in the first "Buffers:" line, which
// counts its children's too.
func planCost(plan string) (ms float64, pages int) {
	seenBuffers := false
	for _, line := range strings.Split(plan, "\n") {
		line = strings.TrimSpace(line)
		if t, ok := strings.CutPrefix(line, "Execution Time: "); ok {
			_, _ = fmt.Sscanf(t, "%f ms", &ms)
		}
		if b, ok := strings.CutPrefix(line, "Buffers: shared "); ok && !seenBuffers {
			seenBuffers = true
			for _, f := range strings.Fields(b) {
				var n int
				if _, err := fmt.Sscanf(f, "hit=%d", &n); err == nil {
					pages += n
				} else if _, err := fmt.Sscanf(f, "read=%d", &n); err == nil {
					pages += n
				}
			}
		}
	}
	return ms, pages
}

// insertByID matches an INSERT whose first column is id, naming its table.
var insertByID = regexp.MustCompile(`^\s*INSERT INTO ([a-z0-9_]+) \(id,`)

// explain returns the plan of q, indented. With analyze, q runs too
// (EXPLAIN ANALYZE, BUFFERS: the rows, pages and time it took) in a
// transaction rolled back, so that the tables stay as they were.
func (e *scaleEnv) explain(tb testing.TB, q loggedQuery, analyze bool) string {
	tb.Helper()
	ctx := context.Background()
	tx, err := e.sql.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	explain := "EXPLAIN "
	if analyze {
		explain = "EXPLAIN (ANALYZE, BUFFERS) "
		// An INSERT of a row by its id (a session record) ran already: it
		// runs again here with the row it made deleted first, in the same
		// transaction, as its key would otherwise be taken.
		if m := insertByID.FindStringSubmatch(q.sql); m != nil && len(q.args) > 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+m[1]+` WHERE id = $1`, q.args[0]); err != nil {
				tb.Fatalf("making room for %s: %v", q.sql, err)
			}
		}
	}
	rows, err := tx.QueryContext(ctx, explain+q.sql, q.args...)
	if err != nil {
		tb.Fatalf("%s%s: %v", explain, q.sql, err)
	}
	defer func() { _ = rows.Close() }()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			tb.Fatal(err)
		}
		b.WriteString("    " + line + "\n")
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

// cleanup times LimitStore.Cleanup over the loaded expired keys (and the
// flows' keys whose window ended), checks that it deleted exactly the
// expired rows, and returns the report.
func (e *scaleEnv) cleanup(tb testing.TB) string {
	tb.Helper()
	ctx := context.Background()
	count := func(where string, args ...any) int64 {
		var n int64
		if err := e.sql.QueryRowContext(ctx, `SELECT count(*) FROM `+e.prefix+`rate_limits WHERE `+where, args...).Scan(&n); err != nil {
			tb.Fatal(err)
		}
		return n
	}
	now := e.clock.Now().UnixMilli()
	expired, live := count(`reset_at <= $1`, now), count(`reset_at > $1`, now)
	e.log.start(e.prefix)
	start := time.Now()
	n, err := e.limits.Cleanup(ctx)
	took := time.Since(start)
	queries := e.log.stop()
	if err != nil {
		tb.Fatal(err)
	}
	if n != expired {
		tb.Fatalf("Cleanup deleted %d rows, want the %d expired", n, expired)
	}
	if left, loaded := count(`true`), count(`starts_with(limit_key, 'scale:expired:')`); left != live || loaded != 0 {
		tb.Fatalf("after Cleanup: %d rows (want the %d live), %d loaded keys", left, live, loaded)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "-- cleanup: LimitStore.Cleanup deleted %d expired rows (%d loaded keys and %d of the flows') in %s; %d live rows kept\n\n",
		n, e.loaded, expired-int64(e.loaded), took.Round(time.Millisecond), live)
	tb.Logf("LimitStore.Cleanup: %d expired rows deleted in %s", n, took.Round(time.Millisecond))
	for _, q := range queries {
		// Planned now, over the rows that are left (the statistics still
		// count the deleted ones).
		fmt.Fprintf(&out, "%s\n%s\n", strings.Join(strings.Fields(q.sql), " "), e.explain(tb, q, false))
	}
	return out.String()
}

// queryLog is a pgx.QueryTracer that records, while on, each distinct
// statement that names a table of the prefix, with its first arguments.
type queryLog struct {
	mu      sync.Mutex
	on      bool
	prefix  string
	queries []loggedQuery
	seen    map[string]bool
}

type loggedQuery struct {
	sql  string
	args []any
}

func (l *queryLog) start(prefix string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on, l.prefix, l.queries, l.seen = true, prefix, nil, map[string]bool{}
}

func (l *queryLog) stop() []loggedQuery {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = false
	return l.queries
}

// TraceQueryStart implements pgx.QueryTracer.
func (l *queryLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.on && strings.Contains(d.SQL, l.prefix) && !l.seen[d.SQL] {
		l.seen[d.SQL] = true
		l.queries = append(l.queries, loggedQuery{sql: d.SQL, args: append([]any(nil), d.Args...)})
	}
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (l *queryLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// discardMail drops every message (the new-device notices of the logins).
type discardMail struct{}

func (discardMail) Send(context.Context, mail.Message) error { return nil }

func randomHex(tb testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// randomInt returns a uniform int in [0, n).
func randomInt(tb testing.TB, n int) int {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		tb.Fatal(err)
	}
	return int(v.Int64())
}
