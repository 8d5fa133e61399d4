package sqlxstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
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
		var ce *pgconn.ConnectError
		if errors.As(err, &ce) || pgconn.Timeout(err) || errors.Is(err, pgconn.ErrConnClosed) {
			return true
		}
		code := pgCode(err)
		if len(code) == 5 && (pgUnavailableClasses[code[:2]] || pgUnavailableCodes[code]) {
			return true
		}
	case MySQL:
		if errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, mysql.ErrMalformPkt) ||
			errors.Is(err, mysql.ErrPktSync) || errors.Is(err, mysql.ErrPktSyncMul) {
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
		case sqlite3.SQLITE_BUSY, // outlasted busy_timeout
			sqlite3.SQLITE_LOCKED,
			sqlite3.SQLITE_NOMEM,
			sqlite3.SQLITE_READONLY,
			sqlite3.SQLITE_IOERR,
			sqlite3.SQLITE_FULL,
			sqlite3.SQLITE_CANTOPEN:
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
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			return true, pe.ConstraintName == db.t.users+"_email_key"
		}
	case MySQL:
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1062 {
			// "Duplicate entry '...' for key 'name'" (MariaDB) or
			// "... for key 'table.name'" (MySQL 8).
			return true, strings.HasSuffix(me.Message, "_email_key'") &&
				(strings.HasSuffix(me.Message, "'"+db.t.users+"_email_key'") ||
					strings.HasSuffix(me.Message, "."+db.t.users+"_email_key'"))
		}
	case SQLite:
		var se *sqlite.Error
		if errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
			return true, strings.Contains(se.Error(), db.t.users+".email")
		}
	}
	return false, false
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func mysqlCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}
