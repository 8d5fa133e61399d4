package accounts

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// Config configures a [Store].
type Config struct {
	// Now stamps CreatedAt on new accounts. Default: time.Now.
	Now func() time.Time
}

// Store implements every part of the user-store contract ([user.Store])
// over the app's own accounts table (see the
// package documentation for the columns). It only runs SQL through the
// *sql.DB it is given, which it does not own: the caller closes it. It is
// safe for concurrent use.
type Store struct {
	db  *sql.DB
	now func() time.Time
}

var _ user.Store = (*Store)(nil)

// New returns a store over db, which must hold the accounts table with
// authkit's columns ([Migrate]); open it with [Open] so that concurrent
// writers wait for each other instead of failing.
func New(db *sql.DB, cfg Config) *Store {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now}
}

// createdLayout is how the app writes its created column: SQLite's own
// datetime format in UTC. Rows the app wrote with CURRENT_TIMESTAMP have
// whole seconds; the store adds milliseconds, which the same layout reads.
const createdLayout = "2006-01-02 15:04:05.000"

// selectColumns reads a row in the order scanUser expects. COALESCE turns
// the app's nullable text columns into Go's empty strings.
const selectColumns = `account_id, login_email, COALESCE(display_name, ''), COALESCE(pw_hash, ''), created,
	mfa_on, COALESCE(mfa_secret_enc, ''), COALESCE(mfa_pending_enc, ''), mfa_backup_hashes, COALESCE(mfa_last_step, 0),
	email_confirmed_ms, email_changed_ms, pw_changed_ms, session_gen, failed_logins, locked_until_ms`

