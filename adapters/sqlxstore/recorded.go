package sqlxstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The users configuration a table prefix was migrated for is recorded in
// <prefix>schema_settings (migration 0006), under the name "users", as the
// JSON of Config.Users with its defaults filled in ("{}" for authkit's own
// table). Migrate refuses a DB configured otherwise, in either direction,
// instead of calling the schema up to date while every query fails.

// usersSetting is the name of the recorded Config.Users.
const usersSetting = "users"

// usersRecord is the recorded form of a [UsersTable]: its fields under
// stable JSON names, each left out when zero.
type usersRecord struct {
	Table                 string `json:"table,omitempty"`
	IDColumn              string `json:"id_column,omitempty"`
	EmailColumn           string `json:"email_column,omitempty"`
	PasswordHashColumn    string `json:"password_hash_column,omitempty"`
	NameColumn            string `json:"name_column,omitempty"`
	CreatedAtColumn       string `json:"created_at_column,omitempty"`
	IDType                IDType `json:"id_type,omitempty"`
	IDDefault             bool   `json:"id_default,omitempty"`
	IDSQLType             string `json:"id_sql_type,omitempty"`
	Layout                Layout `json:"layout,omitempty"`
	CaseInsensitiveEmails bool   `json:"case_insensitive_emails,omitempty"`
	ExistingUsersVerified bool   `json:"existing_users_verified,omitempty"`
}

