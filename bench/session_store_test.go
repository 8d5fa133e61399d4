package bench_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/alexedwards/scs/postgresstore"
	scsredis "github.com/alexedwards/scs/redisstore"
	"github.com/alexedwards/scs/v2"
	"github.com/gomodule/redigo/redis"
	goredis "github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/session"
)

// BenchmarkSessionStoreRead compares reading a server-side session on the
// same stores: authkit's session.Manager with a record store (verify the
// signed cookie, one record read; the user read is a fixed record, as in
// BenchmarkSessionRead) against scs.SessionManager.Load on scs's own store
// for that backend (one read of the token's row or key, gob decode) and
// GetString. Both within the touch interval: authkit writes nothing, scs
// (not modified) writes nothing either. Stores: Redis (AUTHKIT_TEST_REDIS;
// authkit's redisstore.Sessions, scs's redisstore over redigo) and
// PostgreSQL (AUTHKIT_TEST_POSTGRES; sqlxstore's sessions table, scs's
// postgresstore), each in a schema or key prefix of its own.
func BenchmarkSessionStoreRead(b *testing.B) {
	for _, backend := range []string{"redis", "postgres"} {
		b.Run("store="+backend, func(b *testing.B) {
			var records session.Store
			var scsStore scs.Store
			switch backend {
			case "redis":
				records, scsStore = redisStores(b)
			case "postgres":
				records, scsStore = postgresStores(b)
			}
			m, authkitReq := authkitSession(b, session.Config{Secrets: []string{string(secret(b))}, Store: records})

			sm, scsReq := scsSession(b, scsStore)

			b.Run("impl=authkit", func(b *testing.B) { benchAuthkitRead(b, m, authkitReq) })
			b.Run("impl=scs", func(b *testing.B) { benchScsRead(b, sm, scsReq) })
		})
	}
}

func randomName() string {
	var r [5]byte
	_, _ = rand.Read(r[:])
	return "bench_" + hex.EncodeToString(r[:])
}

// redisStores returns both Redis stores under a key prefix of their own,
// deleted at the end.
func redisStores(b *testing.B) (session.Store, scs.Store) {
	raw := os.Getenv("AUTHKIT_TEST_REDIS")
	if raw == "" {
		b.Skip("AUTHKIT_TEST_REDIS is not set")
	}
	opts, err := goredis.ParseURL(raw)
	if err != nil {
		b.Fatal(err)
	}
	client := goredis.NewClient(opts)
	prefix := randomName() + ":"
	b.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, prefix+"*", 200).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
		_ = client.Close()
	})
	pool := &redis.Pool{MaxIdle: 10, Dial: func() (redis.Conn, error) { return redis.DialURL(raw) }}
	b.Cleanup(func() { _ = pool.Close() })
	return redisstore.NewSessions(client, redisstore.SessionsConfig{Prefix: prefix + "ak:"}),
		scsredis.NewWithPrefix(pool, prefix+"scs:")
}

// postgresStores returns both PostgreSQL stores in a schema of their own,
// dropped at the end.
func postgresStores(b *testing.B) (session.Store, scs.Store) {
	raw := os.Getenv("AUTHKIT_TEST_POSTGRES")
	if raw == "" {
		b.Skip("AUTHKIT_TEST_POSTGRES is not set")
	}
	ctx := context.Background()
	schema := randomName()
	admin, err := sqlxopen.Open(ctx, raw, sqlxstore.Config{CleanupInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := admin.SQLX().ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		b.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := sqlxopen.Open(ctx, u.String(), sqlxstore.Config{CleanupInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = db.Close()
		_, _ = admin.SQLX().ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		_ = admin.Close()
	})
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	// scs's table, as its README gives it, beside sqlxstore's prefixed ones.
	for _, stmt := range []string{
		`CREATE TABLE sessions (token TEXT PRIMARY KEY, data BYTEA NOT NULL, expiry TIMESTAMPTZ NOT NULL)`,
		`CREATE INDEX sessions_expiry_idx ON sessions (expiry)`,
	} {
		if _, err := db.SQLX().ExecContext(ctx, stmt); err != nil {
			b.Fatal(err)
		}
	}
	return db.Sessions(), postgresstore.NewWithCleanupInterval(db.SQLX().DB, 0)
}
