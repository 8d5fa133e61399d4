package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/user"
)

// userNow is the clock of the `authkit user` tests.
var userNow = time.Date(2031, time.March, 14, 15, 9, 26, 0, time.UTC)

// supportDB is a migrated database with one user, ada, for the `authkit
// user` tests.
type supportDB struct {
	t    *testing.T
	db   *sqlxstore.DB
	args []string // --database-url and --table-prefix
	ada  *user.User
}

// eachDB runs test on a migrated SQLite file and, on tables of their own,
// on PostgreSQL (AUTHKIT_TEST_POSTGRES).
func eachDB(t *testing.T, test func(t *testing.T, d *supportDB)) {
	setClock(t)
	t.Setenv("SMTP_URL", "")
	t.Setenv("APP_NAME", "Acme")
	t.Run("SQLite", func(t *testing.T) {
		test(t, newSupportDB(t, "sqlite://"+filepath.Join(t.TempDir(), "app.db"), "authkit_"))
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		url := storetest.ServiceURL(t, storetest.EnvPostgres)
		prefix := randomPrefix()
		t.Cleanup(func() { dropTables(t, url, prefix) })
		test(t, newSupportDB(t, url, prefix))
	})
}

func setClock(t *testing.T) {
	old := now
	now = func() time.Time { return userNow }
	t.Cleanup(func() { now = old })
}

func newSupportDB(t *testing.T, url, prefix string) *supportDB {
	return newMappedSupportDB(t, url, prefix, sqlxstore.UsersTable{}, nil)
}

