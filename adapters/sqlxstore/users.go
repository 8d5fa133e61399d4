package sqlxstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// UserStore is the [user.Store] over the users table. Get it from
// [DB.Users]. It is safe for concurrent use, and for use by many processes
// over one database.
//
// Every operation that changes security state is one conditional UPDATE,
// correct at READ COMMITTED: the contract's condition is in its WHERE
// clause, so the database checks it and applies the change as one step.
// When no row was updated, a follow-up read (after nothing was written)
// tells ErrNotFound from ErrConflict. RecordLoginFailure, and
// BumpSessionVersion on MySQL, need the value before or after the update:
// they run as one statement with RETURNING where the database has it, or
// as a short transaction that locks the row first.
type UserStore struct {
	db *DB
	q  userQueries
}

var _ user.Store = (*UserStore)(nil)

const userColumns = `id, email, name, password_hash, two_factor_enabled, totp_secret, pending_totp_secret,
	recovery_code_hashes, last_totp_step, email_verified_at, email_changed_at, password_changed_at,
	session_version, failed_logins, locked_until, created_at`

type userQueries struct {
	insert, byID, byEmail, exists, delete                        string
	beginTOTP, enableTOTP, acceptStep, replaceCodes, disableTOTP string
	consume, consumeFromNone                                     string
	verifyEmail, changeEmail, clearFailures                      string
	bump, recordFailure, lockFailures, setFailures               string
	resetPassword, changePassword, rehashPassword                string
}

