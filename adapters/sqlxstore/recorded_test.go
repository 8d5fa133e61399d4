package sqlxstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
)

// openAs returns a DB over pool with prefix and users, not migrated; its
// own tables are dropped when the test ends.
func openAs(t *testing.T, pool *sqlxstore.DB, prefix string, users sqlxstore.UsersTable) *sqlxstore.DB {
	t.Helper()
	db, err := sqlxstore.New(pool.SQLX(), sqlxstore.Config{TablePrefix: prefix, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = db.Close()
		if err := db.DropTables(context.Background()); err != nil {
			t.Errorf("drop tables: %v", err)
		}
	})
	return db
}

// TestRecordedUsersRefused: a prefix migrated for one Users configuration
// refuses every other one, in both directions, with an error that names
// what was recorded, instead of "up to date" and a failing query later.
func TestRecordedUsersRefused(t *testing.T) {
	side := sqlxstore.UsersTable{IDType: sqlxstore.IDInt64, CreatedAtColumn: "created_at", Layout: sqlxstore.LayoutSideTable}
	columns := sqlxstore.UsersTable{IDType: sqlxstore.IDInt64, Layout: sqlxstore.LayoutColumns}
	tests := []struct {
		name           string
		migrated, then func(table string) sqlxstore.UsersTable
		recorded       string // in the error: the recorded configuration
	}{
		{"MappedOpenedWithDefault", withTable(side), own, `Table: "%s", IDColumn: "id"`},
		{"DefaultOpenedWithMapping", own, withTable(side), "sqlxstore.UsersTable{} (authkit's own users table)"},
		{"TwoMappings", withTable(side), withTable(columns), "Layout: sqlxstore.LayoutSideTable"},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			pool := openPool(t, b)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					ctx := t.Context()
					prefix, table := appTable(t, pool, "int64")
					first := openAs(t, pool, prefix, tt.migrated(table))
					if err := first.Migrate(ctx); err != nil {
						t.Fatalf("first Migrate: %v", err)
					}
					second := openAs(t, pool, prefix, tt.then(table))
					recorded := strings.ReplaceAll(tt.recorded, "%s", table)
					for what, err := range map[string]error{"Migrate": second.Migrate(ctx), "CheckUsers": second.CheckUsers(ctx)} {
						if !errors.Is(err, sqlxstore.ErrInvalidConfig) || !strings.Contains(err.Error(), recorded) ||
							!strings.Contains(err.Error(), "TablePrefix") {
							t.Errorf("%s of another configuration: %v\nwant ErrInvalidConfig naming the recorded %s and TablePrefix", what, err, recorded)
						}
					}
					// The first configuration still opens, and is what is recorded.
					if err := first.CheckUsers(ctx); err != nil {
						t.Errorf("CheckUsers of the configuration migrated: %v", err)
					}
					if err := first.Migrate(ctx); err != nil {
						t.Errorf("Migrate again of the configuration migrated: %v", err)
					}
				})
			}
		})
	}
}

func own(string) sqlxstore.UsersTable { return sqlxstore.UsersTable{} }

func withTable(m sqlxstore.UsersTable) func(string) sqlxstore.UsersTable {
	return func(table string) sqlxstore.UsersTable { m.Table = table; return m }
}

