// Package scaleout proves that two example server processes sharing one
// PostgreSQL database and one Redis behave as one service.
package scaleout

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/authkit-go/authkit/e2e/servertest"
)

type reply struct {
	status int
	body   map[string]any
}

func post(t *testing.T, base, path, body string) reply {
	t.Helper()
	resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r reply
	r.status = resp.StatusCode
	_ = json.NewDecoder(resp.Body).Decode(&r.body)
	return r
}

// TestTwoServersShareLimitsAndLinks runs two processes of the net/http
// example on one PostgreSQL schema and one Redis key prefix: login attempts
// sent alternately to both meet one limit, and a reset link used on one is
// dead on the other.
func TestTwoServersShareLimitsAndLinks(t *testing.T) {
	pgURL := servertest.Need(t, "AUTHKIT_TEST_POSTGRES")
	redisURL := servertest.Need(t, "AUTHKIT_TEST_REDIS")

	// A schema and a Redis key prefix of its own, cleaned up at the end.
	_, _, databaseURL := servertest.PostgresSchema(t, pgURL, "scaleout")
	prefix := servertest.RedisPrefix(t, redisURL, "scaleout")

	// Every process of one service shares the secrets, the database and
	// the rate-limit store.
	env := append(servertest.Secrets(t), "DATABASE_URL="+databaseURL, "REDIS_URL="+redisURL, "REDIS_PREFIX="+prefix)
	a := servertest.Start(t, "nethttp", env...)
	b := servertest.Start(t, "nethttp", env...)
	for _, s := range []*servertest.Server{a, b} {
		if !strings.Contains(s.FirstLine, "users: postgres") || !strings.Contains(s.FirstLine, "rate limits: redis") {
			t.Fatalf("first log line %q: want users on postgres and limits on redis", s.FirstLine)
		}
	}

	if r := post(t, a.URL, "/api/auth/register", `{"email":"ada@example.com","password":"correct horse","name":"Ada"}`); r.status != 200 {
		t.Fatalf("register on A: %d %v", r.status, r.body)
	}
	// The per-email login limit is 5 per 15 minutes: five wrong passwords
	// spread over both servers use it up, and the sixth is refused on
	// either.
	servers := []*servertest.Server{a, b, a, b, a}
	for i, s := range servers {
		if r := post(t, s.URL, "/api/login", `{"email":"ada@example.com","password":"wrong password"}`); r.status != 401 {
			t.Fatalf("wrong password %d: %d %v", i+1, r.status, r.body)
		}
	}
	for name, s := range map[string]*servertest.Server{"A": a, "B": b} {
		r := post(t, s.URL, "/api/login", `{"email":"ada@example.com","password":"correct horse"}`)
		if r.status != 429 || r.body["error"] != "Too many login attempts. Try again later." {
			t.Fatalf("sixth attempt on %s: %d %v, want 429", name, r.status, r.body)
		}
	}

	// A reset link mailed by A, used on B, is dead on A.
	if r := post(t, a.URL, "/api/auth/forgot-password", `{"email":"ada@example.com"}`); r.status != 200 {
		t.Fatalf("forgot on A: %d %v", r.status, r.body)
	}
	tok := a.WaitFor(t, regexp.MustCompile(`/reset-password/([A-Za-z0-9_-]+)`))
	body := `{"password":"a new password","confirmPassword":"a new password"}`
	if r := post(t, b.URL, "/api/auth/reset-password/"+tok, body); r.status != 200 {
		t.Fatalf("reset on B: %d %v", r.status, r.body)
	}
	if r := post(t, a.URL, "/api/auth/reset-password/"+tok, body); r.status != 400 || r.body["error"] != "This reset link has already been used" {
		t.Fatalf("same link on A: %d %v", r.status, r.body)
	}
	if err := a.Stop(t); err != nil {
		t.Errorf("A exit: %v", err)
	}
	if err := b.Stop(t); err != nil {
		t.Errorf("B exit: %v", err)
	}
}
