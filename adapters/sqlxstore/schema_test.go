package sqlxstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/user"
)

// emptySchema returns a DB over b's pool with a table prefix of its own
// and no tables yet; they are dropped when the test ends.
func emptySchema(t *testing.T, b backend) *sqlxstore.DB {
	t.Helper()
	db, err := sqlxstore.New(openPool(t, b).SQLX(), sqlxstore.Config{TablePrefix: randomPrefix(), CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.DropTables(context.Background()); err != nil {
			t.Errorf("drop tables: %v", err)
		}
	})
	return db
}

// names lists the migrations' names.
func names[M any](ms []M, name func(M) string) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = name(m)
	}
	return out
}

func migrationName(m sqlxstore.Migration) string  { return m.Name }
func stateName(m sqlxstore.MigrationState) string { return m.Name }
func migrations(t *testing.T, db *sqlxstore.DB) []sqlxstore.Migration {
	t.Helper()
	ms, err := sqlxstore.Migrations(db.Dialect(), sqlxstore.Config{TablePrefix: db.TablePrefix()})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].Name != "0001_init" || ms[0].Version != 1 {
		t.Fatalf("Migrations = %v, want 0001_init first", names(ms, migrationName))
	}
	return ms
}

// checkStatus fails unless the status lists every migration of want, each
// applied (at a time within [from, to]) or pending as applied says.
func checkStatus(t *testing.T, db *sqlxstore.DB, want []sqlxstore.Migration, applied bool, from, to time.Time) {
	t.Helper()
	status, err := db.MigrationStatus(t.Context())
	if err != nil {
		t.Fatalf("MigrationStatus: %v", err)
	}
	if !slices.Equal(names(status, stateName), names(want, migrationName)) {
		t.Fatalf("MigrationStatus lists %v, want %v", names(status, stateName), names(want, migrationName))
	}
	for i, s := range status {
		if s.Migration != want[i] {
			t.Errorf("status of %s: its Migration differs from Migrations'", s.Name)
		}
		if s.Applied != applied {
			t.Errorf("%s: Applied = %v, want %v", s.Name, s.Applied, applied)
		}
		if !applied && !s.AppliedAt.IsZero() {
			t.Errorf("%s is pending but AppliedAt = %v", s.Name, s.AppliedAt)
		}
		if applied && (s.AppliedAt.Before(from.Truncate(time.Second)) || s.AppliedAt.After(to) || s.AppliedAt.Location() != time.UTC) {
			t.Errorf("%s: AppliedAt = %v, want UTC within [%v, %v]", s.Name, s.AppliedAt, from, to)
		}
	}
}

// TestApply: on an empty schema Apply applies and returns every migration,
// a second call none; the status says pending before and applied after.
func TestApply(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := emptySchema(t, b)
			want := migrations(t, db)
			checkStatus(t, db, want, false, time.Time{}, time.Time{})

			from := time.Now()
			applied, err := db.Apply(t.Context())
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			to := time.Now()
			if !slices.Equal(applied, want) {
				t.Fatalf("Apply on an empty schema applied %v, want %v", names(applied, migrationName), names(want, migrationName))
			}
			checkStatus(t, db, want, true, from, to)

			applied, err = db.Apply(t.Context())
			if err != nil || len(applied) != 0 {
				t.Fatalf("second Apply = %v, %v; want nothing applied", names(applied, migrationName), err)
			}
			if err := db.Migrate(t.Context()); err != nil {
				t.Fatalf("Migrate after Apply: %v", err)
			}
			checkStatus(t, db, want, true, from, to)
		})
	}
}