// TestRecordedUsersReadBack: RecordedUsers returns the configuration with
// its defaults filled in, and a DB opened with it passes Migrate: what a
// tool that knows only the database URL needs.
func TestRecordedUsersReadBack(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			pool := openPool(t, b)
			prefix, table := appTable(t, pool, "int64")
			app := openAs(t, pool, prefix, sqlxstore.UsersTable{Table: table, IDType: sqlxstore.IDInt64,
				NameColumn: "full_name", Layout: sqlxstore.LayoutSideTable, ExistingUsersVerified: true})
			fresh := openAs(t, pool, prefix, sqlxstore.UsersTable{})
			if m, ok, err := fresh.RecordedUsers(ctx); err != nil || ok || m != (sqlxstore.UsersTable{}) {
				t.Fatalf("RecordedUsers before any migration = %+v, %v, %v; want nothing recorded", m, ok, err)
			}
			if err := app.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			m, ok, err := fresh.RecordedUsers(ctx)
			want := sqlxstore.UsersTable{Table: table, IDColumn: "id", EmailColumn: "email", PasswordHashColumn: "password_hash",
				NameColumn: "full_name", IDType: sqlxstore.IDInt64, IDSQLType: map[sqlxstore.Dialect]string{sqlxstore.SQLite: "INTEGER"}[pool.Dialect()],
				Layout: sqlxstore.LayoutSideTable, ExistingUsersVerified: true}
			if want.IDSQLType == "" {
				want.IDSQLType = "BIGINT"
			}
			if err != nil || !ok || m != want {
				t.Fatalf("RecordedUsers = %+v, %v, %v\nwant %+v", m, ok, err, want)
			}
			worker := openAs(t, pool, prefix, m)
			if err := worker.Migrate(ctx); err != nil {
				t.Fatalf("Migrate with the recorded Users: %v", err)
			}
			if _, err := worker.Users().ByEmail(ctx, "nobody@example.com"); err == nil || strings.Contains(err.Error(), "exist") {
				t.Fatalf("ByEmail through the recorded Users: %v, want ErrNotFound", err)
			}
		})
	}
}

// TestRecordedUsersUpgrade: a prefix migrated before anything was recorded
// (0001 to 0005 only) is checked before its configuration is recorded: the
// wrong one is refused, the right one recorded.
func TestRecordedUsersUpgrade(t *testing.T) {
	mapping := sqlxstore.UsersTable{IDType: sqlxstore.IDInt64, Layout: sqlxstore.LayoutSideTable}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			pool := openPool(t, b)
			prefix, table := appTable(t, pool, "int64")
			mapping.Table = table
			app := openAs(t, pool, prefix, mapping)
			if err := app.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			// As a version before 0006 left it.
			x := pool.SQLX()
			for _, q := range []string{"DROP TABLE " + prefix + "schema_settings", "DELETE FROM " + prefix + "schema_migrations WHERE version = 6"} {
				if _, err := x.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			err := openAs(t, pool, prefix, sqlxstore.UsersTable{}).Migrate(ctx)
			if !errors.Is(err, sqlxstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "TablePrefix") {
				t.Fatalf("Migrate for authkit's own table of a prefix mapped before 0006: %v, want ErrInvalidConfig", err)
			}
			if m, ok, err := app.RecordedUsers(ctx); err != nil || ok {
				t.Fatalf("after the refused Migrate, RecordedUsers = %+v, %v, %v; want nothing recorded", m, ok, err)
			}
			if err := app.Migrate(ctx); err != nil {
				t.Fatalf("Migrate with the configuration it was migrated for: %v", err)
			}
			if m, ok, err := app.RecordedUsers(ctx); err != nil || !ok || m.Table != table || m.Layout != sqlxstore.LayoutSideTable {
				t.Fatalf("RecordedUsers after the upgrade = %+v, %v, %v; want the side-table mapping of %s", m, ok, err, table)
			}
		})
	}
}

// TestMigrationsRecordUsers: the SQL for other migration tools records the
// configuration too, so a database migrated with goose is checked as one
// migrated by Migrate.
func TestMigrationsRecordUsers(t *testing.T) {
	ms, err := sqlxstore.Migrations(sqlxstore.Postgres, sqlxstore.Config{Users: sqlxstore.UsersTable{Table: "users", IDType: sqlxstore.IDInt64}})
	if err != nil {
		t.Fatal(err)
	}
	last := ms[5]
	want := `INSERT INTO authkit_schema_settings (name, value) VALUES ('users', '{"table":"users","id_column":"id","email_column":"email","password_hash_column":"password_hash","id_type":"int64","id_sql_type":"BIGINT","layout":"columns"}') ON CONFLICT (name) DO NOTHING;`
	if last.Name != "0006_schema_settings" || !strings.Contains(last.SQL, want) {
		t.Fatalf("migration %s:\n%s\nwant it to hold\n%s", last.Name, last.SQL, want)
	}
}
