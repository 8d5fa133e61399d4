package sqlxstore

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Clear implements [ratelimit.Clearer]: one DELETE of the rows whose key
// starts with prefix (every row, for ""), compared byte for byte (character
// for character on SQLite, which for UTF-8 is the same), never with LIKE,
// so '%' and '_' in a prefix are themselves. It returns how many rows it
// deleted. A key stored hashed (see [LimitStore]) is found only by the
// prefixes "" and "sha256:"; a prefix that is not UTF-8 or holds a NUL
// finds nothing, since such keys are all stored hashed.
func (s *LimitStore) Clear(ctx context.Context, prefix string) (int64, error) {
	var q string
	var args []any
	switch {
	case prefix == "":
		q = `DELETE FROM {{prefix}}rate_limits`
	case !utf8.ValidString(prefix) || strings.ContainsRune(prefix, 0):
		return 0, nil
	case s.db.dialect == Postgres:
		q, args = `DELETE FROM {{prefix}}rate_limits WHERE starts_with(limit_key, ?)`, []any{prefix}
	case s.db.dialect == MySQL:
		// LEFT of a VARBINARY counts bytes.
		q, args = `DELETE FROM {{prefix}}rate_limits WHERE LEFT(limit_key, ?) = CAST(? AS BINARY)`, []any{len(prefix), prefix}
	default:
		q, args = `DELETE FROM {{prefix}}rate_limits WHERE substr(limit_key, 1, ?) = ?`, []any{utf8.RuneCountInString(prefix), prefix}
	}
	var n int64
	err := s.db.retry(ctx, func() error {
		res, err := s.db.x.ExecContext(ctx, s.db.query(q), args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlxstore: rate limit clear: %w", err)
	}
	return n, nil
}

// HasLimitsTable reports whether <prefix>rate_limits exists: false before
// the first Migrate, and after migrations with Config.NoLimitsTable.
func (db *DB) HasLimitsTable(ctx context.Context) (bool, error) {
	ok, err := db.tableExists(ctx, db.x, db.t.limits)
	if err != nil {
		return false, db.fail("rate limit table", err)
	}
	return ok, nil
}

// ensureLimitsTable creates the rate-limit table, under the migration
// lock, when the configuration wants it and a migration without it
// (Config.NoLimitsTable) left it out: the statements of 0001 that make it,
// each safe to run again.
func (db *DB) ensureLimitsTable(ctx context.Context, q queryer) error {
	if db.noLimitsTable {
		return nil
	}
	ok, err := db.tableExists(ctx, q, db.t.limits)
	if err != nil || ok {
		return err
	}
	// The statements of authkit's own 0001: the limit table's are the same
	// for every Users.
	own, err := newDB(nil, db.dialect, Config{TablePrefix: db.t.prefix})
	if err != nil {
		return err
	}
	ms, err := own.migrations()
	if err != nil {
		return err
	}
	for _, st := range ms[0].stmts {
		if namesTable(st, db.t.limits) {
			if _, err := q.ExecContext(ctx, st); err != nil {
				return fmt.Errorf("create %s: %w", db.t.limits, err)
			}
		}
	}
	return nil
}
