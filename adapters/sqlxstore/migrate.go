package sqlxstore

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations
var migrationFS embed.FS

// migration is one versioned schema change: migrations/<dialect>/NNNN_name.sql.
type migration struct {
	version int64
	name    string
	stmts   []string
}

// migrations returns the dialect's migrations in version order, with the
// table prefix filled in.
func (db *DB) migrations() ([]migration, error) {
	dir := path.Join("migrations", string(db.dialect))
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, err
	}
	setting, err := db.usersSettingLiteral()
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration file %s is not NNNN_name.sql", e.Name())
		}
		b, err := fs.ReadFile(migrationFS, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		src := strings.ReplaceAll(db.withPrefix(string(b)), "{{users_setting}}", setting) // 0006
		ms = append(ms, migration{version: v, name: e.Name(), stmts: splitStatements(src)})
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("no migrations embedded for %s", db.dialect)
	}
	slices.SortFunc(ms, func(a, b migration) int { return cmp.Compare(a.version, b.version) })
	if db.s != nil && db.s.mapped {
		if ms, err = db.mappedMigrations(ms); err != nil { // Config.Users: the app's users table
			return nil, err
		}
	}
	if db.noLimitsTable {
		ms[0].stmts = slices.DeleteFunc(slices.Clone(ms[0].stmts), func(st string) bool { return namesTable(st, db.t.limits) })
	}
	return ms, nil
}

