package sqlxstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// Test databases. The PostgreSQL and MySQL tests need a server, found by
// storetest.ServiceURL (its variable, else the usual local address);
// SQLite always runs, on files in t.TempDir().
const (
	envPostgres = storetest.EnvPostgres
	envMySQL    = storetest.EnvMySQL
)

// maxTestConns caps each test pool: the servers are shared.
const maxTestConns = 8

// backend is one database the suites run on.
type backend struct {
	name string
	env  string // "" for SQLite
}

var backends = []backend{
	{"SQLite", ""},
	{"PostgreSQL", envPostgres},
	{"MySQL", envMySQL},
}

// serviceURL returns the server's URL from env or its usual local
// address, or skips the test (fails it when AUTHKIT_REQUIRE_SERVICES=1).
func serviceURL(t testing.TB, env string) string {
	t.Helper()
	return storetest.ServiceURL(t, env)
}

// backendURL is the URL to open b at: the server's, or a fresh SQLite file.
func backendURL(t testing.TB, b backend) string {
	t.Helper()
	if b.env == "" {
		return "sqlite://" + filepath.Join(t.TempDir(), "authkit.db")
	}
	return serviceURL(t, b.env)
}

// openPool opens b with the default prefix, for New to share: closed when
// the test ends.
func openPool(t testing.TB, b backend) *sqlxstore.DB {
	t.Helper()
	db, err := sqlxopen.Open(context.Background(), backendURL(t, b), sqlxstore.Config{})
	if err != nil {
		t.Fatalf("Open(%s): %v", b.name, err)
	}
	if b.env != "" {
		db.SQLX().SetMaxOpenConns(maxTestConns)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// randomPrefix is a table prefix of its own for one test.
func randomPrefix() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "t" + hex.EncodeToString(b[:]) + "_"
}

// freshDB returns a DB over pool with a random table prefix, migrated, whose
// tables are dropped when the test ends.
func freshDB(t testing.TB, pool *sqlxstore.DB, cfg sqlxstore.Config) *sqlxstore.DB {
	t.Helper()
	cfg.TablePrefix = randomPrefix()
	db, err := sqlxstore.New(pool.SQLX(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	t.Cleanup(func() {
		_ = db.Close()
		if err := db.DropTables(context.Background()); err != nil {
			t.Errorf("drop tables: %v", err)
		}
	})
	return db
}
