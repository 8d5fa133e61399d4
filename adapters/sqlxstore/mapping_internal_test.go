package sqlxstore

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestUsersTableValidation: a mapping that could inject SQL, or that does
// not make sense, is refused with ErrInvalidConfig before any query.
func TestUsersTableValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Dialect
		m    UsersTable
	}{
		{"fields without a table", Postgres, UsersTable{IDType: IDInt64}},
		{"quote in table", Postgres, UsersTable{Table: `users"; DROP TABLE users; --`}},
		{"backquote in table", MySQL, UsersTable{Table: "users`"}},
		{"space in table", Postgres, UsersTable{Table: "my users"}},
		{"three-part name", Postgres, UsersTable{Table: "db.app.users"}},
		{"schema on SQLite", SQLite, UsersTable{Table: "main.users"}},
		{"empty part", Postgres, UsersTable{Table: "app."}},
		{"digit first", Postgres, UsersTable{Table: "1users"}},
		{"64-byte name", Postgres, UsersTable{Table: strings.Repeat("u", 64)}},
		{"injected column", Postgres, UsersTable{Table: "users", EmailColumn: "email) OR (1=1"}},
		{"dotted column", Postgres, UsersTable{Table: "users", IDColumn: "u.id"}},
		{"one column twice", Postgres, UsersTable{Table: "users", PasswordHashColumn: "EMAIL"}},
		{"a column authkit adds", Postgres, UsersTable{Table: "users", NameColumn: "authkit_session_version"}},
		{"unknown id type", Postgres, UsersTable{Table: "users", IDType: "int32"}},
		{"IDDefault with int64", Postgres, UsersTable{Table: "users", IDType: IDInt64, IDDefault: true}},
		{"IDDefault with text", Postgres, UsersTable{Table: "users", IDDefault: true}},
		{"unknown layout", Postgres, UsersTable{Table: "users", Layout: "json"}},
		{"injected id type", Postgres, UsersTable{Table: "users", Layout: LayoutSideTable, IDSQLType: "BIGINT; DROP TABLE users"}},
		{"quoted id type", Postgres, UsersTable{Table: "users", Layout: LayoutSideTable, IDSQLType: "VARCHAR(10) COLLATE 'x'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := newSchema(tc.d, "authkit_", tc.m); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("newSchema(%+v) = %v, want ErrInvalidConfig", tc.m, err)
			}
		})
	}
	for _, m := range []UsersTable{
		{},
		{Table: "users"},
		{Table: "app.Users", IDColumn: "UserID", IDType: IDUUID, IDDefault: true, Layout: LayoutSideTable, IDSQLType: "CHAR(36) CHARACTER SET ascii"},
		{Table: "_u", IDType: IDInt64, NameColumn: "name", CreatedAtColumn: "created_at"},
	} {
		if _, err := newSchema(Postgres, "authkit_", m); err != nil {
			t.Errorf("newSchema(%+v) = %v, want nil", m, err)
		}
	}
}

// TestMappedIdentifiersQuoted: the app's names reach the SQL quoted for
// the dialect, authkit's own names as they are.
func TestMappedIdentifiersQuoted(t *testing.T) {
	for d, want := range map[Dialect][]string{
		Postgres: {`FROM "app"."Users" u LEFT JOIN ak_user_state s ON s.user_id = u."UserID"`, `LOWER(u."Mail") = $1`},
		MySQL:    {"FROM `app`.`Users` u LEFT JOIN ak_user_state s ON s.user_id = u.`UserID`", "u.`Mail` = ? AND CAST(LOWER(u.`Mail`) AS BINARY) = CAST(? AS BINARY)"},
	} {
		db := testDB(t, d, "ak_", UsersTable{Table: "app.Users", IDColumn: "UserID", EmailColumn: "Mail", IDType: IDInt64,
			Layout: LayoutSideTable, CaseInsensitiveEmails: true})
		q := db.users.q.byEmail
		for _, w := range want {
			if !strings.Contains(q, w) {
				t.Errorf("%s: byEmail = %s\nwant it to contain %s", d, q, w)
			}
		}
		if strings.Contains(q, "{{") {
			t.Errorf("%s: a name is not filled in: %s", d, q)
		}
	}
}

