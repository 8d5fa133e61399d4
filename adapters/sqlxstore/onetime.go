package sqlxstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
)

// OneTimeStore is the [onetime.Store] over the challenges table of
// migration 0004: values kept until they expire and taken once, such as
// the passkeys module's challenges (passkeys.Config.Challenges), shared by
// every instance of the app on the database. Get it from [DB.OneTime]. It
// is safe for concurrent use.
//
// One row per value: the SHA-256 of its key (so keys of any bytes and any
// length fit a fixed primary key), the data, and the expiry in Unix
// milliseconds (expires rounded down). Put is one upsert that replaces
// the data and expiry of a key that exists. Take deletes the row and
// returns it in one atomic step: DELETE ... RETURNING on PostgreSQL and
// SQLite; on MySQL/MariaDB (MySQL has no DELETE ... RETURNING) a short
// READ COMMITTED transaction that locks the row (SELECT ... FOR UPDATE)
// and deletes it, so a racing Take waits for the lock and then finds no
// row. Either way the row is gone after a Take, expired or not, and the
// expiry is judged at the now Take is given. Rows nobody takes are deleted
// by [OneTimeStore.Cleanup], which runs in the background every
// Config.CleanupInterval once [DB.OneTime] has been called.
type OneTimeStore struct {
	db                  *DB
	put, take, sel, del string
	sweep               string
	cleaner             *cleaner
}

var _ onetime.Store = (*OneTimeStore)(nil)

// OneTime returns the [onetime.Store] over the challenges table. The
// first call starts its background cleanup (see Config.CleanupInterval),
// which [DB.Close] stops. Every call returns the same store.
func (db *DB) OneTime() *OneTimeStore {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.onetime == nil {
		db.onetime = newOneTimeStore(db, !db.closed)
	}
	return db.onetime
}

func newOneTimeStore(db *DB, background bool) *OneTimeStore {
	s := &OneTimeStore{db: db}
	if db.dialect == MySQL {
		s.put = db.query(`INSERT INTO {{prefix}}challenges (key_hash, data, expires_at) VALUES (?, ?, ?)
			ON DUPLICATE KEY UPDATE data = VALUES(data), expires_at = VALUES(expires_at)`)
		s.sel = db.query(`SELECT data, expires_at FROM {{prefix}}challenges WHERE key_hash = ? FOR UPDATE`)
		s.del = db.query(`DELETE FROM {{prefix}}challenges WHERE key_hash = ?`)
	} else {
		s.put = db.query(`INSERT INTO {{prefix}}challenges (key_hash, data, expires_at) VALUES (?, ?, ?)
			ON CONFLICT (key_hash) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at`)
		s.take = db.query(`DELETE FROM {{prefix}}challenges WHERE key_hash = ? RETURNING data, expires_at`)
	}
	s.sweep = db.query(`DELETE FROM {{prefix}}challenges WHERE expires_at <= ?`)
	s.cleaner = &cleaner{}
	if background {
		s.cleaner = db.startCleaner("one-time value", s.Cleanup)
	}
	return s
}

// keyHash is the key_hash column of key.
func keyHash(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// Put implements [onetime.Store]: one upsert. expires is kept to the
// millisecond, rounded down.
func (s *OneTimeStore) Put(ctx context.Context, key string, data []byte, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlxstore: put one-time value: %w", err)
	}
	if data == nil {
		data = []byte{} // a nil []byte is NULL; the column is NOT NULL
	}
	err := s.db.retry(ctx, func() error {
		_, err := s.db.x.ExecContext(ctx, s.put, keyHash(key), data, expires.UnixMilli())
		return err
	})
	if err != nil {
		return s.db.fail("put one-time value", err)
	}
	return nil
}

// errNoRow ends Take's MySQL transaction when the key has no row.
var errNoRow = errors.New("no row")

// Take implements [onetime.Store]: one DELETE ... RETURNING, or on MySQL
// one transaction of a locking SELECT and a DELETE.
func (s *OneTimeStore) Take(ctx context.Context, key string, now time.Time) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlxstore: take one-time value: %w", err)
	}
	k := keyHash(key)
	var (
		data    []byte
		expires int64
		err     error
	)
	if s.db.dialect == MySQL {
		err = s.db.inTxOpts(ctx, readCommitted, func(q queryer) error {
			if err := q.QueryRowxContext(ctx, s.sel, k).Scan(&data, &expires); err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					return errNoRow
				}
				return err
			}
			_, err := q.ExecContext(ctx, s.del, k)
			return err
		})
	} else {
		err = s.db.retry(ctx, func() error {
			err := s.db.x.QueryRowxContext(ctx, s.take, k).Scan(&data, &expires)
			if errors.Is(err, sql.ErrNoRows) {
				return errNoRow
			}
			return err
		})
	}
	if errors.Is(err, errNoRow) {
		return nil, fmt.Errorf("sqlxstore: take one-time value: %w", onetime.ErrNotFound)
	}
	if err != nil {
		return nil, s.db.fail("take one-time value", err)
	}
	if !time.UnixMilli(expires).After(now) {
		return nil, fmt.Errorf("sqlxstore: take one-time value: %w", onetime.ErrNotFound)
	}
	return data, nil
}

// Cleanup deletes the values whose expiry has passed (by Config.Now) and
// returns how many it deleted. The background cleanup calls it every
// Config.CleanupInterval; call it yourself when that is negative.
func (s *OneTimeStore) Cleanup(ctx context.Context) (int64, error) {
	n, err := s.db.deleteExpired(ctx, s.sweep)
	if err != nil {
		return 0, s.db.fail("one-time value cleanup", err)
	}
	return n, nil
}

// Close stops the background cleanup, cancelling a cleanup in progress,
// and waits for it to return. It is idempotent and returns nil. The store
// keeps working after Close; [DB.Close] calls it.
func (s *OneTimeStore) Close() error {
	s.cleaner.close()
	return nil
}
