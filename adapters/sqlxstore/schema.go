package sqlxstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Migration is one versioned change of authkit's schema, as SQL for one
// dialect and configuration (the table prefix filled in): what [DB.Migrate]
// runs, for teams that migrate with their own tool (goose, golang-migrate,
// atlas) or review the SQL first.
type Migration struct {
	// Version orders the migrations: 1, 2, ...
	Version int

	// Name is the migration's name: "0001_init".
	Name string

	// SQL is the migration's statements, each ending with ";" on its own
	// line end, then two statements that record it where [DB.Migrate] and
	// [DB.MigrationStatus] look: CREATE TABLE IF NOT EXISTS
	// <prefix>schema_migrations, and an INSERT of the version that does
	// nothing when it is already there. Applied by another tool, it leaves
	// the database exactly as Migrate would, so Migrate then finds nothing
	// to do, and the app may switch between the two. Every statement is
	// safe to run again.
	SQL string
}

// MigrationState is a [Migration] and whether the database has it.
type MigrationState struct {
	Migration

	// Applied reports whether the schema_migrations table records the
	// migration.
	Applied bool

	// AppliedAt is when it was applied (UTC, milliseconds); zero when it
	// is pending.
	AppliedAt time.Time
}

// Migrations returns the migrations of dialect d for cfg (its TablePrefix),
// in version order, without a database: the SQL [DB.Migrate] would apply
// to an empty schema. An unknown dialect or an invalid cfg gives an error
// wrapping [ErrInvalidConfig].
func Migrations(d Dialect, cfg Config) ([]Migration, error) {
	db, err := newDB(nil, d, cfg)
	if err != nil {
		return nil, err
	}
	ms, err := db.migrations()
	if err != nil {
		return nil, fmt.Errorf("sqlxstore: migrations: %w", err)
	}
	out := make([]Migration, len(ms))
	for i, m := range ms {
		out[i] = db.exported(m)
	}
	return out, nil
}

// MigrationStatus lists every migration this version of the package has,
// in version order, with whether the database has applied it and when. It
// changes nothing: on an empty schema every migration is pending.
func (db *DB) MigrationStatus(ctx context.Context) ([]MigrationState, error) {
	ms, err := db.migrations()
	if err != nil {
		return nil, fmt.Errorf("sqlxstore: migration status: %w", err)
	}
	exists, err := db.tableExists(ctx, db.x, db.t.migrations)
	if err != nil {
		return nil, db.fail("migration status", err)
	}
	applied := map[int64]int64{} // version: applied_at
	if exists {
		var rows []struct {
			Version   int64 `db:"version"`
			AppliedAt int64 `db:"applied_at"`
		}
		if err := db.x.SelectContext(ctx, &rows, db.query(`SELECT version, applied_at FROM {{prefix}}schema_migrations`)); err != nil {
			return nil, db.fail("migration status", err)
		}
		for _, r := range rows {
			applied[r.Version] = r.AppliedAt
		}
	}
	out := make([]MigrationState, len(ms))
	for i, m := range ms {
		out[i].Migration = db.exported(m)
		if at, ok := applied[m.version]; ok {
			out[i].Applied = true
			out[i].AppliedAt = time.UnixMilli(at).UTC()
		}
	}
	return out, nil
}

// exported is m as a [Migration]: its statements, then the two that record
// it in the migrations table.
func (db *DB) exported(m migration) Migration {
	var b strings.Builder
	for _, stmt := range m.stmts {
		b.WriteString(stmt)
		b.WriteString(";\n\n")
	}
	b.WriteString("-- Record the migration where sqlxstore's Migrate and MigrationStatus look for it.\n")
	b.WriteString(db.migrationsTable())
	b.WriteString(";\n\n")
	b.WriteString(db.recordMigration(m.version))
	b.WriteString(";\n")
	return Migration{Version: int(m.version), Name: strings.TrimSuffix(m.name, ".sql"), SQL: b.String()}
}

// recordMigration is the INSERT that records version in the migrations
// table, at the database's clock, and does nothing when it is there.
func (db *DB) recordMigration(version int64) string {
	v := strconv.FormatInt(version, 10)
	q := "INSERT INTO " + db.t.migrations + " (version, applied_at) VALUES (" + v + ", "
	switch db.dialect {
	case Postgres:
		return q + "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT) ON CONFLICT (version) DO NOTHING"
	case MySQL:
		return q + "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)) ON DUPLICATE KEY UPDATE version = version"
	default:
		return q + "CAST(strftime('%s', 'now') AS INTEGER) * 1000) ON CONFLICT (version) DO NOTHING"
	}
}
