package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// limitKeys are counted twice each before a reset.
var limitKeys = []string{"register:ip:192.0.2.1", "register:ip:192.0.2.2", "login:ip:192.0.2.1"}

func countKeys(t *testing.T, s ratelimit.Store) {
	t.Helper()
	for _, k := range limitKeys {
		for range 2 {
			if _, _, err := s.Increment(t.Context(), k, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// wantCounts fails unless each key's next Increment returns its count in
// want (the register keys) or 3 (the others).
func wantCounts(t *testing.T, s ratelimit.Store, register int64) {
	t.Helper()
	for _, k := range limitKeys {
		want := int64(3)
		if strings.HasPrefix(k, "register:") {
			want = register
		}
		if n, _, err := s.Increment(t.Context(), k, time.Hour); err != nil || n != want {
			t.Errorf("after the reset, Increment(%q) = %d, %v; want %d", k, n, err, want)
		}
	}
}

// TestLimitsResetSQL: the counters under --key in the database's table are
// gone, the others kept; a database not migrated is skipped.
func TestLimitsResetSQL(t *testing.T) {
	t.Setenv("REDIS_URL", "")
	t.Setenv("REDIS_CLUSTER_URL", "")
	t.Setenv("REDIS_SENTINEL_URL", "")
	url := "sqlite://" + filepath.Join(t.TempDir(), "limits.db")
	if code, stdout, stderr := runCLI("limits", "reset", "--database-url", url); code != 0 ||
		stdout != "authkit limits reset: sqlite (authkit_rate_limits): no such table (not migrated, or limits kept elsewhere): skipped\n" || stderr != "" {
		t.Fatalf("reset of a database not migrated: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	db, err := sqlxopen.Open(t.Context(), url, sqlxstore.Config{CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	countKeys(t, db.Limits())
	code, stdout, stderr := runCLI("limits", "reset", "--key", "register:ip:", "--database-url", url)
	if code != 0 || stdout != "authkit limits reset: cleared 2 counters in sqlite (authkit_rate_limits)\n" || stderr != "" {
		t.Fatalf("reset: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	wantCounts(t, db.Limits(), 1)
}

// TestLimitsResetRedis: the same on Redis (AUTHKIT_TEST_REDIS), under the
// key prefix --redis-prefix names.
func TestLimitsResetRedis(t *testing.T) {
	url := storetest.ServiceURL(t, storetest.EnvRedis)
	t.Setenv("DATABASE_URL", "")
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	prefix := "authkit-cli-test:" + randomPrefix()
	s := redisstore.New(c, redisstore.Config{Prefix: prefix})
	t.Cleanup(func() { _, _ = s.Clear(t.Context(), "") })
	countKeys(t, s)
	code, stdout, stderr := runCLI("limits", "reset", "--key", "register:", "--redis-url", url, "--redis-prefix", prefix)
	if code != 0 || stdout != "authkit limits reset: cleared 2 counters in redis "+opts.Addr+" ("+prefix+")\n" || stderr != "" {
		t.Fatalf("reset: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	wantCounts(t, s, 1)
}

// TestLimitsResetUsage: without a store, or with a bad Redis URL, it is a
// usage error that changes nothing.
func TestLimitsResetUsage(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	t.Setenv("REDIS_URL", "")
	t.Setenv("REDIS_CLUSTER_URL", "")
	t.Setenv("REDIS_SENTINEL_URL", "")
	for _, args := range [][]string{
		{"limits"},
		{"limits", "clear"},
		{"limits", "reset"},
		{"limits", "reset", "--redis-url", "http://x"},
	} {
		if code, stdout, stderr := runCLI(args...); code != 2 || stdout != "" || !strings.Contains(stderr, "usage: authkit limits reset") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and the usage", args, code, stdout, stderr)
		}
	}
}
