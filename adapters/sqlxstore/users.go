package sqlxstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/authkit-go/authkit/core/user"
)

// UserStore is the [user.Store], every part of the contract, over the
// users table: authkit's own, or the app's (Config.Users). Get it from
// [DB.Users]. It is safe for concurrent use, and for use by many processes
// over one database.
//
// Every operation that changes security state is one conditional UPDATE,
// correct at READ COMMITTED: the contract's condition is in its WHERE
// clause, so the database checks it and applies the change as one step.
// When no row was updated, a follow-up read (after nothing was written)
// tells ErrNotFound from ErrConflict. RecordLoginFailure, and
// BumpSessionVersion on MySQL, need the value before or after the update:
// they run as one statement with RETURNING where the database has it, or
// as a short transaction that locks the row first.
//
// With the side-table layout ([LayoutSideTable]) an operation whose
// condition or effect spans the app's table and authkit's runs as one short
// READ COMMITTED transaction that locks the app's row first (its first
// UPDATE, or SELECT ... FOR UPDATE; SQLite's BEGIN IMMEDIATE), and an
// operation on authkit's state alone stays one statement. A user without a
// state row (one the app had before authkit) gets it, idempotently, before
// its first conditional update.
//
// The [user.Passkeys] part (passkeys.go) keeps handles and credentials in
// the tables of migration 0003, which name users by id: Delete removes a
// user's rows in its transaction, and Create those left under its id by a
// user deleted outside the store.
type UserStore struct {
	db     *DB
	s      *schema
	q      userQueries
	pq     passkeyQueries
	iq     identityQueries  // identities.go
	codes  emailCodeQueries // emailcodes.go
	signIn string           // signins.go
	unSign string           // signins.go: the user's row, deleted with the user
	kq     apiKeyQueries    // apikeys.go
}

var _ user.Store = (*UserStore)(nil)

const userColumns = `id, email, name, password_hash, two_factor_enabled, totp_secret, pending_totp_secret,
	recovery_code_hashes, last_totp_step, email_verified_at, email_changed_at, password_changed_at,
	session_version, failed_logins, locked_until, created_at`

type userQueries struct {
	byID, byEmail, exists, delete, emailInUse                    string
	beginTOTP, enableTOTP, acceptStep, replaceCodes, disableTOTP string
	consume, consumeFromNone                                     string
	verifyEmail, changeEmail, clearFailures                      string
	bump, recordFailure, lockFailures, setFailures               string

	// The three password operations. One table: one UPDATE each. Side
	// table: setHash changes the app's row under the hash condition (and
	// locks it), then changed, or reset with its condition, updates
	// authkit's state.
	rehash, change, reset string
	setHash, changed      string

	// Side table only.
	ensure     string // create the state row of an existing user
	lockEmail  string // lock the app's row when it has the address
	setEmail   string // the app's part of ChangeEmail
	deleteSide string // the state row, when no foreign key removed it
	lockUser   string // FOR UPDATE clause for the dialect
}

