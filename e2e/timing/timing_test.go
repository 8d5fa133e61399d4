// Package timing measures whether authkit's answers take longer for an
// account that exists than for one that does not (account enumeration by
// response time: OWASP ASVS 5.0 6.3.8). It holds benchmarks and
// their helpers only: the benchmarks are slow by design and never run in
// make test.
//
// Each benchmark starts an auth.Service as production runs it (the
// default password hasher, bcrypt at cost 12, and the default lock-out,
// whose failure count is a store write) behind nethttpauth.Handler on a
// loopback httptest.Server, with every rate limit switched off so that no
// request is refused. Each runs twice: on the memory store, and on
// PostgreSQL (a schema of its own) when AUTHKIT_TEST_POSTGRES names a
// server, where the failure count is a committed UPDATE. A known account's
// wrong passwords rotate over several accounts, so none reaches the
// lock-out's 100 failures and every one of them pays the count. It times requests one at a
// time from a real http.Client, from sending the request to reading the
// whole answer. The two cases of a comparison are interleaved request by
// request, so that drift in the machine's load falls on both alike; each
// benchmark reports the median and the 90th percentile of at least 100
// requests per case as <case>-ns/median and <case>-ns/p90 (ns/op is the
// mean round trip). Every answer is checked, so a path that answers
// differently fails the benchmark instead of being timed.
//
//	make bench-timing
//	# which runs:
//	cd e2e && go test -run '^$' -bench 'Timing' -benchtime 1x -count 1 ./timing
//
// About 400 cost-12 bcrypt checks: a minute or so on one core. The figures
// are in SECURITY.md.
package timing

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/secretbox"
	authstore "github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/e2e/servertest"
	"github.com/authkit-go/authkit/nethttpauth"
)

const (
	// requests is how many requests each case times per benchmark
	// iteration: 100, enough for a median that a few slow requests do not move.
	requests = 100

	// warmup requests per case are sent first and not timed: the first
	// unknown-email login makes the service's dummy hash, and the first
	// requests open the keep-alive connection.
	warmup = 3

	knownEmail    = "alice@example.com"
	knownPassword = "correct horse battery staple"
	wrongPassword = "not the password 123"
	unknownEmail  = "nobody@example.com"

	// knownAccounts share the known cases' wrong passwords, so none of
	// them reaches the lock-out (100 failures) within a benchmark.
	knownAccounts = 8
)

// longPassword is 73 bytes: one more than bcrypt reads, the length at which
// a plain bcrypt hash once answered without any work.
var longPassword = strings.Repeat("x", 73)

// Texts of the spec's error table (docs/errors.md) that both cases of a benchmark must answer.
const (
	msgInvalidCredentials = "Invalid credentials"
	msgForgotSent         = "If an account exists for that email, a password reset link has been sent."
)

// fixture is a running service with one registered account.
type fixture struct {
	srv    *httptest.Server
	svc    *auth.Service
	users  user.Store
	mailer *mail.Capture
}

// store names a user store the benchmarks run on.
type store string

const (
	memoryStore   store = "memory"
	postgresStore store = "postgres"
)

// stores returns the stores to run on: memory, and PostgreSQL when
// AUTHKIT_TEST_POSTGRES is set.
func stores() []store {
	if os.Getenv("AUTHKIT_TEST_POSTGRES") == "" {
		return []store{memoryStore}
	}
	return []store{memoryStore, postgresStore}
}

