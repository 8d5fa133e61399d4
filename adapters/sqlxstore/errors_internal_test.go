package sqlxstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/user"
)

func TestRetryLostRaces(t *testing.T) {
	for _, tt := range []struct {
		dialect Dialect
		lost    error
	}{
		{MySQL, &mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock"}},
		{MySQL, &mysql.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded"}},
		{Postgres, &pgconn.PgError{Code: "40P01"}},
		{Postgres, &pgconn.PgError{Code: "40001"}},
	} {
		db := &DB{dialect: tt.dialect}
		calls := 0
		err := db.retry(context.Background(), func() error {
			calls++
			if calls < 3 {
				return fmt.Errorf("exec: %w", tt.lost)
			}
			return nil
		})
		if err != nil || calls != 3 {
			t.Errorf("%s %v: retry = %v after %d calls, want success on the 3rd", tt.dialect, tt.lost, err, calls)
		}

		calls = 0
		err = db.retry(context.Background(), func() error { calls++; return tt.lost })
		if calls != maxAttempts || !errors.Is(db.fail("op", err), user.ErrUnavailable) {
			t.Errorf("%s %v: %d calls, error %v; want %d calls and ErrUnavailable", tt.dialect, tt.lost, calls, err, maxAttempts)
		}
	}

	db := &DB{dialect: MySQL}
	calls := 0
	dup := &mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'a' for key 'authkit_users_email_key'"}
	if err := db.retry(context.Background(), func() error { calls++; return dup }); err != dup || calls != 1 {
		t.Errorf("a unique violation was retried: %d calls, %v", calls, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls = 0
	_ = db.retry(ctx, func() error { calls++; return &mysql.MySQLError{Number: 1213} })
	if calls != 1 {
		t.Errorf("retry went on after its context ended: %d calls", calls)
	}
}

func TestUnavailable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tt := range []struct {
		dialect Dialect
		err     error
		want    bool
	}{
		{Postgres, driver.ErrBadConn, true},
		{Postgres, context.DeadlineExceeded, true},
		{Postgres, refused, true},
		{Postgres, &pgconn.PgError{Code: "57P01"}, true},
		{Postgres, &pgconn.PgError{Code: "53300"}, true},
		{Postgres, &pgconn.PgError{Code: "08006"}, true},
		{Postgres, fmt.Errorf("wrapped: %w", pgconn.ErrConnClosed), true},
		{Postgres, &pgconn.PgError{Code: "42601"}, false}, // syntax error: a bug, 500
		{Postgres, &pgconn.PgError{Code: "23505"}, false},
		{Postgres, context.Canceled, false},
		{MySQL, mysql.ErrInvalidConn, true},
		{MySQL, &mysql.MySQLError{Number: 1040}, true},
		{MySQL, &mysql.MySQLError{Number: 1053}, true},
		{MySQL, &mysql.MySQLError{Number: 1064}, false},
		{MySQL, fmt.Errorf("exec: %w", mysql.ErrMalformPkt), true},
		{MySQL, mysql.ErrPktSync, true},
		{MySQL, mysql.ErrPktSyncMul, true},
		{MySQL, errors.New("Error 1040: invalid connection and more"), false},
		{MySQL, &lookalike{Number: 1040}, false}, // the driver's type, not any type with its field
		{Postgres, &lookalike{Number: 1040}, false},
		{MySQL, &mysql.MySQLError{Number: 1062}, false},
		{SQLite, refused, true},
		{SQLite, errors.New("no such table"), false},
	} {
		db := &DB{dialect: tt.dialect}
		if got := db.unavailable(tt.err); got != tt.want {
			t.Errorf("%s unavailable(%v) = %v, want %v", tt.dialect, tt.err, got, tt.want)
		}
		if got := errors.Is(db.fail("op", tt.err), user.ErrUnavailable); got != tt.want {
			t.Errorf("%s fail(%v) wraps ErrUnavailable = %v, want %v", tt.dialect, tt.err, got, tt.want)
		}
		if !errors.Is(db.fail("op", tt.err), tt.err) {
			t.Errorf("%s fail(%v) lost the driver's error", tt.dialect, tt.err)
		}
	}
}

func TestUniqueViolation(t *testing.T) {
	tb := newTables("app_")
	for _, tt := range []struct {
		dialect         Dialect
		err             error
		unique, onEmail bool
	}{
		{Postgres, &pgconn.PgError{Code: "23505", ConstraintName: "app_users_email_key"}, true, true},
		{Postgres, &pgconn.PgError{Code: "23505", ConstraintName: "app_users_pkey"}, true, false},
		{Postgres, &pgconn.PgError{Code: "23503"}, false, false},
		{MySQL, &mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'a@b.c' for key 'app_users_email_key'"}, true, true},
		{MySQL, &mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'a@b.c' for key 'app_users.app_users_email_key'"}, true, true},
		{MySQL, &mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'x_users_email_key' for key 'PRIMARY'"}, true, false},
		{MySQL, &mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'a' for key 'other_users_email_key'"}, true, false},
	} {
		db := &DB{dialect: tt.dialect, t: tb}
		unique, onEmail := db.uniqueViolation(fmt.Errorf("exec: %w", tt.err))
		if unique != tt.unique || onEmail != tt.onEmail {
			t.Errorf("%s uniqueViolation(%v) = %v, %v; want %v, %v", tt.dialect, tt.err, unique, onEmail, tt.unique, tt.onEmail)
		}
	}
}

func TestStorageKey(t *testing.T) {
	long := strings.Repeat("long", 100)
	for key, hashed := range map[string]bool{
		"login:ip:1.2.3.4":        false,
		"":                        false,
		"login:email:josé@x.y":    false,
		string(make([]byte, 255)): true, // NUL bytes
		"k\x00":                   true,
		"\xff\xfe":                true, // not UTF-8
		"sha256:0123":             true, // would pass for a hashed key
		long:                      true,
		strings.Repeat("k", 255):  false,
		strings.Repeat("k", 256):  true,
	} {
		got := storageKey(key)
		if hashed != (got != key) {
			t.Errorf("storageKey(%q) = %q, hashed=%v", key, got, got != key)
		}
		if len(got) > maxKeyBytes {
			t.Errorf("storageKey(%q) is %d bytes", key, len(got))
		}
	}
	if storageKey(long) == storageKey(long+"x") {
		t.Error("two long keys share a stored key")
	}
}

// lookalike has mysql.MySQLError's fields but is not the driver's type.
type lookalike struct{ Number uint16 }

func (*lookalike) Error() string { return "lookalike" }

// TestSQLiteCodes: the result codes errors.go keeps (this package links no
// driver) are the driver's.
func TestSQLiteCodes(t *testing.T) {
	for _, c := range []struct{ ours, driver int }{
		{sqliteBusy, sqlite3.SQLITE_BUSY},
		{sqliteLocked, sqlite3.SQLITE_LOCKED},
		{sqliteNoMem, sqlite3.SQLITE_NOMEM},
		{sqliteReadOnly, sqlite3.SQLITE_READONLY},
		{sqliteIOErr, sqlite3.SQLITE_IOERR},
		{sqliteFull, sqlite3.SQLITE_FULL},
		{sqliteCantOpen, sqlite3.SQLITE_CANTOPEN},
		{sqliteConstraintPrimaryKey, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY},
		{sqliteConstraintUnique, sqlite3.SQLITE_CONSTRAINT_UNIQUE},
	} {
		if c.ours != c.driver {
			t.Errorf("result code %d, modernc.org/sqlite/lib says %d", c.ours, c.driver)
		}
	}
}

// TestRealDriverErrors classifies errors the drivers made themselves, not
// values built by hand: a SQLite unique violation and busy database, a
// pgconn connection refused.
func TestRealDriverErrors(t *testing.T) {
	ctx := t.Context()
	x, err := sqlx.Open("sqlite", "file:"+t.TempDir()+"/e.db?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	db := &DB{dialect: SQLite, t: newTables("app_")}
	for _, q := range []string{"CREATE TABLE app_users (id TEXT PRIMARY KEY, email TEXT UNIQUE)", "INSERT INTO app_users VALUES ('1', 'a@x')"} {
		if _, err := x.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	_, err = x.ExecContext(ctx, "INSERT INTO app_users VALUES ('2', 'a@x')")
	if unique, onEmail := db.uniqueViolation(err); !unique || !onEmail {
		t.Errorf("SQLite duplicate email %v: uniqueViolation = %v, %v; want true, true", err, unique, onEmail)
	}
	_, err = x.ExecContext(ctx, "INSERT INTO app_users VALUES ('1', 'b@x')")
	if unique, onEmail := db.uniqueViolation(err); !unique || onEmail {
		t.Errorf("SQLite duplicate id %v: uniqueViolation = %v, %v; want true, false", err, unique, onEmail)
	}
	if db.unavailable(err) {
		t.Errorf("a unique violation is unavailable: %v", err)
	}

	// One connection holds the write lock; another gives up at once.
	holder, err := x.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	_, err = x.ExecContext(ctx, "INSERT INTO app_users VALUES ('3', 'c@x')")
	if sqliteCode(err)&0xff != sqliteBusy || !db.unavailable(err) {
		t.Errorf("SQLite busy %v: code %d, unavailable %v; want SQLITE_BUSY, true", err, sqliteCode(err), db.unavailable(err))
	}
	_, _ = holder.ExecContext(ctx, "ROLLBACK")

	_, err = pgconn.Connect(ctx, "postgres://u@"+storetest.ClosedAddr(t)+"/x?connect_timeout=2")
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) || !(&DB{dialect: Postgres}).unavailable(err) {
		t.Errorf("pgconn connection refused %v (%T): want a *pgconn.ConnectError, unavailable", err, err)
	}
	if findType(err, pgconnPkg, "ConnectError") == nil {
		t.Errorf("findType does not see the *pgconn.ConnectError in %v", err)
	}
}
