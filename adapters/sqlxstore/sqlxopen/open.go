package sqlxopen

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/internal/poolown"
)

// errInvalid is sqlxstore's: a malformed URL is an invalid configuration.
var errInvalid = sqlxstore.ErrInvalidConfig

// connectTimeout bounds a connection attempt when the URL does not set its
// own: an unreachable server fails requests in seconds, not minutes.
const connectTimeout = 10 * time.Second

// sqliteBusyTimeout is how long a SQLite connection waits for the write
// lock before it gives up with SQLITE_BUSY.
const sqliteBusyTimeout = 5 * time.Second

// sqliteMaxOpenConns caps the pool of a SQLite file. SQLite runs one writer
// at a time; more connections only add readers and writers that wait in
// the busy handler.
const sqliteMaxOpenConns = 4

// defaultMaxOpenConns caps a PostgreSQL or MySQL pool made by Open.
const defaultMaxOpenConns = 25

// Open connects to the database named by databaseURL, checks that it
// answers and returns a [sqlxstore.DB] that owns the pool: its Close closes
// it. It does not create the tables: call [sqlxstore.DB.Migrate]. The URL
// forms are:
//
//	postgres://user:pass@host:5432/db?sslmode=disable   (or postgresql://)
//	mysql://user:pass@host:3306/db?param=value
//	sqlite:///absolute/path/app.db
//	sqlite://relative/path/app.db
//	sqlite::memory:
//
// PostgreSQL URLs go to pgx as they are, with connect_timeout=10 added when
// absent. MySQL/MariaDB URLs become a go-sql-driver DSN over TCP (port 3306
// by default) with parseTime=true, clientFoundRows=true, multiStatements
// off, collation utf8mb4_bin and a 10 s dial timeout unless the URL sets
// them; other query parameters are the driver's own. SQLite paths open
// with busy_timeout 5000 ms, WAL journal and immediate transactions, unless
// the URL's own _pragma or _txlock parameters say otherwise; the pool holds
// at most 4 connections. sqlite::memory: is a private in-memory database on
// a single connection, gone when the DB is closed: for tests and demos.
//
// cfg.Dialect, when set, must be the URL's. The pool's size comes from
// cfg.MaxOpenConns. A server that cannot be reached gives an error
// wrapping user.ErrUnavailable; a malformed URL or an invalid cfg one
// wrapping [sqlxstore.ErrInvalidConfig]. Errors never contain the URL's
// password.
func Open(ctx context.Context, databaseURL string, cfg sqlxstore.Config) (*sqlxstore.DB, error) {
	d, driverName, dsn, memory, err := parseURL(databaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.Dialect != "" && cfg.Dialect != d {
		return nil, fmt.Errorf("%w: Config.Dialect %q but a %s URL", errInvalid, cfg.Dialect, d)
	}
	cfg.Dialect = d // cfg is Open's copy
	x, err := sqlx.Open(driverName, dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errInvalid, d, err)
	}
	if d == sqlxstore.SQLite {
		if memory {
			// Every connection to :memory: is a database of its own: keep
			// exactly one, forever.
			x.SetMaxOpenConns(1)
			x.SetMaxIdleConns(1)
			x.SetConnMaxLifetime(0)
			x.SetConnMaxIdleTime(0)
		} else {
			x.SetMaxOpenConns(sqliteMaxOpenConns)
			x.SetMaxIdleConns(sqliteMaxOpenConns)
		}
	} else {
		n := cfg.MaxOpenConns
		if n <= 0 {
			n = defaultMaxOpenConns
		}
		x.SetMaxOpenConns(n)
		x.SetMaxIdleConns(n)
	}
	db, err := sqlxstore.New(x, cfg)
	if err != nil {
		_ = x.Close()
		return nil, err
	}
	poolown.Own(db)
	if err := db.Ping(ctx); err != nil {
		_ = x.Close()
		return nil, err
	}
	return db, nil
}

// Dialect returns the dialect of a database URL (its scheme), without
// connecting: for tools that print the schema of the database a URL names.
// An unknown or missing scheme wraps [sqlxstore.ErrInvalidConfig].
func Dialect(databaseURL string) (sqlxstore.Dialect, error) {
	d, _, _, _, err := parseURL(databaseURL)
	return d, err
}

