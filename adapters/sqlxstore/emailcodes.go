package sqlxstore

import (
	"context"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// The user.EmailCodes part of the UserStore: the email_codes table of
// migration 0005, one row per user (the primary key), beside the users
// table whatever its layout (Config.Users), keyed by the id as text with no
// foreign key. Each method is one statement: PutEmailCode an upsert,
// TakeEmailCode a conditional DELETE whose WHERE clause holds the
// contract's condition (the hash and the expiry), so of racing takes the
// database lets exactly one delete the row. Deleting a user leaves their
// code; it expires, and it is bound to a login of that user only;
// DeleteEmailCode (user.EmailCodeEraser) deletes it with the account
// (auth.Support.DeleteAccount).

var (
	_ user.EmailCodes      = (*UserStore)(nil)
	_ user.EmailCodeEraser = (*UserStore)(nil)
)

// emailCodeQueries are the statements of the email-code part.
type emailCodeQueries struct {
	put, get, take, del string
}

func newEmailCodeQueries(db *DB) emailCodeQueries {
	const cols = `user_id, hash, created_at, expires_at`
	put := `INSERT INTO {{prefix}}email_codes (` + cols + `) VALUES (?, ?, ?, ?) `
	if db.dialect == MySQL {
		put += `ON DUPLICATE KEY UPDATE hash = VALUES(hash), created_at = VALUES(created_at), expires_at = VALUES(expires_at)`
	} else {
		put += `ON CONFLICT (user_id) DO UPDATE SET hash = excluded.hash, created_at = excluded.created_at, expires_at = excluded.expires_at`
	}
	return emailCodeQueries{
		put:  db.query(put),
		get:  db.query(`SELECT ` + cols + ` FROM {{prefix}}email_codes WHERE user_id = ?`),
		take: db.query(`DELETE FROM {{prefix}}email_codes WHERE user_id = ? AND hash = ? AND expires_at > ?`),
		del:  db.query(`DELETE FROM {{prefix}}email_codes WHERE user_id = ?`),
	}
}

// emailCodeRow is one row of email_codes.
type emailCodeRow struct {
	UserID    string `db:"user_id"`
	Hash      []byte `db:"hash"`
	CreatedAt int64  `db:"created_at"`
	ExpiresAt int64  `db:"expires_at"`
}

// PutEmailCode implements [user.EmailCodes].
func (s *UserStore) PutEmailCode(ctx context.Context, c user.EmailCode) error {
	_, err := s.db.x.ExecContext(ctx, s.codes.put, c.UserID, c.Hash, c.CreatedAt.UnixMilli(), c.ExpiresAt.UnixMilli())
	if err != nil {
		return s.db.fail("put email code", err)
	}
	return nil
}

// EmailCode implements [user.EmailCodes].
func (s *UserStore) EmailCode(ctx context.Context, userID string) (user.EmailCode, error) {
	var row emailCodeRow
	if err := s.db.getOne(ctx, "email code", &row, s.codes.get, userID); err != nil {
		return user.EmailCode{}, err
	}
	return user.EmailCode{UserID: row.UserID, Hash: row.Hash, CreatedAt: time.UnixMilli(row.CreatedAt).UTC(),
		ExpiresAt: time.UnixMilli(row.ExpiresAt).UTC()}, nil
}

// TakeEmailCode implements [user.EmailCodes].
func (s *UserStore) TakeEmailCode(ctx context.Context, userID string, hash []byte, now time.Time) error {
	if hash == nil {
		hash = []byte{} // NULL would compare as unknown, never equal; say so plainly
	}
	res, err := s.db.x.ExecContext(ctx, s.codes.take, userID, hash, now.UnixMilli())
	if err != nil {
		return s.db.fail("take email code", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.db.fail("take email code", err)
	}
	if n == 0 {
		return fmt.Errorf("sqlxstore: take email code: %w", user.ErrConflict)
	}
	return nil
}

// DeleteEmailCode implements [user.EmailCodeEraser]: one DELETE, no row is
// no error.
func (s *UserStore) DeleteEmailCode(ctx context.Context, userID string) error {
	if _, err := s.db.x.ExecContext(ctx, s.codes.del, userID); err != nil {
		return s.db.fail("delete email code", err)
	}
	return nil
}
