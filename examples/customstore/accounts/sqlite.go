package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/authkit-go/authkit/core/user"
	"modernc.org/sqlite" // registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// Schema is the app's own migration, its accounts table as it was before
// authkit: the app's names, nullable columns, a created column in SQLite's
// text format, and a column (plan) that authkit never touches. [Migrate]
// adds authkit's columns to it.
const Schema = `CREATE TABLE IF NOT EXISTS accounts (
	account_id   TEXT PRIMARY KEY,
	login_email  TEXT NOT NULL UNIQUE,
	display_name TEXT,
	pw_hash      TEXT,
	created      TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
	plan         TEXT NOT NULL DEFAULT 'free'
)`

// dsnOptions make SQLite safe for many writers in one process:
//
//   - _txlock=immediate: BEGIN takes the write lock at once, so a
//     transaction never has to upgrade a read lock (which fails with
//     SQLITE_BUSY instead of waiting).
//   - busy_timeout(5000): a writer that finds the database locked waits up to
//     5 s for its turn instead of failing at once.
//   - journal_mode(WAL): readers do not block the writer, nor it them.
//   - synchronous(NORMAL): the usual setting with WAL (durable across
//     crashes of the process; the last commits may be lost on power loss).
const dsnOptions = "?_txlock=immediate&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"

// maxOpenConns caps the pool. SQLite runs one writer at a time; more
// connections only make writers poll the lock against each other.
const maxOpenConns = 4

// Open opens (creating if needed) the SQLite database file at path with the
// settings this store relies on: WAL, a 5 s busy timeout and immediate
// transactions, so concurrent writers queue instead of failing. path is a
// file name, not a URI or ":memory:" (each pooled connection would get its
// own empty in-memory database).
func Open(ctx context.Context, path string) (*sql.DB, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("accounts: open %q: want a plain file path", path)
	}
	db, err := sql.Open("sqlite", path+dsnOptions)
	if err != nil {
		return nil, fmt.Errorf("accounts: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(maxOpenConns)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("accounts: open %s: %w: %w", path, user.ErrUnavailable, err)
	}
	return db, nil
}

// authkitColumns are the columns [Migrate] adds to the app's accounts
// table, in the app's own naming. NULL stands for authkit's zero values
// (no secret, never, none issued).
var authkitColumns = []struct{ name, decl string }{
	{"mfa_on", "INTEGER NOT NULL DEFAULT 0"},        // TwoFactorEnabled
	{"mfa_secret_enc", "TEXT"},                      // TOTPSecret (encrypted by authkit)
	{"mfa_pending_enc", "TEXT"},                     // PendingTOTPSecret (encrypted)
	{"mfa_backup_hashes", "TEXT"},                   // RecoveryCodeHashes, a JSON array
	{"mfa_last_step", "INTEGER"},                    // LastTOTPStep
	{"email_confirmed_ms", "INTEGER"},               // EmailVerifiedAt, Unix ms
	{"email_changed_ms", "INTEGER"},                 // EmailChangedAt, Unix ms
	{"pw_changed_ms", "INTEGER"},                    // PasswordChangedAt, Unix ms
	{"session_gen", "INTEGER NOT NULL DEFAULT 0"},   // SessionVersion
	{"failed_logins", "INTEGER NOT NULL DEFAULT 0"}, // FailedLogins
	{"locked_until_ms", "INTEGER"},                  // LockedUntil, Unix ms
}

// appColumns are the columns of the app's table that the store maps.
var appColumns = []string{"account_id", "login_email", "display_name", "pw_hash", "created"}

// Migrate adds authkit's columns to the app's existing accounts table. It
// is idempotent and runs in one transaction; it never changes the app's
// own columns or rows. It fails when the table or one of the app columns
// the store maps (account_id, login_email, display_name, pw_hash, created)
// is missing.
func Migrate(ctx context.Context, db *sql.DB) error {
	return inTx(ctx, db, "migrate", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info('accounts')`)
		if err != nil {
			return unavailable(ctx, "migrate", err)
		}
		have := map[string]bool{}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return unavailable(ctx, "migrate", err)
			}
			have[name] = true
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return unavailable(ctx, "migrate", err)
		}
		if len(have) == 0 {
			return errors.New("accounts: migrate: table accounts does not exist (create the app's table first)")
		}
		var missing []string
		for _, c := range appColumns {
			if !have[c] {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("accounts: migrate: table accounts lacks the app column(s) %s", strings.Join(missing, ", "))
		}
		for _, c := range authkitColumns {
			if have[c.name] {
				continue
			}
			if _, err := tx.ExecContext(ctx, "ALTER TABLE accounts ADD COLUMN "+c.name+" "+c.decl); err != nil {
				return unavailable(ctx, "migrate: add column "+c.name, err)
			}
		}
		for _, q := range []string{identitiesTable, identitiesIndex, apiKeysTable, apiKeysIndex, oneTimeTable, oneTimeIndex} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return unavailable(ctx, "migrate: identities", err)
			}
		}
		return nil
	})
}

// uniqueViolation reports which column a failed INSERT or UPDATE collided
// on: "login_email", "account_id", or "" when err is not a uniqueness
// violation. This is the one driver-specific function of the package.
func uniqueViolation(err error) string {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return ""
	}
	switch e.Code() {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return "account_id"
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		// "UNIQUE constraint failed: accounts.login_email": the app's table
		// may have other unique columns, which are not an email clash.
		if strings.Contains(e.Error(), "accounts.login_email") {
			return "login_email"
		}
		if strings.Contains(e.Error(), "accounts.account_id") {
			return "account_id"
		}
	}
	return ""
}
