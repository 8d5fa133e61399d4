package sqlxstore

import (
	"context"
	"fmt"
	"strings"
)

// mappedMigrations turns the embedded migrations into those of a mapped
// users table (Config.Users): the rate-limit table as always, authkit's
// <prefix>users table never, and instead authkit's state in the app's
// table (LayoutColumns) or in <prefix>user_state (LayoutSideTable). Only
// 0001 touches the users table; the later ones (0002: sessions and trusted
// devices; 0003: passkeys; 0004: one-time values; 0005: email codes;
// 0006: the recorded configuration; 0007: external identities; 0008:
// first sign-ins; 0009: personal API keys; each
// naming users by id only, no foreign key) apply as they are. A later migration that touches the users table must
// get a mapped form here too, which the check below enforces.
func (db *DB) mappedMigrations(embedded []migration) ([]migration, error) {
	if len(embedded) == 0 || embedded[0].version != 1 {
		return nil, fmt.Errorf("migrations start at %s, not 0001: no form for a mapped users table (Config.Users)", embedded[0].name)
	}
	for _, m := range embedded[1:] {
		for _, st := range m.stmts {
			if namesTable(st, db.t.users) {
				return nil, fmt.Errorf("migration %s has no form for a mapped users table (Config.Users)", m.name)
			}
		}
	}
	m := embedded[0]
	ownUsers := "CREATE TABLE IF NOT EXISTS " + db.t.users + " ("
	var stmts []string
	for _, st := range m.stmts {
		if !strings.HasPrefix(st, ownUsers) {
			stmts = append(stmts, st)
		}
	}
	if len(stmts) != len(m.stmts)-1 {
		return nil, fmt.Errorf("%s: found no CREATE TABLE of %s to replace", m.name, db.t.users)
	}
	stmts = append(stmts, db.usersStateSQL()...)
	return append([]migration{{version: 1, name: m.name, stmts: stmts}}, embedded[1:]...), nil
}

// stateColumn is one of authkit's columns for a mapped table.
type stateColumn struct {
	name string // the field: two_factor_enabled, ...
	typ  string // its SQL type and constraints for the dialect
}

// stateColumns are authkit's columns for a mapped table, per dialect: the
// types of migrations/<dialect>/0001_init.sql, except that name and
// created_at (when the app's table has no such column) may be NULL, which
// rows the app had before authkit are.
func (db *DB) stateColumns() []stateColumn {
	sc := db.s
	var cols []stateColumn
	text, blob, big, integer, boolean := "TEXT", "TEXT", "BIGINT", "INTEGER", "BOOLEAN NOT NULL DEFAULT FALSE"
	hashes := "TEXT"
	switch db.dialect {
	case MySQL:
		blob, integer, hashes = "BLOB", "INT", "MEDIUMBLOB"
	case SQLite:
		big = "INTEGER"
		boolean = "INTEGER NOT NULL DEFAULT 0 CHECK (%s IN (0, 1))"
	}
	if sc.nameInState {
		cols = append(cols, stateColumn{"name", text + " NULL"})
	}
	if sc.createdInState {
		cols = append(cols, stateColumn{"created_at", big + " NULL"})
	}
	return append(cols,
		stateColumn{"two_factor_enabled", boolean},
		stateColumn{"totp_secret", blob + " NULL"},
		stateColumn{"pending_totp_secret", blob + " NULL"},
		stateColumn{"recovery_code_hashes", hashes + " NULL"},
		stateColumn{"last_totp_step", big + " NULL"},
		stateColumn{"email_verified_at", big + " NULL"},
		stateColumn{"email_changed_at", big + " NULL"},
		stateColumn{"password_changed_at", big + " NULL"},
		stateColumn{"session_version", big + " NOT NULL DEFAULT 0"},
		stateColumn{"failed_logins", integer + " NOT NULL DEFAULT 0"},
		stateColumn{"locked_until", big + " NULL"},
	)
}

