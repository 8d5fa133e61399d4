package sqlxstore

// Driver errors without the drivers: this package imports no database
// driver (an app links only the one it uses), so it recognises the errors
// of the three drivers it is tested with by their shape, not their Go type:
//
//   - pgx (github.com/jackc/pgx/v5/pgconn): the SQLSTATE through the
//     SQLState() method of *pgconn.PgError, the violated constraint through
//     its exported ConstraintName field; *pgconn.ConnectError and pgconn's
//     timeout error by their type's package path and name, ErrConnClosed by
//     its text.
//   - go-sql-driver/mysql: *mysql.MySQLError by its type's package path and
//     name, read through its exported Number and Message fields (it has no
//     methods to read them); ErrInvalidConn, ErrMalformPkt, ErrPktSync and
//     ErrPktSyncMul (plain errors.New values) by their text.
//   - modernc.org/sqlite: the result code through the Code() method of
//     *sqlite.Error; the codes are SQLite's C API constants.
//
// Methods, exported fields and type names are the drivers' API, stable
// within their major versions; errors_internal_test.go builds the drivers'
// real error values and checks every rule, so a driver update that changed
// one fails the tests here, not an app in production.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"reflect"
	"strings"
	"syscall"
	"time"
)

// backoff is the wait before retry attempt+1: a random 0 to 2^attempt
// milliseconds.
func backoff(attempt int) time.Duration {
	return time.Duration(rand.Int64N(int64(time.Millisecond) << attempt))
}

// maxAttempts is how often an operation that lost a deadlock (or a lock
// wait, or a serialization check) is tried in all. Such a failure rolled
// back everything the attempt did, so trying again is safe; the retry then
// sees the winner's change and gets the contract's answer (ErrConflict,
// ErrEmailTaken) instead of a 503.
const maxAttempts = 5