// newMappedSupportDB is newSupportDB on the users table mapping describes,
// which flags (the --users-* flags) name to the CLI.
func newMappedSupportDB(t *testing.T, url, prefix string, mapping sqlxstore.UsersTable, flags []string) *supportDB {
	t.Helper()
	args := append([]string{"--database-url", url, "--table-prefix", prefix}, flags...)
	if code, _, stderr := runCLI(append([]string{"migrate"}, args...)...); code != 0 {
		t.Fatalf("migrate: exit %d, %s", code, stderr)
	}
	db, err := sqlxopen.Open(t.Context(), url, sqlxstore.Config{TablePrefix: prefix, CleanupInterval: -1, Users: mapping})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ada, err := db.Users().Create(t.Context(), &user.User{Email: "ada@example.com", Name: "Ada", PasswordHash: "$2a$04$x",
		CreatedAt: userNow.Add(-48 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return &supportDB{t: t, db: db, args: args, ada: ada}
}

// run runs `authkit user <op> <who> <args> --actor ...` with answer on
// stdin.
func (d *supportDB) run(answer string, op, who string, more ...string) (code int, stdout, stderr string) {
	old := stdin
	stdin = strings.NewReader(answer)
	defer func() { stdin = old }()
	// "--": who may be an id that starts with "-" (base64url).
	args := append([]string{"user", op, "--", who}, d.args...)
	return runCLI(append(append(args, "--actor", "carol: ticket 7"), more...)...)
}

func (d *supportDB) reload() *user.User {
	d.t.Helper()
	u, err := d.db.Users().ByID(d.t.Context(), d.ada.ID)
	if err != nil {
		d.t.Fatal(err)
	}
	return u
}

// give gives ada TOTP, a passkey, two sessions, a trusted device and an
// email code.
func (d *supportDB) give() {
	d.t.Helper()
	ctx, us := d.t.Context(), d.db.Users()
	must := func(err error) {
		d.t.Helper()
		if err != nil {
			d.t.Fatal(err)
		}
	}
	must(us.BeginTOTPSetup(ctx, d.ada.ID, "pending"))
	must(us.EnableTOTP(ctx, d.ada.ID, user.EnableTOTP{Pending: "pending", Secret: "secret", RecoveryCodeHashes: []string{"h1", "h2", "h3"}, Step: 1}))
	h, err := us.PasskeyUserHandle(ctx, d.ada.ID, []byte("handle-ada"))
	must(err)
	must(us.AddPasskey(ctx, &user.Passkey{ID: []byte("pk1"), UserID: d.ada.ID, UserHandle: h, PublicKey: []byte("k"), CreatedAt: userNow}))
	for _, rec := range []struct {
		st session.Store
		id string
	}{{d.db.Sessions(), strings.Repeat("a", 32)}, {d.db.Sessions(), strings.Repeat("b", 32)}, {d.db.TrustedDevices(), strings.Repeat("c", 32)}} {
		must(rec.st.Create(ctx, session.Record{ID: rec.id, UserID: d.ada.ID, CreatedAt: userNow.Add(-time.Hour),
			LastSeenAt: userNow.Add(-time.Hour), ExpiresAt: userNow.Add(time.Hour)}))
	}
	must(us.PutEmailCode(ctx, user.EmailCode{UserID: d.ada.ID, Hash: []byte("h"), CreatedAt: userNow, ExpiresAt: userNow.Add(time.Minute)}))
}

// wantAudit fails unless stderr holds exactly one audit line, of typ.
func wantAudit(t *testing.T, stderr, typ string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"msg":"authkit: `+typ+`"`) ||
		!strings.Contains(lines[0], `"detail":"carol: ticket 7"`) || !strings.Contains(lines[0], `"email":"ada@example.com"`) {
		t.Fatalf("stderr %q, want one audit line of %s by carol", stderr, typ)
	}
}

func TestUserFind(t *testing.T) {
	eachDB(t, func(t *testing.T, d *supportDB) {
		d.give()
		if _, _, err := d.db.Users().RecordLoginFailure(t.Context(), d.ada.ID, 1, 15*time.Minute, userNow); err != nil {
			t.Fatal(err)
		}
		want := "id:                " + d.ada.ID + "\n" +
			"email:             ada@example.com\n" +
			"name:              Ada\n" +
			"created:           2031-03-12T15:09:26Z\n" +
			"email verified:    no\n" +
			"2fa:               on, 3 recovery codes left\n" +
			"passkeys:          1\n" +
			"locked:            until 2031-03-14T15:24:26Z\n" +
			"failed logins:     0\n" +
			"sessions:          2\n" +
			"trusted devices:   1\n" +
			"password changed:  -\n"
		for _, who := range []string{d.ada.ID, "Ada@Example.com"} {
			code, stdout, stderr := d.run("", "find", who)
			if code != 0 || stdout != want || stderr != "" {
				t.Fatalf("find %s: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", who, code, stderr, stdout, want)
			}
		}
		code, stdout, stderr := d.run("", "find", "bob@example.com")
		if code != 3 || stdout != "" || stderr != "authkit user find: no user has the id or email \"bob@example.com\"\n" {
			t.Fatalf("find bob: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
}

func TestUserUnlock(t *testing.T) {
	eachDB(t, func(t *testing.T, d *supportDB) {
		if _, _, err := d.db.Users().RecordLoginFailure(t.Context(), d.ada.ID, 1, 15*time.Minute, userNow); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := d.run("", "unlock", "ada@example.com", "--yes")
		if code != 0 || stdout != "unlocked ada@example.com (was locked until 2031-03-14T15:24:26Z)\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		wantAudit(t, stderr, "support_account_unlocked")
		if u := d.reload(); u.FailedLogins != 0 || !u.LockedUntil.IsZero() {
			t.Fatalf("still locked: %d failures, until %v", u.FailedLogins, u.LockedUntil)
		}
	})
}

func TestUserDisable2FA(t *testing.T) {
	eachDB(t, func(t *testing.T, d *supportDB) {
		d.give()
		code, stdout, stderr := d.run("", "disable-2fa", d.ada.ID, "--yes")
		if code != 0 {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		wantAudit(t, stderr, "support_2fa_disabled")
		mailStart := "===== mail: two_factor_disabled =====\nTo: ada@example.com\nSubject: Acme: Two-factor authentication was turned off\n"
		summary := "ada@example.com: TOTP and recovery codes off; 1 passkeys deleted; 2 sessions and 1 trusted devices ended\nnotice mailed to ada@example.com\n"
		if !strings.HasPrefix(stdout, mailStart) || !strings.HasSuffix(stdout, "===== end of mail =====\n"+summary) {
			t.Fatalf("stdout:\n%s\nwant the notice then:\n%s", stdout, summary)
		}
		u := d.reload()
		if u.TwoFactorEnabled || u.TOTPSecret != "" || len(u.RecoveryCodeHashes) != 0 || u.SessionVersion != d.ada.SessionVersion+1 {
			t.Fatalf("after: 2FA %v, secret %q, codes %v, version %d", u.TwoFactorEnabled, u.TOTPSecret, u.RecoveryCodeHashes, u.SessionVersion)
		}
		d.wantNoRecords()
		if keys, err := d.db.Users().ListPasskeys(t.Context(), d.ada.ID); err != nil || len(keys) != 0 {
			t.Fatalf("passkeys left: %d, %v", len(keys), err)
		}
		code, stdout, _ = d.run("", "disable-2fa", d.ada.ID, "--yes")
		if code != 0 || stdout != "ada@example.com has no second factor: nothing changed\n" {
			t.Fatalf("again: exit %d, stdout %q", code, stdout)
		}
	})
}

// wantNoRecords fails unless ada has no session record and no trusted
// device.
func (d *supportDB) wantNoRecords() {
	d.t.Helper()
	for _, st := range []session.Store{d.db.Sessions(), d.db.TrustedDevices()} {
		if recs, err := st.List(d.t.Context(), d.ada.ID); err != nil || len(recs) != 0 {
			d.t.Fatalf("records left: %+v, %v", recs, err)
		}
	}
}

func TestUserEndSessions(t *testing.T) {
	eachDB(t, func(t *testing.T, d *supportDB) {
		d.give()
		code, stdout, stderr := d.run("", "end-sessions", "ada@example.com", "--yes")
		want := "ada@example.com: every session ended (session version 1); 2 session records and 1 trusted devices deleted\n"
		if code != 0 || stdout != want {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		wantAudit(t, stderr, "support_sessions_ended")
		if v := d.reload().SessionVersion; v != 1 {
			t.Fatalf("session version %d, want 1", v)
		}
		d.wantNoRecords()
	})
}

func TestUserVerifyEmail(t *testing.T) {
	eachDB(t, func(t *testing.T, d *supportDB) {
		code, stdout, stderr := d.run("", "verify-email", "ada@example.com", "--yes")
		if code != 0 || stdout != "ada@example.com marked verified\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		wantAudit(t, stderr, "support_email_verified")
		if at := d.reload().EmailVerifiedAt; !at.Equal(userNow) {
			t.Fatalf("EmailVerifiedAt %v, want %v", at, userNow)
		}
		code, stdout, stderr = d.run("", "verify-email", "ada@example.com", "--yes")
		if code != 0 || stdout != "ada@example.com was verified already: nothing changed\n" || stderr != "" {
			t.Fatalf("again: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
}

func TestUserDelete(t *testing.T) {
	eachDB(t, func(t *testing.T, d *supportDB) {
		d.give()
		code, stdout, stderr := d.run("", "delete", "ada@example.com", "--yes")
		want := "deleted ada@example.com (id " + d.ada.ID + "): 1 passkeys, 2 session records, 1 trusted devices\n"
		// The notice goes to the address (here the console mailer: no SMTP_URL).
		if code != 0 || !strings.HasPrefix(stdout, "===== mail: account_deleted =====\nTo: ada@example.com\n") || !strings.HasSuffix(stdout, "===== end of mail =====\n"+want) {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		wantAudit(t, stderr, "support_account_deleted")
		ctx, us := t.Context(), d.db.Users()
		if _, err := us.ByID(ctx, d.ada.ID); !errors.Is(err, user.ErrNotFound) {
			t.Fatalf("user: %v", err)
		}
		if _, err := us.PasskeyByID(ctx, []byte("pk1")); !errors.Is(err, user.ErrNotFound) {
			t.Fatalf("passkey: %v", err)
		}
		if _, err := us.ByPasskeyUserHandle(ctx, []byte("handle-ada")); !errors.Is(err, user.ErrNotFound) {
			t.Fatalf("user handle: %v", err)
		}
		if _, err := us.EmailCode(ctx, d.ada.ID); !errors.Is(err, user.ErrNotFound) {
			t.Fatalf("email code: %v", err)
		}
		d.wantNoRecords()
	})
}

// TestUserConfirm: without --yes a change waits for "y" on stdin; any
// other answer changes nothing and exits 4.
func TestUserConfirm(t *testing.T) {
	eachDB(t, func(t *testing.T, d *supportDB) {
		question := "Mark the address of ada@example.com (id " + d.ada.ID + ") verified? [y/N] "
		for _, answer := range []string{"", "n\n", "no\n", "yes please\n"} {
			code, stdout, stderr := d.run(answer, "verify-email", "ada@example.com")
			if code != 4 || stdout != "" || stderr != question+"authkit user verify-email: not confirmed: nothing changed\n" {
				t.Fatalf("answer %q: exit %d, stdout %q, stderr %q", answer, code, stdout, stderr)
			}
			if !d.reload().EmailVerifiedAt.IsZero() {
				t.Fatalf("answer %q verified the address", answer)
			}
		}
		code, stdout, stderr := d.run(" Y \n", "verify-email", "ada@example.com")
		if code != 0 || stdout != "ada@example.com marked verified\n" || !strings.HasPrefix(stderr, question+"{") {
			t.Fatalf("answer y: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
}

func TestUserExitCodes(t *testing.T) {
	setClock(t)
	url := "sqlite://" + filepath.Join(t.TempDir(), "app.db")
	if code, _, stderr := runCLI("migrate", "--database-url", url); code != 0 {
		t.Fatalf("migrate: %s", stderr)
	}
	t.Setenv("DATABASE_URL", "")
	for _, tc := range []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string // its first line
	}{
		{"no subcommand", []string{"user"}, 2, "authkit user: name a subcommand: find, unlock, disable-2fa, end-sessions, verify-email or delete"},
		{"unknown subcommand", []string{"user", "lock", "a@b"}, 2, `authkit user: unknown subcommand "lock"`},
		{"no user", []string{"user", "find", "--database-url", url}, 2, "authkit user: name one user: an id or an email address"},
		{"two users", []string{"user", "find", "a@b", "c@d", "--database-url", url}, 2, "authkit user: name one user: an id or an email address"},
		{"no database", []string{"user", "find", "a@b"}, 2, "authkit user: no database: pass --database-url or set DATABASE_URL"},
		{"no actor", []string{"user", "unlock", "a@b", "--database-url", url, "--actor", " "}, 2, "authkit user: no actor: pass --actor (who you are, and why) or set USER"},
		{"unknown flag", []string{"user", "find", "a@b", "--force"}, 2, "authkit user: flag provided but not defined: -force"},
		{"an id that starts with -", []string{"user", "find", "-tSfcGLaKFEBABQ8HyZdvw"}, 2, `authkit user: flag provided but not defined: -tSfcGLaKFEBABQ8HyZdvw (an id that starts with "-" goes after "--": authkit user find -- <id>)`},
		{"bad URL", []string{"user", "find", "a@b", "--database-url", "oracle://x"}, 2, ""},
		{"no such user", []string{"user", "delete", "a@b", "--database-url", url, "--yes", "--actor", "carol"}, 3, `authkit user delete: no user has the id or email "a@b"`},
		{"unreachable", []string{"user", "find", "a@b", "--database-url", "postgres://u@" + storetest.ClosedAddr(t) + "/x?connect_timeout=2"}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(tc.args...)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != tc.wantCode || stdout != "" || (tc.wantStderr != "" && first != tc.wantStderr) || stderr == "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q", code, stdout, stderr, tc.wantCode, tc.wantStderr)
			}
		})
	}
	if code, stdout, _ := runCLI("user", "--help"); code != 0 || !strings.HasPrefix(stdout, "usage: authkit user find|unlock|") {
		t.Fatalf("user --help: exit %d, stdout %q", code, stdout)
	}
}

// TestUserMappedTable: on an app's own users table (sqlxstore.Config.Users),
// in both layouts, the --users-* flags reach the store: find counts what
// authkit keeps beside the app's row, and delete removes the app's row,
// authkit's state and everything else.
func TestUserMappedTable(t *testing.T) {
	for _, layout := range []string{"columns", "side-table"} {
		t.Run(layout, func(t *testing.T) {
			eachServer(t, func(t *testing.T, url, prefix string, d sqlxstore.Dialect) {
				raw, table := newAppUsers(t, url, prefix, d)
				mapping := sqlxstore.UsersTable{Table: table, IDColumn: "uid", EmailColumn: "mail", PasswordHashColumn: "pw",
					IDType: sqlxstore.IDInt64, Layout: sqlxstore.Layout(layout)}
				if layout == "side-table" {
					mapping.Layout = sqlxstore.LayoutSideTable
				}
				flags := []string{"--users-table", table, "--users-columns", "id=uid,email=mail,password=pw", "--users-id", "int64", "--users-layout", layout}
				sd := newMappedSupportDB(t, url, prefix, mapping, flags)
				sd.args = append(sd.args, flags...)
				sd.give()
				code, stdout, stderr := sd.run("", "find", "ada@example.com")
				if code != 0 || !strings.Contains(stdout, "2fa:               on, 3 recovery codes left\npasskeys:          1\n") ||
					!strings.Contains(stdout, "sessions:          2\ntrusted devices:   1\n") {
					t.Fatalf("find: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
				}
				// A row another table refers to is not deleted, and nor is anything
				// else (SQLite enforces foreign keys only with PRAGMA foreign_keys).
				if d != sqlxstore.SQLite {
					deleteReferenced(t, raw, sd, prefix+"orders", table)
				}
				code, stdout, stderr = sd.run("", "delete", "ada@example.com", "--yes")
				// The notice goes to the console mailer (no SMTP_URL), on standard output before the result.
				if want := "deleted ada@example.com (id " + sd.ada.ID + "): 1 passkeys, 2 session records, 1 trusted devices\n"; code != 0 ||
					!strings.HasPrefix(stdout, "===== mail: account_deleted =====\nTo: ada@example.com\n") || !strings.HasSuffix(stdout, "===== end of mail =====\n"+want) {
					t.Fatalf("delete: exit %d, stdout %q, stderr %q", code, stdout, stderr)
				}
				var n int
				if err := raw.SQLX().Get(&n, "SELECT COUNT(*) FROM "+table); err != nil || n != 0 {
					t.Fatalf("the app's rows: %d, %v; want 0", n, err)
				}
				if layout == "side-table" {
					if err := raw.SQLX().Get(&n, "SELECT COUNT(*) FROM "+prefix+"user_state"); err != nil || n != 0 {
						t.Fatalf("side-table rows: %d, %v; want 0", n, err)
					}
				}
				if _, err := sd.db.Users().EmailCode(t.Context(), sd.ada.ID); !errors.Is(err, user.ErrNotFound) {
					t.Fatalf("email code: %v", err)
				}
				sd.wantNoRecords()
			})
		})
	}
}

// newAppUsers creates an app's own users table, prefix+"app_users" (uid,
// mail, pw), dropped with authkit's side table when t ends, and returns a
// connection to the database that is no authkit store and the table's name.
func newAppUsers(t *testing.T, url, prefix string, d sqlxstore.Dialect) (*sqlxstore.DB, string) {
	t.Helper()
	table := prefix + "app_users"
	create := map[sqlxstore.Dialect]string{
		sqlxstore.SQLite:   `CREATE TABLE %s (uid INTEGER PRIMARY KEY, mail TEXT NOT NULL UNIQUE, pw TEXT NOT NULL)`,
		sqlxstore.Postgres: `CREATE TABLE %s (uid BIGSERIAL PRIMARY KEY, mail TEXT NOT NULL UNIQUE, pw TEXT NOT NULL)`,
	}[d]
	raw, err := sqlxopen.Open(t.Context(), url, sqlxstore.Config{CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() }) // after the drops below
	if _, err := raw.SQLX().Exec(fmt.Sprintf(create, table)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = raw.SQLX().Exec("DROP TABLE IF EXISTS " + prefix + "user_state")
		_, _ = raw.SQLX().Exec("DROP TABLE IF EXISTS " + table)
	})
	return raw, table
}

// eachServer runs test on an SQLite file and on PostgreSQL
// (AUTHKIT_TEST_POSTGRES), each with a table prefix of its own.
func eachServer(t *testing.T, test func(t *testing.T, url, prefix string, d sqlxstore.Dialect)) {
	setClock(t)
	t.Setenv("SMTP_URL", "")
	t.Run("SQLite", func(t *testing.T) {
		test(t, "sqlite://"+filepath.Join(t.TempDir(), "app.db"), "authkit_", sqlxstore.SQLite)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		url := storetest.ServiceURL(t, storetest.EnvPostgres)
		prefix := randomPrefix()
		t.Cleanup(func() { dropTables(t, url, prefix) })
		test(t, url, prefix, sqlxstore.Postgres)
	})
}

// deleteReferenced: delete fails, and changes nothing, while another table
// refers to the app's row.
func deleteReferenced(t *testing.T, raw *sqlxstore.DB, sd *supportDB, orders, table string) {
	t.Helper()
	if _, err := raw.SQLX().Exec(fmt.Sprintf("CREATE TABLE %s (uid BIGINT NOT NULL REFERENCES %s (uid))", orders, table)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = raw.SQLX().Exec("DROP TABLE IF EXISTS " + orders) })
	if _, err := raw.SQLX().Exec("INSERT INTO " + orders + " (uid) VALUES (" + sd.ada.ID + ")"); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := sd.run("", "delete", "ada@example.com", "--yes")
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, "authkit user delete: auth: support: delete user: ") {
		t.Fatalf("delete of a referenced row: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if a := sd.reload(); !a.TwoFactorEnabled {
		t.Fatal("the failed delete changed the user")
	}
	if keys, err := sd.db.Users().ListPasskeys(t.Context(), sd.ada.ID); err != nil || len(keys) != 1 {
		t.Fatalf("the failed delete took the passkeys: %d, %v", len(keys), err)
	}
	if _, err := raw.SQLX().Exec("DELETE FROM " + orders); err != nil {
		t.Fatal(err)
	}
}

// TestUserDeleteReferenced: a row of the app's that points at the user by
// a foreign key stops `user delete` with an error naming it, and deletes
// nothing.
func TestUserDeleteReferenced(t *testing.T) {
	t.Run("PostgreSQL", func(t *testing.T) {
		setClock(t)
		t.Setenv("SMTP_URL", "")
		url := storetest.ServiceURL(t, storetest.EnvPostgres)
		prefix := randomPrefix()
		t.Cleanup(func() { dropTables(t, url, prefix) })
		d := newSupportDB(t, url, prefix)
		x := d.db.SQLX()
		if _, err := x.Exec(`CREATE TABLE ` + prefix + `notes (id BIGSERIAL PRIMARY KEY, user_id TEXT COLLATE "C" NOT NULL,
			CONSTRAINT ` + prefix + `notes_user_fk FOREIGN KEY (user_id) REFERENCES ` + prefix + `users (id))`); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = x.Exec(`DROP TABLE ` + prefix + `notes`) })
		if _, err := x.Exec(`INSERT INTO `+prefix+`notes (user_id) VALUES ($1)`, d.ada.ID); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := d.run("", "delete", "ada@example.com", "--yes")
		if code == 0 || stdout != "" || !strings.Contains(stderr, "table "+prefix+"notes (foreign key "+prefix+"notes_user_fk)") {
			t.Fatalf("exit %d, stdout %q, stderr %q; want a failure naming the foreign key", code, stdout, stderr)
		}
		if _, err := d.db.Users().ByID(t.Context(), d.ada.ID); err != nil {
			t.Fatalf("the refused deletion deleted the user: %v", err)
		}
	})
}
