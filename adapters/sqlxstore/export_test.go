package sqlxstore

import (
	"context"
	"time"
)

// DropTables drops the tables of db's prefix: tests clean up with it. Of
// a mapped users table (Config.Users) it drops only the side table: the
// app's table is the test's to drop.
func (db *DB) DropTables(ctx context.Context) error {
	tables := []string{db.t.prefix + "identities", db.t.challenges, db.t.passkeys, db.t.passkeyHandles, db.t.sessions, db.t.trusted, db.t.emailCodes, db.t.signIns, db.t.prefix + "api_keys", db.t.users, db.t.limits, db.t.settings, db.t.migrations}
	if db.s.mapped {
		tables = []string{db.t.prefix + "identities", db.t.challenges, db.t.passkeys, db.t.passkeyHandles, db.t.sessions, db.t.trusted, db.t.emailCodes, db.t.signIns, db.t.prefix + "api_keys", db.t.limits, db.t.settings, db.t.migrations}
		if db.s.side {
			tables = append([]string{db.s.sideName}, tables...)
		}
	}
	for _, t := range tables {
		if _, err := db.x.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return err
		}
	}
	return nil
}

// DeleteRows deletes every row of db's tables but the migrations and
// settings tables (what Migrate recorded), children first: the schema
// stays for the next test. Of a mapped users table it empties only the
// side table: the app's table is the test's to empty.
func (db *DB) DeleteRows(ctx context.Context) error {
	tables := []string{db.t.prefix + "identities", db.t.challenges, db.t.passkeys, db.t.passkeyHandles, db.t.sessions, db.t.trusted, db.t.emailCodes, db.t.signIns, db.t.prefix + "api_keys", db.t.users, db.t.limits}
	if db.s.mapped {
		tables = []string{db.t.prefix + "identities", db.t.challenges, db.t.passkeys, db.t.passkeyHandles, db.t.sessions, db.t.trusted, db.t.emailCodes, db.t.signIns, db.t.prefix + "api_keys", db.t.limits}
		if db.s.side {
			tables = append([]string{db.s.sideName}, tables...)
		}
	}
	if db.noLimitsTable {
		tables = tables[:len(tables)-1]
	}
	for _, t := range tables {
		if _, err := db.x.ExecContext(ctx, "DELETE FROM "+t); err != nil {
			return err
		}
	}
	return nil
}

// TablePrefix is the prefix db's tables use.
func (db *DB) TablePrefix() string { return db.t.prefix }

var StorageKey = storageKey

// SetCleanupTicker makes the rate-limit cleanup run on the ticks of tick
// instead of a timer. Call it before Limits.
func (db *DB) SetCleanupTicker(tick <-chan time.Time) {
	db.newTicker = func(time.Duration) (<-chan time.Time, func()) { return tick, func() {} }
}