// splitStatements splits a migration file into its statements: comment
// lines are dropped, and a statement ends with a line that ends in ';'.
// (Drivers run one statement per call: MySQL's multiStatements stays off.)
func splitStatements(src string) []string {
	var stmts []string
	var cur strings.Builder
	for line := range strings.Lines(src) {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		if strings.HasSuffix(trimmed, ";") {
			stmts = append(stmts, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		stmts = append(stmts, s)
	}
	return stmts
}

// Migrate creates or upgrades authkit's tables to the schema this version
// of the package expects, applying the embedded migrations the database
// has not recorded yet in its schema_migrations table. It is idempotent,
// and safe when several processes start at once: each run holds a lock
// while it migrates (pg_advisory_xact_lock on PostgreSQL, GET_LOCK on
// MySQL, BEGIN IMMEDIATE on SQLite), so the others wait and then find
// nothing left to do. [DB.Apply] does the same and says what it applied.
//
// On PostgreSQL and SQLite all pending migrations apply in one transaction:
// all or nothing. MySQL commits DDL implicitly; its migrations are written
// so that a run interrupted half-way is completed by the next one.
//
// On MySQL, Migrate also checks that the connection counts matched rather
// than changed rows (clientFoundRows=true, which sqlxopen.Open sets), since
// the store's conditional updates depend on it.
func (db *DB) Migrate(ctx context.Context) error {
	_, err := db.Apply(ctx)
	return err
}

// Apply is [DB.Migrate], returning the migrations this call applied, in
// version order: none when the schema was up to date (or another process
// applied them while this one waited for the lock). On an error it returns
// what was committed before it: nothing on PostgreSQL and SQLite, whose
// migrations apply in one transaction; on MySQL the migrations completed
// before the failing one.
func (db *DB) Apply(ctx context.Context) ([]Migration, error) {
	ms, err := db.migrations()
	if err != nil {
		return nil, fmt.Errorf("sqlxstore: migrate: %w", err)
	}
	if err := db.checkUnrecorded(ctx); err != nil {
		return nil, err
	}
	var applied []migration
	switch db.dialect {
	case Postgres:
		applied, err = db.migratePostgres(ctx, ms)
	case MySQL:
		applied, err = db.migrateMySQL(ctx, ms)
	default:
		applied, err = db.migrateSQLite(ctx, ms)
	}
	out := make([]Migration, len(applied))
	for i, m := range applied {
		out[i] = db.exported(m)
	}
	if err != nil {
		return out, db.fail("migrate", err)
	}
	if err := db.checkUsersSchema(ctx); err != nil { // Config.Users
		return out, err
	}
	return out, nil
}

func (db *DB) migrationsTable() string {
	integer := "BIGINT"
	if db.dialect == SQLite {
		integer = "INTEGER" // STRICT tables know INTEGER, not BIGINT
	}
	q := `CREATE TABLE IF NOT EXISTS {{prefix}}schema_migrations (
		version    ` + integer + ` NOT NULL PRIMARY KEY,
		applied_at ` + integer + ` NOT NULL
	)`
	switch db.dialect {
	case MySQL:
		q += ` ENGINE=InnoDB`
	case SQLite:
		q += ` STRICT`
	}
	return db.query(q)
}

// apply creates the migrations table and applies what is missing,
// returning the migrations it applied (on an error, those before it). The
// caller holds the migration lock.
func (db *DB) apply(ctx context.Context, q queryer, ms []migration) ([]migration, error) {
	if _, err := q.ExecContext(ctx, db.migrationsTable()); err != nil {
		return nil, fmt.Errorf("create %s: %w", db.t.migrations, err)
	}
	var applied []int64
	if err := q.SelectContext(ctx, &applied, db.query(`SELECT version FROM {{prefix}}schema_migrations`)); err != nil {
		return nil, fmt.Errorf("read %s: %w", db.t.migrations, err)
	}
	var done []migration
	for _, m := range ms {
		if slices.Contains(applied, m.version) {
			continue
		}
		for _, stmt := range m.stmts {
			if _, err := q.ExecContext(ctx, stmt); err != nil {
				return done, fmt.Errorf("%s: %w", m.name, err)
			}
		}
		if _, err := q.ExecContext(ctx, db.query(`INSERT INTO {{prefix}}schema_migrations (version, applied_at) VALUES (?, ?)`),
			m.version, time.Now().UnixMilli()); err != nil {
			return done, fmt.Errorf("%s: record: %w", m.name, err)
		}
		done = append(done, m)
	}
	if err := db.ensureLimitsTable(ctx, q); err != nil {
		return done, err
	}
	if err := db.checkRecordedUsers(ctx, q); err != nil {
		return done, err
	}
	return done, nil
}

// lockKey is the advisory lock of this prefix's migrations.
func (db *DB) lockKey() int64 {
	h := fnv.New64a()
	h.Write([]byte("authkit/sqlxstore/migrate/" + db.t.prefix))
	return int64(h.Sum64())
}

// migratePostgres applies ms in one transaction; it returns what it
// applied once that is committed.
func (db *DB) migratePostgres(ctx context.Context, ms []migration) ([]migration, error) {
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, db.lockKey()); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	applied, err := db.apply(ctx, tx, ms)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return applied, nil
}

// migrateSQLite applies ms in one transaction; it returns what it applied
// once that is committed.
func (db *DB) migrateSQLite(ctx context.Context, ms []migration) ([]migration, error) {
	var applied []migration
	err := db.inSQLiteTx(ctx, func(q queryer) (err error) {
		applied, err = db.apply(ctx, q, ms)
		return err
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// mysqlLockWait is how long Migrate waits for another process's migration.
const mysqlLockWait = 60 // seconds

// migrateMySQL applies ms one statement at a time (MySQL commits DDL
// implicitly); it returns what it applied, on an error what it applied
// before it.
func (db *DB) migrateMySQL(ctx context.Context, ms []migration) ([]migration, error) {
	conn, err := db.x.Connx(ctx) // GET_LOCK belongs to the session
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// Lock names are server-wide: name the database as well as the prefix
	// (hashed to fit the 64-character limit).
	const name = `CONCAT('authkit-migrate-', LEFT(SHA2(CONCAT(DATABASE(), '.', ?), 256), 32))`
	var got sql.NullInt64
	if err := conn.GetContext(ctx, &got, `SELECT GET_LOCK(`+name+`, ?)`, db.t.prefix, mysqlLockWait); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if !got.Valid || got.Int64 != 1 {
		return nil, fmt.Errorf("lock: another migration held the lock for %d s", mysqlLockWait)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `DO RELEASE_LOCK(`+name+`)`, db.t.prefix)
	}()
	applied, err := db.apply(ctx, conn, ms)
	if err != nil {
		return applied, err
	}
	// The stores read RowsAffected as "rows matched": a no-op UPDATE of an
	// existing row must count it.
	res, err := conn.ExecContext(ctx, db.query(`UPDATE {{prefix}}schema_migrations SET applied_at = applied_at WHERE version = ?`), ms[0].version)
	if err != nil {
		return applied, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return applied, fmt.Errorf("%w: the MySQL connection must be opened with clientFoundRows=true (sqlxopen.Open does)", ErrInvalidConfig)
	}
	return applied, nil
}
