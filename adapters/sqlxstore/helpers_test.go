package sqlxstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
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
	recycleOn(t, db)
	return db
}

// recycleOn lets suiteDB and suiteAppDB reuse prefixes on pool until the
// test ends, when they are dropped. Call it after registering the pool's
// Close: cleanups run last registered first.
func recycleOn(t testing.TB, pool *sqlxstore.DB) {
	r := &recycler{pool: pool, free: map[string][]spare{}}
	recyclers.Store(pool, r)
	t.Cleanup(func() {
		recyclers.Delete(pool)
		r.drop(t)
	})
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

// The conformance suites open a store for every subtest, and each wants
// empty tables, not a new schema: migrating a prefix per subtest was most
// of this package's test time (a dozen CREATE statements each, on three
// databases). suiteDB and suiteAppDB hand a subtest a prefix an earlier
// subtest on the same pool migrated, its rows deleted when that subtest
// ended, and migrate a new one only when none is free (subtests running
// at once get one each). Migrate still runs on every hand-out (nothing
// left to apply). The tests of migrations, of the schema and of the
// mappings' set-up keep freshDB and appDB: a prefix of their own.

// spare is a migrated prefix, and the app's users table it maps ("" for
// authkit's own).
type spare struct{ prefix, table string }

// recycler holds the migrated prefixes of one pool (recycleOn): the free
// ones by their schema's key, and every one it made, dropped with the pool.
type recycler struct {
	pool *sqlxstore.DB
	mu   sync.Mutex
	free map[string][]spare
	made []made
}

// made is a prefix a recycler migrated, with what New needs to drop it.
type made struct {
	spare
	cfg sqlxstore.Config
}

// recyclers maps each pool of openPool to its recycler.
var recyclers sync.Map // *sqlxstore.DB -> *recycler

// take returns a free prefix of key, if there is one.
func (r *recycler) take(key string) (spare, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.free[key]
	if len(s) == 0 {
		return spare{}, false
	}
	r.free[key] = s[:len(s)-1]
	return s[len(s)-1], true
}

// drop drops every prefix r made, and its app table.
func (r *recycler) drop(t testing.TB) {
	ctx := context.Background()
	for _, m := range r.made {
		db, err := sqlxstore.New(r.pool.SQLX(), m.cfg)
		if err == nil {
			err = db.DropTables(ctx)
		}
		if err == nil && m.table != "" {
			_, err = r.pool.SQLX().ExecContext(ctx, "DROP TABLE IF EXISTS "+m.table)
		}
		if err != nil {
			t.Errorf("drop the tables of %s: %v", m.prefix, err)
		}
	}
}

// suiteDB is freshDB for a conformance suite's subtest: migrated tables,
// empty, maybe used by an earlier subtest (see above).
func suiteDB(t testing.TB, pool *sqlxstore.DB, cfg sqlxstore.Config) *sqlxstore.DB {
	t.Helper()
	return recycled(t, pool, "", cfg)
}

// suiteAppDB is appDB for a conformance suite's subtest: the app's users
// table of kind and authkit's tables mapped onto it by users, migrated,
// empty, maybe used by an earlier subtest (see above).
func suiteAppDB(t testing.TB, pool *sqlxstore.DB, kind string, users sqlxstore.UsersTable) *sqlxstore.DB {
	t.Helper()
	return recycled(t, pool, kind, sqlxstore.Config{Users: users})
}

// recycled does suiteDB's and suiteAppDB's work. On a pool of neither
// openPool nor recycleOn it falls back to freshDB and appDB.
func recycled(t testing.TB, pool *sqlxstore.DB, kind string, cfg sqlxstore.Config) *sqlxstore.DB {
	t.Helper()
	v, ok := recyclers.Load(pool)
	if !ok {
		if kind == "" {
			return freshDB(t, pool, cfg)
		}
		db, _ := appDB(t, pool, kind, cfg.Users)
		return db
	}
	r := v.(*recycler)
	ctx := context.Background()
	// What decides the schema: the app's table, the mapping, the limits table.
	key := fmt.Sprintf("%s %t %#v", kind, cfg.NoLimitsTable, cfg.Users)
	s, reused := r.take(key)
	if !reused {
		s.prefix = randomPrefix()
		if kind != "" {
			s.table = s.prefix + "app_users"
		}
		r.mu.Lock()
		r.made = append(r.made, made{spare: s, cfg: sqlxstore.Config{TablePrefix: s.prefix, Users: mappedOnto(cfg.Users, s.table),
			NoLimitsTable: cfg.NoLimitsTable}})
		r.mu.Unlock()
		if kind != "" {
			if _, err := pool.SQLX().ExecContext(ctx, fmt.Sprintf(appTables[kind][pool.Dialect()], s.table)); err != nil {
				t.Fatalf("the app's CREATE TABLE: %v", err)
			}
		}
	}
	cfg.TablePrefix, cfg.Users = s.prefix, mappedOnto(cfg.Users, s.table)
	db, err := sqlxstore.New(pool.SQLX(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	t.Cleanup(func() {
		_ = db.Close()
		err := db.DeleteRows(ctx)
		if err == nil && s.table != "" {
			_, err = pool.SQLX().ExecContext(ctx, "DELETE FROM "+s.table)
		}
		if err != nil { // not handed out again; dropped with the pool
			t.Errorf("empty the tables of %s: %v", s.prefix, err)
			return
		}
		r.mu.Lock()
		r.free[key] = append(r.free[key], s)
		r.mu.Unlock()
	})
	return db
}

// mappedOnto is users mapped onto table; users unchanged when table is "".
func mappedOnto(users sqlxstore.UsersTable, table string) sqlxstore.UsersTable {
	if table != "" {
		users.Table = table
	}
	return users
}