// parseURL turns a database URL into a dialect, a driver name and that
// driver's DSN.
func parseURL(raw string) (d sqlxstore.Dialect, driverName, dsn string, memory bool, err error) {
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok {
		return "", "", "", false, fmt.Errorf("%w: database URL has no scheme (want postgres://, mysql:// or sqlite://)", errInvalid)
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		dsn, err = postgresDSN(raw)
		return sqlxstore.Postgres, "pgx", dsn, false, err
	case "mysql":
		dsn, err = mysqlDSN(raw)
		return sqlxstore.MySQL, "mysql", dsn, false, err
	case "sqlite":
		dsn, memory, err = sqliteDSN(rest)
		return sqlxstore.SQLite, "sqlite", dsn, memory, err
	default:
		return "", "", "", false, fmt.Errorf("%w: database URL scheme %q is not supported (want postgres://, mysql:// or sqlite://)", errInvalid, scheme)
	}
}

func postgresDSN(raw string) (string, error) {
	_, query, _ := strings.Cut(raw, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("%w: postgres URL: malformed query", errInvalid)
	}
	if !q.Has("connect_timeout") {
		sep := "?"
		if strings.Contains(raw, "?") {
			sep = "&"
		}
		raw += sep + fmt.Sprintf("connect_timeout=%d", int(connectTimeout.Seconds()))
	}
	// What pgx would refuse at the first connection (a bad port, a bad
	// percent-encoding, an unknown sslmode) is a malformed URL, not an
	// unreachable server. pgx's message repeats the URL, password
	// redacted; only its reason is kept.
	if _, err := pgx.ParseConfig(raw); err != nil {
		msg := err.Error()
		if _, reason, ok := strings.Cut(msg, "`: "); ok {
			msg = reason
		}
		return "", fmt.Errorf("%w: postgres URL: %s", errInvalid, msg)
	}
	return raw, nil
}

func mysqlDSN(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: mysql URL is malformed (want mysql://user:pass@host:port/db)", errInvalid)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("%w: mysql URL has no host", errInvalid)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	if dbName == "" || strings.Contains(dbName, "/") {
		return "", fmt.Errorf("%w: mysql URL must name one database: mysql://user:pass@host:port/db", errInvalid)
	}
	if _, err := url.ParseQuery(u.RawQuery); err != nil {
		return "", fmt.Errorf("%w: mysql URL: malformed query", errInvalid)
	}
	// The driver applies its own parameters; the rest of the Config is
	// filled in from the URL's parts, so a password may hold any character.
	cfg, err := mysql.ParseDSN("/?" + u.RawQuery)
	if err != nil {
		return "", fmt.Errorf("%w: mysql URL parameters: %v", errInvalid, err)
	}
	port := u.Port()
	if port == "" {
		port = "3306"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("%w: mysql URL: port %q is not a number from 1 to 65535", errInvalid, port)
	}
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort(u.Hostname(), port)
	cfg.DBName = dbName
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.ParseTime = true
	cfg.ClientFoundRows = true  // RowsAffected counts matched rows: see sqlxstore.New
	cfg.MultiStatements = false // one statement per call, always
	if cfg.Collation == "" {
		cfg.Collation = "utf8mb4_bin"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = connectTimeout
	}
	return cfg.FormatDSN(), nil
}

// sqliteDSN turns the part of a sqlite URL after "sqlite:" into a modernc
// DSN: the path, then the query with authkit's defaults added.
func sqliteDSN(rest string) (dsn string, memory bool, err error) {
	var path, query string
	switch {
	case rest == ":memory:" || strings.HasPrefix(rest, ":memory:?"):
		path, query, _ = strings.Cut(rest, "?")
		memory = true
	case strings.HasPrefix(rest, "//"):
		path, query, _ = strings.Cut(rest[2:], "?")
		if path, err = url.PathUnescape(path); err != nil {
			return "", false, fmt.Errorf("%w: sqlite URL path: %v", errInvalid, err)
		}
		memory = path == ":memory:"
	default:
		return "", false, fmt.Errorf("%w: sqlite URL must be sqlite::memory: or sqlite://path", errInvalid)
	}
	if path == "" {
		return "", false, fmt.Errorf("%w: sqlite URL has no path", errInvalid)
	}
	if strings.Contains(path, "?") {
		return "", false, fmt.Errorf("%w: sqlite path must not contain '?'", errInvalid)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", false, fmt.Errorf("%w: sqlite URL: malformed query", errInvalid)
	}
	hasPragma := func(name string) bool {
		for _, p := range q["_pragma"] {
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(p)), name) {
				return true
			}
		}
		return false
	}
	if !hasPragma("busy_timeout") && !q.Has("_busy_timeout") && !q.Has("_timeout") {
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeout.Milliseconds()))
	}
	if !memory && !hasPragma("journal_mode") && !q.Has("_journal_mode") && !q.Has("_journal") {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	if !q.Has("_txlock") {
		q.Set("_txlock", "immediate")
	}
	return path + "?" + q.Encode(), memory, nil
}