// Create implements [user.Registration]. Uniqueness of the email is the
// database's job (login_email is UNIQUE), not a lookup before the insert.
func (s *Store) Create(ctx context.Context, u *user.User) (*user.User, error) {
	c := u.Clone()
	if c.ID == "" {
		c.ID = user.NewID()
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now()
	}
	hashes, err := encodeHashes(c.RecoveryCodeHashes)
	if err != nil {
		return nil, fmt.Errorf("accounts: create: %w", err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO accounts (
		account_id, login_email, display_name, pw_hash, created,
		mfa_on, mfa_secret_enc, mfa_pending_enc, mfa_backup_hashes, mfa_last_step,
		email_confirmed_ms, email_changed_ms, pw_changed_ms, session_gen, failed_logins, locked_until_ms
	) VALUES (?, ?, NULLIF(?, ''), NULLIF(?, ''), ?, ?, NULLIF(?, ''), NULLIF(?, ''), ?, NULLIF(?, 0), ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Email, c.Name, c.PasswordHash, c.CreatedAt.UTC().Format(createdLayout),
		c.TwoFactorEnabled, c.TOTPSecret, c.PendingTOTPSecret, hashes, c.LastTOTPStep,
		millis(c.EmailVerifiedAt), millis(c.EmailChangedAt), millis(c.PasswordChangedAt),
		c.SessionVersion, c.FailedLogins, millis(c.LockedUntil))
	switch uniqueViolation(err) {
	case "login_email":
		return nil, fmt.Errorf("accounts: create: %w", user.ErrEmailTaken)
	case "account_id":
		return nil, fmt.Errorf("accounts: create: id in use: %w", user.ErrConflict)
	}
	if err != nil {
		return nil, unavailable(ctx, "create", err)
	}
	// Return the stored form: timestamps at millisecond precision.
	for _, t := range []*time.Time{&c.CreatedAt, &c.EmailVerifiedAt, &c.EmailChangedAt, &c.PasswordChangedAt, &c.LockedUntil} {
		*t = t.Truncate(time.Millisecond)
	}
	return c, nil
}

// ByID implements [user.Accounts].
func (s *Store) ByID(ctx context.Context, id string) (*user.User, error) {
	return s.get(ctx, "user by id", `account_id = ?`, id)
}

// ByEmail implements [user.Accounts]. login_email has SQLite's default BINARY
// collation, so addresses compare byte for byte as the contract requires.
func (s *Store) ByEmail(ctx context.Context, email string) (*user.User, error) {
	return s.get(ctx, "user by email", `login_email = ?`, email)
}

// Delete implements [user.Registration].
func (s *Store) Delete(ctx context.Context, id string) error {
	// The account goes first, then its identities and API keys, in one
	// transaction: a link racing with it reads no account and inserts
	// nothing.
	return inTx(ctx, s.db, "delete", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM accounts WHERE account_id = ?`, id)
		if err != nil {
			return unavailable(ctx, "delete", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return unavailable(ctx, "delete", err)
		} else if n == 0 {
			return fmt.Errorf("accounts: delete: %w", user.ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM account_identities WHERE account_id = ?`, id); err != nil {
			return unavailable(ctx, "delete identities", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM account_api_keys WHERE account_id = ?`, id); err != nil {
			return unavailable(ctx, "delete api keys", err)
		}
		return nil
	})
}

// BeginTOTPSetup implements [user.TwoFactor].
func (s *Store) BeginTOTPSetup(ctx context.Context, id, pendingSecret string) error {
	return s.update(ctx, "begin totp setup", id, `UPDATE accounts SET mfa_pending_enc = NULLIF(?, '')
		WHERE account_id = ? AND mfa_on = 0`, pendingSecret, id)
}

// EnableTOTP implements [user.TwoFactor].
func (s *Store) EnableTOTP(ctx context.Context, id string, e user.EnableTOTP) error {
	hashes, err := encodeHashes(e.RecoveryCodeHashes)
	if err != nil {
		return fmt.Errorf("accounts: enable totp: %w", err)
	}
	return s.update(ctx, "enable totp", id, `UPDATE accounts SET
			mfa_secret_enc = NULLIF(?, ''), mfa_pending_enc = NULL, mfa_backup_hashes = ?,
			mfa_last_step = NULLIF(?, 0), mfa_on = 1
		WHERE account_id = ? AND mfa_on = 0 AND mfa_pending_enc <> '' AND mfa_pending_enc = ?`,
		e.Secret, hashes, e.Step, id, e.Pending)
}

// AcceptTOTPStep implements [user.TwoFactor].
func (s *Store) AcceptTOTPStep(ctx context.Context, id string, matched, current int64) error {
	return s.update(ctx, "accept totp step", id, `UPDATE accounts SET mfa_last_step = max(?, ?)
		WHERE account_id = ? AND mfa_on = 1
		AND (COALESCE(mfa_last_step, 0) = 0 OR (mfa_last_step < ? AND mfa_last_step < ?))`,
		matched, current, id, matched, current)
}

// ConsumeRecoveryCode implements [user.TwoFactor]. The stored JSON text is
// compared whole with the encoding of old: authkit writes the column, so
// the encoding is canonical, and NULL (never issued) counts as empty.
func (s *Store) ConsumeRecoveryCode(ctx context.Context, id string, old, remaining []string) error {
	oldText, err := encodeList(old)
	if err != nil {
		return fmt.Errorf("accounts: consume recovery code: %w", err)
	}
	newText, err := encodeList(remaining)
	if err != nil {
		return fmt.Errorf("accounts: consume recovery code: %w", err)
	}
	return s.update(ctx, "consume recovery code", id, `UPDATE accounts SET mfa_backup_hashes = ?
		WHERE account_id = ? AND COALESCE(mfa_backup_hashes, '[]') = ?`, newText, id, oldText)
}

// ReplaceRecoveryCodes implements [user.TwoFactor].
func (s *Store) ReplaceRecoveryCodes(ctx context.Context, id string, hashes []string) error {
	text, err := encodeHashes(hashes)
	if err != nil {
		return fmt.Errorf("accounts: replace recovery codes: %w", err)
	}
	return s.update(ctx, "replace recovery codes", id, `UPDATE accounts SET mfa_backup_hashes = ?
		WHERE account_id = ? AND mfa_on = 1`, text, id)
}

// DisableTOTP implements [user.TwoFactor].
func (s *Store) DisableTOTP(ctx context.Context, id string) error {
	return s.update(ctx, "disable totp", id, `UPDATE accounts SET
			mfa_on = 0, mfa_secret_enc = NULL, mfa_pending_enc = NULL, mfa_backup_hashes = NULL,
			mfa_last_step = NULL, session_gen = session_gen + 1
		WHERE account_id = ? AND mfa_on = 1`, id)
}

// VerifyEmail implements [user.EmailVerification]. COALESCE keeps the first
// verification time; SQLite counts the row as changed either way, so a
// repeated verification succeeds without moving it.
func (s *Store) VerifyEmail(ctx context.Context, id, email string, at time.Time) error {
	return s.update(ctx, "verify email", id, `UPDATE accounts SET email_confirmed_ms = COALESCE(email_confirmed_ms, ?)
		WHERE account_id = ? AND login_email = ?`, millis(at), id, email)
}

// ChangeEmail implements [user.EmailChange]. The UNIQUE index on login_email
// decides races between users for one address.
func (s *Store) ChangeEmail(ctx context.Context, id, oldEmail, newEmail string, at time.Time) error {
	return s.update(ctx, "change email", id, `UPDATE accounts SET
			login_email = ?, email_confirmed_ms = NULL, email_changed_ms = ?, session_gen = session_gen + 1
		WHERE account_id = ? AND login_email = ?`, newEmail, millis(at), id, oldEmail)
}

// setPassword is a reset's and a change's SET clause: the new hash, the
// time of the change, every session ended, failures cleared.
const setPassword = `UPDATE accounts SET pw_hash = NULLIF(?, ''), pw_changed_ms = ?, session_gen = session_gen + 1,
		failed_logins = 0, locked_until_ms = NULL`

// ResetPassword implements [user.PasswordReset]: the link's two
// conditions are terms of one WHERE clause.
func (s *Store) ResetPassword(ctx context.Context, id string, r user.Reset) error {
	return s.update(ctx, "reset password", id, setPassword+`
		WHERE account_id = ? AND COALESCE(pw_hash, '') = ? AND (pw_changed_ms IS NULL OR pw_changed_ms < ?)`,
		r.Hash, millis(r.At), id, r.OldHash, millis(r.IssuedBefore))
}

// ChangePassword implements [user.PasswordChange].
func (s *Store) ChangePassword(ctx context.Context, id, oldHash, newHash string, at time.Time) error {
	return s.update(ctx, "change password", id, setPassword+`
		WHERE account_id = ? AND COALESCE(pw_hash, '') = ?`, newHash, millis(at), id, oldHash)
}

// RehashPassword implements [user.PasswordRehash]: only the hash changes.
func (s *Store) RehashPassword(ctx context.Context, id, oldHash, newHash string) error {
	return s.update(ctx, "rehash password", id, `UPDATE accounts SET pw_hash = NULLIF(?, '')
		WHERE account_id = ? AND COALESCE(pw_hash, '') = ?`, newHash, id, oldHash)
}

// BumpSessionVersion implements [user.SessionVersions].
func (s *Store) BumpSessionVersion(ctx context.Context, id string) (int64, error) {
	var v int64
	err := s.db.QueryRowContext(ctx, `UPDATE accounts SET session_gen = session_gen + 1
		WHERE account_id = ? RETURNING session_gen`, id).Scan(&v)
	if err != nil {
		return 0, rowErr(ctx, "bump session version", err)
	}
	return v, nil
}

// RecordLoginFailure implements [user.Lockout]. It is the one operation in a
// transaction: it returns the count before the lock resets it, and
// RETURNING in SQLite sees only the new values. BEGIN IMMEDIATE (from
// Open's _txlock) holds the write lock from the read to the commit, so the
// read and the write are still one atomic step.
func (s *Store) RecordLoginFailure(ctx context.Context, id string, limit int, lockFor time.Duration, at time.Time) (failures int, lockedUntil time.Time, err error) {
	var n int
	var until sql.NullInt64
	err = inTx(ctx, s.db, "record login failure", func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT failed_logins, locked_until_ms FROM accounts WHERE account_id = ?`, id).Scan(&n, &until)
		if err != nil {
			return rowErr(ctx, "record login failure", err)
		}
		n++
		stored := n
		if limit > 0 && n >= limit {
			until = millis(at.Add(lockFor))
			stored = 0
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET failed_logins = ?, locked_until_ms = ? WHERE account_id = ?`,
			stored, until, id); err != nil {
			return unavailable(ctx, "record login failure", err)
		}
		return nil
	})
	if err != nil {
		return 0, time.Time{}, err
	}
	return n, fromMillis(until), nil
}

// ClearLoginFailures implements [user.Lockout].
func (s *Store) ClearLoginFailures(ctx context.Context, id string) error {
	return s.update(ctx, "clear login failures", id, `UPDATE accounts SET failed_logins = 0, locked_until_ms = NULL
		WHERE account_id = ?`, id)
}

// update runs one conditional statement. When it changes no row, either
// the account is missing (ErrNotFound, which wins) or the condition in the
// WHERE clause did not hold (ErrConflict); a second, plain read tells which.
// A clash on the UNIQUE login_email is ErrEmailTaken.
func (s *Store) update(ctx context.Context, op, id, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if uniqueViolation(err) == "login_email" {
		return fmt.Errorf("accounts: %s: %w", op, user.ErrEmailTaken)
	}
	if err != nil {
		return unavailable(ctx, op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return unavailable(ctx, op, err)
	}
	if n > 0 {
		return nil
	}
	var one int
	err = s.db.QueryRowContext(ctx, `SELECT 1 FROM accounts WHERE account_id = ?`, id).Scan(&one)
	if err != nil {
		return rowErr(ctx, op, err)
	}
	return fmt.Errorf("accounts: %s: %w", op, user.ErrConflict)
}

// get reads the one account matching where.
func (s *Store) get(ctx context.Context, op, where, arg string) (*user.User, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+selectColumns+` FROM accounts WHERE `+where, arg)
	var (
		u                            user.User
		created                      string
		hashes                       sql.NullString
		verified, changed, pwChanged sql.NullInt64
		locked                       sql.NullInt64
	)
	err := row.Scan(&u.ID, &u.Email, &u.Name, &u.PasswordHash, &created,
		&u.TwoFactorEnabled, &u.TOTPSecret, &u.PendingTOTPSecret, &hashes, &u.LastTOTPStep,
		&verified, &changed, &pwChanged, &u.SessionVersion, &u.FailedLogins, &locked)
	if err != nil {
		return nil, rowErr(ctx, op, err)
	}
	if u.CreatedAt, err = time.ParseInLocation(time.DateTime, created, time.UTC); err != nil {
		return nil, fmt.Errorf("accounts: %s: account %s: created %q: %w", op, u.ID, created, err)
	}
	if hashes.Valid {
		if err := json.Unmarshal([]byte(hashes.String), &u.RecoveryCodeHashes); err != nil {
			return nil, fmt.Errorf("accounts: %s: account %s: mfa_backup_hashes: %w", op, u.ID, err)
		}
	}
	u.EmailVerifiedAt = fromMillis(verified)
	u.EmailChangedAt = fromMillis(changed)
	u.PasswordChangedAt = fromMillis(pwChanged)
	u.LockedUntil = fromMillis(locked)
	return &u, nil
}

// queryAll runs query and returns its rows, each read by scan, in order:
// empty, not nil, when there are none.
func queryAll[T any](ctx context.Context, db *sql.DB, op string, scan func(row interface{ Scan(...any) error }) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, unavailable(ctx, op, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, unavailable(ctx, op, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(ctx, op, err)
	}
	return out, nil
}

// rowErr answers a one-row read that failed with err: ErrNotFound (of
// op) when there was no row, else unavailable.
func rowErr(ctx context.Context, op string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("accounts: %s: %w", op, user.ErrNotFound)
	}
	return unavailable(ctx, op, err)
}

// inTx runs fn in one transaction of db and commits it, or rolls it back
// when fn fails. fn's errors come back as they are; a failed BEGIN or
// COMMIT is unavailable (of op).
func inTx(ctx context.Context, db *sql.DB, op string, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return unavailable(ctx, op, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return unavailable(ctx, op, err)
	}
	return nil
}

// unavailable wraps a driver error: user.ErrUnavailable (the flows answer
// 503), or the context's error when the caller gave up.
func unavailable(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("accounts: %s: %w (%w)", op, cerr, err)
	}
	return fmt.Errorf("accounts: %s: %w: %w", op, user.ErrUnavailable, err)
}

// millis is a timestamp as stored: Unix milliseconds, NULL for the zero
// time. Truncating first rounds times before 1970 down, as Truncate does.
func millis(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.Truncate(time.Millisecond).UnixMilli(), Valid: true}
}

func fromMillis(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64).UTC()
}

// encodeHashes is the column value of a list of recovery-code hashes: NULL
// for nil (none ever issued), a JSON array otherwise.
func encodeHashes(h []string) (sql.NullString, error) {
	if h == nil {
		return sql.NullString{}, nil
	}
	text, err := encodeList(h)
	return sql.NullString{String: text, Valid: err == nil}, err
}

// encodeList is the JSON array of h; nil is "[]".
func encodeList(h []string) (string, error) {
	if h == nil {
		h = []string{}
	}
	b, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("encode recovery-code hashes: %w", err)
	}
	return string(b), nil
}