func newUserStore(db *DB) *UserStore {
	s := &UserStore{db: db, s: db.s, pq: newPasskeyQueries(db), iq: newIdentityQueries(db), codes: newEmailCodeQueries(db), signIn: newSignInQuery(db), unSign: db.query(`DELETE FROM {{prefix}}sign_ins WHERE user_id = ?`),
		kq: newAPIKeyQueries(db)}
	q := &s.q
	sc := db.s
	uq := db.userQuery
	byEmailCond := s.emailCond("u.")

	q.byID = uq(s.selectUser() + ` WHERE u.{{id}} = ?`)
	q.byEmail = uq(s.selectUser() + ` WHERE ` + byEmailCond)
	q.exists = uq(`SELECT 1 FROM {{users}} WHERE {{id}} = ?`)
	q.emailInUse = uq(`SELECT 1 FROM {{users}} u WHERE ` + byEmailCond)
	q.delete = uq(`DELETE FROM {{users}} WHERE {{id}} = ?`)

	q.beginTOTP = uq(`UPDATE {{state}} SET {{pending_totp_secret}} = ?
		WHERE {{sid}} = ? AND {{two_factor_enabled}} = FALSE`)
	q.enableTOTP = uq(`UPDATE {{state}} SET {{totp_secret}} = ?, {{pending_totp_secret}} = NULL,
		{{recovery_code_hashes}} = ?, {{last_totp_step}} = ?, {{two_factor_enabled}} = TRUE
		WHERE {{sid}} = ? AND {{two_factor_enabled}} = FALSE AND {{pending_totp_secret}} = ?`)
	q.acceptStep = uq(`UPDATE {{state}} SET {{last_totp_step}} = ?
		WHERE {{sid}} = ? AND {{two_factor_enabled}} = TRUE
		AND ({{last_totp_step}} IS NULL OR {{last_totp_step}} = 0 OR ({{last_totp_step}} < ? AND {{last_totp_step}} < ?))`)
	q.consume = uq(`UPDATE {{state}} SET {{recovery_code_hashes}} = ?
		WHERE {{sid}} = ? AND {{recovery_code_hashes}} = ?`)
	q.consumeFromNone = uq(`UPDATE {{state}} SET {{recovery_code_hashes}} = ?
		WHERE {{sid}} = ? AND ({{recovery_code_hashes}} IS NULL OR {{recovery_code_hashes}} = '[]')`)
	q.replaceCodes = uq(`UPDATE {{state}} SET {{recovery_code_hashes}} = ?
		WHERE {{sid}} = ? AND {{two_factor_enabled}} = TRUE`)
	q.disableTOTP = uq(`UPDATE {{state}} SET {{two_factor_enabled}} = FALSE, {{totp_secret}} = NULL,
		{{pending_totp_secret}} = NULL, {{recovery_code_hashes}} = NULL, {{last_totp_step}} = NULL,
		{{session_version}} = {{session_version}} + 1
		WHERE {{sid}} = ? AND {{two_factor_enabled}} = TRUE`)
	q.clearFailures = uq(`UPDATE {{state}} SET {{failed_logins}} = 0, {{locked_until}} = NULL WHERE {{sid}} = ?`)

	// The password operations, each with its condition in the WHERE clause.
	const changedSet = `{{password_changed_at}} = ?, {{session_version}} = {{session_version}} + 1,
		{{failed_logins}} = 0, {{locked_until}} = NULL`
	const issuedCond = `({{password_changed_at}} IS NULL OR {{password_changed_at}} < ?)`
	q.rehash = uq(`UPDATE {{users}} SET {{password_hash}} = ? WHERE {{id}} = ? AND {{password_hash}} = ?`)
	if !sc.side {
		q.change = uq(`UPDATE {{users}} SET {{password_hash}} = ?, ` + changedSet + ` WHERE {{id}} = ? AND {{password_hash}} = ?`)
		q.reset = uq(`UPDATE {{users}} SET {{password_hash}} = ?, ` + changedSet + ` WHERE {{id}} = ? AND {{password_hash}} = ? AND ` + issuedCond)
		q.verifyEmail = uq(`UPDATE {{users}} SET {{email_verified_at}} = COALESCE({{email_verified_at}}, ?)
			WHERE {{id}} = ? AND ` + s.emailCond(""))
		q.changeEmail = uq(`UPDATE {{users}} SET {{email}} = ?, {{email_verified_at}} = NULL,
			{{email_changed_at}} = ?, {{session_version}} = {{session_version}} + 1
			WHERE {{id}} = ? AND ` + s.emailCond(""))
	} else {
		q.setHash = q.rehash
		q.changed = uq(`UPDATE {{state}} SET ` + changedSet + ` WHERE {{sid}} = ?`)
		q.reset = uq(`UPDATE {{state}} SET ` + changedSet + ` WHERE {{sid}} = ? AND ` + issuedCond)
		q.verifyEmail = uq(`UPDATE {{state}} SET {{email_verified_at}} = COALESCE({{email_verified_at}}, ?) WHERE {{sid}} = ?`)
		q.setEmail = uq(`UPDATE {{users}} SET {{email}} = ? WHERE {{id}} = ? AND ` + s.emailCond(""))
		q.changeEmail = uq(`UPDATE {{state}} SET {{email_verified_at}} = NULL, {{email_changed_at}} = ?,
			{{session_version}} = {{session_version}} + 1 WHERE {{sid}} = ?`)
		switch db.dialect {
		case Postgres:
			// NO KEY UPDATE: it still excludes a concurrent UPDATE of the row,
			// but not the key-share lock of the foreign key check of ensure.
			q.lockUser = ` FOR NO KEY UPDATE`
		case MySQL:
			q.lockUser = ` FOR UPDATE`
		}
		q.lockEmail = uq(`SELECT 1 FROM {{users}} u WHERE u.{{id}} = ? AND ` + byEmailCond + q.lockUser)
		q.deleteSide = uq(`DELETE FROM {{state}} WHERE {{sid}} = ?`)
		insert, conflict := `INSERT INTO`, ` ON CONFLICT ({{sid}}) DO NOTHING`
		if db.dialect == MySQL {
			insert, conflict = `INSERT IGNORE INTO`, ``
		}
		q.ensure = uq(insert + ` {{state}} ({{sid}}, {{email_verified_at}})
			SELECT {{id}}, ` + s.legacyVerified() + ` FROM {{users}} WHERE {{id}} = ?` + conflict)
	}

	switch db.dialect {
	case MySQL:
		// LAST_INSERT_ID(expr) hands the new value back in the OK packet:
		// one statement, no transaction (the MySQL manual's counter idiom).
		q.bump = uq(`UPDATE {{state}} SET {{session_version}} = LAST_INSERT_ID({{session_version}} + 1) WHERE {{sid}} = ?`)
	default:
		q.bump = uq(`UPDATE {{state}} SET {{session_version}} = {{session_version}} + 1 WHERE {{sid}} = ? RETURNING {{session_version}}`)
	}
	switch db.dialect {
	case Postgres:
		// The CTE locks the row and reads the latest committed count (a
		// locking read re-reads a row that changed under it); the UPDATE
		// writes from that count and RETURNING reports it plus one. One
		// statement, correct at READ COMMITTED.
		q.recordFailure = uq(`WITH cur AS (SELECT {{sid}} AS k, {{failed_logins}} AS n FROM {{state}} WHERE {{sid}} = ? FOR UPDATE)
			UPDATE {{state}} AS u SET
				{{failed_logins}} = CASE WHEN CAST(? AS BIGINT) > 0 AND cur.n + 1 >= CAST(? AS BIGINT)
					THEN 0 ELSE cur.n + 1 END,
				{{locked_until}} = CASE WHEN CAST(? AS BIGINT) > 0 AND cur.n + 1 >= CAST(? AS BIGINT)
					THEN CAST(? AS BIGINT) ELSE u.{{locked_until}} END
			FROM cur WHERE u.{{sid}} = cur.k
			RETURNING cur.n + 1, u.{{locked_until}}`)
	case MySQL:
		// One statement, no transaction, so a burst of failed logins never
		// queues transactions on the row lock (a 99-request burst on MariaDB
		// exhausted the deadlock retries). MySQL assigns left to right with
		// the new values: locked_until is set first, from the old count;
		// LAST_INSERT_ID(expr) hands the count after this failure back in
		// the OK packet before failed_logins is reset at the limit.
		q.recordFailure = uq(`UPDATE {{state}} SET
				{{locked_until}} = IF(? > 0 AND {{failed_logins}} + 1 >= ?, ?, {{locked_until}}),
				{{failed_logins}} = IF(LAST_INSERT_ID({{failed_logins}} + 1) >= ? AND ? > 0, 0, LAST_INSERT_ID())
			WHERE {{sid}} = ?`)
		q.lockFailures = uq(`SELECT {{failed_logins}} AS failed_logins, {{locked_until}} AS locked_until FROM {{state}} WHERE {{sid}} = ?`)
	case SQLite:
		// The transaction holds SQLite's write lock from BEGIN IMMEDIATE.
		q.lockFailures = uq(`SELECT {{failed_logins}} AS failed_logins, {{locked_until}} AS locked_until FROM {{state}} WHERE {{sid}} = ?`)
	}
	q.setFailures = uq(`UPDATE {{state}} SET {{failed_logins}} = ?, {{locked_until}} = ? WHERE {{sid}} = ?`)
	return s
}

