package user

import (
	"context"
	"errors"
	"fmt"
)

// AccountDeleter is the optional part of a store that deletes a user in one
// transaction with the app's own changes: DeleteWith runs before inside the
// transaction that deletes the user (what Registration.Delete deletes), so
// that the app's rows that point at the user go with it or not at all.
// auth.Service.DeleteAccount uses it when the app has a
// Hooks.BeforeDeleteAccount; a store without it gets the hook run first and
// Registration.Delete after it, in two steps.
//
// before receives a context that carries the transaction in the store's own
// way (sqlxstore: sqlxstore.TxFrom); an error from before rolls everything
// back and is returned as it is (wrapped). ErrNotFound when no user has
// id; a row of the app that still points at the user (a foreign key) is a
// *ReferencedError.
type AccountDeleter interface {
	DeleteWith(ctx context.Context, id string, before func(ctx context.Context) error) error
}

// ErrReferenced is what errors.Is finds in the error of a delete that other
// rows still point at (a *ReferencedError): the database refused it, and
// nothing was deleted.
var ErrReferenced = errors.New("user: the account is still referenced by other rows")

// ReferencedError is a delete the database refused because rows of another
// table still point at the user (a foreign key without ON DELETE). It names
// what blocks it as far as the database says: PostgreSQL and MySQL name
// the constraint and the table, SQLite neither.
type ReferencedError struct {
	Table      string // the referencing table; "" when the database does not say
	Constraint string // the foreign key's name; "" when the database does not say
	Err        error  // the driver's error
}

// Error names the table and the constraint that block the delete.
func (e *ReferencedError) Error() string {
	what := "rows of another table"
	switch {
	case e.Table != "" && e.Constraint != "":
		what = fmt.Sprintf("table %s (foreign key %s)", e.Table, e.Constraint)
	case e.Table != "":
		what = "table " + e.Table
	case e.Constraint != "":
		what = "foreign key " + e.Constraint
	}
	return "user: the account is still referenced by " + what +
		": delete or anonymise those rows first (auth.Hooks.BeforeDeleteAccount)"
}

// Is reports ErrReferenced.
func (e *ReferencedError) Is(target error) bool { return target == ErrReferenced }

// Unwrap returns the driver's error.
func (e *ReferencedError) Unwrap() error { return e.Err }