// retry runs fn until it succeeds, fails with an error that a retry cannot
// cure, or has run maxAttempts times, waiting a few random milliseconds
// between attempts so that racing losers do not collide again in step.
func (db *DB) retry(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || attempt == maxAttempts || !db.retryable(err) {
			return err
		}
		if db.backoff == nil {
			if ctx.Err() != nil {
				return err
			}
			continue
		}
		t := time.NewTimer(db.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// retryable reports whether err is a lost race that rolled back the whole
// statement or transaction: a deadlock, a lock wait timeout, a
// serialization failure.
func (db *DB) retryable(err error) bool {
	switch db.dialect {
	case Postgres:
		code := pgCode(err)
		return code == "40001" || code == "40P01" // serialization_failure, deadlock_detected
	case MySQL:
		switch mysqlCode(err) {
		case 1213, 1205, 1020: // ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT, ER_CHECKREAD
			return true
		}
	}
	// SQLite: its busy handler (busy_timeout) already waited for the lock.
	return false
}

// unavailable reports whether err means that the database could not be
// reached, went away, or failed in a way the app cannot fix: a refused or
// broken connection, a timeout, a server shutting down or out of
// resources, a lock contention that outlasted the retries.
func (db *DB) unavailable(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	if db.retryable(err) {
		return true // still losing after maxAttempts
	}
	switch db.dialect {
	case Postgres:
		if findType(err, pgconnPkg, "ConnectError") != nil || findType(err, pgconnPkg, "errTimeout") != nil ||
			hasText(err, pgConnClosed) {
			return true
		}
		code := pgCode(err)
		if len(code) == 5 && (pgUnavailableClasses[code[:2]] || pgUnavailableCodes[code]) {
			return true
		}
	case MySQL:
		if hasText(err, mysqlConnErrors...) {
			return true
		}
		switch mysqlCode(err) {
		case 1040, 1203, // too many connections
			1053,                   // server shutdown in progress
			1158, 1159, 1160, 1161, // network read/write errors
			1317,       // query interrupted
			1927,       // connection killed (MariaDB)
			1969, 3024: // statement time limit (MariaDB, MySQL)
			return true
		}
	case SQLite:
		switch sqliteCode(err) & 0xff { // the primary result code
		case sqliteBusy, // outlasted busy_timeout
			sqliteLocked,
			sqliteNoMem,
			sqliteReadOnly,
			sqliteIOErr,
			sqliteFull,
			sqliteCantOpen:
			return true
		}
	}
	return false
}

// PostgreSQL SQLSTATE classes and codes that mean the server cannot serve
// the request now.
var (
	pgUnavailableClasses = map[string]bool{
		"08": true, // connection_exception
		"53": true, // insufficient_resources: too many connections, disk full, out of memory
		"58": true, // system_error: I/O
	}
	pgUnavailableCodes = map[string]bool{
		"57014": true, // query_canceled (statement_timeout)
		"57P01": true, // admin_shutdown
		"57P02": true, // crash_shutdown
		"57P03": true, // cannot_connect_now
	}
)

// uniqueViolation reports whether err is a unique-key violation, and
// whether the key was the users table's email.
func (db *DB) uniqueViolation(err error) (isUnique, onEmail bool) {
	switch db.dialect {
	case Postgres:
		if pgCode(err) == "23505" {
			return true, stringField(findType(err, pgconnPkg, "PgError"), "ConstraintName") == db.t.users+"_email_key"
		}
	case MySQL:
		if mysqlCode(err) == 1062 {
			// "Duplicate entry '...' for key 'name'" (MariaDB) or
			// "... for key 'table.name'" (MySQL 8).
			msg := stringField(findType(err, mysqlPkg, "MySQLError"), "Message")
			return true, strings.HasSuffix(msg, "_email_key'") &&
				(strings.HasSuffix(msg, "'"+db.t.users+"_email_key'") ||
					strings.HasSuffix(msg, "."+db.t.users+"_email_key'"))
		}
	case SQLite:
		if code := sqliteCode(err); code == sqliteConstraintUnique || code == sqliteConstraintPrimaryKey {
			return true, strings.Contains(err.Error(), db.t.users+".email")
		}
	}
	return false, false
}

// The drivers' packages, as their error types report them (reflect's
// Type.PkgPath).
const (
	pgconnPkg = "github.com/jackc/pgx/v5/pgconn"
	mysqlPkg  = "github.com/go-sql-driver/mysql"
)

// pgConnClosed is the text of pgconn.ErrConnClosed.
const pgConnClosed = "conn closed"

// mysqlConnErrors are the texts of go-sql-driver's ErrInvalidConn,
// ErrMalformPkt, ErrPktSync and ErrPktSyncMul: the connection is broken.
var mysqlConnErrors = []string{
	"invalid connection",
	"malformed packet",
	"commands out of sync. You can't run this command now",
	"commands out of sync. Did you run multiple statements at once?",
}

// SQLite result codes (sqlite3.h): the primary codes the store tells apart,
// and the two extended codes of a unique-key violation.
const (
	sqliteBusy                 = 5
	sqliteLocked               = 6
	sqliteNoMem                = 7
	sqliteReadOnly             = 8
	sqliteIOErr                = 10
	sqliteFull                 = 13
	sqliteCantOpen             = 14
	sqliteConstraintPrimaryKey = 1555 // SQLITE_CONSTRAINT | 6<<8
	sqliteConstraintUnique     = 2067 // SQLITE_CONSTRAINT | 8<<8
)

// pgCode is the SQLSTATE of a PostgreSQL error in err's chain, or "".
func pgCode(err error) string {
	var e interface{ SQLState() string }
	if errors.As(err, &e) {
		return e.SQLState()
	}
	return ""
}

// mysqlCode is the error number of a *mysql.MySQLError in err's chain, or 0.
func mysqlCode(err error) uint16 {
	v := findType(err, mysqlPkg, "MySQLError")
	if v == nil {
		return 0
	}
	f := fieldOf(v, "Number")
	if !f.IsValid() || f.Kind() != reflect.Uint16 {
		return 0
	}
	return uint16(f.Uint())
}

// sqliteCode is the (extended) result code of a SQLite error in err's
// chain, or 0.
func sqliteCode(err error) int {
	var e interface{ Code() int }
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// findType returns the first error in err's chain (errors.Is order) whose
// type, or the type it points to, is pkg.name; nil when there is none.
func findType(err error, pkg, name string) error {
	for _, e := range chain(err) {
		t := reflect.TypeOf(e)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.PkgPath() == pkg && t.Name() == name {
			return e
		}
	}
	return nil
}

// hasText reports whether an error in err's chain that wraps nothing has
// one of the texts: how sentinel errors of a package this one does not
// import are recognised.
func hasText(err error, texts ...string) bool {
	for _, e := range chain(err) {
		switch e.(type) {
		case interface{ Unwrap() error }, interface{ Unwrap() []error }:
			continue
		}
		for _, text := range texts {
			if e.Error() == text {
				return true
			}
		}
	}
	return false
}

// chain lists err and every error it wraps, depth first, as errors.Is
// visits them.
func chain(err error) []error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		for e != nil {
			out = append(out, e)
			switch u := e.(type) {
			case interface{ Unwrap() error }:
				e = u.Unwrap()
			case interface{ Unwrap() []error }:
				for _, inner := range u.Unwrap() {
					walk(inner)
				}
				return
			default:
				return
			}
		}
	}
	walk(err)
	return out
}

// fieldOf is the exported field name of the struct e is (or points to);
// the zero Value when there is none.
func fieldOf(e error, name string) reflect.Value {
	v := reflect.ValueOf(e)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.FieldByName(name)
}

// stringField is the string field name of e, or "".
func stringField(e error, name string) string {
	if e == nil {
		return ""
	}
	f := fieldOf(e, name)
	if !f.IsValid() || f.Kind() != reflect.String {
		return ""
	}
	return f.String()
}