// testDB is a DB for dialect d that has no connection: enough to build
// its queries and migrations.
func testDB(t *testing.T, d Dialect, prefix string, m UsersTable) *DB {
	t.Helper()
	s, err := newSchema(d, prefix, m)
	if err != nil {
		t.Fatal(err)
	}
	db := &DB{dialect: d, t: newTables(prefix), s: s}
	db.users = newUserStore(db)
	return db
}

// TestMappedMigrations: the migrations of a mapped table keep the
// rate-limit table, never create or drop the app's table, and give authkit
// its state as the layout says.
func TestMappedMigrations(t *testing.T) {
	for _, d := range []Dialect{Postgres, MySQL, SQLite} {
		for _, layout := range []Layout{LayoutColumns, LayoutSideTable} {
			db := testDB(t, d, "authkit_", UsersTable{Table: "users", IDType: IDInt64, CreatedAtColumn: "created_at",
				Layout: layout, CaseInsensitiveEmails: true, ExistingUsersVerified: true})
			ms, err := db.migrations()
			if err != nil {
				t.Fatalf("%s %s: %v", d, layout, err)
			}
			if len(ms) != 9 || ms[0].version != 1 || ms[1].version != 2 || ms[2].version != 3 || ms[3].version != 4 || ms[4].version != 5 || ms[5].version != 6 || ms[6].version != 7 || ms[7].version != 8 || ms[8].version != 9 {
				t.Fatalf("%s %s: %d migrations, want 0001 mapped, 0002 to 0009 as they are", d, layout, len(ms))
			}
			// 0009 names users by id only too.
			if got := strings.Join(ms[8].stmts, ";\n"); !strings.Contains(got, "CREATE TABLE IF NOT EXISTS authkit_api_keys") ||
				strings.Contains(got, quote(d, "users")) || strings.Contains(got, "authkit_users") {
				t.Errorf("%s %s: 0009 is not the api_keys table alone:\n%s", d, layout, got)
			}
			// 0007 names users by id only too.
			if got := strings.Join(ms[6].stmts, ";\n"); !strings.Contains(got, "CREATE TABLE IF NOT EXISTS authkit_identities") ||
				strings.Contains(got, quote(d, "users")) || strings.Contains(got, "authkit_users") {
				t.Errorf("%s %s: 0007 is not the identities table alone:\n%s", d, layout, got)
			}
			// 0005 names users by id only too.
			if got := strings.Join(ms[4].stmts, ";\n"); !strings.Contains(got, "CREATE TABLE IF NOT EXISTS authkit_email_codes") ||
				strings.Contains(got, quote(d, "users")) || strings.Contains(got, "authkit_users") {
				t.Errorf("%s %s: 0005 is not the email_codes table alone:\n%s", d, layout, got)
			}
			// 0004 (one-time values) does not name the users table either.
			if got := strings.Join(ms[3].stmts, ";\n"); !strings.Contains(got, "CREATE TABLE IF NOT EXISTS authkit_challenges") || strings.Contains(got, quote(d, "users")) {
				t.Errorf("%s %s: 0004 is not the challenges table alone:\n%s", d, layout, got)
			}
			// 0002 and 0003 name users by id only: they apply unchanged.
			own, err := testDB(t, d, "authkit_", UsersTable{}).migrations()
			if err != nil {
				t.Fatal(err)
			}
			for i, tables := range map[int][]string{1: {"sessions", "trusted_devices"}, 2: {"passkey_handles", "passkeys"}} {
				got := strings.Join(ms[i].stmts, ";\n")
				if !slices.Equal(ms[i].stmts, own[i].stmts) || strings.Contains(got, quote(d, "users")) || strings.Contains(got, "authkit_users") {
					t.Errorf("%s %s: %s is not the default layout's:\n%s", d, layout, ms[i].name, got)
				}
				for _, table := range tables {
					if !strings.Contains(got, "CREATE TABLE IF NOT EXISTS authkit_"+table+" (") {
						t.Errorf("%s %s: %s lacks the table %s:\n%s", d, layout, ms[i].name, table, got)
					}
				}
			}
			all := strings.Join(ms[0].stmts, ";\n")
			for _, bad := range []string{"CREATE TABLE IF NOT EXISTS authkit_users", "DROP", "{{", `CREATE TABLE "users"`, "CREATE TABLE `users`"} {
				if strings.Contains(all, bad) {
					t.Errorf("%s %s: migration contains %q:\n%s", d, layout, bad, all)
				}
			}
			want := []string{"CREATE TABLE IF NOT EXISTS authkit_rate_limits"}
			if layout == LayoutColumns {
				want = append(want, "ALTER TABLE "+quote(d, "users"), "authkit_session_version", "UPDATE "+quote(d, "users")+" SET authkit_email_verified_at")
			} else {
				want = append(want, "CREATE TABLE IF NOT EXISTS authkit_user_state", "REFERENCES "+quote(d, "users")+" ("+quote(d, "id")+") ON DELETE CASCADE")
			}
			if d != MySQL {
				want = append(want, "CREATE UNIQUE INDEX IF NOT EXISTS authkit_users_email_lower_key ON "+quote(d, "users")+" (LOWER("+quote(d, "email")+"))")
			}
			for _, w := range want {
				if !strings.Contains(all, w) {
					t.Errorf("%s %s: migration lacks %q:\n%s", d, layout, w, all)
				}
			}
		}
	}
}

