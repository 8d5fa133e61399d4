package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/user"
)

// appliedLine matches one line of `authkit migrate status` for an applied
// migration.
var appliedLine = regexp.MustCompile(`^0001_init             applied  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n0002_sessions         applied  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n0003_passkeys         applied  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n0004_challenges       applied  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n0005_email_codes      applied  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n0006_schema_settings  applied  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n0007_identities       applied  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n0008_sign_ins         applied  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n0009_api_keys         applied  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$`)

// appliedAll is what a migrate of an empty database prints.
const appliedAll = "authkit migrate: applied 0001_init\nauthkit migrate: applied 0002_sessions\nauthkit migrate: applied 0003_passkeys\nauthkit migrate: applied 0004_challenges\nauthkit migrate: applied 0005_email_codes\nauthkit migrate: applied 0006_schema_settings\nauthkit migrate: applied 0007_identities\nauthkit migrate: applied 0008_sign_ins\nauthkit migrate: applied 0009_api_keys\n"

func TestMigrate(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "app.db")
	for i, want := range []string{
		appliedAll,
		"authkit migrate: sqlite is up to date\n", // a second run is a no-op
	} {
		code, stdout, stderr := runCLI("migrate", "--database-url", url)
		if code != 0 || stdout != want || stderr != "" {
			t.Fatalf("run %d: exit %d, stdout %q, stderr %q; want 0, %q, nothing", i+1, code, stdout, stderr, want)
		}
	}
	db, err := sqlxopen.Open(t.Context(), url, sqlxstore.Config{CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Users().Create(t.Context(), &user.User{Email: "a@example.com", PasswordHash: "h"}); err != nil {
		t.Fatalf("the migrated tables do not take a user: %v", err)
	}
}

func TestMigrateReadsDATABASE_URL(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "env.db")
	t.Setenv("DATABASE_URL", url)
	if code, stdout, stderr := runCLI("migrate", "--table-prefix", "app_auth_"); code != 0 || stdout != appliedAll {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	db, err := sqlxopen.Open(t.Context(), url, sqlxstore.Config{TablePrefix: "app_auth_", CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Users().ByEmail(t.Context(), "nobody@example.com"); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("prefixed tables missing: %v", err)
	}
}

func TestMigrateStatus(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "status.db")
	if code, stdout, stderr := runCLI("migrate", "status", "--database-url", url); code != 0 || stdout != "0001_init             pending\n0002_sessions         pending\n0003_passkeys         pending\n0004_challenges       pending\n0005_email_codes      pending\n0006_schema_settings  pending\n0007_identities       pending\n0008_sign_ins         pending\n0009_api_keys         pending\n" || stderr != "" {
		t.Fatalf("status before: exit %d, stdout %q, stderr %q; want 0, 0001_init pending", code, stdout, stderr)
	}
	if code, _, stderr := runCLI("migrate", "--database-url", url); code != 0 {
		t.Fatalf("migrate: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := runCLI("migrate", "status", "--database-url", url)
	if code != 0 || !appliedLine.MatchString(stdout) || stderr != "" {
		t.Fatalf("status after: exit %d, stdout %q, stderr %q; want 0, 0001_init applied <time>", code, stdout, stderr)
	}
}

// TestMigrateOnServers migrates PostgreSQL and MariaDB through the CLI,
// each on tables of its own.
func TestMigrateOnServers(t *testing.T) {
	for _, env := range []string{storetest.EnvPostgres, storetest.EnvMySQL} {
		t.Run(env, func(t *testing.T) {
			url := storetest.ServiceURL(t, env)
			prefix := randomPrefix()
			t.Cleanup(func() { dropTables(t, url, prefix) })
			for i, want := range []string{appliedAll, "is up to date\n"} {
				code, stdout, stderr := runCLI("migrate", "--database-url", url, "--table-prefix", prefix)
				if code != 0 || !strings.HasSuffix(stdout, want) {
					t.Fatalf("run %d: exit %d, stdout %q, stderr %q; want 0 and %q", i+1, code, stdout, stderr, want)
				}
			}
			code, stdout, stderr := runCLI("migrate", "status", "--database-url", url, "--table-prefix", prefix)
			if code != 0 || !appliedLine.MatchString(stdout) {
				t.Fatalf("status: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
		})
	}
}

func TestMigratePrint(t *testing.T) {
	want := func(d sqlxstore.Dialect, prefix string) string {
		t.Helper()
		return printedMigrations(t, d, sqlxstore.Config{TablePrefix: prefix})
	}
	// Nothing listens at the URLs: --print never connects.
	closed := "127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--print", "--dialect", "postgres"}, "", want(sqlxstore.Postgres, "")},
		{[]string{"--print", "--dialect", "mysql"}, "", want(sqlxstore.MySQL, "")},
		{[]string{"--print", "--dialect", "sqlite", "--table-prefix", "app_"}, "", want(sqlxstore.SQLite, "app_")},
		{[]string{"--print", "--database-url", "mysql://u:secret@" + closed + "/x"}, "", want(sqlxstore.MySQL, "")},
		{[]string{"--print"}, "postgres://u:secret@" + closed + "/x", want(sqlxstore.Postgres, "")},
		{[]string{"--print", "--dialect", "sqlite"}, "postgres://u:secret@" + closed + "/x", want(sqlxstore.SQLite, "")},
	} {
		t.Setenv("DATABASE_URL", tc.env)
		code, stdout, stderr := runCLI(append([]string{"migrate"}, tc.args...)...)
		if code != 0 || stdout != tc.want || stderr != "" {
			t.Errorf("%v (DATABASE_URL %q): exit %d, stderr %q, stdout:\n%s\nwant exit 0 and:\n%s", tc.args, tc.env, code, stderr, stdout, tc.want)
		}
	}
	if s := want(sqlxstore.Postgres, "app_"); !strings.Contains(s, "-- authkit migration 0001_init (version 1, postgres)\n\nCREATE TABLE IF NOT EXISTS app_users (") ||
		!strings.Contains(s, "INSERT INTO app_schema_migrations") {
		t.Errorf("the printed SQL does not start with the header and the users table, or does not record the version:\n%s", s)
	}
}

// TestMigrateExitCodes checks every exit status cmd/authkit/README.md
// documents for migrate, with the message that goes with it.
func TestMigrateExitCodes(t *testing.T) {
	dir := t.TempDir()
	// A rate_limits table that is not authkit's: the migration's index on
	// reset_at fails.
	broken := "sqlite://" + filepath.Join(dir, "broken.db")
	raw, err := sqlxopen.Open(t.Context(), broken, sqlxstore.Config{CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.SQLX().Exec("CREATE TABLE authkit_rate_limits (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	_ = raw.Close()
	good := "sqlite://" + filepath.Join(dir, "good.db")
	unreachable := "postgres://u:secret@" + storetest.ClosedAddr(t) + "/x?connect_timeout=2"
	t.Setenv("DATABASE_URL", "")
	usage := "usage: authkit migrate [status] [--database-url URL] [--table-prefix PREFIX] [--users-table TABLE [mapping flags]] [--print [--dialect DIALECT]]\n"

	for _, tc := range []struct {
		args   []string
		code   int
		stderr string // a part of it
	}{
		// 0: done, help included.
		{[]string{"-h"}, 0, ""},
		{[]string{"status", "--help"}, 0, ""},
		// 1: the command failed.
		{[]string{"--database-url", unreachable}, 1, "unavailable"},
		{[]string{"status", "--database-url", unreachable}, 1, "unavailable"},
		{[]string{"--database-url", broken}, 1, "0001_init.sql: "},
		// 2: a usage error.
		{nil, 2, "authkit migrate: no database: pass --database-url or set DATABASE_URL\n" + usage},
		{[]string{"status"}, 2, "no database"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
		{[]string{"status", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"--nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"--database-url", "oracle://x"}, 2, `scheme "oracle" is not supported`},
		{[]string{"--database-url", good, "--table-prefix", "Bad-"}, 2, `TablePrefix "Bad-"`},
		{[]string{"--print"}, 2, "--print needs a dialect"},
		{[]string{"--print", "--dialect", "oracle"}, 2, `dialect "oracle" is not supported`},
		{[]string{"--print", "--database-url", "oracle://x"}, 2, `scheme "oracle" is not supported`},
		{[]string{"--print", "--dialect", "sqlite", "--table-prefix", "Bad-"}, 2, `TablePrefix "Bad-"`},
		{[]string{"--dialect", "mysql", "--database-url", good}, 2, "--dialect goes with --print"},
		{[]string{"status", "--print", "--dialect", "mysql"}, 2, "status and --print do not go together"},
		{[]string{"--print", "--dialect", "sqlite", "--users-id", "int64"}, 2, "the --users-* flags describe a table: pass --users-table"},
		{[]string{"--print", "--dialect", "sqlite", "--users-table", "users", "--users-id", "serial"}, 2, `--users-id "serial": want text, int64 or uuid`},
		{[]string{"--print", "--dialect", "sqlite", "--users-table", "users", "--users-layout", "side"}, 2, `--users-layout "side": want columns or side-table`},
		{[]string{"--print", "--dialect", "sqlite", "--users-table", "users", "--users-columns", "id=uid,mail=m"}, 2, `unknown key "mail"`},
		{[]string{"--print", "--dialect", "sqlite", "--users-table", "users", "--users-columns", "id=uid,id=x"}, 2, `"id=x" is not a new key=column pair`},
		{[]string{"--print", "--dialect", "sqlite", "--users-table", "users; DROP TABLE x"}, 2, "sqlxstore: invalid config"},
	} {
		code, stdout, stderr := runCLI(append([]string{"migrate"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("migrate %q: exit %d, stderr %q; want exit %d, stderr with %q", tc.args, code, stderr, tc.code, tc.stderr)
		}
		if code == 0 && !strings.HasPrefix(stdout, "usage: authkit migrate ") {
			t.Errorf("migrate %q: stdout %q, want the help", tc.args, stdout)
		}
		if code != 0 && stdout != "" {
			t.Errorf("migrate %q failed but wrote %q on stdout", tc.args, stdout)
		}
		if strings.Contains(stderr, "secret") {
			t.Errorf("migrate %q: stderr shows the password: %q", tc.args, stderr)
		}
	}

	// 1: the output could not be written (after the work was done).
	for _, args := range [][]string{
		{"migrate", "--database-url", good},
		{"migrate", "--database-url", good}, // up to date
		{"migrate", "status", "--database-url", good},
		{"migrate", "--print", "--dialect", "postgres"},
	} {
		var stderr strings.Builder
		if code := run(args, failingWriter{}, &stderr); code != 1 || !strings.Contains(stderr.String(), "broken pipe") {
			t.Errorf("%q with a broken stdout: exit %d, stderr %q; want 1 naming the write error", args, code, stderr.String())
		}
	}
}

// randomPrefix is a table prefix of its own for one test.
func randomPrefix() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "t" + hex.EncodeToString(b[:]) + "_"
}

// dropTables drops the tables migrate made with prefix.
func dropTables(t *testing.T, url, prefix string) {
	db, err := sqlxopen.Open(context.Background(), url, sqlxstore.Config{TablePrefix: prefix, CleanupInterval: -1})
	if err != nil {
		t.Errorf("drop tables: %v", err)
		return
	}
	defer db.Close()
	for _, table := range []string{"challenges", "email_codes", "passkeys", "passkey_handles", "identities", "sign_ins", "api_keys", "sessions", "trusted_devices", "users", "rate_limits", "schema_settings", "schema_migrations"} {
		if _, err := db.SQLX().ExecContext(context.Background(), "DROP TABLE IF EXISTS "+prefix+table); err != nil {
			t.Errorf("drop %s%s: %v", prefix, table, err)
		}
	}
}

// TestMigrateMappedTable: the --users-* flags are sqlxstore.UsersTable's
// fields, so --print shows a mapped table's SQL exactly as
// sqlxstore.Migrations makes it, and migrate and status work on it.
func TestMigrateMappedTable(t *testing.T) {
	mapping := sqlxstore.UsersTable{
		Table: "users", IDColumn: "uid", EmailColumn: "mail", PasswordHashColumn: "pw", CreatedAtColumn: "created",
		IDType: sqlxstore.IDInt64, Layout: sqlxstore.LayoutSideTable, CaseInsensitiveEmails: true, ExistingUsersVerified: true,
	}
	flags := []string{"--users-table", "users", "--users-columns", "id=uid, email=mail,password=pw,created=created",
		"--users-id", "int64", "--users-layout", "side-table", "--case-insensitive-emails", "--existing-users-verified"}
	want := printedMigrations(t, sqlxstore.SQLite, sqlxstore.Config{Users: mapping})
	if !strings.Contains(want, "user_state") {
		t.Fatalf("the mapping's SQL has no side table:\n%s", want)
	}
	code, stdout, stderr := runCLI(append([]string{"migrate", "--print", "--dialect", "sqlite"}, flags...)...)
	if code != 0 || stdout != want || stderr != "" {
		t.Fatalf("--print with the mapping: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, stdout, want)
	}

	// The app's own table, then authkit migrated onto it by the same flags.
	url := "sqlite://" + filepath.Join(t.TempDir(), "app.db")
	raw, err := sqlxopen.Open(t.Context(), url, sqlxstore.Config{CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.SQLX().Exec(`CREATE TABLE users (uid INTEGER PRIMARY KEY, mail TEXT NOT NULL UNIQUE, pw TEXT NOT NULL,
		created TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`); err != nil {
		t.Fatal(err)
	}
	_ = raw.Close()
	args := append([]string{"migrate", "--database-url", url}, flags...)
	code, stdout, stderr = runCLI(args...)
	if code != 0 || !strings.HasPrefix(stdout, appliedAll) || stderr != "" {
		t.Fatalf("migrate with the mapping: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(append([]string{"migrate", "status", "--database-url", url}, flags...)...)
	if code != 0 || strings.Contains(stdout, "pending") || !strings.Contains(stdout, "applied") {
		t.Fatalf("status with the mapping: exit %d, stdout %q", code, stdout)
	}
	if code, stdout, _ = runCLI(args...); code != 0 || stdout != "authkit migrate: sqlite is up to date\n" {
		t.Fatalf("second migrate with the mapping: exit %d, stdout %q", code, stdout)
	}
}

// printedMigrations is what migrate --print writes for cfg on dialect d:
// each of sqlxstore.Migrations under its header, a blank line between.
func printedMigrations(t *testing.T, d sqlxstore.Dialect, cfg sqlxstore.Config) string {
	t.Helper()
	ms, err := sqlxstore.Migrations(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, m := range ms {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "-- authkit migration %s (version %d, %s)\n\n%s", m.Name, m.Version, d, m.SQL)
	}
	return b.String()
}