// TestMigrationsByHand applies the exported SQL as a team with its own
// migration tool would (statement by statement, through database/sql):
// the status then shows every migration applied, running the SQL again
// changes nothing, Migrate finds nothing to do and the stores work.
func TestMigrationsByHand(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := emptySchema(t, b)
			ms := migrations(t, db)
			from := time.Now()
			for range 2 { // the exported SQL is safe to run again
				for _, m := range ms {
					for _, stmt := range statements(m.SQL) {
						if _, err := db.SQLX().DB.ExecContext(t.Context(), stmt); err != nil {
							t.Fatalf("%s: %v\n%s", m.Name, err, stmt)
						}
					}
				}
			}
			checkStatus(t, db, ms, true, from, time.Now())

			applied, err := db.Apply(t.Context())
			if err != nil || len(applied) != 0 {
				t.Fatalf("Apply after the SQL was applied by hand = %v, %v; want nothing applied", names(applied, migrationName), err)
			}
			u, err := db.Users().Create(t.Context(), &user.User{Email: "hand@example.com", PasswordHash: "h"})
			if err != nil {
				t.Fatalf("Create on the hand-made tables: %v", err)
			}
			if _, err := db.Users().Create(t.Context(), &user.User{Email: "hand@example.com", PasswordHash: "h"}); err == nil ||
				!strings.Contains(err.Error(), user.ErrEmailTaken.Error()) {
				t.Fatalf("a second account for %s: %v, want ErrEmailTaken", u.Email, err)
			}
			if n, _, err := db.Limits().Increment(t.Context(), "k", time.Minute); err != nil || n != 1 {
				t.Fatalf("Increment on the hand-made tables: %d, %v", n, err)
			}
		})
	}
}

// statements splits SQL as goose and golang-migrate do: a statement ends
// with a line that ends in ";". Comment lines are dropped.
func statements(sql string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.Lines(sql) {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		cur.WriteString(line)
		if s := strings.TrimSpace(cur.String()); strings.HasSuffix(strings.TrimSpace(line), ";") {
			out = append(out, strings.TrimSuffix(s, ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

func TestMigrationsRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		d   sqlxstore.Dialect
		cfg sqlxstore.Config
	}{
		"unknown dialect":        {"oracle", sqlxstore.Config{}},
		"no dialect":             {"", sqlxstore.Config{}},
		"bad prefix":             {sqlxstore.SQLite, sqlxstore.Config{TablePrefix: "Auth-"}},
		"Config.Dialect differs": {sqlxstore.SQLite, sqlxstore.Config{Dialect: sqlxstore.MySQL}},
	} {
		if ms, err := sqlxstore.Migrations(tc.d, tc.cfg); !errorsIsInvalid(err) || ms != nil {
			t.Errorf("%s: Migrations = %d migrations, %v; want ErrInvalidConfig", name, len(ms), err)
		}
	}
}

// TestMigrationsSQL: every dialect's SQL has the prefix filled in, every
// statement ends with ";", and it ends by recording the version.
func TestMigrationsSQL(t *testing.T) {
	for _, d := range []sqlxstore.Dialect{sqlxstore.Postgres, sqlxstore.MySQL, sqlxstore.SQLite} {
		ms, err := sqlxstore.Migrations(d, sqlxstore.Config{TablePrefix: "app_"})
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		for _, m := range ms {
			stmts := statements(m.SQL)
			table := map[int]string{1: "app_users", 2: "app_sessions", 3: "app_passkey_handles", 4: "app_challenges", 5: "app_email_codes", 6: "app_schema_settings", 7: "app_identities", 8: "app_sign_ins", 9: "app_api_keys"}[m.Version]
			if strings.Contains(m.SQL, "{{") || table == "" || !strings.Contains(m.SQL, "CREATE TABLE IF NOT EXISTS "+table) {
				t.Errorf("%s %s: prefix not filled in:\n%s", d, m.Name, m.SQL)
			}
			if n := len(stmts); n < 3 || !strings.HasPrefix(stmts[n-2], "CREATE TABLE IF NOT EXISTS app_schema_migrations") ||
				!strings.HasPrefix(stmts[n-1], fmt.Sprintf("INSERT INTO app_schema_migrations (version, applied_at) VALUES (%d, ", m.Version)) {
				t.Errorf("%s %s: does not end by recording version %d: %q", d, m.Name, m.Version, stmts)
			}
			if !strings.HasSuffix(m.SQL, ";\n") {
				t.Errorf("%s %s: the last statement does not end with ;", d, m.Name)
			}
		}
	}
}