// emailCond is the condition "the stored address (of the row aliased a)
// equals ?": byte for byte, or LOWER(email) with CaseInsensitiveEmails.
// On a mapped MySQL table the column's own collation finds the row through
// its index, and a binary comparison keeps the contract's byte equality
// (no PAD SPACE, no accent folding); it then takes the address twice, see
// emailArgs.
func (s *UserStore) emailCond(a string) string {
	col := a + "{{email}}"
	if s.s.ciMail {
		col = "LOWER(" + col + ")"
	}
	if s.db.dialect == MySQL && s.s.mapped {
		return a + "{{email}} = ? AND CAST(" + col + " AS BINARY) = CAST(? AS BINARY)"
	}
	return col + " = ?"
}

// emailArgs are the arguments of emailCond for address e.
func (s *UserStore) emailArgs(e string) []any {
	if s.db.dialect == MySQL && s.s.mapped {
		return []any{e, e}
	}
	return []any{e}
}

// legacyVerified is the verification time of a user without authkit state:
// the time of the migration that made the side table when
// ExistingUsersVerified, else NULL.
func (s *UserStore) legacyVerified() string {
	if !s.s.verifiedOnMigrate {
		return "NULL"
	}
	return `(SELECT applied_at FROM {{prefix}}schema_migrations WHERE version = 1)`
}

// selectUser is the SELECT of one user record, columns named as userRow's
// tags, from {{users}} aliased u (and {{state}} aliased s, LEFT JOINed).
func (s *UserStore) selectUser() string {
	sc := s.s
	if !sc.mapped {
		return `SELECT ` + userColumns + ` FROM {{users}} u`
	}
	st := "u." // where authkit's state is
	if sc.side {
		st = "s."
	}
	email := "u.{{email}}"
	if sc.ciMail {
		email = "LOWER(u.{{email}})"
	}
	name := "COALESCE(u.{{name}}, '')"
	if sc.nameInState {
		name = "COALESCE(" + st + "{{name}}, '')"
	}
	created := "u.{{created_at}}"
	if sc.createdInState {
		created = st + "{{created_at}}"
	}
	verified := st + "{{email_verified_at}}"
	if sc.side {
		verified = "CASE WHEN s.{{sid}} IS NULL THEN " + s.legacyVerified() + " ELSE s.{{email_verified_at}} END"
	}
	cols := []string{
		"u.{{id}} AS id",
		email + " AS email",
		name + " AS name",
		"COALESCE(u.{{password_hash}}, '') AS password_hash",
		"COALESCE(" + st + "{{two_factor_enabled}}, FALSE) AS two_factor_enabled",
		st + "{{totp_secret}} AS totp_secret",
		st + "{{pending_totp_secret}} AS pending_totp_secret",
		st + "{{recovery_code_hashes}} AS recovery_code_hashes",
		st + "{{last_totp_step}} AS last_totp_step",
		verified + " AS email_verified_at",
		st + "{{email_changed_at}} AS email_changed_at",
		st + "{{password_changed_at}} AS password_changed_at",
		"COALESCE(" + st + "{{session_version}}, 0) AS session_version",
		"COALESCE(" + st + "{{failed_logins}}, 0) AS failed_logins",
		st + "{{locked_until}} AS locked_until",
		created + " AS created_at",
	}
	q := `SELECT ` + strings.Join(cols, ", ") + ` FROM {{users}} u`
	if sc.side {
		q += ` LEFT JOIN {{state}} s ON s.{{sid}} = u.{{id}}`
	}
	return q
}

// userRow is one user record as selectUser reads it.
type userRow struct {
	ID                 string         `db:"id"`
	Email              string         `db:"email"`
	Name               string         `db:"name"`
	PasswordHash       string         `db:"password_hash"`
	TwoFactorEnabled   bool           `db:"two_factor_enabled"`
	TOTPSecret         sql.NullString `db:"totp_secret"`
	PendingTOTPSecret  sql.NullString `db:"pending_totp_secret"`
	RecoveryCodeHashes sql.NullString `db:"recovery_code_hashes"`
	LastTOTPStep       sql.NullInt64  `db:"last_totp_step"`
	EmailVerifiedAt    sql.NullInt64  `db:"email_verified_at"`
	EmailChangedAt     sql.NullInt64  `db:"email_changed_at"`
	PasswordChangedAt  sql.NullInt64  `db:"password_changed_at"`
	SessionVersion     int64          `db:"session_version"`
	FailedLogins       int64          `db:"failed_logins"`
	LockedUntil        sql.NullInt64  `db:"locked_until"`
	CreatedAt          dbTime         `db:"created_at"`
}