func newUserStore(db *DB) *UserStore {
	s := &UserStore{db: db}
	q := &s.q
	q.insert = db.query(`INSERT INTO {{prefix}}users (` + userColumns + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	q.byID = db.query(`SELECT ` + userColumns + ` FROM {{prefix}}users WHERE id = ?`)
	q.byEmail = db.query(`SELECT ` + userColumns + ` FROM {{prefix}}users WHERE email = ?`)
	q.exists = db.query(`SELECT 1 FROM {{prefix}}users WHERE id = ?`)
	q.delete = db.query(`DELETE FROM {{prefix}}users WHERE id = ?`)

	q.beginTOTP = db.query(`UPDATE {{prefix}}users SET pending_totp_secret = ?
		WHERE id = ? AND two_factor_enabled = FALSE`)
	q.enableTOTP = db.query(`UPDATE {{prefix}}users SET totp_secret = ?, pending_totp_secret = NULL,
		recovery_code_hashes = ?, last_totp_step = ?, two_factor_enabled = TRUE
		WHERE id = ? AND two_factor_enabled = FALSE AND pending_totp_secret = ?`)
	q.acceptStep = db.query(`UPDATE {{prefix}}users SET last_totp_step = ?
		WHERE id = ? AND two_factor_enabled = TRUE
		AND (last_totp_step IS NULL OR last_totp_step = 0 OR (last_totp_step < ? AND last_totp_step < ?))`)
	q.consume = db.query(`UPDATE {{prefix}}users SET recovery_code_hashes = ?
		WHERE id = ? AND recovery_code_hashes = ?`)
	q.consumeFromNone = db.query(`UPDATE {{prefix}}users SET recovery_code_hashes = ?
		WHERE id = ? AND (recovery_code_hashes IS NULL OR recovery_code_hashes = '[]')`)
	q.replaceCodes = db.query(`UPDATE {{prefix}}users SET recovery_code_hashes = ?
		WHERE id = ? AND two_factor_enabled = TRUE`)
	q.disableTOTP = db.query(`UPDATE {{prefix}}users SET two_factor_enabled = FALSE, totp_secret = NULL,
		pending_totp_secret = NULL, recovery_code_hashes = NULL, last_totp_step = NULL,
		session_version = session_version + 1
		WHERE id = ? AND two_factor_enabled = TRUE`)
	q.verifyEmail = db.query(`UPDATE {{prefix}}users SET email_verified_at = COALESCE(email_verified_at, ?)
		WHERE id = ? AND email = ?`)
	q.changeEmail = db.query(`UPDATE {{prefix}}users SET email = ?, email_verified_at = NULL,
		email_changed_at = ?, session_version = session_version + 1
		WHERE id = ? AND email = ?`)
	q.clearFailures = db.query(`UPDATE {{prefix}}users SET failed_logins = 0, locked_until = NULL WHERE id = ?`)
	// A reset or a change: the new hash, PasswordChangedAt, SessionVersion
	// raised, failures cleared; the condition is in the WHERE clause.
	const setPassword = `UPDATE {{prefix}}users SET password_hash = ?, password_changed_at = ?,
		session_version = session_version + 1, failed_logins = 0, locked_until = NULL
		WHERE id = ? AND password_hash = ?`
	q.resetPassword = db.query(setPassword + ` AND (password_changed_at IS NULL OR password_changed_at < ?)`)
	q.changePassword = db.query(setPassword)
	q.rehashPassword = db.query(`UPDATE {{prefix}}users SET password_hash = ? WHERE id = ? AND password_hash = ?`)

	switch db.dialect {
	case MySQL:
		// LAST_INSERT_ID(expr) hands the new value back in the OK packet:
		// one statement, no transaction (the MySQL manual's counter idiom).
		q.bump = db.query(`UPDATE {{prefix}}users SET session_version = LAST_INSERT_ID(session_version + 1) WHERE id = ?`)
	default:
		q.bump = db.query(`UPDATE {{prefix}}users SET session_version = session_version + 1 WHERE id = ? RETURNING session_version`)
	}
	switch db.dialect {
	case Postgres:
		// The CTE locks the row and reads the latest committed count (a
		// locking read re-reads a row that changed under it); the UPDATE
		// writes from that count and RETURNING reports it plus one. One
		// statement, correct at READ COMMITTED.
		q.recordFailure = db.query(`WITH cur AS (SELECT id, failed_logins FROM {{prefix}}users WHERE id = ? FOR UPDATE)
			UPDATE {{prefix}}users AS u SET
				failed_logins = CASE WHEN CAST(? AS BIGINT) > 0 AND cur.failed_logins + 1 >= CAST(? AS BIGINT)
					THEN 0 ELSE cur.failed_logins + 1 END,
				locked_until = CASE WHEN CAST(? AS BIGINT) > 0 AND cur.failed_logins + 1 >= CAST(? AS BIGINT)
					THEN CAST(? AS BIGINT) ELSE u.locked_until END
			FROM cur WHERE u.id = cur.id
			RETURNING cur.failed_logins + 1, u.locked_until`)
	case MySQL:
		// One statement, no transaction, so a burst of failed logins never
		// queues transactions on the row lock (a 99-request burst on MariaDB
		// exhausted the deadlock retries). MySQL assigns left to right with
		// the new values: locked_until is set first, from the old count;
		// LAST_INSERT_ID(expr) hands the count after this failure back in
		// the OK packet before failed_logins is reset at the limit.
		q.recordFailure = db.query(`UPDATE {{prefix}}users SET
				locked_until = IF(? > 0 AND failed_logins + 1 >= ?, ?, locked_until),
				failed_logins = IF(LAST_INSERT_ID(failed_logins + 1) >= ? AND ? > 0, 0, LAST_INSERT_ID())
			WHERE id = ?`)
		q.lockFailures = db.query(`SELECT failed_logins, locked_until FROM {{prefix}}users WHERE id = ?`)
	case SQLite:
		// The transaction holds SQLite's write lock from BEGIN IMMEDIATE.
		q.lockFailures = db.query(`SELECT failed_logins, locked_until FROM {{prefix}}users WHERE id = ?`)
	}
	q.setFailures = db.query(`UPDATE {{prefix}}users SET failed_logins = ?, locked_until = ? WHERE id = ?`)
	return s
}

// userRow is one row of the users table.
type userRow struct {
	ID                 string         `db:"id"`
	Email              string         `db:"email"`
	Name               string         `db:"name"`
	PasswordHash       string         `db:"password_hash"`
	TwoFactorEnabled   bool           `db:"two_factor_enabled"`
	TOTPSecret         sql.NullString `db:"totp_secret"`
	PendingTOTPSecret  sql.NullString `db:"pending_totp_secret"`
	RecoveryCodeHashes sql.NullString `db:"recovery_code_hashes"`
	LastTOTPStep       sql.NullInt64  `db:"last_totp_step"`
	EmailVerifiedAt    sql.NullInt64  `db:"email_verified_at"`
	EmailChangedAt     sql.NullInt64  `db:"email_changed_at"`
	PasswordChangedAt  sql.NullInt64  `db:"password_changed_at"`
	SessionVersion     int64          `db:"session_version"`
	FailedLogins       int64          `db:"failed_logins"`
	LockedUntil        sql.NullInt64  `db:"locked_until"`
	CreatedAt          int64          `db:"created_at"`
}

func (r *userRow) user() (*user.User, error) {
	hashes, err := decodeHashes(r.RecoveryCodeHashes)
	if err != nil {
		return nil, err
	}
	return &user.User{
		ID:                 r.ID,
		Email:              r.Email,
		Name:               r.Name,
		PasswordHash:       r.PasswordHash,
		TwoFactorEnabled:   r.TwoFactorEnabled,
		TOTPSecret:         r.TOTPSecret.String,
		PendingTOTPSecret:  r.PendingTOTPSecret.String,
		RecoveryCodeHashes: hashes,
		LastTOTPStep:       r.LastTOTPStep.Int64,
		EmailVerifiedAt:    fromMS(r.EmailVerifiedAt),
		EmailChangedAt:     fromMS(r.EmailChangedAt),
		PasswordChangedAt:  fromMS(r.PasswordChangedAt),
		SessionVersion:     r.SessionVersion,
		FailedLogins:       int(r.FailedLogins),
		LockedUntil:        fromMS(r.LockedUntil),
		CreatedAt:          fromMS(sql.NullInt64{Int64: r.CreatedAt, Valid: true}),
	}, nil
}

// encodeHashes stores recovery-code hashes as a JSON array (NULL for nil).
// The encoding is canonical, so ConsumeRecoveryCode can compare the stored
// text with the encoding of the hashes the caller read.
func encodeHashes(h []string) (sql.NullString, error) {
	if h == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

func decodeHashes(s sql.NullString) ([]string, error) {
	if !s.Valid {
		return nil, nil
	}
	h := []string{}
	if err := json.Unmarshal([]byte(s.String), &h); err != nil {
		return nil, fmt.Errorf("recovery_code_hashes is not a JSON array of strings: %w", err)
	}
	return h, nil
}

// msTime truncates t to the millisecond and makes it UTC, as a round trip
// through the database does.
func msTime(t time.Time) time.Time { return fromMS(ms(t)) }

// Create implements [user.Registration]. A duplicate email gives ErrEmailTaken, a
// duplicate id ErrConflict.
func (s *UserStore) Create(ctx context.Context, u *user.User) (*user.User, error) {
	const op = "create user"
	if u == nil {
		return nil, fmt.Errorf("sqlxstore: %s: nil user", op)
	}
	c := u.Clone()
	if c.ID == "" {
		c.ID = user.NewID()
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.db.now()
	}
	for _, t := range []*time.Time{&c.EmailVerifiedAt, &c.EmailChangedAt, &c.PasswordChangedAt, &c.LockedUntil, &c.CreatedAt} {
		*t = msTime(*t)
	}
	hashes, err := encodeHashes(c.RecoveryCodeHashes)
	if err != nil {
		return nil, fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	err = s.db.retry(ctx, func() error {
		_, err := s.db.x.ExecContext(ctx, s.q.insert,
			c.ID, c.Email, c.Name, c.PasswordHash, c.TwoFactorEnabled,
			nullString(c.TOTPSecret), nullString(c.PendingTOTPSecret), hashes, nullInt(c.LastTOTPStep),
			ms(c.EmailVerifiedAt), ms(c.EmailChangedAt), ms(c.PasswordChangedAt),
			c.SessionVersion, c.FailedLogins, ms(c.LockedUntil), ms(c.CreatedAt))
		return err
	})
	if err != nil {
		if unique, onEmail := s.db.uniqueViolation(err); unique {
			if onEmail {
				return nil, fmt.Errorf("sqlxstore: %s: %w", op, user.ErrEmailTaken)
			}
			return nil, fmt.Errorf("sqlxstore: %s: id in use: %w", op, user.ErrConflict)
		}
		return nil, s.db.fail(op, err)
	}
	return c, nil
}

// ByID implements [user.Accounts].
func (s *UserStore) ByID(ctx context.Context, id string) (*user.User, error) {
	return s.get(ctx, "user by id", s.q.byID, id)
}

// ByEmail implements [user.Accounts]. Emails compare byte for byte.
func (s *UserStore) ByEmail(ctx context.Context, email string) (*user.User, error) {
	return s.get(ctx, "user by email", s.q.byEmail, email)
}

func (s *UserStore) get(ctx context.Context, op, query, arg string) (*user.User, error) {
	var r userRow
	if err := s.db.x.GetContext(ctx, &r, query, arg); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("sqlxstore: %s: %w", op, user.ErrNotFound)
		}
		return nil, s.db.fail(op, err)
	}
	u, err := r.user()
	if err != nil {
		return nil, fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	return u, nil
}

// Delete implements [user.Registration].
func (s *UserStore) Delete(ctx context.Context, id string) error {
	return s.update(ctx, "delete user", id, s.q.delete, id)
}

// BeginTOTPSetup implements [user.TwoFactor].
func (s *UserStore) BeginTOTPSetup(ctx context.Context, id, pendingSecret string) error {
	return s.update(ctx, "begin totp setup", id, s.q.beginTOTP, nullString(pendingSecret), id)
}

// EnableTOTP implements [user.TwoFactor]: one UPDATE, so 2FA is either fully
// on (secret, hashes, step, flag) or not touched at all.
func (s *UserStore) EnableTOTP(ctx context.Context, id string, e user.EnableTOTP) error {
	const op = "enable totp"
	if e.Pending == "" { // no pending secret can equal it
		return s.noRows(ctx, op, id)
	}
	hashes, err := encodeHashes(e.RecoveryCodeHashes)
	if err != nil {
		return fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	return s.update(ctx, op, id, s.q.enableTOTP, nullString(e.Secret), hashes, nullInt(e.Step), id, e.Pending)
}

// AcceptTOTPStep implements [user.TwoFactor].
func (s *UserStore) AcceptTOTPStep(ctx context.Context, id string, matched, current int64) error {
	return s.update(ctx, "accept totp step", id, s.q.acceptStep, nullInt(max(matched, current)), id, matched, current)
}

// ConsumeRecoveryCode implements [user.TwoFactor]. The WHERE clause compares
// the stored hashes with old, so of two requests that read the same hashes
// only the first one's update applies.
func (s *UserStore) ConsumeRecoveryCode(ctx context.Context, id string, old, remaining []string) error {
	const op = "consume recovery code"
	if remaining == nil {
		remaining = []string{}
	}
	next, err := encodeHashes(remaining)
	if err != nil {
		return fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	if len(old) == 0 {
		return s.update(ctx, op, id, s.q.consumeFromNone, next, id)
	}
	prev, err := encodeHashes(old)
	if err != nil {
		return fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	return s.update(ctx, op, id, s.q.consume, next, id, prev)
}

// ReplaceRecoveryCodes implements [user.TwoFactor].
func (s *UserStore) ReplaceRecoveryCodes(ctx context.Context, id string, hashes []string) error {
	const op = "replace recovery codes"
	h, err := encodeHashes(hashes)
	if err != nil {
		return fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	return s.update(ctx, op, id, s.q.replaceCodes, h, id)
}

// DisableTOTP implements [user.TwoFactor].
func (s *UserStore) DisableTOTP(ctx context.Context, id string) error {
	return s.update(ctx, "disable totp", id, s.q.disableTOTP, id)
}

// VerifyEmail implements [user.EmailVerification].
func (s *UserStore) VerifyEmail(ctx context.Context, id, email string, at time.Time) error {
	return s.update(ctx, "verify email", id, s.q.verifyEmail, ms(at), id, email)
}

// ChangeEmail implements [user.EmailChange]. The unique index on email decides
// races between users: the loser's UPDATE fails and is reported as
// ErrEmailTaken.
func (s *UserStore) ChangeEmail(ctx context.Context, id, oldEmail, newEmail string, at time.Time) error {
	err := s.update(ctx, "change email", id, s.q.changeEmail, newEmail, ms(at), id, oldEmail)
	if unique, _ := s.db.uniqueViolation(err); unique {
		return fmt.Errorf("sqlxstore: change email: %w", user.ErrEmailTaken)
	}
	return err
}

// ResetPassword implements [user.PasswordReset].
func (s *UserStore) ResetPassword(ctx context.Context, id string, r user.Reset) error {
	return s.update(ctx, "reset password", id, s.q.resetPassword,
		r.Hash, ms(r.At), id, r.OldHash, r.IssuedBefore.UnixMilli())
}

// ChangePassword implements [user.PasswordChange].
func (s *UserStore) ChangePassword(ctx context.Context, id, oldHash, newHash string, at time.Time) error {
	return s.update(ctx, "change password", id, s.q.changePassword, newHash, ms(at), id, oldHash)
}

// RehashPassword implements [user.PasswordRehash].
func (s *UserStore) RehashPassword(ctx context.Context, id, oldHash, newHash string) error {
	return s.update(ctx, "rehash password", id, s.q.rehashPassword, newHash, id, oldHash)
}

// BumpSessionVersion implements [user.SessionVersions].
func (s *UserStore) BumpSessionVersion(ctx context.Context, id string) (int64, error) {
	const op = "bump session version"
	var v int64
	var found bool
	err := s.db.retry(ctx, func() error {
		if s.db.dialect == MySQL {
			res, err := s.db.x.ExecContext(ctx, s.q.bump, id)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if found = n > 0; found {
				v, err = res.LastInsertId()
			}
			return err
		}
		err := s.db.x.QueryRowxContext(ctx, s.q.bump, id).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			found = false
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return 0, s.db.fail(op, err)
	}
	if !found {
		return 0, fmt.Errorf("sqlxstore: %s: %w", op, user.ErrNotFound)
	}
	return v, nil
}

// RecordLoginFailure implements [user.Lockout].
func (s *UserStore) RecordLoginFailure(ctx context.Context, id string, limit int, lockFor time.Duration, at time.Time) (int, time.Time, error) {
	const op = "record login failure"
	lockedUntil := at.Add(lockFor).UnixMilli()
	var (
		n     int64
		until sql.NullInt64
		found bool
	)
	var err error
	switch s.db.dialect {
	case MySQL:
		err = s.db.retry(ctx, func() error {
			res, err := s.db.x.ExecContext(ctx, s.q.recordFailure, limit, limit, lockedUntil, limit, limit, id)
			if err != nil {
				return err
			}
			rows, err := res.RowsAffected() // rows matched: clientFoundRows=true
			if err != nil {
				return err
			}
			if found = rows > 0; !found {
				return nil
			}
			if n, err = res.LastInsertId(); err != nil {
				return err
			}
			if limit > 0 && n >= int64(limit) {
				until = sql.NullInt64{Int64: lockedUntil, Valid: true}
				return nil
			}
			// Below the limit the lock is whatever it was; a plain read.
			var cur struct {
				Failed int64         `db:"failed_logins"`
				Until  sql.NullInt64 `db:"locked_until"`
			}
			if err := s.db.x.GetContext(ctx, &cur, s.q.lockFailures, id); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			until = cur.Until
			return nil
		})
	case Postgres:
		err = s.db.retry(ctx, func() error {
			err := s.db.x.QueryRowxContext(ctx, s.q.recordFailure, id, limit, limit, limit, limit, lockedUntil).Scan(&n, &until)
			if errors.Is(err, sql.ErrNoRows) {
				found = false
				return nil
			}
			found = err == nil
			return err
		})
	default: // SQLite: BEGIN IMMEDIATE holds the write lock
		err = s.db.inTx(ctx, func(q queryer) error {
			var cur struct {
				Failed int64         `db:"failed_logins"`
				Until  sql.NullInt64 `db:"locked_until"`
			}
			err := q.GetContext(ctx, &cur, s.q.lockFailures, id)
			if errors.Is(err, sql.ErrNoRows) {
				found = false
				return nil
			}
			if err != nil {
				return err
			}
			found = true
			n, until = cur.Failed+1, cur.Until
			failed := n
			if limit > 0 && n >= int64(limit) {
				failed, until = 0, sql.NullInt64{Int64: lockedUntil, Valid: true}
			}
			_, err = q.ExecContext(ctx, s.q.setFailures, failed, until, id)
			return err
		})
	}
	if err != nil {
		return 0, time.Time{}, s.db.fail(op, err)
	}
	if !found {
		return 0, time.Time{}, fmt.Errorf("sqlxstore: %s: %w", op, user.ErrNotFound)
	}
	return int(n), fromMS(until), nil
}

// ClearLoginFailures implements [user.Lockout].
func (s *UserStore) ClearLoginFailures(ctx context.Context, id string) error {
	return s.update(ctx, "clear login failures", id, s.q.clearFailures, id)
}

// update runs a conditional UPDATE (or DELETE) of user id. When it changes
// no row, nothing was written, and noRows tells why.
func (s *UserStore) update(ctx context.Context, op, id, query string, args ...any) error {
	var n int64
	err := s.db.retry(ctx, func() error {
		res, err := s.db.x.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return s.db.fail(op, err)
	}
	if n == 0 {
		return s.noRows(ctx, op, id)
	}
	return nil
}

// noRows answers a conditional operation that matched no row: ErrNotFound
// when the user does not exist, ErrConflict when its condition did not
// hold.
func (s *UserStore) noRows(ctx context.Context, op, id string) error {
	var one int
	err := s.db.x.GetContext(ctx, &one, s.q.exists, id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("sqlxstore: %s: %w", op, user.ErrNotFound)
	case err != nil:
		return s.db.fail(op, err)
	default:
		return fmt.Errorf("sqlxstore: %s: %w", op, user.ErrConflict)
	}
}
