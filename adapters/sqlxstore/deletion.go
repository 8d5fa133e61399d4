package sqlxstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"

	"github.com/jmoiron/sqlx"

	"github.com/authkit-go/authkit/core/user"
)

// Tx is the transaction UserStore.DeleteWith hands to its callback, as
// TxFrom finds it in the callback's context: a *sqlx.Tx on PostgreSQL and
// MySQL, a *sqlx.Conn inside BEGIN IMMEDIATE on SQLite. Write its SQL for
// the app's dialect (or pass it through Rebind); never commit or roll it
// back: the store does.
type Tx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error)
	QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
	Rebind(query string) string
}

var (
	_ Tx = (*sqlx.Tx)(nil)
	_ Tx = (*sqlx.Conn)(nil)

	_ user.AccountDeleter = (*UserStore)(nil)
)

type txKey struct{}

// TxFrom returns the transaction of a UserStore.DeleteWith callback's
// context (auth.Hooks.BeforeDeleteAccount's ctx), and false outside one.
// The app deletes or anonymises its own rows of the user through it, so
// that they and the user go together or not at all:
//
//	BeforeDeleteAccount: func(ctx context.Context, u *user.User) error {
//		tx, ok := sqlxstore.TxFrom(ctx)
//		if !ok {
//			return errors.New("no transaction")
//		}
//		_, err := tx.ExecContext(ctx, tx.Rebind("DELETE FROM orders WHERE user_id = ?"), u.ID)
//		return err
//	}
func TxFrom(ctx context.Context) (Tx, bool) {
	tx, ok := ctx.Value(txKey{}).(Tx)
	return tx, ok
}

// errBefore marks the error of a DeleteWith callback, returned as it is.
var errBefore = errors.New("before delete")

// DeleteWith implements [user.AccountDeleter]: one transaction that runs
// before (its ctx carries the transaction: TxFrom), then deletes what
// Delete deletes. An error from before rolls it back and is returned
// wrapped (errors.As finds the callback's own error). A row that still
// points at the user through a foreign key fails it with a
// *user.ReferencedError naming the table and the constraint (PostgreSQL,
// MySQL; SQLite names neither) instead of the driver's error; lost races
// are retried, before with them, so before must be safe to run again.
func (s *UserStore) DeleteWith(ctx context.Context, id string, before func(ctx context.Context) error) error {
	const op = "delete user"
	idv, ok := s.s.idArg(id)
	if !ok {
		return notFound(op)
	}
	return s.inTx(ctx, op, idv, func(q queryer) error {
		if before != nil {
			tx, _ := q.(Tx)
			if err := before(context.WithValue(ctx, txKey{}, tx)); err != nil {
				if s.db.referenced(err) != nil || s.db.retryable(err) {
					return err // the app's statement hit a foreign key, or lost a race
				}
				return fmt.Errorf("%w: %w", errBefore, err)
			}
		}
		return s.deleteIn(ctx, q, id, idv)
	})
}

// mysqlFKMessage is the text of MySQL's error 1451 (ER_ROW_IS_REFERENCED_2):
// "Cannot delete or update a parent row: a foreign key constraint fails
// (`db`.`table`, CONSTRAINT `name` FOREIGN KEY ...)".
var mysqlFKMessage = regexp.MustCompile("fails \\((?:`[^`]*`\\.)?`([^`]*)`, CONSTRAINT `([^`]*)`")

// sqliteConstraintForeignKey is SQLITE_CONSTRAINT_FOREIGNKEY.
const sqliteConstraintForeignKey = 787 // SQLITE_CONSTRAINT | 3<<8

// referenced returns the *user.ReferencedError of err when it is a foreign
// key violation of a delete (a row still points at the deleted one), nil
// otherwise.
func (db *DB) referenced(err error) *user.ReferencedError {
	if err == nil {
		return nil
	}
	var ref *user.ReferencedError
	if errors.As(err, &ref) {
		return ref
	}
	switch db.dialect {
	case Postgres:
		if pgCode(err) == "23503" {
			pe := findType(err, pgconnPkg, "PgError")
			return &user.ReferencedError{Table: stringField(pe, "TableName"), Constraint: stringField(pe, "ConstraintName"), Err: err}
		}
	case MySQL:
		if mysqlCode(err) == 1451 {
			r := &user.ReferencedError{Err: err}
			if m := mysqlFKMessage.FindStringSubmatch(stringField(findType(err, mysqlPkg, "MySQLError"), "Message")); m != nil {
				r.Table, r.Constraint = m[1], m[2]
			}
			return r
		}
	case SQLite:
		if sqliteCode(err) == sqliteConstraintForeignKey {
			return &user.ReferencedError{Err: err}
		}
	}
	return nil
}