func users(b *testing.B, kind store) user.Store {
	if kind == memoryStore {
		return authstore.NewMemory(authstore.MemoryConfig{})
	}
	_, _, schemaURL := servertest.PostgresSchema(b, os.Getenv("AUTHKIT_TEST_POSTGRES"), "timing")
	db, err := sqlxopen.Open(b.Context(), schemaURL, sqlxstore.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.Migrate(b.Context()); err != nil {
		b.Fatal(err)
	}
	return db.Users()
}

// known returns the email of the i-th known account.
func known(i int) string {
	if i%knownAccounts == 0 {
		return knownEmail
	}
	return fmt.Sprintf("alice%d@example.com", i%knownAccounts)
}

// start runs a production-configured Service (default hasher, default
// lock-out) on the kind of store with rate limits off, and registers the
// known accounts through the API.
func start(b *testing.B, kind store) *fixture {
	b.Helper()
	keys, err := secretbox.NewKeyring(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		b.Fatal(err)
	}
	mailer := &mail.Capture{}
	cfgUsers := users(b, kind)
	off := auth.Off
	svc, err := auth.New(auth.Config{
		Users:   cfgUsers,
		Secrets: []string{rand.Text() + rand.Text()},
		Keys:    keys,
		AppURL:  "http://127.0.0.1",
		Mailer:  mailer,
		Limits: auth.Limits{
			LoginIP: off, LoginEmail: off, Register: off, ResetIP: off,
			ResetEmail: off, Resend: off, TwoFactor: off, Password: off,
		},
		Insecure: true, // plain HTTP on loopback
		Audit:    func(context.Context, auth.Event) {},
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(nethttpauth.Handler(svc))
	b.Cleanup(func() {
		srv.Close()
		if err := svc.Close(context.Background()); err != nil {
			b.Error(err)
		}
	})
	f := &fixture{srv: srv, svc: svc, users: cfgUsers, mailer: mailer}
	for i := range knownAccounts {
		f.post(b, "/api/auth/register", map[string]string{"email": known(i), "password": knownPassword, "name": "Alice"},
			http.StatusOK, "message", "Registration successful. Check your email to verify your address.")
	}
	// The verification mail leaves the queue before any benchmark counts
	// mail.
	if err := svc.FlushMail(context.Background()); err != nil {
		b.Fatal(err)
	}
	return f
}

// post sends one JSON request and checks that the answer is status with
// body {key: text}. It returns how long the round trip took.
func (f *fixture) post(b *testing.B, path string, body map[string]string, status int, key, text string) time.Duration {
	b.Helper()
	buf, err := json.Marshal(body)
	if err != nil {
		b.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, bytes.NewReader(buf))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	t0 := time.Now()
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		b.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	elapsed := time.Since(t0)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	var m map[string]any
	fields := 1
	if key == "error" {
		fields = 2 // {error, code}
	}
	if resp.StatusCode != status || json.Unmarshal(got, &m) != nil || len(m) != fields || m[key] != text {
		b.Fatalf("POST %s %s: %d %s; want %d {%q:%q}", path, buf, resp.StatusCode, got, status, key, text)
	}
	return elapsed
}

// timingCase is one side of a comparison: how to send its request (which
// checks the answer) and the round trips timed so far.
type timingCase struct {
	name string               // metric prefix, e.g. "unknown-email"
	send func() time.Duration // sends one request, checks the answer, returns its round trip
	ds   []time.Duration      // the timed round trips
}

// compare times the cases' requests interleaved, so that drift in the
// machine's load (other processes, GC, CPU frequency) falls on every case
// alike: each benchmark iteration sends requests rounds, one request per
// case per round, the case order alternating from round to round. warmup
// untimed rounds come first. It reports, per case, the median and the
// 90th percentile ("<case>-ns/median", "<case>-ns/p90"); ns/op is the mean
// round trip over all timed requests.
func compare(b *testing.B, cases ...*timingCase) {
	b.Helper()
	for range warmup {
		for _, c := range cases {
			c.send()
		}
	}
	round := 0
	for b.Loop() {
		for range requests {
			for i := range cases {
				c := cases[i]
				if round%2 == 1 {
					c = cases[len(cases)-1-i]
				}
				c.ds = append(c.ds, c.send())
			}
			round++
		}
	}
	var total time.Duration
	var n int
	for _, c := range cases {
		slices.Sort(c.ds)
		for _, d := range c.ds {
			total += d
		}
		n += len(c.ds)
		b.ReportMetric(float64(percentile(c.ds, 50)), c.name+"-ns/median")
		b.ReportMetric(float64(percentile(c.ds, 90)), c.name+"-ns/p90")
	}
	b.ReportMetric(float64(total)/float64(n), "ns/op")
	b.ReportMetric(float64(n/len(cases)), "requests/case")
}

// percentile returns the p-th percentile of sorted ds (nearest rank; for
// an even count the median is the mean of the two middle values).
func percentile(ds []time.Duration, p int) time.Duration {
	n := len(ds)
	if p == 50 && n%2 == 0 {
		return (ds[n/2-1] + ds[n/2]) / 2
	}
	rank := (p*n + 99) / 100 // ceil(p/100 * n)
	return ds[max(rank, 1)-1]
}

// BenchmarkLoginTiming compares a login with an unknown email against a
// login with a wrong password for a known one, with an ordinary password
// and with one of 73 bytes: all must answer 401 "Invalid credentials"
// after one bcrypt check each, the known ones with the lock-out's failure
// count as well.
func BenchmarkLoginTiming(b *testing.B) {
	for _, kind := range stores() {
		b.Run(string(kind), func(b *testing.B) {
			f := start(b, kind)
			unknown := func(pw string) func() time.Duration {
				body := map[string]string{"email": unknownEmail, "password": pw}
				return func() time.Duration {
					return f.post(b, "/api/login", body, http.StatusUnauthorized, "error", msgInvalidCredentials)
				}
			}
			wrong := func(pw string) func() time.Duration {
				n := 0
				return func() time.Duration {
					n++
					body := map[string]string{"email": known(n), "password": pw}
					return f.post(b, "/api/login", body, http.StatusUnauthorized, "error", msgInvalidCredentials)
				}
			}
			compare(b,
				&timingCase{name: "unknown-email", send: unknown(wrongPassword)},
				&timingCase{name: "wrong-password", send: wrong(wrongPassword)},
				&timingCase{name: "unknown-email-73B", send: unknown(longPassword)},
				&timingCase{name: "wrong-password-73B", send: wrong(longPassword)},
			)
			b.StopTimer()
			u, err := f.users.ByEmail(context.Background(), knownEmail)
			if err != nil || u.FailedLogins == 0 || !u.LockedUntil.IsZero() {
				b.Fatalf("store: %s: %v, FailedLogins %d, LockedUntil %v; want counted failures and no lock",
					knownEmail, err, u.FailedLogins, u.LockedUntil)
			}
		})
	}
}

// BenchmarkForgotTiming compares forgot-password for an unknown email
// against a known one: both must answer the same 200, and every request
// for the known address must queue exactly one reset mail (checked after
// the mail queue is flushed), none for the unknown one.
func BenchmarkForgotTiming(b *testing.B) {
	f := start(b, memoryStore)
	f.mailer.Reset()
	sent := map[string]int{}
	forgot := func(email string) func() time.Duration {
		body := map[string]string{"email": email}
		return func() time.Duration {
			sent[email]++
			return f.post(b, "/api/auth/forgot-password", body, http.StatusOK, "message", msgForgotSent)
		}
	}
	compare(b,
		&timingCase{name: "unknown", send: forgot(unknownEmail)},
		&timingCase{name: "known", send: forgot(knownEmail)},
	)
	b.StopTimer()
	if err := f.svc.FlushMail(context.Background()); err != nil {
		b.Fatal(err)
	}
	if got := len(f.mailer.To(knownEmail)); got != sent[knownEmail] || f.mailer.Len() != got {
		b.Fatalf("%d reset mails to %s (%d in all) after %d requests for it; want one each and no other",
			got, knownEmail, f.mailer.Len(), sent[knownEmail])
	}
	for _, m := range f.mailer.Messages() {
		if m.Kind != mail.KindResetPassword {
			b.Fatalf("mail of kind %s, want %s", m.Kind, mail.KindResetPassword)
		}
	}
}

// TestPercentile pins the statistics the benchmarks report.
func TestPercentile(t *testing.T) {
	ds := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n)
		}
		return out
	}
	for _, tt := range []struct {
		ds      []time.Duration
		p       int
		want    time.Duration
		comment string
	}{
		{ds(5), 50, 5, "one value"},
		{ds(1, 2, 3), 50, 2, "odd count: middle"},
		{ds(1, 2, 3, 10), 50, 2, "even count: mean of the middle two, truncated"},
		{ds(1, 2, 4, 10), 50, 3, "even count: mean of the middle two"},
		{ds(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9, "nearest rank"},
		{ds(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), 90, 10, "nearest rank rounds up"},
		{ds(7), 90, 7, "one value"},
	} {
		if got := percentile(tt.ds, tt.p); got != tt.want {
			t.Errorf("%s: percentile(%v, %d) = %v, want %v", tt.comment, tt.ds, tt.p, got, tt.want)
		}
	}
}
