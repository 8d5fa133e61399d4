package accounts

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
)

// The values authkit keeps between two requests and hands out once (a
// login waiting for its second step, token mode's refresh families, the
// passkeys module's challenges) live in account_one_time, which [Migrate]
// creates: every instance of the app reads the same database, so a second
// step or a refresh that reaches another instance finds what the first
// kept.
const oneTimeTable = `CREATE TABLE IF NOT EXISTS account_one_time (
	k          BLOB PRIMARY KEY,
	data       BLOB NOT NULL,
	expires_ms INTEGER NOT NULL
)`

const oneTimeIndex = `CREATE INDEX IF NOT EXISTS account_one_time_expires ON account_one_time (expires_ms)`

// OneTime is the [onetime.Store] on the app's database.
type OneTime struct{ db *sql.DB }

var (
	_ onetime.Store    = (*OneTime)(nil)
	_ onetime.Provider = (*Store)(nil)
)

// OneTimeStore implements [onetime.Provider]: auth.New keeps pending
// logins (and, in token mode, refresh families) here unless the app
// chooses another store.
func (s *Store) OneTimeStore() onetime.Store { return &OneTime{db: s.db} }

// Put implements [onetime.Store]: one statement that replaces the key's
// value, after dropping what has expired.
func (o *OneTime) Put(ctx context.Context, key string, data []byte, expires time.Time) error {
	if _, err := o.db.ExecContext(ctx, `DELETE FROM account_one_time WHERE expires_ms <= ?`, time.Now().UnixMilli()); err != nil {
		return unavailable(ctx, "one-time put", err)
	}
	if data == nil {
		data = []byte{}
	}
	if _, err := o.db.ExecContext(ctx, `INSERT INTO account_one_time (k, data, expires_ms) VALUES (?, ?, ?)
		ON CONFLICT (k) DO UPDATE SET data = excluded.data, expires_ms = excluded.expires_ms`,
		[]byte(key), data, expires.UnixMilli()); err != nil {
		return unavailable(ctx, "one-time put", err)
	}
	return nil
}

// Take implements [onetime.Store]: DELETE ... RETURNING, so of racing
// Takes exactly one gets the row.
func (o *OneTime) Take(ctx context.Context, key string, now time.Time) ([]byte, error) {
	var data []byte
	var expires int64
	err := o.db.QueryRowContext(ctx, `DELETE FROM account_one_time WHERE k = ? RETURNING data, expires_ms`, []byte(key)).Scan(&data, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, onetime.ErrNotFound
	case err != nil:
		return nil, unavailable(ctx, "one-time take", err)
	case expires <= now.UnixMilli():
		return nil, onetime.ErrNotFound
	}
	return data, nil
}
