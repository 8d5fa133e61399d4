package sqlxstore_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/user"
)

// TestMigrateConcurrently starts several "processes" (pools of their own)
// on one empty database at once: every Apply succeeds, exactly one of them
// applies the schema (and says so), and running it again changes nothing.
func TestMigrateConcurrently(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			dbURL := backendURL(t, b)
			cfg := sqlxstore.Config{TablePrefix: randomPrefix()}
			const procs = 4
			dbs := make([]*sqlxstore.DB, procs)
			for i := range dbs {
				db, err := sqlxopen.Open(ctx, dbURL, cfg)
				if err != nil {
					t.Fatal(err)
				}
				db.SQLX().SetMaxOpenConns(2)
				dbs[i] = db
			}
			t.Cleanup(func() {
				if err := dbs[0].DropTables(context.Background()); err != nil {
					t.Errorf("drop tables: %v", err)
				}
				for _, db := range dbs {
					_ = db.Close()
				}
			})

			errs := make([]error, procs)
			applied := make([][]sqlxstore.Migration, procs)
			var wg sync.WaitGroup
			for i, db := range dbs {
				wg.Go(func() { applied[i], errs[i] = db.Apply(ctx) })
			}
			wg.Wait()
			var all []string
			for i, err := range errs {
				if err != nil {
					t.Fatalf("process %d: Apply: %v", i, err)
				}
				for _, m := range applied[i] {
					all = append(all, m.Name)
				}
			}
			if slices.Sort(all); !slices.Equal(all, []string{"0001_init", "0002_sessions", "0003_passkeys", "0004_challenges", "0005_email_codes", "0006_schema_settings", "0007_identities", "0008_sign_ins", "0009_api_keys"}) {
				t.Fatalf("the processes together applied %v, want [0001_init 0002_sessions 0003_passkeys 0004_challenges 0005_email_codes 0006_schema_settings 0007_identities 0008_sign_ins 0009_api_keys] once each", all)
			}
			if err := dbs[1].Migrate(ctx); err != nil {
				t.Fatalf("Migrate again: %v", err)
			}

			var versions []int64
			q := "SELECT version FROM " + dbs[0].TablePrefix() + "schema_migrations ORDER BY version"
			if err := dbs[0].SQLX().SelectContext(ctx, &versions, q); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(versions, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}) {
				t.Fatalf("schema_migrations holds %v, want [1 2 3 4 5 6 7 8 9]", versions)
			}

			// Every process sees the same, working tables.
			u, err := dbs[2].Users().Create(ctx, &user.User{Email: "m@example.com", PasswordHash: "h"})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := dbs[3].Users().ByEmail(ctx, "m@example.com"); err != nil || got.ID != u.ID {
				t.Fatalf("ByEmail from another process: %v, %v", got, err)
			}
			if n, _, err := dbs[0].Limits().Increment(ctx, "k", 60e9); err != nil || n != 1 {
				t.Fatalf("Increment: %d, %v", n, err)
			}
		})
	}
}

func TestMigrateNeedsFoundRowsOnMySQL(t *testing.T) {
	u, err := url.Parse(serviceURL(t, envMySQL))
	if err != nil {
		t.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", u.Host, strings.TrimPrefix(u.Path, "/")
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	x, err := sqlx.Open("mysql", cfg.FormatDSN()) // no clientFoundRows
	if err != nil {
		t.Fatal(err)
	}
	x.SetMaxOpenConns(2)
	t.Cleanup(func() { _ = x.Close() })
	db, err := sqlxstore.New(x, sqlxstore.Config{TablePrefix: randomPrefix()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.DropTables(context.Background()) })
	if err := db.Migrate(t.Context()); !errors.Is(err, sqlxstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "clientFoundRows") {
		t.Fatalf("Migrate without clientFoundRows: %v, want ErrInvalidConfig naming clientFoundRows", err)
	}
}

func TestNewRejects(t *testing.T) {
	if _, err := sqlxstore.New(nil, sqlxstore.Config{}); !errors.Is(err, sqlxstore.ErrInvalidConfig) {
		t.Errorf("New(nil): %v", err)
	}
	for _, driver := range []string{"postgres", "sqlite3", "oracle"} {
		if _, err := sqlxstore.New(sqlx.NewDb(nil, driver), sqlxstore.Config{}); !errors.Is(err, sqlxstore.ErrInvalidConfig) {
			t.Errorf("New over driver %q: %v, want ErrInvalidConfig", driver, err)
		}
	}
}

func TestNewDialect(t *testing.T) {
	for _, tc := range []struct {
		driver string
		cfg    sqlxstore.Dialect
		want   sqlxstore.Dialect
	}{
		{"pgx", "", sqlxstore.Postgres},
		{"pgx/v5", "", sqlxstore.Postgres},
		{"mysql", "", sqlxstore.MySQL},
		{"sqlite", "", sqlxstore.SQLite},
		{"otel-pgx", sqlxstore.Postgres, sqlxstore.Postgres}, // a wrapped driver: Config.Dialect names it
		{"sqlite", sqlxstore.SQLite, sqlxstore.SQLite},
	} {
		db, err := sqlxstore.New(sqlx.NewDb(nil, tc.driver), sqlxstore.Config{Dialect: tc.cfg})
		if err != nil || db.Dialect() != tc.want {
			t.Errorf("New over %q with Config.Dialect %q: %v, %v; want %q", tc.driver, tc.cfg, db, err, tc.want)
		}
	}
	if _, err := sqlxstore.New(sqlx.NewDb(nil, "pgx"), sqlxstore.Config{Dialect: "oracle"}); !errorsIsInvalid(err) {
		t.Errorf("New with Config.Dialect oracle: %v, want ErrInvalidConfig", err)
	}
}

func TestNewSQL(t *testing.T) {
	pool := openPool(t, backends[0]).SQLX().DB // SQLite
	for name, tc := range map[string]struct {
		d   sqlxstore.Dialect
		cfg sqlxstore.Config
	}{
		"unknown dialect":        {"oracle", sqlxstore.Config{}},
		"no dialect":             {"", sqlxstore.Config{}},
		"Config.Dialect differs": {sqlxstore.SQLite, sqlxstore.Config{Dialect: sqlxstore.Postgres}},
	} {
		if _, err := sqlxstore.NewSQL(pool, tc.d, tc.cfg); !errorsIsInvalid(err) {
			t.Errorf("%s: NewSQL = %v, want ErrInvalidConfig", name, err)
		}
	}
	if _, err := sqlxstore.NewSQL(nil, sqlxstore.SQLite, sqlxstore.Config{}); !errorsIsInvalid(err) {
		t.Errorf("NewSQL(nil): %v, want ErrInvalidConfig", err)
	}

	db, err := sqlxstore.NewSQL(pool, sqlxstore.SQLite, sqlxstore.Config{Dialect: sqlxstore.SQLite, TablePrefix: randomPrefix()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.DropTables(context.Background()) })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Users().Create(t.Context(), &user.User{Email: "sql@example.com", PasswordHash: "h"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pool.PingContext(t.Context()); err != nil {
		t.Fatalf("Close closed the app's pool: %v", err)
	}
}

func TestPing(t *testing.T) {
	pool := openPool(t, backends[0])
	if err := pool.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), -time.Second)
	defer cancel()
	if err := pool.Ping(ctx); !errors.Is(err, user.ErrUnavailable) {
		t.Fatalf("Ping past its deadline: %v, want ErrUnavailable", err)
	}
}

func errorsIsInvalid(err error) bool { return errors.Is(err, sqlxstore.ErrInvalidConfig) }
