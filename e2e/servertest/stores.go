package servertest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/core/secretbox"
)

// RandomName returns 12 random hex digits, for names of a test's own.
func RandomName() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// PostgresSchema creates a schema of the test's own, "authkit_NAME_<random>",
// in the shared database at pgURL, so that reruns and parallel suites never
// meet. It returns a small pool on the database (for the test's own
// queries), the schema's name and pgURL with search_path set to it (for a
// server's DATABASE_URL). The schema is dropped, and the pool closed, when
// the test ends: after a server started later has stopped, as cleanups run
// last-registered first.
func PostgresSchema(t testing.TB, pgURL, name string) (*sql.DB, string, string) {
	t.Helper()
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	schema := "authkit_" + name + "_" + RandomName()
	db, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(2)
	if _, err := db.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		db.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer db.Close()
		// t's context is done before cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return db, schema, u.String()
}

// RedisPrefix returns a key prefix of the test's own,
// "authkit:test:NAME:<random>:", for a server's REDIS_PREFIX on the
// shared Redis at redisURL; its keys are deleted when the test ends.
func RedisPrefix(t *testing.T, redisURL, name string) string {
	t.Helper()
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "authkit:test:" + name + ":" + RandomName() + ":"
	rdb := redis.NewClient(opts)
	t.Cleanup(func() {
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := rdb.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			if err := rdb.Del(ctx, iter.Val()).Err(); err != nil {
				t.Errorf("cleanup of %s*: %v", prefix, err)
				return
			}
		}
		if err := iter.Err(); err != nil {
			t.Errorf("cleanup of %s*: %v", prefix, err)
		}
	})
	return prefix
}

// Secrets returns the SESSION_SECRET and ENCRYPTION_KEY environment
// entries of a new service: the servers started with them make one
// service.
func Secrets(t *testing.T) []string {
	t.Helper()
	key, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"SESSION_SECRET=" + RandomName() + RandomName() + RandomName(), "ENCRYPTION_KEY=" + key}
}
