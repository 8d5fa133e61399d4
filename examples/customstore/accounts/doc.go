// Package accounts is a hand-written user store (every part of the
// contract in core/user, [user.Store]) over an app's own,
// already existing users table: the "bring your own storage" example of
// authkit (see ../README.md for the walk-through).
//
// The app had this table before it adopted authkit, with its own names:
//
//	CREATE TABLE accounts (
//		account_id   TEXT PRIMARY KEY,          -- User.ID
//		login_email  TEXT NOT NULL UNIQUE,      -- User.Email
//		display_name TEXT,                      -- User.Name (NULL reads as "")
//		pw_hash      TEXT,                      -- User.PasswordHash (NULL reads as "")
//		created      TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, -- User.CreatedAt, UTC
//		...                                     -- the app's other columns, untouched
//	)
//
// [Migrate] adds authkit's fields as columns named the app's way
// (mfa_on, mfa_secret_enc, mfa_pending_enc, mfa_backup_hashes,
// mfa_last_step, email_confirmed_ms, email_changed_ms, pw_changed_ms,
// session_gen, failed_logins, locked_until_ms), timestamps as Unix
// milliseconds and NULL for authkit's zero values. The accounts at
// outside identity providers linked to an account (user.Identities, for
// the social module) are rows of a table of their own,
// account_identities, which Migrate creates: an account has any number of
// them.
//
// The store is written on plain database/sql, to show that any SQL access
// works; only [Open] and the detection of unique violations know the
// driver (modernc.org/sqlite, pure Go). Every conditional operation of the
// contract is one UPDATE whose WHERE clause carries the condition;
// RecordLoginFailure is one short immediate transaction.
//
//	db, err := accounts.Open(ctx, "app.db")       // WAL, busy timeout, immediate transactions
//	if err != nil { ... }
//	if err := accounts.Migrate(ctx, db); err != nil { ... }
//	svc, err := auth.New(auth.Config{Users: accounts.New(db, accounts.Config{}), ...})
//
// The package passes storetest.RunUserStore (its Identities part
// included) and authkit's HTTP flow suite (authtest) on net/http.
package accounts
