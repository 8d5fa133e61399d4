package sqlxstore

import (
	"context"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// The user.SignIns part of the UserStore: the sign_ins table of migration
// 0008, one row per user (the primary key), beside the users table whatever
// its layout (Config.Users), keyed by the id as text with no foreign key.
// MarkSignedIn is one INSERT that skips an existing row, so the database
// lets exactly one of racing calls insert it. Deleting a user deletes the
// row in the same transaction (an account's deletion leaves nothing about
// it behind).

var _ user.SignIns = (*UserStore)(nil)

func newSignInQuery(db *DB) string {
	if db.dialect == MySQL {
		return db.query(`INSERT IGNORE INTO {{prefix}}sign_ins (user_id, at) VALUES (?, ?)`)
	}
	return db.query(`INSERT INTO {{prefix}}sign_ins (user_id, at) VALUES (?, ?) ON CONFLICT (user_id) DO NOTHING`)
}

// MarkSignedIn implements [user.SignIns].
func (s *UserStore) MarkSignedIn(ctx context.Context, userID string, at time.Time) (bool, error) {
	res, err := s.db.x.ExecContext(ctx, s.signIn, userID, at.UnixMilli())
	if err != nil {
		return false, s.db.fail("mark signed in", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, s.db.fail("mark signed in", err)
	}
	return n == 1, nil
}
