package sqlxstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/authkit-go/authkit/core/user"
)

var _ user.Identities = (*UserStore)(nil)

// identityQueries are the statements of the [user.Identities] part, over
// the table of migration 0007, <prefix>identities. Its user_id is the
// user's id as text (the canonical form idArg accepts), so it fits any
// users table.
type identityQueries struct {
	lockUser  string // the user's row, locked for update: a user's keep-one deletes run one at a time
	insert    string
	bySubject string
	list      string
	count     string
	del       string
	delUser   string
}

const identityColumns = `id, user_id, provider, subject, email, linked_at`

func newIdentityQueries(db *DB) identityQueries {
	uq := db.userQuery
	lock := ` FOR UPDATE`
	if db.dialect == SQLite {
		lock = `` // the transaction's BEGIN IMMEDIATE already excludes writers
	}
	return identityQueries{
		lockUser:  uq(`SELECT 1 FROM {{users}} WHERE {{id}} = ?` + lock),
		insert:    uq(`INSERT INTO {{prefix}}identities (` + identityColumns + `) VALUES (?, ?, ?, ?, ?, ?)`),
		bySubject: uq(`SELECT ` + identityColumns + ` FROM {{prefix}}identities WHERE provider = ? AND subject = ?`),
		list:      uq(`SELECT ` + identityColumns + ` FROM {{prefix}}identities WHERE user_id = ? ORDER BY linked_at, id`),
		count:     uq(`SELECT COUNT(*) FROM {{prefix}}identities WHERE user_id = ?`),
		del:       uq(`DELETE FROM {{prefix}}identities WHERE id = ? AND user_id = ?`),
		delUser:   uq(`DELETE FROM {{prefix}}identities WHERE user_id = ?`),
	}
}

// identityRow is one row of <prefix>identities.
type identityRow struct {
	ID       string `db:"id"`
	UserID   string `db:"user_id"`
	Provider string `db:"provider"`
	Subject  string `db:"subject"`
	Email    string `db:"email"`
	LinkedAt int64  `db:"linked_at"`
}

// identityOf is r.identity, for getAs and selectAs.
func identityOf(r *identityRow) (*user.Identity, error) { return r.identity(), nil }

func (r *identityRow) identity() *user.Identity {
	return &user.Identity{ID: r.ID, UserID: r.UserID, Provider: r.Provider, Subject: r.Subject, Email: r.Email,
		LinkedAt: fromMS(sql.NullInt64{Int64: r.LinkedAt, Valid: true})}
}

// AddIdentity implements [user.Identities]: one READ COMMITTED
// transaction that share-locks the user's row (ErrNotFound when there is
// none, also when a racing Delete removed it first) and inserts the link;
// the unique key on (provider, subject) decides racing links: ErrConflict.
func (s *UserStore) AddIdentity(ctx context.Context, id *user.Identity) (*user.Identity, error) {
	const op = "add identity"
	if id == nil {
		return nil, fmt.Errorf("sqlxstore: %s: nil identity", op)
	}
	idv, ok := s.s.idArg(id.UserID)
	if !ok {
		return nil, notFound(op)
	}
	c := id.Clone()
	if c.ID == "" {
		c.ID = user.NewID()
	}
	if c.LinkedAt.IsZero() {
		c.LinkedAt = s.db.now()
	}
	c.LinkedAt = fromMS(sql.NullInt64{Int64: c.LinkedAt.UnixMilli(), Valid: true})
	err := s.db.inTxOpts(ctx, readCommitted, func(q queryer) error {
		if err := lockUser(ctx, q, s.pq.lockUser, idv); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, s.iq.insert, c.ID, c.UserID, c.Provider, c.Subject, c.Email, c.LinkedAt.UnixMilli())
		if unique, _ := s.db.uniqueViolation(err); unique {
			return errPasskeyConflict
		}
		return err
	})
	if err := s.passkeyErr(op, err, "linked already"); err != nil {
		return nil, err
	}
	return c, nil
}

// IdentityBySubject implements [user.Identities].
func (s *UserStore) IdentityBySubject(ctx context.Context, provider, subject string) (*user.Identity, error) {
	return getAs(ctx, s.db, "identity by subject", identityOf, s.iq.bySubject, provider, subject)
}

// ListIdentities implements [user.Identities].
func (s *UserStore) ListIdentities(ctx context.Context, userID string) ([]*user.Identity, error) {
	const op = "list identities"
	if err := s.userExists(ctx, op, userID); err != nil {
		return nil, err
	}
	return selectAs(ctx, s.db, op, identityOf, s.iq.list, userID)
}

// DeleteIdentity implements [user.Identities]. Without keepOne it is one
// DELETE. With keepOne, one READ COMMITTED transaction locks the user's
// row for update (so the user's keep-one deletes run one after the
// other), counts their identities and deletes only when another remains.
func (s *UserStore) DeleteIdentity(ctx context.Context, userID, identityID string, keepOne bool) error {
	const op = "delete identity"
	if !keepOne {
		return s.execFound(ctx, op, s.iq.del, identityID, userID)
	}
	idv, ok := s.s.idArg(userID)
	if !ok {
		return notFound(op)
	}
	err := s.db.inTxOpts(ctx, readCommitted, func(q queryer) error {
		if err := lockUser(ctx, q, s.iq.lockUser, idv); err != nil {
			return err
		}
		var n int
		if err := q.GetContext(ctx, &n, s.iq.count, userID); err != nil {
			return err
		}
		if n < 2 {
			// Not the user's (ErrNotFound wins) or their last.
			var rows []identityRow
			if err := q.SelectContext(ctx, &rows, s.iq.list, userID); err != nil {
				return err
			}
			for _, r := range rows {
				if r.ID == identityID {
					return errPasskeyConflict
				}
			}
			return errTxNoRow
		}
		res, err := q.ExecContext(ctx, s.iq.del, identityID, userID)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil || k == 0 {
			if err == nil {
				err = errTxNoRow
			}
			return err
		}
		return nil
	})
	return s.passkeyErr(op, err, "the user's last identity")
}

// deleteIdentitiesOf deletes the identities of user id, in the
// transaction of the user's Delete or Create.
func (s *UserStore) deleteIdentitiesOf(ctx context.Context, q queryer, id string) error {
	_, err := q.ExecContext(ctx, s.iq.delUser, id)
	return err
}
