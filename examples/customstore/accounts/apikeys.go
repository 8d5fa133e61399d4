package accounts

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// Personal API keys (auth.Config.APIKeys, [user.APIKeys]) live in a table
// of their own, account_api_keys, which [Migrate] creates: the SHA-256 of
// each key's secret (never the secret), its scopes as a JSON array, times
// in Unix milliseconds.
const apiKeysTable = `CREATE TABLE IF NOT EXISTS account_api_keys (
	key_id       TEXT PRIMARY KEY,
	account_id   TEXT NOT NULL,
	name         TEXT NOT NULL,
	hash         BLOB NOT NULL,
	scopes       TEXT NOT NULL,
	created_ms   INTEGER NOT NULL,
	expires_ms   INTEGER NOT NULL,
	last_used_ms INTEGER
)`

const apiKeysIndex = `CREATE INDEX IF NOT EXISTS account_api_keys_account ON account_api_keys (account_id)`

var _ user.APIKeys = (*Store)(nil)

// CreateAPIKey implements [user.APIKeys]: one transaction, whose BEGIN
// IMMEDIATE (Open's _txlock) holds the write lock from the count to the
// insert, so racing creates of one account cannot pass max.
func (s *Store) CreateAPIKey(ctx context.Context, k *user.APIKey, max int) error {
	scopes, err := json.Marshal(append([]string{}, k.Scopes...))
	if err != nil {
		return fmt.Errorf("accounts: create api key: %w", err)
	}
	var last any
	if !k.LastUsedAt.IsZero() {
		last = k.LastUsedAt.UnixMilli()
	}
	return inTx(ctx, s.db, "create api key", func(tx *sql.Tx) error {
		created := k.CreatedAt.UnixMilli()
		if _, err := tx.ExecContext(ctx, `DELETE FROM account_api_keys WHERE account_id = ? AND expires_ms <= ?`, k.UserID, created); err != nil {
			return unavailable(ctx, "create api key", err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM account_api_keys WHERE account_id = ?`, k.UserID).Scan(&n); err != nil {
			return unavailable(ctx, "create api key", err)
		}
		if n >= max {
			return fmt.Errorf("accounts: create api key: %w", user.ErrTooManyAPIKeys)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO account_api_keys (key_id, account_id, name, hash, scopes, created_ms, expires_ms, last_used_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, k.ID, k.UserID, k.Name, k.Hash, string(scopes), created, k.ExpiresAt.UnixMilli(), last)
		if err != nil {
			if strings.Contains(err.Error(), "UNIQUE constraint failed: account_api_keys.") {
				return fmt.Errorf("accounts: create api key: %w", user.ErrConflict)
			}
			return unavailable(ctx, "create api key", err)
		}
		return nil
	})
}

const apiKeyColumns = `key_id, account_id, name, hash, scopes, created_ms, expires_ms, last_used_ms`

func scanAPIKey(row interface{ Scan(...any) error }) (*user.APIKey, error) {
	var k user.APIKey
	var scopes string
	var created, expires int64
	var last sql.NullInt64
	if err := row.Scan(&k.ID, &k.UserID, &k.Name, &k.Hash, &scopes, &created, &expires, &last); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(scopes), &k.Scopes); err != nil {
		return nil, fmt.Errorf("accounts: api key %s: scopes: %w", k.ID, err)
	}
	if k.Scopes == nil {
		k.Scopes = []string{}
	}
	k.CreatedAt, k.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
	if last.Valid {
		k.LastUsedAt = time.UnixMilli(last.Int64).UTC()
	}
	return &k, nil
}

// APIKeyByID implements [user.APIKeys].
func (s *Store) APIKeyByID(ctx context.Context, id string) (*user.APIKey, error) {
	k, err := scanAPIKey(s.db.QueryRowContext(ctx, `SELECT `+apiKeyColumns+` FROM account_api_keys WHERE key_id = ?`, id))
	if err != nil {
		return nil, rowErr(ctx, "api key by id", err)
	}
	return k, nil
}

// ListAPIKeys implements [user.APIKeys].
func (s *Store) ListAPIKeys(ctx context.Context, userID string) ([]*user.APIKey, error) {
	return queryAll(ctx, s.db, "list api keys", scanAPIKey,
		`SELECT `+apiKeyColumns+` FROM account_api_keys WHERE account_id = ? ORDER BY created_ms, key_id`, userID)
}

// TouchAPIKey implements [user.APIKeys].
func (s *Store) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	return s.oneRow(ctx, "touch api key", `UPDATE account_api_keys SET last_used_ms = ? WHERE key_id = ?`, at.UnixMilli(), id)
}

// RevokeAPIKey implements [user.APIKeys]: one DELETE matched on the key
// and its account, so of racing revokes one deletes the row.
func (s *Store) RevokeAPIKey(ctx context.Context, userID, id string) error {
	return s.oneRow(ctx, "revoke api key", `DELETE FROM account_api_keys WHERE key_id = ? AND account_id = ?`, id, userID)
}

// RevokeAPIKeys implements [user.APIKeys].
func (s *Store) RevokeAPIKeys(ctx context.Context, userID string) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM account_api_keys WHERE account_id = ?`, userID)
	if err != nil {
		return 0, unavailable(ctx, "revoke api keys", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, unavailable(ctx, "revoke api keys", err)
	}
	return int(n), nil
}

// oneRow runs a statement that must match one row: ErrNotFound when it
// matched none.
func (s *Store) oneRow(ctx context.Context, op, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return unavailable(ctx, op, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return unavailable(ctx, op, err)
	} else if n == 0 {
		return fmt.Errorf("accounts: %s: %w", op, user.ErrNotFound)
	}
	return nil
}