// TestMappedMigrationsRefuseUsersTable: a migration after 0001 that names
// authkit's own users table has no mapped form, and the mapped migrations
// say so rather than apply it to a table a mapping does not have.
func TestMappedMigrationsRefuseUsersTable(t *testing.T) {
	db := testDB(t, Postgres, "authkit_", UsersTable{Table: "users", IDType: IDInt64})
	embedded := []migration{
		{version: 1, name: "0001_init.sql", stmts: []string{"CREATE TABLE IF NOT EXISTS authkit_users (id TEXT)"}},
		{version: 2, name: "0002_more.sql", stmts: []string{"CREATE TABLE IF NOT EXISTS authkit_users_extra (id TEXT)"}},
	}
	if _, err := db.mappedMigrations(embedded); err != nil {
		t.Fatalf("a table whose name starts with authkit_users: %v, want it applied as it is", err)
	}
	embedded = append(embedded, migration{version: 3, name: "0003_alter.sql", stmts: []string{"ALTER TABLE authkit_users ADD COLUMN x TEXT"}})
	if _, err := db.mappedMigrations(embedded); err == nil || !strings.Contains(err.Error(), "0003_alter.sql") {
		t.Fatalf("a later migration that alters authkit_users: %v, want an error naming it", err)
	}
}

// TestNamesTable: the check that keeps a later migration off a mapped
// users table matches the table's name as a whole word only.
func TestNamesTable(t *testing.T) {
	for st, want := range map[string]bool{
		"CREATE TABLE IF NOT EXISTS authkit_users (":              true,
		"ALTER TABLE authkit_users ADD COLUMN x":                  true,
		"SELECT * FROM authkit_users":                             true,
		`UPDATE "authkit_users" SET x = 1`:                        true,
		"CREATE TABLE IF NOT EXISTS authkit_email_codes (":        false,
		"CREATE INDEX authkit_users_idx ON authkit_sessions (id)": false,
		"CREATE TABLE my_authkit_users (":                         false,
		"CREATE TABLE authkit_user_state (":                       false,
	} {
		if got := namesTable(st, "authkit_users"); got != want {
			t.Errorf("namesTable(%q) = %v, want %v", st, got, want)
		}
	}
}
