package sqlxstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// queryer is what *sqlx.DB, *sqlx.Tx and *sqlx.Conn have in common.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

// query prepares a statement written with ? placeholders and {{prefix}}
// table names for the dialect.
func (db *DB) query(q string) string {
	q = db.withPrefix(q)
	if db.dialect == Postgres {
		q = sqlx.Rebind(sqlx.DOLLAR, q)
	}
	return q
}

// withPrefix fills in the table prefix (validated: [a-z_][a-z0-9_]*).
func (db *DB) withPrefix(q string) string {
	return strings.ReplaceAll(q, "{{prefix}}", db.t.prefix)
}

// userQuery prepares a statement of the user store: the {{...}} names of
// its tables and columns (see schema.newReplacer; all validated
// identifiers, quoted) first, then the prefix and the placeholders.
func (db *DB) userQuery(q string) string {
	return db.query(db.s.replacer.Replace(q))
}

// inTx runs fn in a short transaction and commits it; any error rolls it
// back. The transaction takes its write lock up front on SQLite (BEGIN
// IMMEDIATE, whatever the pool's _txlock), so two of them never deadlock
// upgrading a read lock. Lost races are retried (see retry).
func (db *DB) inTx(ctx context.Context, fn func(q queryer) error) error {
	return db.inTxOpts(ctx, nil, fn)
}

// readCommitted is the isolation of the user store's transactions on
// PostgreSQL and MySQL: their conditions sit in WHERE clauses and locking
// reads, which see the latest committed row at READ COMMITTED; MySQL's
// default, REPEATABLE READ, would add gap locks and nothing the store needs.
var readCommitted = &sql.TxOptions{Isolation: sql.LevelReadCommitted}

// inTxOpts is inTx with the transaction options opts (nil: the server's
// defaults); SQLite ignores them (its transactions are serializable).
func (db *DB) inTxOpts(ctx context.Context, opts *sql.TxOptions, fn func(q queryer) error) error {
	return db.retry(ctx, func() error {
		if db.dialect == SQLite {
			return db.inSQLiteTx(ctx, fn)
		}
		tx, err := db.x.BeginTxx(ctx, opts)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

func (db *DB) inSQLiteTx(ctx context.Context, fn func(q queryer) error) (err error) {
	conn, err := db.x.Connx(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	defer func() {
		if err == nil {
			return
		}
		// Roll back even when ctx is done; a connection that cannot is
		// dropped from the pool rather than handed on mid-transaction.
		if _, rbErr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rbErr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if err = fn(conn); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}

// ms is t in Unix milliseconds, NULL for the zero time.
func ms(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// fromMS is the inverse of ms: UTC, zero for NULL.
func fromMS(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMilli(n.Int64).UTC()
}

// nullString is s, NULL for "".
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// nullInt is n, NULL for 0.
func nullInt(n int64) sql.NullInt64 {
	return sql.NullInt64{Int64: n, Valid: n != 0}
}

// fail wraps err for operation op, marking it unavailable when it is.
func (db *DB) fail(op string, err error) error {
	return fmt.Errorf("sqlxstore: %s: %w", op, db.unavailableIf(err))
}

// getOne reads the one row query selects into dest: ErrNotFound (of op)
// when there is none, any other error wrapped by fail.
func (db *DB) getOne(ctx context.Context, op string, dest any, query string, args ...any) error {
	err := db.x.GetContext(ctx, dest, query, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(op)
	}
	if err != nil {
		return db.fail(op, err)
	}
	return nil
}

// getAs reads the one row query selects as an R and returns it made a T
// by conv: ErrNotFound (of op) when there is none.
func getAs[R, T any](ctx context.Context, db *DB, op string, conv func(*R) (T, error), query string, args ...any) (T, error) {
	var r R
	var zero T
	if err := db.getOne(ctx, op, &r, query, args...); err != nil {
		return zero, err
	}
	v, err := conv(&r)
	if err != nil {
		return zero, fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	return v, nil
}

// selectAs reads the rows query selects as Rs and returns them made Ts by
// conv, in order: empty, not nil, when there are none.
func selectAs[R, T any](ctx context.Context, db *DB, op string, conv func(*R) (T, error), query string, args ...any) ([]T, error) {
	var rows []R
	if err := db.x.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, db.fail(op, err)
	}
	out := make([]T, len(rows))
	for i := range rows {
		v, err := conv(&rows[i])
		if err != nil {
			return nil, fmt.Errorf("sqlxstore: %s: %w", op, err)
		}
		out[i] = v
	}
	return out, nil
}
