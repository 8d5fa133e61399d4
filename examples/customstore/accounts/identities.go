package accounts

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// The accounts at outside identity providers linked to an account (the
// social module's [user.Identities]) live in a table of their own,
// account_identities, which [Migrate] creates: one account has any number
// of them, so they are no columns of the app's table.
const identitiesTable = `CREATE TABLE IF NOT EXISTS account_identities (
	identity_id TEXT PRIMARY KEY,
	account_id  TEXT NOT NULL,
	provider    TEXT NOT NULL,
	subject     TEXT NOT NULL,
	email       TEXT NOT NULL,
	linked_ms   INTEGER NOT NULL,
	UNIQUE (provider, subject)
)`

const identitiesIndex = `CREATE INDEX IF NOT EXISTS account_identities_account ON account_identities (account_id)`

var _ user.Identities = (*Store)(nil)

// AddIdentity implements [user.Identities]. The insert reads the account
// in the same statement, so a link to an account deleted meanwhile
// inserts nothing (ErrNotFound); the UNIQUE (provider, subject) constraint
// picks the one winner of racing links of one pair.
func (s *Store) AddIdentity(ctx context.Context, id *user.Identity) (*user.Identity, error) {
	c := *id
	if c.ID == "" {
		c.ID = user.NewID()
	}
	if c.LinkedAt.IsZero() {
		c.LinkedAt = s.now()
	}
	c.LinkedAt = time.UnixMilli(c.LinkedAt.UnixMilli()).UTC()
	res, err := s.db.ExecContext(ctx, `INSERT INTO account_identities (identity_id, account_id, provider, subject, email, linked_ms)
		SELECT ?, account_id, ?, ?, ?, ? FROM accounts WHERE account_id = ?`,
		c.ID, c.Provider, c.Subject, c.Email, c.LinkedAt.UnixMilli(), c.UserID)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed: account_identities.") {
			return nil, fmt.Errorf("accounts: add identity: %w", user.ErrConflict)
		}
		return nil, unavailable(ctx, "add identity", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, unavailable(ctx, "add identity", err)
	} else if n == 0 {
		return nil, fmt.Errorf("accounts: add identity: %w", user.ErrNotFound)
	}
	return &c, nil
}

// IdentityBySubject implements [user.Identities].
func (s *Store) IdentityBySubject(ctx context.Context, provider, subject string) (*user.Identity, error) {
	row := s.db.QueryRowContext(ctx, `SELECT identity_id, account_id, provider, subject, email, linked_ms
		FROM account_identities WHERE provider = ? AND subject = ?`, provider, subject)
	id, err := scanIdentity(row)
	if err != nil {
		return nil, rowErr(ctx, "identity", err)
	}
	return id, nil
}

// ListIdentities implements [user.Identities].
func (s *Store) ListIdentities(ctx context.Context, userID string) ([]*user.Identity, error) {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM accounts WHERE account_id = ?`, userID).Scan(&one)
	if err != nil {
		return nil, rowErr(ctx, "list identities", err)
	}
	return queryAll(ctx, s.db, "list identities", scanIdentity, `SELECT identity_id, account_id, provider, subject, email, linked_ms
		FROM account_identities WHERE account_id = ? ORDER BY linked_ms, identity_id`, userID)
}

// DeleteIdentity implements [user.Identities]: one DELETE whose WHERE
// clause carries keepOne's condition (another identity of the account
// remains), so of racing deletes of the last two one fails.
func (s *Store) DeleteIdentity(ctx context.Context, userID, identityID string, keepOne bool) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM account_identities WHERE identity_id = ? AND account_id = ?
		AND (? = 0 OR EXISTS (SELECT 1 FROM account_identities o WHERE o.account_id = ? AND o.identity_id <> ?))`,
		identityID, userID, keepOne, userID, identityID)
	if err != nil {
		return unavailable(ctx, "delete identity", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return unavailable(ctx, "delete identity", err)
	}
	if n > 0 {
		return nil
	}
	var one int
	err = s.db.QueryRowContext(ctx, `SELECT 1 FROM account_identities WHERE identity_id = ? AND account_id = ?`, identityID, userID).Scan(&one)
	if err != nil {
		return rowErr(ctx, "delete identity", err)
	}
	return fmt.Errorf("accounts: delete identity: %w", user.ErrConflict)
}

func scanIdentity(row interface{ Scan(...any) error }) (*user.Identity, error) {
	var id user.Identity
	var ms int64
	if err := row.Scan(&id.ID, &id.UserID, &id.Provider, &id.Subject, &id.Email, &ms); err != nil {
		return nil, err
	}
	id.LinkedAt = time.UnixMilli(ms).UTC()
	return &id, nil
}
