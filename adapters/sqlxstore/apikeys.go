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

// The user.APIKeys part of the UserStore: the api_keys table of migration
// 0009, beside the users table whatever its layout (Config.Users), keyed
// by the key's id, the user's id as text with no foreign key. A create is
// one READ COMMITTED transaction that locks the user's row for update (so
// one user's creates run one after the other: the bound holds under
// racing creates), deletes the user's expired keys, counts the others and
// inserts. A revoke is one DELETE matched on id and user. Deleting a user
// deletes their keys in the same transaction.

var _ user.APIKeys = (*UserStore)(nil)

// apiKeyQueries are the statements of the [user.APIKeys] part.
type apiKeyQueries struct {
	lockUser, sweep, count, insert, byID, list, touch, del, delUser string
}

const apiKeyColumns = `id, user_id, name, hash, scopes, created_at, expires_at, last_used_at`

func newAPIKeyQueries(db *DB) apiKeyQueries {
	uq := db.userQuery
	lock := ` FOR UPDATE`
	if db.dialect == SQLite {
		lock = `` // the transaction's BEGIN IMMEDIATE already excludes writers
	}
	return apiKeyQueries{
		lockUser: uq(`SELECT 1 FROM {{users}} WHERE {{id}} = ?` + lock),
		sweep:    uq(`DELETE FROM {{prefix}}api_keys WHERE user_id = ? AND expires_at <= ?`),
		count:    uq(`SELECT COUNT(*) FROM {{prefix}}api_keys WHERE user_id = ?`),
		insert:   uq(`INSERT INTO {{prefix}}api_keys (` + apiKeyColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		byID:     uq(`SELECT ` + apiKeyColumns + ` FROM {{prefix}}api_keys WHERE id = ?`),
		list:     uq(`SELECT ` + apiKeyColumns + ` FROM {{prefix}}api_keys WHERE user_id = ? ORDER BY created_at, id`),
		touch:    uq(`UPDATE {{prefix}}api_keys SET last_used_at = ? WHERE id = ?`),
		del:      uq(`DELETE FROM {{prefix}}api_keys WHERE id = ? AND user_id = ?`),
		delUser:  uq(`DELETE FROM {{prefix}}api_keys WHERE user_id = ?`),
	}
}

// apiKeyRow is one row of <prefix>api_keys.
type apiKeyRow struct {
	ID         string        `db:"id"`
	UserID     string        `db:"user_id"`
	Name       string        `db:"name"`
	Hash       []byte        `db:"hash"`
	Scopes     string        `db:"scopes"`
	CreatedAt  int64         `db:"created_at"`
	ExpiresAt  int64         `db:"expires_at"`
	LastUsedAt sql.NullInt64 `db:"last_used_at"`
}

func (r *apiKeyRow) apiKey() (*user.APIKey, error) {
	scopes := []string{}
	if err := json.Unmarshal([]byte(r.Scopes), &scopes); err != nil {
		return nil, fmt.Errorf("api key %s: scopes: %w", r.ID, err)
	}
	if scopes == nil {
		scopes = []string{}
	}
	return &user.APIKey{ID: r.ID, UserID: r.UserID, Name: r.Name, Hash: r.Hash, Scopes: scopes,
		CreatedAt: fromMS(sql.NullInt64{Int64: r.CreatedAt, Valid: true}), ExpiresAt: fromMS(sql.NullInt64{Int64: r.ExpiresAt, Valid: true}),
		LastUsedAt: fromMS(r.LastUsedAt)}, nil
}

// errTooManyAPIKeys rolls back a create at the bound.
var errTooManyAPIKeys = errors.New("api key bound reached")

// CreateAPIKey implements [user.APIKeys]. A user the store does not hold
// is ErrNotFound.
func (s *UserStore) CreateAPIKey(ctx context.Context, k *user.APIKey, max int) error {
	const op = "create api key"
	if k == nil {
		return fmt.Errorf("sqlxstore: %s: nil key", op)
	}
	idv, ok := s.s.idArg(k.UserID)
	if !ok {
		return notFound(op)
	}
	sc, err := jsonList(k.Scopes)
	if err != nil {
		return fmt.Errorf("sqlxstore: %s: scopes: %w", op, err)
	}
	created := k.CreatedAt.UnixMilli()
	err = s.db.inTxOpts(ctx, readCommitted, func(q queryer) error {
		if err := lockUser(ctx, q, s.kq.lockUser, idv); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, s.kq.sweep, k.UserID, created); err != nil {
			return err
		}
		var n int
		if err := q.GetContext(ctx, &n, s.kq.count, k.UserID); err != nil {
			return err
		}
		if n >= max {
			return errTooManyAPIKeys
		}
		_, err := q.ExecContext(ctx, s.kq.insert, k.ID, k.UserID, k.Name, k.Hash, sc, created, k.ExpiresAt.UnixMilli(), ms(k.LastUsedAt))
		if unique, _ := s.db.uniqueViolation(err); unique {
			return errPasskeyConflict
		}
		return err
	})
	if errors.Is(err, errTooManyAPIKeys) {
		return fmt.Errorf("sqlxstore: %s: %w", op, user.ErrTooManyAPIKeys)
	}
	return s.passkeyErr(op, err, "id in use")
}

// APIKeyByID implements [user.APIKeys].
func (s *UserStore) APIKeyByID(ctx context.Context, id string) (*user.APIKey, error) {
	return getAs(ctx, s.db, "api key by id", (*apiKeyRow).apiKey, s.kq.byID, id)
}

// ListAPIKeys implements [user.APIKeys].
func (s *UserStore) ListAPIKeys(ctx context.Context, userID string) ([]*user.APIKey, error) {
	return selectAs(ctx, s.db, "list api keys", (*apiKeyRow).apiKey, s.kq.list, userID)
}

// TouchAPIKey implements [user.APIKeys].
func (s *UserStore) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	const op = "touch api key"
	return s.execFound(ctx, op, s.kq.touch, at.UnixMilli(), id)
}

// RevokeAPIKey implements [user.APIKeys]: one DELETE, so of racing
// revokes one deletes the row and the others find none.
func (s *UserStore) RevokeAPIKey(ctx context.Context, userID, id string) error {
	const op = "revoke api key"
	return s.execFound(ctx, op, s.kq.del, id, userID)
}

// RevokeAPIKeys implements [user.APIKeys].
func (s *UserStore) RevokeAPIKeys(ctx context.Context, userID string) (int, error) {
	n, err := s.exec(ctx, s.kq.delUser, userID)
	if err != nil {
		return 0, s.db.fail("revoke api keys", err)
	}
	return int(n), nil
}

// deleteAPIKeysOf deletes the keys of user id, in the transaction of the
// user's Delete.
func (s *UserStore) deleteAPIKeysOf(ctx context.Context, q queryer, id string) error {
	_, err := q.ExecContext(ctx, s.kq.delUser, id)
	return err
}