// usersSettingValue is the recorded text of db's Config.Users.
func (db *DB) usersSettingValue() (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	var m UsersTable // a DB without a schema (unit tests): authkit's own table
	if db.s != nil {
		m = db.s.mapping
	}
	if err := enc.Encode(usersRecord(m)); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

// usersSettingLiteral is usersSettingValue as a SQL string literal, for
// migration 0006. The mapping's names are validated identifiers and SQL
// types, so the JSON holds no quote or backslash; one would be refused.
func (db *DB) usersSettingLiteral() (string, error) {
	v, err := db.usersSettingValue()
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(v, `'\`) {
		return "", fmt.Errorf("%w: Users %s cannot be recorded", ErrInvalidConfig, v)
	}
	return "'" + v + "'", nil
}

// RecordedUsers returns the Config.Users that the table prefix was migrated
// for, with its defaults filled in (IDColumn "id", the Layout, the
// IDSQLType, ...): the zero UsersTable for authkit's own users table. A DB
// opened with it passes [DB.Migrate]'s check, so a tool that knows only the
// database URL (authkit's CLI, a worker) can open the store as the app
// does. ok is false when nothing is recorded: the prefix was never
// migrated, or was last migrated by a version of this package before
// migration 0006.
func (db *DB) RecordedUsers(ctx context.Context) (m UsersTable, ok bool, err error) {
	exists, err := db.tableExists(ctx, db.x, db.t.settings)
	if err != nil {
		return UsersTable{}, false, db.fail("recorded users", err)
	}
	if !exists {
		return UsersTable{}, false, nil
	}
	return db.recordedUsers(ctx, db.x)
}

func (db *DB) recordedUsers(ctx context.Context, q queryer) (UsersTable, bool, error) {
	var v string
	err := q.GetContext(ctx, &v, db.query(`SELECT value FROM {{prefix}}schema_settings WHERE name = ?`), usersSetting)
	if errors.Is(err, sql.ErrNoRows) {
		return UsersTable{}, false, nil
	}
	if err != nil {
		return UsersTable{}, false, db.fail("recorded users", err)
	}
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields() // a field of a later version: a mapping this one cannot open
	var r usersRecord
	if err := dec.Decode(&r); err != nil {
		return UsersTable{}, false, fmt.Errorf("sqlxstore: recorded users: %w: %s records Users as %s, which this version of sqlxstore cannot read (%v)",
			ErrInvalidConfig, db.t.settings, strconv.Quote(v), err)
	}
	return UsersTable(r), true, nil
}

// CheckUsers reports whether the table prefix was migrated for this DB's
// Config.Users: nil when it was, or when nothing is recorded (see
// [DB.RecordedUsers]); otherwise an error wrapping [ErrInvalidConfig] that
// names the recorded configuration and how to open it. [DB.Migrate] makes
// the same check; a tool that opens the store without migrating calls this.
func (db *DB) CheckUsers(ctx context.Context) error {
	rec, ok, err := db.RecordedUsers(ctx)
	if err != nil || !ok {
		return err
	}
	return db.compareUsers(rec)
}

// checkRecordedUsers is CheckUsers inside Migrate's lock, after the
// migrations: a recorded configuration must be this one; none (a row
// deleted by hand) is recorded now.
func (db *DB) checkRecordedUsers(ctx context.Context, q queryer) error {
	rec, ok, err := db.recordedUsers(ctx, q)
	if err != nil {
		return err
	}
	if ok {
		return db.compareUsers(rec)
	}
	v, err := db.usersSettingValue()
	if err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, db.query(`INSERT INTO {{prefix}}schema_settings (name, value) VALUES (?, ?)`), usersSetting, v); err != nil {
		return fmt.Errorf("record Users in %s: %w", db.t.settings, err)
	}
	return nil
}

// compareUsers refuses rec, the recorded Config.Users, unless it is db's.
func (db *DB) compareUsers(rec UsersTable) error {
	if sameUsers(rec, db.s.mapping) {
		return nil
	}
	return fmt.Errorf("%w: table prefix %q was migrated for Users: %s, not for this Config's Users: %s; "+
		"open it with the recorded Users (DB.RecordedUsers reads them; authkit's CLI does so when no --users-* flag is given), "+
		"or give this configuration a TablePrefix of its own",
		ErrInvalidConfig, db.t.prefix, describeUsers(rec), describeUsers(db.s.mapping))
}

// sameUsers reports whether two normalized mappings are one: the SQL type
// of the side table's key compares without regard to case.
func sameUsers(a, b UsersTable) bool {
	typeA, typeB := a.IDSQLType, b.IDSQLType
	a.IDSQLType, b.IDSQLType = "", ""
	return a == b && strings.EqualFold(typeA, typeB)
}

// describeUsers writes m as the Go literal that opens it.
func describeUsers(m UsersTable) string {
	if m == (UsersTable{}) {
		return "sqlxstore.UsersTable{} (authkit's own users table)"
	}
	var f []string
	str := func(name, v string) {
		if v != "" {
			f = append(f, name+": "+strconv.Quote(v))
		}
	}
	flag := func(name string, v bool) {
		if v {
			f = append(f, name+": true")
		}
	}
	str("Table", m.Table)
	str("IDColumn", m.IDColumn)
	str("EmailColumn", m.EmailColumn)
	str("PasswordHashColumn", m.PasswordHashColumn)
	str("NameColumn", m.NameColumn)
	str("CreatedAtColumn", m.CreatedAtColumn)
	if name, ok := map[IDType]string{IDText: "IDText", IDInt64: "IDInt64", IDUUID: "IDUUID"}[m.IDType]; ok {
		f = append(f, "IDType: sqlxstore."+name)
	} else {
		str("IDType", string(m.IDType))
	}
	flag("IDDefault", m.IDDefault)
	str("IDSQLType", m.IDSQLType)
	if name, ok := map[Layout]string{LayoutColumns: "LayoutColumns", LayoutSideTable: "LayoutSideTable"}[m.Layout]; ok {
		f = append(f, "Layout: sqlxstore."+name)
	} else {
		str("Layout", string(m.Layout))
	}
	flag("CaseInsensitiveEmails", m.CaseInsensitiveEmails)
	flag("ExistingUsersVerified", m.ExistingUsersVerified)
	return "sqlxstore.UsersTable{" + strings.Join(f, ", ") + "}"
}

// checkUnrecorded is Migrate's check of a prefix migrated before anything
// was recorded (by a version before migration 0006, which records the
// configuration it runs with): the store's reads must work on its schema
// before this configuration is recorded as the one it was migrated for.
func (db *DB) checkUnrecorded(ctx context.Context) error {
	exists, err := db.tableExists(ctx, db.x, db.t.migrations)
	if err != nil {
		return db.fail("migrate", err)
	}
	if !exists {
		return nil
	}
	var n int
	if err := db.x.GetContext(ctx, &n, db.query(`SELECT COUNT(*) FROM {{prefix}}schema_migrations WHERE version = 1`)); err != nil {
		return db.fail("migrate", err)
	}
	if n == 0 {
		return nil // nothing migrated yet
	}
	if _, ok, err := db.RecordedUsers(ctx); err != nil || ok {
		return err // recorded: compared under the lock
	}
	return db.checkUsersSchema(ctx)
}

// tableExists reports whether table exists where the store's queries find
// it.
func (db *DB) tableExists(ctx context.Context, q queryer, table string) (exists bool, err error) {
	switch db.dialect {
	case Postgres:
		// to_regclass resolves the name as the store's queries do, on the
		// search_path.
		err = q.GetContext(ctx, &exists, `SELECT to_regclass($1) IS NOT NULL`, table)
	case MySQL:
		err = q.GetContext(ctx, &exists,
			`SELECT COUNT(*) > 0 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?`, table)
	default:
		err = q.GetContext(ctx, &exists, `SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?`, table)
	}
	return exists, err
}
