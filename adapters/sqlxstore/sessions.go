package sqlxstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// SessionStore is a [session.Store] over one table of migration 0002:
// sessions ([DB.Sessions], auth.Config.Sessions) or trusted_devices
// ([DB.TrustedDevices], auth.Config.TrustedDevices). One row per record,
// times in Unix milliseconds. Every method is one statement: Touch and
// Delete are conditional updates (UPDATE ... WHERE id = ?, DELETE ... WHERE
// id = ? AND user_id = ?), so a Touch after a Delete changes no row and
// never brings the record back. Create first deletes the user's rows past
// their end, so the table holds no more than the live records and the
// ones that expired since their user last signed in. CreateBounded
// ([session.Bounded]) then finds the user's newest record past the bound
// and deletes the older ones: no transaction, since each call deletes,
// after its own insert is committed, only what lies past the newest max
// records it sees, which is never one of the true newest max, and the
// last call to look sees every insert before it. It is safe for
// concurrent use, and the records are shared by every process on the
// database.
type SessionStore struct {
	db                                 *DB
	op                                 string // "session" or "trusted device", for errors
	ins, get, touch, del, list, delAll string
	sweep                              string
	cutoff, trim                       string
}

var (
	_ session.Store   = (*SessionStore)(nil)
	_ session.Bounded = (*SessionStore)(nil)
)

// Sessions returns the session-record store over the sessions table.
func (db *DB) Sessions() *SessionStore { return newSessionStore(db, db.t.sessions, "session") }

var (
	_ session.Provider = (*UserStore)(nil)
	_ onetime.Provider = (*UserStore)(nil)
)

// SessionStore implements [session.Provider]: its DB's [DB.Sessions], so
// that auth.New keeps session records in this database unless the app
// sets auth.Config.Sessions or asks for stateless cookies.
func (s *UserStore) SessionStore() session.Store { return s.db.Sessions() }

// OneTimeStore implements [onetime.Provider]: its DB's [DB.OneTime], so
// that auth.New keeps the logins waiting for their second step
// (auth.Config.PendingLogins) in this database, shared by every instance
// on it, unless the app sets another store.
func (s *UserStore) OneTimeStore() onetime.Store { return s.db.OneTime() }

// TrustedDevices returns the trusted-device store over the
// trusted_devices table: the same records as [DB.Sessions], in a table of
// their own.
func (db *DB) TrustedDevices() *SessionStore {
	return newSessionStore(db, db.t.trusted, "trusted device")
}