func (r *userRow) user() (*user.User, error) {
	hashes, err := decodeHashes(r.RecoveryCodeHashes)
	if err != nil {
		return nil, err
	}
	return &user.User{
		ID:                 r.ID,
		Email:              r.Email,
		Name:               r.Name,
		PasswordHash:       r.PasswordHash,
		TwoFactorEnabled:   r.TwoFactorEnabled,
		TOTPSecret:         r.TOTPSecret.String,
		PendingTOTPSecret:  r.PendingTOTPSecret.String,
		RecoveryCodeHashes: hashes,
		LastTOTPStep:       r.LastTOTPStep.Int64,
		EmailVerifiedAt:    fromMS(r.EmailVerifiedAt),
		EmailChangedAt:     fromMS(r.EmailChangedAt),
		PasswordChangedAt:  fromMS(r.PasswordChangedAt),
		SessionVersion:     r.SessionVersion,
		FailedLogins:       int(r.FailedLogins),
		LockedUntil:        fromMS(r.LockedUntil),
		CreatedAt:          r.CreatedAt.t,
	}, nil
}

// dbTime reads a creation time: BIGINT Unix milliseconds (authkit's
// columns) or the app's SQL timestamp, which drivers hand over as a
// time.Time or, without a declared type, as text. NULL is the zero time.
type dbTime struct{ t time.Time }

// timeLayouts are the text forms of timestamps: modernc.org/sqlite's,
// SQLite's CURRENT_TIMESTAMP, MySQL's without parseTime, RFC 3339.
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
}

// Scan implements sql.Scanner.
func (d *dbTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		d.t = time.Time{}
	case int64:
		d.t = time.UnixMilli(x).UTC()
	case time.Time:
		d.t = msTime(x)
	case []byte:
		return d.Scan(string(x))
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil { // MySQL's text protocol
			d.t = time.UnixMilli(n).UTC()
			return nil
		}
		for _, l := range timeLayouts {
			if t, err := time.Parse(l, x); err == nil {
				d.t = msTime(t)
				return nil
			}
		}
		return fmt.Errorf("created-at value %q is not a timestamp", x)
	default:
		return fmt.Errorf("created-at value of type %T is not a timestamp", v)
	}
	return nil
}

