// Package sqltest gives the e2e suites authkit's SQL stores on the test
// databases: on a server, one pool for a whole test and for each subtest
// tables of its own (a random prefix), migrated on first use and dropped
// when the subtest ends, so suites share the servers without meeting; on
// SQLite, a database file of its own for each subtest.
//
// SQLite subtests cannot share a file: a table dropped through one
// connection of a file makes the statements other connections prepared
// fail with SQLITE_SCHEMA ("database schema has changed"), which the flow
// suite's parallel subtests would meet as their neighbours end.
package sqltest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/e2e/servertest"
)

// Database is one of the databases the suites run on.
type Database struct {
	Name string
	// URL returns its DATABASE_URL: SQLite in t's temporary folder, the
	// servers from AUTHKIT_TEST_POSTGRES and AUTHKIT_TEST_MYSQL or their
	// usual local addresses (skipped without them, failed with
	// AUTHKIT_REQUIRE_SERVICES=1).
	URL func(t *testing.T) string
}

// Databases are SQLite, PostgreSQL and MySQL/MariaDB.
var Databases = []Database{
	{"sqlite", func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "e2e.db") }},
	{"postgres", func(t *testing.T) string { return servertest.Need(t, "AUTHKIT_TEST_POSTGRES") }},
	{"mysql", func(t *testing.T) string { return servertest.Need(t, "AUTHKIT_TEST_MYSQL") }},
}

// tables are every table the migrations make, under a prefix.
var tables = []string{"challenges", "email_codes", "passkeys", "passkey_handles", "identities", "sign_ins", "api_keys", "sessions", "trusted_devices", "users", "rate_limits", "schema_settings", "schema_migrations"}

// RandomPrefix returns a new table or key prefix ("m" and ten hex digits
// and "_").
func RandomPrefix() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "m" + hex.EncodeToString(b[:]) + "_"
}

// DB is one database's pool, opened on first use, and each subtest's
// tables on it.
type DB struct {
	url    string
	sqlite bool // a file per subtest instead of a shared pool

	once sync.Once
	pool *sqlxstore.DB
	err  error

	mu     sync.Mutex
	tables map[*testing.T]*sqlxstore.DB // each subtest's tables
	asked  map[*testing.T]bool          // the subtest has its sessions table already
}

// Open returns the DB of url and closes its pool when t ends.
func Open(t *testing.T, url string) *DB {
	d := &DB{url: url, sqlite: strings.HasPrefix(url, "sqlite:"), tables: map[*testing.T]*sqlxstore.DB{}, asked: map[*testing.T]bool{}}
	t.Cleanup(func() {
		if d.pool != nil {
			d.pool.Close()
		}
	})
	return d
}

// Users returns the user store on t's tables.
func (d *DB) Users(t *testing.T) user.Store {
	t.Helper()
	return d.For(t).Users()
}

// Records returns a session-record store on t's tables: the first call of
// a subtest its sessions table, the next its trusted_devices table (the
// flow suite asks for sessions first).
func (d *DB) Records(t *testing.T, _ func() time.Time) session.Store {
	db := d.For(t)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.asked[t] {
		d.asked[t] = true
		return db.Sessions()
	}
	return db.TrustedDevices()
}

// For returns t's migrated tables, made on its first call.
func (d *DB) For(t *testing.T) *sqlxstore.DB {
	t.Helper()
	d.mu.Lock()
	if db, ok := d.tables[t]; ok {
		d.mu.Unlock()
		return db
	}
	d.mu.Unlock()
	var db *sqlxstore.DB
	if d.sqlite {
		db = d.file(t)
	} else {
		db = d.prefixed(t)
	}
	d.mu.Lock()
	d.tables[t] = db
	d.mu.Unlock()
	return db
}

// file returns a migrated database in a file of t's own, closed when t
// ends (before t.TempDir is removed).
func (d *DB) file(t *testing.T) *sqlxstore.DB {
	t.Helper()
	db, err := sqlxopen.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "e2e.db"), sqlxstore.Config{CleanupInterval: -1})
	if err != nil {
		t.Fatalf("open SQLite: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// prefixed returns t's migrated tables of a random prefix on the shared
// pool, dropped when t ends.
func (d *DB) prefixed(t *testing.T) *sqlxstore.DB {
	t.Helper()
	d.once.Do(func() {
		d.pool, d.err = sqlxopen.Open(context.Background(), d.url, sqlxstore.Config{CleanupInterval: -1})
	})
	if d.err != nil {
		t.Fatalf("open %s: %v", d.url, d.err)
	}
	prefix := RandomPrefix()
	db, err := sqlxstore.New(d.pool.SQLX(), sqlxstore.Config{TablePrefix: prefix, CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	t.Cleanup(func() {
		for _, table := range tables {
			if _, err := d.pool.SQLX().ExecContext(context.Background(), "DROP TABLE IF EXISTS "+prefix+table); err != nil {
				t.Errorf("drop %s%s: %v", prefix, table, err)
			}
		}
	})
	return db
}