func newSessionStore(db *DB, table, op string) *SessionStore {
	cols := `id, user_id, created_at, last_seen_at, expires_at, ip, user_agent, remember`
	q := func(s string) string { return db.query(fmt.Sprintf(s, table)) }
	return &SessionStore{
		db:     db,
		op:     op,
		ins:    q(`INSERT INTO %s (` + cols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		get:    q(`SELECT ` + cols + ` FROM %s WHERE id = ?`),
		touch:  q(`UPDATE %s SET last_seen_at = ?, expires_at = ? WHERE id = ?`),
		del:    q(`DELETE FROM %s WHERE id = ? AND user_id = ?`),
		list:   q(`SELECT ` + cols + ` FROM %s WHERE user_id = ? ORDER BY created_at DESC, id DESC`),
		delAll: q(`DELETE FROM %s WHERE user_id = ? AND id <> ?`),
		sweep:  q(`DELETE FROM %s WHERE user_id = ? AND expires_at <= ?`),
		cutoff: q(`SELECT created_at, id FROM %s WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?`),
		trim:   q(`DELETE FROM %s WHERE user_id = ? AND (created_at < ? OR (created_at = ? AND id < ?))`),
	}
}

// recordRow is one row.
type recordRow struct {
	ID         string `db:"id"`
	UserID     string `db:"user_id"`
	CreatedAt  int64  `db:"created_at"`
	LastSeenAt int64  `db:"last_seen_at"`
	ExpiresAt  int64  `db:"expires_at"`
	IP         string `db:"ip"`
	UserAgent  string `db:"user_agent"`
	Remember   bool   `db:"remember"`
}

// recordOf is r.record, for getAs and selectAs.
func recordOf(r *recordRow) (session.Record, error) { return r.record(), nil }

func (r recordRow) record() session.Record {
	return session.Record{ID: r.ID, UserID: r.UserID, CreatedAt: time.UnixMilli(r.CreatedAt).UTC(),
		LastSeenAt: time.UnixMilli(r.LastSeenAt).UTC(), ExpiresAt: time.UnixMilli(r.ExpiresAt).UTC(),
		IP: r.IP, UserAgent: r.UserAgent, Remember: r.Remember}
}

// Create implements [session.Store].
func (s *SessionStore) Create(ctx context.Context, r session.Record) error {
	if err := s.execRetried(ctx, s.sweep, r.UserID, s.db.now().UnixMilli()); err != nil {
		return s.db.fail("create "+s.op, err)
	}
	err := s.execRetried(ctx, s.ins, r.ID, r.UserID, r.CreatedAt.UnixMilli(), r.LastSeenAt.UnixMilli(),
		r.ExpiresAt.UnixMilli(), r.IP, r.UserAgent, r.Remember)
	if err != nil {
		return s.db.fail("create "+s.op, err)
	}
	return nil
}

// CreateBounded implements [session.Bounded]: Create, then the user's
// max-th newest record (one indexed SELECT) and a DELETE of the older
// ones.
func (s *SessionStore) CreateBounded(ctx context.Context, r session.Record, max int) error {
	if err := s.Create(ctx, r); err != nil {
		return err
	}
	if max < 1 {
		return nil
	}
	var last struct {
		CreatedAt int64  `db:"created_at"`
		ID        string `db:"id"`
	}
	err := s.db.x.GetContext(ctx, &last, s.cutoff, r.UserID, max-1)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // max or fewer
	}
	if err != nil {
		return s.db.fail("bound "+s.op+"s", err)
	}
	if err := s.execRetried(ctx, s.trim, r.UserID, last.CreatedAt, last.CreatedAt, last.ID); err != nil {
		return s.db.fail("bound "+s.op+"s", err)
	}
	return nil
}

// execRetried runs one statement of Create or CreateBounded on its own
// (autocommit), again when it lost a deadlock: on MySQL/MariaDB the DELETEs
// of a user's expired and surplus records take next-key locks on the
// user's index range, where a racing sign-in's INSERT waits, and InnoDB may
// roll one of them back. A statement rolled back whole is safe to run
// again; the sweep and the trim are idempotent.
func (s *SessionStore) execRetried(ctx context.Context, q string, args ...any) error {
	return s.db.retry(ctx, func() error {
		_, err := s.db.x.ExecContext(ctx, q, args...)
		return err
	})
}

// Get implements [session.Store].
func (s *SessionStore) Get(ctx context.Context, id string) (session.Record, error) {
	return getAs(ctx, s.db, "get "+s.op, recordOf, s.get, id)
}

// Touch implements [session.Store].
func (s *SessionStore) Touch(ctx context.Context, id string, seen, expires time.Time) error {
	return s.exec(ctx, "touch "+s.op, s.touch, seen.UnixMilli(), expires.UnixMilli(), id)
}

// Delete implements [session.Store].
func (s *SessionStore) Delete(ctx context.Context, userID, id string) error {
	return s.exec(ctx, "delete "+s.op, s.del, id, userID)
}

// exec runs a statement that must change one row: none is
// user.ErrNotFound. (MySQL counts matched rows: clientFoundRows=true.)
func (s *SessionStore) exec(ctx context.Context, op, q string, args ...any) error {
	res, err := s.db.x.ExecContext(ctx, q, args...)
	if err != nil {
		return s.db.fail(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.db.fail(op, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlxstore: %s: %w", op, user.ErrNotFound)
	}
	return nil
}

// List implements [session.Store].
func (s *SessionStore) List(ctx context.Context, userID string) ([]session.Record, error) {
	return selectAs(ctx, s.db, "list "+s.op+"s", recordOf, s.list, userID)
}

// DeleteAll implements [session.Store].
func (s *SessionStore) DeleteAll(ctx context.Context, userID, except string) error {
	if _, err := s.db.x.ExecContext(ctx, s.delAll, userID, except); err != nil {
		return s.db.fail("delete "+s.op+"s", err)
	}
	return nil
}
