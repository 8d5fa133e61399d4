package sqlxstore

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// UsersTable maps the user store onto a users table the app already has
// (Config.Users). Its zero value means authkit's own table,
// <prefix>users, with text ids, exactly as without it.
//
// With Table set, authkit reads and writes the app's id, email, password
// hash and, when mapped, name and created-at columns of that table, and
// keeps its own state (2FA secrets, recovery-code hashes, the last TOTP
// step, verification and change times, the session version, the failure
// count and lock) as Layout says: in columns it adds to the table
// ([LayoutColumns]) or in a table of its own keyed by the app's id
// ([LayoutSideTable]). [DB.Migrate] never creates or drops the app's table.
// A table prefix keeps the configuration it was first migrated with, which
// the migrations record: Migrate refuses (ErrInvalidConfig) another one,
// a mapping on a prefix migrated for authkit's own table or the other way
// round; take a new TablePrefix, or open it with [DB.RecordedUsers].
// The module's README.md, "Adding authkit to an existing users table",
// shows the SQL of each layout.
type UsersTable struct {
	// Table is the app's users table: a name, or schema.name. Names match
	// [A-Za-z_][A-Za-z0-9_]* (at most 63 bytes each) and are quoted for the
	// dialect, so they are case-sensitive. Empty: authkit's own table, and
	// every other field must be zero.
	Table string

	// The app's columns. IDColumn, EmailColumn and PasswordHashColumn
	// default to "id", "email" and "password_hash". NameColumn and
	// CreatedAtColumn are optional: when empty, authkit keeps the name and
	// the creation time in its own state. A created-at column holds a SQL
	// timestamp (timestamptz or timestamp on PostgreSQL, DATETIME(3) or
	// TIMESTAMP(3) on MySQL, a DATETIME or TIMESTAMP text on SQLite); Create
	// writes it in UTC.
	IDColumn, EmailColumn, PasswordHashColumn, NameColumn, CreatedAtColumn string

	// IDType is the type of the id column. Default: [IDText].
	IDType IDType

	// IDDefault says that the database assigns UUIDs itself (a DEFAULT
	// gen_random_uuid() or the like), so Create inserts none: only with
	// IDUUID. Integer ids are always assigned by the database.
	IDDefault bool

	// IDSQLType is the SQL type of the side table's key, which must equal
	// the id column's type for the foreign key. Default: BIGINT (IDInt64);
	// UUID on PostgreSQL, CHAR(36) otherwise (IDUUID); TEXT, or
	// VARBINARY(255) on MySQL (IDText). Letters, digits, spaces, '_', '(',
	// ')' and ',' only.
	IDSQLType string

	// Layout is where authkit's state lives. Default: [LayoutColumns].
	Layout Layout

	// CaseInsensitiveEmails says the table holds addresses in mixed case
	// (Alice@Example.com) that must be found by their lowercase form. The
	// store then compares LOWER(email) with the lowercase address the flows
	// pass, and reports the stored address lowercased. On PostgreSQL and
	// SQLite the migration adds a unique index on LOWER(email) (it fails
	// while two rows differ only in case: merge them first); on MySQL and
	// MariaDB the email column's collation must be case-insensitive and
	// unique (see the README for which collation keeps accents apart).
	CaseInsensitiveEmails bool

	// ExistingUsersVerified makes the rows that are in the table when
	// authkit arrives count as verified, at the time of the migration: the
	// columns layout sets their verification time in the migration, the
	// side-table layout reads a row without authkit state as verified then
	// (and writes that down when it first stores state for it). Off, they
	// must verify their address as new users do.
	ExistingUsersVerified bool
}

// IDType is the type of a mapped users table's id column.
type IDType string

// The id types of [UsersTable].
const (
	// IDText: text ids; Create makes 128 random bits (user.NewID) when the
	// record has none.
	IDText IDType = "text"
	// IDInt64: BIGINT ids the database assigns (bigserial, identity,
	// AUTO_INCREMENT, INTEGER PRIMARY KEY); User.ID is the decimal form.
	IDInt64 IDType = "int64"
	// IDUUID: UUIDs, made by Create (random, version 4) unless IDDefault.
	// User.ID is the canonical lowercase form.
	IDUUID IDType = "uuid"
)

// Layout is where authkit keeps its state for a mapped users table.
type Layout string

// The layouts of [UsersTable].
const (
	// LayoutColumns adds authkit's columns, named <prefix><field>
	// (authkit_session_version, ...), to the app's table. One row per
	// user, one statement per operation.
	LayoutColumns Layout = "columns"
	// LayoutSideTable keeps authkit's state in <prefix>user_state, keyed
	// by user_id, a foreign key to the app's id with ON DELETE CASCADE; the
	// app's table is left as it is. Operations that touch both tables run
	// in one short transaction.
	LayoutSideTable Layout = "side table"
)

var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

var sqlTypePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_ (),]{0,62}$`)

// stateFields are authkit's own fields, in the order of userColumns.
var stateFields = []string{
	"two_factor_enabled", "totp_secret", "pending_totp_secret", "recovery_code_hashes", "last_totp_step",
	"email_verified_at", "email_changed_at", "password_changed_at", "session_version", "failed_logins",
	"locked_until",
}

// schema is the physical layout of the user store: which table and column
// each field of user.User lives in, quoted for the dialect.
type schema struct {
	// mapping is Config.Users with its defaults filled in (the zero value
	// for authkit's own table): what Migrate records and compares.
	mapping UsersTable

	mapped bool
	side   bool
	idType IDType
	idGen  bool // Create makes ids in Go (text, or UUID without IDDefault)
	ciMail bool
	// verifiedOnMigrate: ExistingUsersVerified.
	verifiedOnMigrate bool

	users, state string // tables, quoted; state == users unless side
	sideName     string // the side table (unquoted: prefix + user_state)
	idSQLType    string // the side table's key type

	// Columns, quoted: of the app's table (id, email, hash), of authkit's
	// state (col, keyed by sid), and name and created_at in either.
	id, email, hash string
	name, created   string
	nameInState     bool
	createdInState  bool // then a BIGINT of Unix milliseconds
	col             map[string]string
	sid             string

	emailUniqueIndex string // the unique index authkit made on email, if any
	replacer         *strings.Replacer
}

// quote quotes a validated identifier (or schema.name) for d.
func quote(d Dialect, name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		if d == MySQL {
			parts[i] = "`" + p + "`"
		} else {
			parts[i] = `"` + p + `"`
		}
	}
	return strings.Join(parts, ".")
}

func validIdent(what, s string, qualified bool) error {
	parts := []string{s}
	if qualified {
		parts = strings.Split(s, ".")
		if len(parts) > 2 {
			return fmt.Errorf("%w: Users.%s %q: at most schema.name", ErrInvalidConfig, what, s)
		}
	}
	for _, p := range parts {
		if !identPattern.MatchString(p) {
			return fmt.Errorf("%w: Users.%s %q must match [A-Za-z_][A-Za-z0-9_]* and be at most 63 bytes", ErrInvalidConfig, what, s)
		}
	}
	return nil
}

// newSchema validates m and lays out the store's tables for dialect d and
// table prefix p (already validated).
func newSchema(d Dialect, p string, m UsersTable) (*schema, error) {
	s := &schema{col: map[string]string{}}
	if m.Table == "" {
		if m != (UsersTable{}) {
			return nil, fmt.Errorf("%w: Users.Table is empty, so the other Users fields must be too (authkit's own table)", ErrInvalidConfig)
		}
		s.users, s.state = p+"users", p+"users"
		s.id, s.email, s.hash, s.name, s.created, s.sid = "id", "email", "password_hash", "name", "created_at", "id"
		s.nameInState, s.createdInState = true, true
		s.idType, s.idGen = IDText, true
		for _, f := range stateFields {
			s.col[f] = f
		}
		s.emailUniqueIndex = p + "users_email_key"
		s.replacer = s.newReplacer()
		return s, nil
	}
	s.mapped = true
	if err := validIdent("Table", m.Table, d != SQLite); err != nil {
		return nil, err
	}
	cols := []struct {
		what string
		v    *string
		def  string
	}{
		{"IDColumn", &m.IDColumn, "id"},
		{"EmailColumn", &m.EmailColumn, "email"},
		{"PasswordHashColumn", &m.PasswordHashColumn, "password_hash"},
		{"NameColumn", &m.NameColumn, ""},
		{"CreatedAtColumn", &m.CreatedAtColumn, ""},
	}
	seen := map[string]string{}
	for _, c := range cols {
		if *c.v == "" {
			*c.v = c.def
		}
		if *c.v == "" {
			continue
		}
		if err := validIdent(c.what, *c.v, false); err != nil {
			return nil, err
		}
		if other, dup := seen[strings.ToLower(*c.v)]; dup {
			return nil, fmt.Errorf("%w: Users.%s and Users.%s name the same column %q", ErrInvalidConfig, other, c.what, *c.v)
		}
		seen[strings.ToLower(*c.v)] = c.what
	}
	switch m.IDType {
	case "":
		m.IDType = IDText
	case IDText, IDInt64, IDUUID:
	default:
		return nil, fmt.Errorf("%w: Users.IDType %q is not one of %q, %q, %q", ErrInvalidConfig, m.IDType, IDText, IDInt64, IDUUID)
	}
	if m.IDDefault && m.IDType != IDUUID {
		return nil, fmt.Errorf("%w: Users.IDDefault is for IDUUID (integer ids always come from the database, text ids from authkit)", ErrInvalidConfig)
	}
	switch m.Layout {
	case "":
		m.Layout = LayoutColumns
	case LayoutColumns, LayoutSideTable:
	default:
		return nil, fmt.Errorf("%w: Users.Layout %q is not %q or %q", ErrInvalidConfig, m.Layout, LayoutColumns, LayoutSideTable)
	}
	if m.IDSQLType == "" {
		m.IDSQLType = defaultIDSQLType(d, m.IDType)
	} else if !sqlTypePattern.MatchString(m.IDSQLType) {
		return nil, fmt.Errorf("%w: Users.IDSQLType %q: letters, digits, spaces, '_', '(', ')' and ',' only", ErrInvalidConfig, m.IDSQLType)
	}

	s.idType = m.IDType
	s.idGen = m.IDType == IDText || (m.IDType == IDUUID && !m.IDDefault)
	s.ciMail = m.CaseInsensitiveEmails
	s.verifiedOnMigrate = m.ExistingUsersVerified
	s.side = m.Layout == LayoutSideTable
	s.idSQLType = m.IDSQLType
	s.users = quote(d, m.Table)
	s.id, s.email, s.hash = quote(d, m.IDColumn), quote(d, m.EmailColumn), quote(d, m.PasswordHashColumn)

	// Authkit's own columns: <prefix><field> in the app's table, or
	// <field> in the side table.
	own := func(f string) string { return p + f }
	if s.side {
		s.sideName = p + "user_state"
		s.state, s.sid = s.sideName, "user_id"
		own = func(f string) string { return f }
	} else {
		s.state, s.sid = s.users, s.id
	}
	for _, f := range stateFields {
		s.col[f] = own(f)
	}
	s.name, s.nameInState = quote(d, m.NameColumn), false
	if m.NameColumn == "" {
		s.name, s.nameInState = own("name"), true
	}
	s.created, s.createdInState = quote(d, m.CreatedAtColumn), false
	if m.CreatedAtColumn == "" {
		s.created, s.createdInState = own("created_at"), true
	}
	if s.ciMail && d != MySQL {
		s.emailUniqueIndex = p + "users_email_lower_key"
	}
	if !s.side {
		// In the app's table, authkit's columns must not collide with the
		// app's: they all start with the prefix.
		for _, f := range append(append([]string(nil), stateFields...), "name", "created_at") {
			if what, dup := seen[strings.ToLower(own(f))]; dup {
				return nil, fmt.Errorf("%w: Users.%s %q is the name of a column authkit adds (choose another TablePrefix)", ErrInvalidConfig, what, own(f))
			}
		}
	}
	s.mapping = m
	s.replacer = s.newReplacer()
	return s, nil
}

func defaultIDSQLType(d Dialect, t IDType) string {
	switch {
	case d == SQLite && t == IDInt64:
		return "INTEGER" // STRICT tables know INTEGER, not BIGINT
	case d == SQLite:
		return "TEXT"
	case t == IDInt64:
		return "BIGINT"
	case t == IDUUID && d == Postgres:
		return "UUID"
	case t == IDUUID:
		return "CHAR(36)"
	case d == MySQL:
		return "VARBINARY(255)"
	default:
		return "TEXT"
	}
}

// newReplacer fills the {{...}} names of the store's queries: {{users}}
// and {{state}} (the tables), {{id}} (the users table's key), {{sid}} (the
// state table's key), {{email}}, {{password_hash}}, {{name}},
// {{created_at}} and each state field.
func (s *schema) newReplacer() *strings.Replacer {
	pairs := []string{
		"{{users}}", s.users, "{{state}}", s.state, "{{id}}", s.id, "{{sid}}", s.sid,
		"{{email}}", s.email, "{{password_hash}}", s.hash, "{{name}}", s.name, "{{created_at}}", s.created,
	}
	for _, f := range stateFields {
		pairs = append(pairs, "{{"+f+"}}", s.col[f])
	}
	return strings.NewReplacer(pairs...)
}

// idArg converts a user id to the argument the id column takes. ok is
// false when id cannot be an id of this table (ByID and friends answer
// ErrNotFound without asking the database). Only canonical forms are
// ids: "7", not "007" or "+7"; lowercase UUIDs with hyphens.
func (s *schema) idArg(id string) (arg any, ok bool) {
	switch s.idType {
	case IDInt64:
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || strconv.FormatInt(n, 10) != id {
			return nil, false
		}
		return n, true
	case IDUUID:
		u, err := uuid.Parse(id)
		if err != nil || u.String() != id {
			return nil, false
		}
		return id, true
	default:
		return id, true
	}
}

// foreignKeyViolation reports whether err is a foreign key violation:
// PostgreSQL 23503, MySQL 1452 (ER_NO_REFERENCED_ROW_2), SQLite 787
// (SQLITE_CONSTRAINT_FOREIGNKEY, with foreign keys on).
func (db *DB) foreignKeyViolation(err error) bool {
	if err == nil {
		return false
	}
	switch db.dialect {
	case Postgres:
		return pgCode(err) == "23503"
	case MySQL:
		return mysqlCode(err) == 1452
	default:
		return sqliteCode(err) == 787
	}
}
