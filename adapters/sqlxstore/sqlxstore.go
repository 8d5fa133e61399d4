package sqlxstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/authkit-go/authkit/adapters/sqlxstore/internal/poolown"
	"github.com/authkit-go/authkit/core/user"
)

// Dialect names the SQL database behind a [DB]. The package imports no
// database driver: the app opens its pool with the driver it links (or
// through package sqlxopen, which links all three) and names the dialect.
type Dialect string

// The supported dialects, each tested with one driver.
const (
	Postgres Dialect = "postgres" // PostgreSQL 12+, through pgx's database/sql driver (github.com/jackc/pgx/v5/stdlib)
	MySQL    Dialect = "mysql"    // MySQL 8 or MariaDB 10.5+, through github.com/go-sql-driver/mysql
	SQLite   Dialect = "sqlite"   // SQLite through modernc.org/sqlite (pure Go, no cgo)
)

// valid reports whether d is one of the supported dialects.
func (d Dialect) valid() bool { return d == Postgres || d == MySQL || d == SQLite }

// driverName is the database/sql driver name sqlx knows the dialect's
// placeholders by.
func (d Dialect) driverName() string {
	if d == Postgres {
		return "pgx"
	}
	return string(d)
}

// Defaults of [Config].
const (
	// DefaultTablePrefix starts the name of every table: authkit_users,
	// authkit_rate_limits and authkit_schema_migrations.
	DefaultTablePrefix = "authkit_"

	// DefaultCleanupInterval is how often the rate-limit store deletes
	// expired counters when Config.CleanupInterval is zero.
	DefaultCleanupInterval = 60 * time.Second
)

// ErrInvalidConfig is wrapped by the error [New], [NewSQL], [Migrations]
// (and sqlxopen.Open) return for an unusable [Config], dialect, database
// URL or driver.
var ErrInvalidConfig = errors.New("sqlxstore: invalid config")

// Config configures a [DB]. The zero value means all defaults; New, NewSQL,
// Migrations and sqlxopen.Open never modify it.
type Config struct {
	// Dialect is the database behind the pool: [Postgres], [MySQL] or
	// [SQLite]. Default for [New]: from the pool's driver name ("pgx" or
	// "pgx/v5", "mysql", "sqlite"); set it when the driver is registered
	// under another name (a wrapper for tracing, say).
	Dialect Dialect

	// TablePrefix starts every table and index name, so that authkit's
	// tables sit beside the app's own, or several apps share one database;
	// with Users.Layout LayoutColumns it also starts the columns authkit
	// adds to the app's users table. It must match [a-z_][a-z0-9_]* and be
	// at most 32 bytes. There is no way to have no prefix: empty means the
	// default. Default: "authkit_" (DefaultTablePrefix).
	TablePrefix string

	// NoLimitsTable says that the rate limits live elsewhere (Redis, or
	// memory): [DB.Migrate] does not create <prefix>rate_limits, and
	// [Migrations] leaves it out. Do not use [DB.Limits] then. A later
	// Migrate without it creates the table. Default: false, the table is
	// made.
	NoLimitsTable bool

	// Users maps the user store onto a users table the app already has:
	// its table, columns and id type, and where authkit keeps its own
	// state. Default (the zero value): authkit's own <prefix>users table
	// with text ids.
	Users UsersTable

	// Now is the clock: CreatedAt of new users, and the start and end of
	// rate-limit windows. Default: time.Now.
	Now func() time.Time

	// CleanupInterval is how often the rate-limit store deletes expired
	// counters in the background, once [DB.Limits] has been called, and
	// the one-time store expired values, once [DB.OneTime] has been.
	// Negative: never (call [LimitStore.Cleanup] and
	// [OneTimeStore.Cleanup] yourself). Default: 60 seconds.
	CleanupInterval time.Duration

	// Logger receives the errors of the background cleanup.
	// Default: slog.Default().
	Logger *slog.Logger

	// MaxOpenConns caps the pool that sqlxopen.Open makes for PostgreSQL
	// and MySQL/MariaDB, so a burst of requests waits for a connection
	// instead of exhausting the server's max_connections (every request
	// over it would fail with 503). Default: 25. SQLite pools are capped at
	// 4; New and NewSQL leave the app's own pool as it is.
	MaxOpenConns int
}

var prefixPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,31}$`)

// tables holds the full table names for one prefix.
type tables struct {
	prefix, users, limits, migrations string
	settings                          string
	sessions, trusted                 string
	passkeys, passkeyHandles          string
	challenges                        string
	emailCodes, signIns               string
}

func newTables(prefix string) tables {
	return tables{
		prefix:         prefix,
		users:          prefix + "users",
		limits:         prefix + "rate_limits",
		migrations:     prefix + "schema_migrations",
		settings:       prefix + "schema_settings",
		sessions:       prefix + "sessions",
		trusted:        prefix + "trusted_devices",
		passkeys:       prefix + "passkeys",
		passkeyHandles: prefix + "passkey_handles",
		challenges:     prefix + "challenges",
		emailCodes:     prefix + "email_codes",
		signIns:        prefix + "sign_ins",
	}
}

// DB is authkit's view of one SQL database: the user store, the rate-limit
// store and the migrations, over one connection pool. It is safe for
// concurrent use. Make one with [New] or [NewSQL] over a pool the app
// opened (or with sqlxopen.Open from a URL), run [DB.Migrate] once at
// start-up, and [DB.Close] it on shutdown.
type DB struct {
	x             *sqlx.DB
	dialect       Dialect
	t             tables
	s             *schema // the user store's tables and columns (Config.Users)
	now           func() time.Time
	log           *slog.Logger
	cleanup       time.Duration
	owned         bool // sqlxopen.Open made the pool, so Close closes it
	noLimitsTable bool // Config.NoLimitsTable
	users         *UserStore

	// newTicker drives the rate-limit cleanup; tests replace it.
	newTicker func(time.Duration) (<-chan time.Time, func())
	// backoff is the wait between retries; nil (in unit tests) for none.
	backoff func(attempt int) time.Duration

	mu      sync.Mutex
	limits  *LimitStore   // made by the first Limits call
	onetime *OneTimeStore // made by the first OneTime call
	closed  bool
}

// New returns a DB over a pool the app opened itself, with the driver of
// its choice: this package links none. The dialect is cfg.Dialect or, when
// that is empty, the pool's driver name: "pgx" or "pgx/v5"
// (github.com/jackc/pgx/v5/stdlib), "mysql" (github.com/go-sql-driver/mysql)
// or "sqlite" (modernc.org/sqlite). Open the pool with the settings
// sqlxopen.Open uses, which the stores rely on:
//
//   - MySQL: clientFoundRows=true (a conditional update that changes
//     nothing must still count its row; [DB.Migrate] refuses a connection
//     without it).
//   - SQLite: _pragma=busy_timeout(5000), _txlock=immediate, and
//     journal_mode(WAL) for concurrent readers.
//
// Errors are classified (unique violations, lost races, an unreachable
// server: see [DB.Ping]) for those three drivers; with another driver the
// stores work but report its errors unclassified. Close does not close a
// pool passed to New.
func New(db *sqlx.DB, cfg Config) (*DB, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil *sqlx.DB", ErrInvalidConfig)
	}
	d := cfg.Dialect
	if d == "" {
		switch db.DriverName() {
		case "pgx", "pgx/v5":
			d = Postgres
		case "mysql":
			d = MySQL
		case "sqlite":
			d = SQLite
		default:
			return nil, fmt.Errorf("%w: driver %q is not one sqlxstore knows (pgx, mysql or sqlite): set Config.Dialect", ErrInvalidConfig, db.DriverName())
		}
	}
	return newDB(db, d, cfg)
}

// NewSQL is [New] for a *sql.DB, which does not know its dialect: d names
// it (cfg.Dialect, when set, must agree). Close does not close db.
func NewSQL(db *sql.DB, d Dialect, cfg Config) (*DB, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil *sql.DB", ErrInvalidConfig)
	}
	if cfg.Dialect != "" && cfg.Dialect != d {
		return nil, fmt.Errorf("%w: dialect %q and Config.Dialect %q differ", ErrInvalidConfig, d, cfg.Dialect)
	}
	if !d.valid() {
		return nil, fmt.Errorf("%w: dialect %q is not supported (postgres, mysql or sqlite)", ErrInvalidConfig, d)
	}
	return newDB(sqlx.NewDb(db, d.driverName()), d, cfg)
}

// newDB checks cfg and returns the DB over x. x may be nil: [Migrations]
// needs only the configuration.
func newDB(x *sqlx.DB, d Dialect, cfg Config) (*DB, error) {
	if !d.valid() {
		return nil, fmt.Errorf("%w: dialect %q is not supported (postgres, mysql or sqlite)", ErrInvalidConfig, d)
	}
	if cfg.Dialect != "" && cfg.Dialect != d {
		return nil, fmt.Errorf("%w: dialect %q and Config.Dialect %q differ", ErrInvalidConfig, d, cfg.Dialect)
	}
	prefix := cfg.TablePrefix
	if prefix == "" {
		prefix = DefaultTablePrefix
	}
	if !prefixPattern.MatchString(prefix) {
		return nil, fmt.Errorf("%w: TablePrefix %q must match [a-z_][a-z0-9_]* and be at most 32 bytes", ErrInvalidConfig, prefix)
	}
	s, err := newSchema(d, prefix, cfg.Users)
	if err != nil {
		return nil, err
	}
	db := &DB{
		x:       x,
		dialect: d,
		t:       newTables(prefix),
		s:       s,
		now:     cfg.Now,
		log:     cfg.Logger,
		cleanup: cfg.CleanupInterval,
		backoff: backoff,

		noLimitsTable: cfg.NoLimitsTable,
	}
	if db.now == nil {
		db.now = time.Now
	}
	if db.log == nil {
		db.log = slog.Default()
	}
	if db.cleanup == 0 {
		db.cleanup = DefaultCleanupInterval
	}
	db.newTicker = func(d time.Duration) (<-chan time.Time, func()) {
		t := time.NewTicker(d)
		return t.C, t.Stop
	}
	db.users = newUserStore(db)
	return db, nil
}

// Dialect reports which database the DB talks to.
func (db *DB) Dialect() Dialect { return db.dialect }

// SQLX returns the connection pool, for the app's own queries and for
// tuning (SetMaxOpenConns and friends).
func (db *DB) SQLX() *sqlx.DB { return db.x }

// Users returns the [user.Store] over the users table.
func (db *DB) Users() *UserStore { return db.users }

// Limits returns the [ratelimit.Store] over the rate_limits table. The
// first call starts its background cleanup (see Config.CleanupInterval),
// which [DB.Close] stops. Every call returns the same store; the auth
// flows share it between their limits, whose keys carry the limit's name.
func (db *DB) Limits() *LimitStore {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.limits == nil {
		db.limits = newLimitStore(db, !db.closed)
	}
	return db.limits
}

// Close stops the background cleanup of the rate-limit and one-time
// stores and, when sqlxopen.Open made the pool, closes it. It is safe to
// call more than once.
func (db *DB) Close() error {
	db.mu.Lock()
	wasClosed := db.closed
	db.closed = true
	limits, once := db.limits, db.onetime
	db.mu.Unlock()
	if limits != nil {
		_ = limits.Close()
	}
	if once != nil {
		_ = once.Close()
	}
	if db.owned && !wasClosed {
		return db.x.Close()
	}
	return nil
}

// Ping checks that the database answers, for start-up and readiness
// checks. An error that means the database cannot be reached or cannot
// serve (refused or broken connection, timeout, server shutting down, too
// many connections) wraps [user.ErrUnavailable].
func (db *DB) Ping(ctx context.Context) error {
	if err := db.x.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlxstore: connect: %w", db.unavailableIf(err))
	}
	return nil
}

// unavailableIf returns err wrapped with user.ErrUnavailable when it means
// the backend could not be reached or failed, and err otherwise.
func (db *DB) unavailableIf(err error) error {
	if db.unavailable(err) {
		return fmt.Errorf("%w: %w", user.ErrUnavailable, err)
	}
	return err
}

func init() {
	poolown.Own = func(db any) { db.(*DB).owned = true }
}
