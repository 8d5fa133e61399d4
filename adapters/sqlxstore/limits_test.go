package sqlxstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/store/storetest"
)

var limitsBase = time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)

func TestLimitStore(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			pool := openPool(t, b)
			t.Run("Cleanup", func(t *testing.T) { testCleanup(t, pool) })
			t.Run("BackgroundCleanup", func(t *testing.T) { testBackgroundCleanup(t, pool) })
			t.Run("LongKeys", func(t *testing.T) { testLongKeys(t, pool) })
			t.Run("Precision", func(t *testing.T) { testPrecision(t, pool) })
		})
	}
}

func countRows(t *testing.T, db *sqlxstore.DB) int {
	t.Helper()
	var n int
	if err := db.SQLX().GetContext(t.Context(), &n, "SELECT COUNT(*) FROM "+db.TablePrefix()+"rate_limits"); err != nil {
		t.Fatal(err)
	}
	return n
}

func testCleanup(t *testing.T, pool *sqlxstore.DB) {
	clock := storetest.NewClock(limitsBase)
	db := freshDB(t, pool, sqlxstore.Config{Now: clock.Now, CleanupInterval: -1})
	s, ctx := db.Limits(), t.Context()
	incr := func(key string, window time.Duration) int64 {
		t.Helper()
		n, _, err := s.Increment(ctx, key, window)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	incr("short", time.Minute)
	incr("long", 10*time.Minute)
	incr("long", 10*time.Minute)

	if n, err := s.Cleanup(ctx); err != nil || n != 0 {
		t.Fatalf("Cleanup before any window ended: %d, %v", n, err)
	}
	clock.Advance(time.Minute) // "short" ends exactly now
	if n, err := s.Cleanup(ctx); err != nil || n != 1 {
		t.Fatalf("Cleanup: removed %d, %v; want 1", n, err)
	}
	if n, err := s.Cleanup(ctx); err != nil || n != 0 {
		t.Fatalf("second Cleanup: removed %d, %v; want 0", n, err)
	}
	if rows := countRows(t, db); rows != 1 {
		t.Fatalf("%d rows left, want 1", rows)
	}
	if n := incr("long", 10*time.Minute); n != 3 {
		t.Fatalf("a live counter was cleaned up: count %d, want 3", n)
	}
	if n := incr("short", time.Minute); n != 1 {
		t.Fatalf("count after cleanup = %d, want 1", n)
	}
}

// testBackgroundCleanup: testCleanupLoop on the limit store.
func testBackgroundCleanup(t *testing.T, pool *sqlxstore.DB) {
	// write is always called a minute before expires: a window of a
	// minute ends then.
	testCleanupLoop(t, pool, countRows, func(ctx context.Context, db *sqlxstore.DB, _ time.Time) error {
		n, _, err := db.Limits().Increment(ctx, "k", time.Minute)
		if err == nil && n != 1 {
			err = fmt.Errorf("count %d, want 1", n)
		}
		return err
	})
}

// testCleanupLoop: the first write through a part of db (limits,
// one-time values) starts the cleanup loop, which deletes expired rows on
// each tick and nothing live; Close stops it, a second Close is harmless,
// and the part keeps working after Close (the pool is the caller's). write
// stores one value of key "k" that expires at expires, a minute from the
// clock's now; rows counts the part's rows.
func testCleanupLoop(t *testing.T, pool *sqlxstore.DB, rows func(*testing.T, *sqlxstore.DB) int,
	write func(ctx context.Context, db *sqlxstore.DB, expires time.Time) error) {
	clock := storetest.NewClock(limitsBase)
	db := freshDB(t, pool, sqlxstore.Config{Now: clock.Now})
	tick := make(chan time.Time) // unbuffered: a send returns once the loop took it
	db.SetCleanupTicker(tick)
	if err := write(t.Context(), db, clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	tick <- time.Time{}
	tick <- time.Time{} // the first cleanup has finished
	if n := rows(t, db); n != 1 {
		t.Fatalf("background cleanup removed a live value: %d rows", n)
	}
	clock.Advance(time.Minute)
	tick <- time.Time{}
	tick <- time.Time{}
	if n := rows(t, db); n != 0 {
		t.Fatalf("background cleanup left %d expired rows", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case tick <- time.Time{}:
		t.Fatal("the cleanup loop still runs after Close")
	default:
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := write(t.Context(), db, clock.Now().Add(time.Minute)); err != nil {
		t.Fatalf("write after Close: %v", err)
	}
}

func testLongKeys(t *testing.T, pool *sqlxstore.DB) {
	db := freshDB(t, pool, sqlxstore.Config{CleanupInterval: -1})
	s, ctx := db.Limits(), t.Context()
	long := strings.Repeat("login:email:", 100)
	for want := int64(1); want <= 2; want++ {
		if n, _, err := s.Increment(ctx, long, time.Minute); err != nil || n != want {
			t.Fatalf("Increment(long key) = %d, %v; want %d", n, err, want)
		}
	}
	if n, _, err := s.Increment(ctx, long+"x", time.Minute); err != nil || n != 1 {
		t.Fatalf("a different long key shares the counter: %d, %v", n, err)
	}
	if n, _, err := s.Increment(ctx, sqlxstore.StorageKey(long), time.Minute); err != nil || n != 1 {
		t.Fatalf("a key equal to a hashed key's stored form shares its counter: %d, %v", n, err)
	}
	var keys []string
	if err := db.SQLX().SelectContext(ctx, &keys, "SELECT limit_key FROM "+db.TablePrefix()+"rate_limits"); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "sha256:") || len(k) != len("sha256:")+64 {
			t.Errorf("stored key %q: want sha256: and 64 hex digits", k)
		}
	}
	if err := s.Reset(ctx, long); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := s.Increment(ctx, long, time.Minute); n != 1 {
		t.Fatalf("Reset(long key) did not reset it: count %d", n)
	}
}

func testPrecision(t *testing.T, pool *sqlxstore.DB) {
	clock := storetest.NewClock(limitsBase)
	db := freshDB(t, pool, sqlxstore.Config{Now: clock.Now, CleanupInterval: -1})
	s := db.Limits()
	if _, _, err := s.Increment(t.Context(), "k", time.Microsecond); err == nil {
		t.Fatal("a window below a millisecond was accepted")
	}
	_, reset, err := s.Increment(t.Context(), "k", 1500*time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	if want := limitsBase.Add(2 * time.Millisecond); !reset.Equal(want) {
		t.Fatalf("resetAt = %v, want %v (the window rounded up to whole milliseconds)", reset, want)
	}
}