// usersStateSQL is the SQL that gives a mapped users table authkit's state:
// it alters or references the app's table, never creates or drops it.
func (db *DB) usersStateSQL() []string {
	sc := db.s
	p := db.t.prefix
	var stmts []string
	cols := db.stateColumns()
	width := len("user_id")
	if !sc.side {
		width = 0
	}
	for _, c := range cols {
		if n := len(c.name); !sc.side {
			width = max(width, len(p)+n)
		} else {
			width = max(width, n)
		}
	}
	colDef := func(name string, c stateColumn) string {
		typ := c.typ
		if strings.Contains(typ, "%s") {
			typ = fmt.Sprintf(typ, name)
		}
		return fmt.Sprintf("%-*s %s", width, name, typ)
	}
	if sc.side {
		var b strings.Builder
		fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (\n", sc.sideName)
		key := sc.idSQLType + " NOT NULL"
		if db.dialect == SQLite {
			key += fmt.Sprintf(" PRIMARY KEY REFERENCES %s (%s) ON DELETE CASCADE", sc.users, sc.id)
		}
		lines := []string{"\t" + colDef("user_id", stateColumn{typ: key})}
		for _, c := range cols {
			lines = append(lines, "\t"+colDef(c.name, c))
		}
		switch db.dialect {
		case Postgres:
			lines = append(lines,
				fmt.Sprintf("\tCONSTRAINT %s_pkey PRIMARY KEY (user_id)", sc.sideName),
				fmt.Sprintf("\tCONSTRAINT %s_user_fkey FOREIGN KEY (user_id) REFERENCES %s (%s) ON DELETE CASCADE", sc.sideName, sc.users, sc.id))
		case MySQL:
			lines = append(lines,
				"\tPRIMARY KEY (user_id)",
				fmt.Sprintf("\tCONSTRAINT %s_user_fkey FOREIGN KEY (user_id) REFERENCES %s (%s) ON DELETE CASCADE", sc.sideName, sc.users, sc.id))
		}
		b.WriteString(strings.Join(lines, ",\n"))
		b.WriteString("\n)")
		switch db.dialect {
		case MySQL:
			b.WriteString(" ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin")
		case SQLite:
			b.WriteString(" STRICT")
		}
		stmts = append(stmts, b.String())
	} else {
		switch db.dialect {
		case SQLite: // one column per ALTER TABLE; the migration's transaction makes them one step
			for _, c := range cols {
				stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s", sc.users, colDef(p+c.name, c)))
			}
		default: // one statement: atomic on MySQL too, which commits each DDL statement
			add := "ADD COLUMN "
			if db.dialect == Postgres {
				add = "ADD COLUMN IF NOT EXISTS "
			}
			lines := make([]string, len(cols))
			for i, c := range cols {
				lines[i] = "\t" + add + colDef(p+c.name, c)
			}
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s\n%s", sc.users, strings.Join(lines, ",\n")))
		}
		if sc.verifiedOnMigrate {
			now := map[Dialect]string{
				Postgres: "CAST(EXTRACT(EPOCH FROM now()) * 1000 AS BIGINT)",
				MySQL:    "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)",
				SQLite:   "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
			}[db.dialect]
			stmts = append(stmts, fmt.Sprintf("UPDATE %s SET %semail_verified_at = %s WHERE %semail_verified_at IS NULL", sc.users, p, now, p))
		}
	}
	if sc.ciMail && db.dialect != MySQL {
		stmts = append(stmts, fmt.Sprintf("CREATE UNIQUE INDEX IF NOT EXISTS %s ON %s (LOWER(%s))", sc.emailUniqueIndex, sc.users, sc.email))
	}
	return stmts
}

// checkUsersSchema makes sure that the store's reads work on the schema:
// every table and column of the users configuration is there. Migrate
// runs it after the migrations, and before recording the configuration of
// a prefix migrated by a version that recorded none: it catches a prefix
// migrated for another Users configuration (authkit's own table, a
// mapping, the other layout), which Migrate would otherwise call up to
// date while every request failed.
func (db *DB) checkUsersSchema(ctx context.Context) error {
	var sample any = ""
	switch db.s.idType {
	case IDInt64:
		sample = int64(0)
	case IDUUID:
		sample = "00000000-0000-0000-0000-000000000000"
	}
	rows, err := db.x.QueryxContext(ctx, db.users.q.byID+" AND 1 = 0", sample)
	if err == nil {
		return rows.Close()
	}
	if db.unavailable(err) {
		return db.fail("migrate", err)
	}
	return fmt.Errorf("sqlxstore: migrate: %w: the users table %s does not have what Users: %s needs (%v); "+
		"were the migrations of table prefix %q applied for another Users configuration? Open it with that one, or use a new TablePrefix",
		ErrInvalidConfig, db.s.users, describeUsers(db.s.mapping), err, db.t.prefix)
}

// namesTable reports whether statement st names table (as a whole word:
// authkit_users, not authkit_users_idx).
func namesTable(st, table string) bool {
	for i := 0; ; {
		j := strings.Index(st[i:], table)
		if j < 0 {
			return false
		}
		end := i + j + len(table)
		if end == len(st) || !isIdentByte(st[end]) {
			if start := i + j; start == 0 || !isIdentByte(st[start-1]) {
				return true
			}
		}
		i = end
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