// createdArg is the value of the created-at column for t: Unix
// milliseconds in authkit's columns, a UTC time.Time in the app's.
func (s *UserStore) createdArg(t time.Time) any {
	if s.s.createdInState {
		return ms(t)
	}
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

// jsonList is the JSON array of a list column (scopes, transports), which
// is NOT NULL: [] for a nil list.
func jsonList(l []string) (string, error) {
	if l == nil {
		l = []string{}
	}
	b, err := json.Marshal(l)
	return string(b), err
}

// encodeHashes stores recovery-code hashes as a JSON array (NULL for nil).
// The encoding is canonical, so ConsumeRecoveryCode can compare the stored
// text with the encoding of the hashes the caller read.
func encodeHashes(h []string) (sql.NullString, error) {
	if h == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

func decodeHashes(s sql.NullString) ([]string, error) {
	if !s.Valid {
		return nil, nil
	}
	h := []string{}
	if err := json.Unmarshal([]byte(s.String), &h); err != nil {
		return nil, fmt.Errorf("recovery_code_hashes is not a JSON array of strings: %w", err)
	}
	return h, nil
}

// msTime truncates t to the millisecond and makes it UTC, as a round trip
// through the database does.
func msTime(t time.Time) time.Time { return fromMS(ms(t)) }

// notFound is the answer for an id that no user has.
func notFound(op string) error {
	return fmt.Errorf("sqlxstore: %s: %w", op, user.ErrNotFound)
}

// Errors an operation's transaction returns to roll back and say why.
var (
	errTxNoRow    = errors.New("no row matched")   // noRows decides: not found or conflict
	errTxConflict = errors.New("condition failed") // the state's condition did not hold
)

// colVal is one column of an INSERT and its value.
type colVal struct {
	col string
	val any
}

// Create implements [user.Registration]. A duplicate email gives ErrEmailTaken, a
// duplicate id ErrConflict. With integer ids the database assigns the id
// and the record carries its decimal form; with UUIDs Create makes a
// random one unless the database has a default (IDDefault).
func (s *UserStore) Create(ctx context.Context, u *user.User) (*user.User, error) {
	const op = "create user"
	if u == nil {
		return nil, fmt.Errorf("sqlxstore: %s: nil user", op)
	}
	c := u.Clone()
	if c.ID == "" && s.s.idGen {
		c.ID = user.NewID()
		if s.s.idType == IDUUID {
			c.ID = uuid.NewString()
		}
	}
	var idv any
	if c.ID != "" {
		v, ok := s.s.idArg(c.ID)
		if !ok {
			return nil, fmt.Errorf("sqlxstore: %s: id %q is not a valid %s id", op, c.ID, s.s.idType)
		}
		idv = v
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.db.now()
	}
	for _, t := range []*time.Time{&c.EmailVerifiedAt, &c.EmailChangedAt, &c.PasswordChangedAt, &c.LockedUntil, &c.CreatedAt} {
		*t = msTime(*t)
	}
	hashes, err := encodeHashes(c.RecoveryCodeHashes)
	if err != nil {
		return nil, fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	// The app's columns, then authkit's.
	var app, own []colVal
	if idv != nil {
		app = append(app, colVal{"{{id}}", idv})
	}
	app = append(app, colVal{"{{email}}", c.Email}, colVal{"{{password_hash}}", c.PasswordHash})
	name, created := colVal{"{{name}}", c.Name}, colVal{"{{created_at}}", s.createdArg(c.CreatedAt)}
	if s.s.nameInState {
		own = append(own, name)
	} else {
		app = append(app, name)
	}
	if s.s.createdInState {
		own = append(own, created)
	} else {
		app = append(app, created)
	}
	own = append(own,
		colVal{"{{two_factor_enabled}}", c.TwoFactorEnabled},
		colVal{"{{totp_secret}}", nullString(c.TOTPSecret)},
		colVal{"{{pending_totp_secret}}", nullString(c.PendingTOTPSecret)},
		colVal{"{{recovery_code_hashes}}", hashes},
		colVal{"{{last_totp_step}}", nullInt(c.LastTOTPStep)},
		colVal{"{{email_verified_at}}", ms(c.EmailVerifiedAt)},
		colVal{"{{email_changed_at}}", ms(c.EmailChangedAt)},
		colVal{"{{password_changed_at}}", ms(c.PasswordChangedAt)},
		colVal{"{{session_version}}", c.SessionVersion},
		colVal{"{{failed_logins}}", c.FailedLogins},
		colVal{"{{locked_until}}", ms(c.LockedUntil)},
	)
	if !s.s.side {
		app, own = append(app, own...), nil
	}

	insertUser := func(q queryer) error {
		query, args := s.insertQuery("{{users}}", app)
		switch {
		case idv != nil:
			_, err := q.ExecContext(ctx, query, args...)
			return err
		case s.db.dialect != MySQL: // PostgreSQL, SQLite: RETURNING
			return q.QueryRowxContext(ctx, query+s.db.userQuery(` RETURNING {{id}}`), args...).Scan(&c.ID)
		case s.s.idType == IDInt64:
			res, err := q.ExecContext(ctx, query, args...)
			if err != nil {
				return err
			}
			n, err := res.LastInsertId()
			c.ID = strconv.FormatInt(n, 10)
			return err
		default: // MySQL, a UUID from the column's default: find it by the (unique) address
			if _, err := q.ExecContext(ctx, query, args...); err != nil {
				return err
			}
			return q.GetContext(ctx, &c.ID, s.db.userQuery(`SELECT {{id}} FROM {{users}} WHERE {{id}} IS NOT NULL AND `+s.emailCond("")), s.emailArgs(c.Email)...)
		}
	}
	err = s.db.inTxOpts(ctx, readCommitted, func(q queryer) error {
		if err := insertUser(q); err != nil {
			return err
		}
		// Passkeys and a handle left under the id by a user deleted
		// outside authkit (the app's own DELETE, then an id the database
		// hands out again) must not reach the new one: they would sign in
		// as them.
		if err := s.deletePasskeysOf(ctx, q, c.ID); err != nil {
			return err
		}
		if err := s.deleteIdentitiesOf(ctx, q, c.ID); err != nil {
			return err
		}
		if !s.s.side {
			return nil
		}
		// A state row left by a user deleted outside authkit (SQLite
		// without foreign keys) must not reach the new one either.
		id, _ := s.s.idArg(c.ID)
		if _, err := q.ExecContext(ctx, s.q.deleteSide, id); err != nil {
			return err
		}
		query, args := s.insertQuery("{{state}}", append([]colVal{{"{{sid}}", id}}, own...))
		_, err := q.ExecContext(ctx, query, args...)
		return err
	})
	if err != nil {
		if unique, onEmail := s.db.uniqueViolation(err); unique {
			if onEmail || (s.s.mapped && s.emailInUse(ctx, c.Email)) {
				return nil, fmt.Errorf("sqlxstore: %s: %w", op, user.ErrEmailTaken)
			}
			return nil, fmt.Errorf("sqlxstore: %s: id in use: %w", op, user.ErrConflict)
		}
		return nil, s.db.fail(op, err)
	}
	return c, nil
}

// insertQuery is the INSERT of cols into table.
func (s *UserStore) insertQuery(table string, cols []colVal) (string, []any) {
	names := make([]string, len(cols))
	args := make([]any, len(cols))
	for i, c := range cols {
		names[i], args[i] = c.col, c.val
	}
	q := `INSERT INTO ` + table + ` (` + strings.Join(names, ", ") + `) VALUES (?` + strings.Repeat(", ?", len(cols)-1) + `)`
	return s.db.userQuery(q), args
}

// emailInUse reports whether a user has the address: after a unique
// violation on a mapped table, whose unique index on email is the app's
// and named as the app chose. The violating row was committed, so a new
// statement sees it.
func (s *UserStore) emailInUse(ctx context.Context, email string) bool {
	var one int
	return s.db.x.GetContext(ctx, &one, s.q.emailInUse, s.emailArgs(email)...) == nil
}

// ByID implements [user.Accounts]. An id that cannot be one of the table's
// (not a decimal int64, not a canonical UUID) is not found.
func (s *UserStore) ByID(ctx context.Context, id string) (*user.User, error) {
	const op = "user by id"
	idv, ok := s.s.idArg(id)
	if !ok {
		return nil, notFound(op)
	}
	return s.get(ctx, op, s.q.byID, idv)
}

// ByEmail implements [user.Accounts]. Emails compare byte for byte, or by
// their lowercase form with CaseInsensitiveEmails.
func (s *UserStore) ByEmail(ctx context.Context, email string) (*user.User, error) {
	return s.get(ctx, "user by email", s.q.byEmail, s.emailArgs(email)...)
}

func (s *UserStore) get(ctx context.Context, op, query string, args ...any) (*user.User, error) {
	return getAs(ctx, s.db, op, (*userRow).user, query, args...)
}

// Delete implements [user.Registration]: one transaction that deletes the
// user's row, then their passkeys and passkey handle (migration 0003, no
// foreign key), their identities (migration 0007), their first sign-in
// record (migration 0008), their API keys (migration 0009) and, with the
// side table, their state row (the
// foreign key's ON DELETE CASCADE removes it too, where foreign keys are
// enforced). A row of the app's that still references the user fails it
// with a *user.ReferencedError (deletion.go).
func (s *UserStore) Delete(ctx context.Context, id string) error {
	const op = "delete user"
	idv, ok := s.s.idArg(id)
	if !ok {
		return notFound(op)
	}
	return s.inTx(ctx, op, idv, func(q queryer) error { return s.deleteIn(ctx, q, id, idv) })
}

// deleteIn deletes user id (idv) in the transaction q: the user's row,
// then their passkeys, passkey handle, identities, first sign-in record,
// API keys and side-table row.
func (s *UserStore) deleteIn(ctx context.Context, q queryer, id string, idv any) error {
	if err := execOne(ctx, q, s.q.delete, idv); err != nil {
		return err
	}
	if err := s.deletePasskeysOf(ctx, q, id); err != nil {
		return err
	}
	if err := s.deleteIdentitiesOf(ctx, q, id); err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, s.unSign, id); err != nil {
		return err
	}
	if err := s.deleteAPIKeysOf(ctx, q, id); err != nil {
		return err
	}
	if !s.s.side {
		return nil
	}
	_, err := q.ExecContext(ctx, s.q.deleteSide, idv)
	return err
}

// BeginTOTPSetup implements [user.TwoFactor].
func (s *UserStore) BeginTOTPSetup(ctx context.Context, id, pendingSecret string) error {
	return s.stateUpdate(ctx, "begin totp setup", id, s.q.beginTOTP, func(idv any) []any {
		return []any{nullString(pendingSecret), idv}
	})
}

// EnableTOTP implements [user.TwoFactor]: one UPDATE, so 2FA is either fully
// on (secret, hashes, step, flag) or not touched at all.
func (s *UserStore) EnableTOTP(ctx context.Context, id string, e user.EnableTOTP) error {
	const op = "enable totp"
	hashes, err := encodeHashes(e.RecoveryCodeHashes)
	if err != nil {
		return fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	if e.Pending == "" { // no pending secret can equal it
		idv, ok := s.s.idArg(id)
		if !ok {
			return notFound(op)
		}
		return s.noRows(ctx, op, idv)
	}
	return s.stateUpdate(ctx, op, id, s.q.enableTOTP, func(idv any) []any {
		return []any{nullString(e.Secret), hashes, nullInt(e.Step), idv, e.Pending}
	})
}

// AcceptTOTPStep implements [user.TwoFactor].
func (s *UserStore) AcceptTOTPStep(ctx context.Context, id string, matched, current int64) error {
	return s.stateUpdate(ctx, "accept totp step", id, s.q.acceptStep, func(idv any) []any {
		return []any{nullInt(max(matched, current)), idv, matched, current}
	})
}

// ConsumeRecoveryCode implements [user.TwoFactor]. The WHERE clause compares
// the stored hashes with old, so of two requests that read the same hashes
// only the first one's update applies.
func (s *UserStore) ConsumeRecoveryCode(ctx context.Context, id string, old, remaining []string) error {
	const op = "consume recovery code"
	if remaining == nil {
		remaining = []string{}
	}
	next, err := encodeHashes(remaining)
	if err != nil {
		return fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	if len(old) == 0 {
		return s.stateUpdate(ctx, op, id, s.q.consumeFromNone, func(idv any) []any { return []any{next, idv} })
	}
	prev, err := encodeHashes(old)
	if err != nil {
		return fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	return s.stateUpdate(ctx, op, id, s.q.consume, func(idv any) []any { return []any{next, idv, prev} })
}

// ReplaceRecoveryCodes implements [user.TwoFactor].
func (s *UserStore) ReplaceRecoveryCodes(ctx context.Context, id string, hashes []string) error {
	const op = "replace recovery codes"
	h, err := encodeHashes(hashes)
	if err != nil {
		return fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	return s.stateUpdate(ctx, op, id, s.q.replaceCodes, func(idv any) []any { return []any{h, idv} })
}

// DisableTOTP implements [user.TwoFactor].
func (s *UserStore) DisableTOTP(ctx context.Context, id string) error {
	return s.stateUpdate(ctx, "disable totp", id, s.q.disableTOTP, func(idv any) []any { return []any{idv} })
}

// VerifyEmail implements [user.EmailVerification]. With the side table, the app's row
// is locked while it still has the address, then the state is updated.
func (s *UserStore) VerifyEmail(ctx context.Context, id, email string, at time.Time) error {
	const op = "verify email"
	idv, ok := s.s.idArg(id)
	if !ok {
		return notFound(op)
	}
	if !s.s.side {
		return s.update(ctx, op, idv, s.q.verifyEmail, append([]any{ms(at), idv}, s.emailArgs(email)...)...)
	}
	return s.inTx(ctx, op, idv, func(q queryer) error {
		var one int
		err := q.GetContext(ctx, &one, s.q.lockEmail, append([]any{idv}, s.emailArgs(email)...)...)
		if errors.Is(err, sql.ErrNoRows) {
			return errTxNoRow
		}
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, s.q.ensure, idv); err != nil {
			return err
		}
		return execOne(ctx, q, s.q.verifyEmail, ms(at), idv)
	})
}

// ChangeEmail implements [user.EmailChange]. The unique index on email decides
// races between users: the loser's UPDATE fails and is reported as
// ErrEmailTaken.
func (s *UserStore) ChangeEmail(ctx context.Context, id, oldEmail, newEmail string, at time.Time) error {
	const op = "change email"
	idv, ok := s.s.idArg(id)
	if !ok {
		return notFound(op)
	}
	var err error
	if !s.s.side {
		err = s.update(ctx, op, idv, s.q.changeEmail, append([]any{newEmail, ms(at), idv}, s.emailArgs(oldEmail)...)...)
	} else {
		err = s.inTx(ctx, op, idv, func(q queryer) error {
			if err := execOne(ctx, q, s.q.setEmail, append([]any{newEmail, idv}, s.emailArgs(oldEmail)...)...); err != nil {
				return err
			}
			if _, err := q.ExecContext(ctx, s.q.ensure, idv); err != nil {
				return err
			}
			return execOne(ctx, q, s.q.changeEmail, ms(at), idv)
		})
	}
	if unique, _ := s.db.uniqueViolation(err); unique {
		return fmt.Errorf("sqlxstore: %s: %w", op, user.ErrEmailTaken)
	}
	return err
}

// RehashPassword implements [user.PasswordRehash]: only the hash changes,
// in the app's column. Condition: the stored hash equals oldHash.
func (s *UserStore) RehashPassword(ctx context.Context, id, oldHash, newHash string) error {
	const op = "rehash password"
	idv, ok := s.s.idArg(id)
	if !ok {
		return notFound(op)
	}
	return s.update(ctx, op, idv, s.q.rehash, newHash, idv, oldHash)
}

// ChangePassword implements [user.PasswordChange]: the hash,
// PasswordChangedAt = at, SessionVersion + 1, failures cleared.
// Condition: the stored hash equals oldHash. With the side table, one
// transaction: the app's row first (the UPDATE checks the hash and locks
// the row), then authkit's state.
func (s *UserStore) ChangePassword(ctx context.Context, id, oldHash, newHash string, at time.Time) error {
	const op = "change password"
	idv, ok := s.s.idArg(id)
	if !ok {
		return notFound(op)
	}
	if !s.s.side {
		return s.update(ctx, op, idv, s.q.change, newHash, ms(at), idv, oldHash)
	}
	return s.inTx(ctx, op, idv, func(q queryer) error {
		if err := execOne(ctx, q, s.q.setHash, newHash, idv, oldHash); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, s.q.ensure, idv); err != nil {
			return err
		}
		return execOne(ctx, q, s.q.changed, ms(at), idv)
	})
}

// ResetPassword implements [user.PasswordReset]: as ChangePassword.
// Condition: the stored hash equals r.OldHash, and PasswordChangedAt is
// zero or before r.IssuedBefore. With the side table the two conditions sit
// in the two tables: the app's row is updated (and locked) first, and when
// authkit's condition then fails the transaction rolls back.
func (s *UserStore) ResetPassword(ctx context.Context, id string, r user.Reset) error {
	const op = "reset password"
	idv, ok := s.s.idArg(id)
	if !ok {
		return notFound(op)
	}
	issued := r.IssuedBefore.UnixMilli()
	if !s.s.side {
		return s.update(ctx, op, idv, s.q.reset, r.Hash, ms(r.At), idv, r.OldHash, issued)
	}
	return s.inTx(ctx, op, idv, func(q queryer) error {
		if err := execOne(ctx, q, s.q.setHash, r.Hash, idv, r.OldHash); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, s.q.ensure, idv); err != nil {
			return err
		}
		if err := execOne(ctx, q, s.q.reset, ms(r.At), idv, issued); errors.Is(err, errTxNoRow) {
			return errTxConflict // the user exists: the link is stale
		} else {
			return err
		}
	})
}

// BumpSessionVersion implements [user.SessionVersions].
func (s *UserStore) BumpSessionVersion(ctx context.Context, id string) (int64, error) {
	const op = "bump session version"
	idv, ok := s.s.idArg(id)
	if !ok {
		return 0, notFound(op)
	}
	var v int64
	var found bool
	bump := func() error {
		if s.db.dialect == MySQL {
			res, err := s.db.x.ExecContext(ctx, s.q.bump, idv)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if found = n > 0; found {
				v, err = res.LastInsertId()
			}
			return err
		}
		err := s.db.x.QueryRowxContext(ctx, s.q.bump, idv).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			found = false
			return nil
		}
		found = err == nil
		return err
	}
	err := s.db.retry(ctx, bump)
	if err == nil && !found && s.s.side {
		if err = s.ensure(ctx, idv); err == nil {
			err = s.db.retry(ctx, bump)
		}
	}
	if err != nil {
		return 0, s.db.fail(op, err)
	}
	if !found {
		return 0, notFound(op)
	}
	return v, nil
}

// RecordLoginFailure implements [user.Lockout].
func (s *UserStore) RecordLoginFailure(ctx context.Context, id string, limit int, lockFor time.Duration, at time.Time) (int, time.Time, error) {
	const op = "record login failure"
	idv, ok := s.s.idArg(id)
	if !ok {
		return 0, time.Time{}, notFound(op)
	}
	n, until, found, err := s.recordFailure(ctx, idv, limit, at.Add(lockFor).UnixMilli())
	if err == nil && !found && s.s.side {
		if err = s.ensure(ctx, idv); err == nil {
			n, until, found, err = s.recordFailure(ctx, idv, limit, at.Add(lockFor).UnixMilli())
		}
	}
	if err != nil {
		return 0, time.Time{}, s.db.fail(op, err)
	}
	if !found {
		return 0, time.Time{}, notFound(op)
	}
	return int(n), fromMS(until), nil
}

func (s *UserStore) recordFailure(ctx context.Context, idv any, limit int, lockedUntil int64) (n int64, until sql.NullInt64, found bool, err error) {
	switch s.db.dialect {
	case MySQL:
		err = s.db.retry(ctx, func() error {
			res, err := s.db.x.ExecContext(ctx, s.q.recordFailure, limit, limit, lockedUntil, limit, limit, idv)
			if err != nil {
				return err
			}
			rows, err := res.RowsAffected() // rows matched: clientFoundRows=true
			if err != nil {
				return err
			}
			if found = rows > 0; !found {
				return nil
			}
			if n, err = res.LastInsertId(); err != nil {
				return err
			}
			if limit > 0 && n >= int64(limit) {
				until = sql.NullInt64{Int64: lockedUntil, Valid: true}
				return nil
			}
			// Below the limit the lock is whatever it was; a plain read.
			var cur struct {
				Failed int64         `db:"failed_logins"`
				Until  sql.NullInt64 `db:"locked_until"`
			}
			if err := s.db.x.GetContext(ctx, &cur, s.q.lockFailures, idv); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			until = cur.Until
			return nil
		})
	case Postgres:
		err = s.db.retry(ctx, func() error {
			err := s.db.x.QueryRowxContext(ctx, s.q.recordFailure, idv, limit, limit, limit, limit, lockedUntil).Scan(&n, &until)
			if errors.Is(err, sql.ErrNoRows) {
				found = false
				return nil
			}
			found = err == nil
			return err
		})
	default: // SQLite: BEGIN IMMEDIATE holds the write lock
		err = s.db.inTx(ctx, func(q queryer) error {
			var cur struct {
				Failed int64         `db:"failed_logins"`
				Until  sql.NullInt64 `db:"locked_until"`
			}
			err := q.GetContext(ctx, &cur, s.q.lockFailures, idv)
			if errors.Is(err, sql.ErrNoRows) {
				found = false
				return nil
			}
			if err != nil {
				return err
			}
			found = true
			n, until = cur.Failed+1, cur.Until
			failed := n
			if limit > 0 && n >= int64(limit) {
				failed, until = 0, sql.NullInt64{Int64: lockedUntil, Valid: true}
			}
			_, err = q.ExecContext(ctx, s.q.setFailures, failed, until, idv)
			return err
		})
	}
	return n, until, found, err
}

// ClearLoginFailures implements [user.Lockout].
func (s *UserStore) ClearLoginFailures(ctx context.Context, id string) error {
	return s.stateUpdate(ctx, "clear login failures", id, s.q.clearFailures, func(idv any) []any { return []any{idv} })
}

// stateUpdate runs a conditional UPDATE of authkit's state of user id, one
// statement. With the side table, a user without a state row gets one
// (ensure) and the UPDATE runs again: another request may have made the
// row meanwhile, so the second run decides.
func (s *UserStore) stateUpdate(ctx context.Context, op, id, query string, args func(idv any) []any) error {
	idv, ok := s.s.idArg(id)
	if !ok {
		return notFound(op)
	}
	n, err := s.exec(ctx, query, args(idv)...)
	if err == nil && n == 0 && s.s.side {
		if err = s.ensure(ctx, idv); err == nil {
			n, err = s.exec(ctx, query, args(idv)...)
		}
	}
	if err != nil {
		return s.db.fail(op, err)
	}
	if n == 0 {
		return s.noRows(ctx, op, idv)
	}
	return nil
}

// ensure creates the state row of an existing user that has none: the
// defaults, verified as ExistingUsersVerified says. Idempotent (ON
// CONFLICT DO NOTHING, INSERT IGNORE), and a no-op for a missing user.
func (s *UserStore) ensure(ctx context.Context, idv any) error {
	return s.db.retry(ctx, func() error {
		_, err := s.db.x.ExecContext(ctx, s.q.ensure, idv)
		if s.db.foreignKeyViolation(err) {
			// The user was deleted between the INSERT's read and its
			// foreign key check: the UPDATE that follows finds no row,
			// and noRows answers ErrNotFound.
			return nil
		}
		return err
	})
}

// exec runs one statement and returns the rows it matched.
func (s *UserStore) exec(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := s.db.retry(ctx, func() error {
		res, err := s.db.x.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// execFound runs one statement that must match a row: ErrNotFound, for
// op, when it matched none.
func (s *UserStore) execFound(ctx context.Context, op, query string, args ...any) error {
	n, err := s.exec(ctx, query, args...)
	if err != nil {
		return s.db.fail(op, err)
	}
	if n == 0 {
		return notFound(op)
	}
	return nil
}

// execOne runs one statement of a transaction that must match a row:
// errTxNoRow when it matched none.
func execOne(ctx context.Context, q queryer, query string, args ...any) error {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return errTxNoRow
	}
	return nil
}

// inTx runs fn as one READ COMMITTED transaction of operation op on user
// idv and answers as the contract says: errTxNoRow becomes ErrNotFound or
// ErrConflict (noRows decides, after the rollback), errTxConflict
// ErrConflict.
func (s *UserStore) inTx(ctx context.Context, op string, idv any, fn func(q queryer) error) error {
	err := s.db.inTxOpts(ctx, readCommitted, fn)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errTxNoRow):
		return s.noRows(ctx, op, idv)
	case errors.Is(err, errTxConflict):
		return fmt.Errorf("sqlxstore: %s: %w", op, user.ErrConflict)
	}
	if ref := s.db.referenced(err); ref != nil {
		return fmt.Errorf("sqlxstore: %s: %w", op, ref)
	}
	if errors.Is(err, errBefore) {
		return fmt.Errorf("sqlxstore: %s: %w", op, err)
	}
	return s.db.fail(op, err)
}

// update runs a conditional UPDATE (or DELETE) of user idv. When it changes
// no row, nothing was written, and noRows tells why.
func (s *UserStore) update(ctx context.Context, op string, idv any, query string, args ...any) error {
	n, err := s.exec(ctx, query, args...)
	if err != nil {
		return s.db.fail(op, err)
	}
	if n == 0 {
		return s.noRows(ctx, op, idv)
	}
	return nil
}

// userExists answers ErrNotFound when there is no user userID: for the
// lists, which tell a user with nothing listed from no user at all.
func (s *UserStore) userExists(ctx context.Context, op, userID string) error {
	idv, ok := s.s.idArg(userID)
	if !ok {
		return notFound(op)
	}
	var one int
	return s.db.getOne(ctx, op, &one, s.q.exists, idv)
}

// noRows answers a conditional operation that matched no row: ErrNotFound
// when the user does not exist, ErrConflict when its condition did not
// hold.
func (s *UserStore) noRows(ctx context.Context, op string, idv any) error {
	var one int
	err := s.db.x.GetContext(ctx, &one, s.q.exists, idv)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return notFound(op)
	case err != nil:
		return s.db.fail(op, err)
	default:
		return fmt.Errorf("sqlxstore: %s: %w", op, user.ErrConflict)
	}
}
