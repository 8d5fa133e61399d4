package sqlxstore_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// TestOneTimeStore runs the one-time suite and the store's own tests on
// every backend, each subtest on tables of its own.
func TestOneTimeStore(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			pool := openPool(t, b)
			t.Run("Conformance", func(t *testing.T) {
				storetest.RunOneTimeStore(t, func(t *testing.T, clock *storetest.Clock) onetime.Store {
					return suiteDB(t, pool, sqlxstore.Config{Now: clock.Now, CleanupInterval: -1}).OneTime()
				})
			})
			t.Run("Layout", func(t *testing.T) { testOneTimeLayout(t, pool) })
			t.Run("Cleanup", func(t *testing.T) { testOneTimeCleanup(t, pool) })
			t.Run("BackgroundCleanup", func(t *testing.T) { testOneTimeBackgroundCleanup(t, pool) })
		})
	}
}

// TestOneTimeSQLiteMemory runs the suite on sqlite::memory:, one
// connection: the racing Takes queue for it.
func TestOneTimeSQLiteMemory(t *testing.T) {
	pool, err := sqlxopen.Open(t.Context(), "sqlite::memory:", sqlxstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Close() })
	storetest.RunOneTimeStore(t, func(t *testing.T, clock *storetest.Clock) onetime.Store {
		return freshDB(t, pool, sqlxstore.Config{Now: clock.Now, CleanupInterval: -1}).OneTime()
	})
}

// oneTimeRow is a row of the challenges table.
type oneTimeRow struct {
	KeyHash   []byte `db:"key_hash"`
	Data      []byte `db:"data"`
	ExpiresAt int64  `db:"expires_at"`
}

func oneTimeRows(t *testing.T, db *sqlxstore.DB) []oneTimeRow {
	t.Helper()
	var rows []oneTimeRow
	if err := db.SQLX().SelectContext(t.Context(), &rows, "SELECT key_hash, data, expires_at FROM "+db.TablePrefix()+"challenges ORDER BY expires_at"); err != nil {
		t.Fatal(err)
	}
	return rows
}

// testOneTimeLayout: a row holds the key's SHA-256, the data and the
// expiry in Unix milliseconds rounded down; a replacing Put leaves one
// row; a Take deletes the row, expired or not.
func testOneTimeLayout(t *testing.T, pool *sqlxstore.DB) {
	db := freshDB(t, pool, sqlxstore.Config{CleanupInterval: -1})
	s, ctx := db.OneTime(), t.Context()
	expires := limitsBase.Add(5*time.Minute + 1500*time.Microsecond)
	if err := s.Put(ctx, "k", []byte("first"), expires); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "k", []byte("data"), expires); err != nil {
		t.Fatal(err)
	}
	rows := oneTimeRows(t, db)
	sum := sha256.Sum256([]byte("k"))
	if len(rows) != 1 || string(rows[0].KeyHash) != string(sum[:]) || string(rows[0].Data) != "data" ||
		rows[0].ExpiresAt != limitsBase.Add(5*time.Minute+time.Millisecond).UnixMilli() {
		t.Fatalf("rows %+v, want one: SHA-256 of k, data, expiry %d", rows, limitsBase.Add(5*time.Minute+time.Millisecond).UnixMilli())
	}
	if _, err := s.Take(ctx, "k", expires.Add(time.Hour)); !errors.Is(err, onetime.ErrNotFound) {
		t.Fatalf("Take after the expiry = %v, want ErrNotFound", err)
	}
	if rows := oneTimeRows(t, db); len(rows) != 0 {
		t.Fatalf("an expired Take left %d rows, want 0", len(rows))
	}
}

// testOneTimeCleanup: Cleanup deletes exactly the rows whose expiry has
// passed by the DB's clock.
func testOneTimeCleanup(t *testing.T, pool *sqlxstore.DB) {
	clock := storetest.NewClock(limitsBase)
	db := freshDB(t, pool, sqlxstore.Config{Now: clock.Now, CleanupInterval: -1})
	s, ctx := db.OneTime(), t.Context()
	for _, p := range []struct {
		key string
		ttl time.Duration
	}{{"short", time.Minute}, {"long", time.Hour}, {"dead", -time.Second}} {
		if err := s.Put(ctx, p.key, []byte(p.key), limitsBase.Add(p.ttl)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.Cleanup(ctx); err != nil || n != 1 {
		t.Fatalf("Cleanup = %d, %v; want 1 (dead)", n, err)
	}
	clock.Advance(time.Minute)
	if n, err := s.Cleanup(ctx); err != nil || n != 1 {
		t.Fatalf("Cleanup at short's expiry = %d, %v; want 1", n, err)
	}
	if n, err := s.Cleanup(ctx); err != nil || n != 0 {
		t.Fatalf("second Cleanup = %d, %v; want 0", n, err)
	}
	if rows := oneTimeRows(t, db); len(rows) != 1 || string(rows[0].Data) != "long" {
		t.Fatalf("rows after Cleanup: %+v, want long alone", rows)
	}
	if got, err := s.Take(ctx, "long", clock.Now()); err != nil || string(got) != "long" {
		t.Fatalf("Take(long) after Cleanup = %q, %v", got, err)
	}
}

// testOneTimeBackgroundCleanup: testCleanupLoop on the one-time store.
func testOneTimeBackgroundCleanup(t *testing.T, pool *sqlxstore.DB) {
	rows := func(t *testing.T, db *sqlxstore.DB) int { return len(oneTimeRows(t, db)) }
	testCleanupLoop(t, pool, rows, func(ctx context.Context, db *sqlxstore.DB, expires time.Time) error {
		return db.OneTime().Put(ctx, "k", []byte("v"), expires)
	})
}
