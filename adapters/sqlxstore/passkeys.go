package sqlxstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/authkit-go/authkit/core/user"
)

var _ user.Passkeys = (*UserStore)(nil)

// WebAuthn's limits, which the columns of migration 0003 enforce too.
const (
	maxCredentialID = 1023 // bytes (WebAuthn Level 3, "credential ID")
	maxUserHandle   = 64   // bytes (WebAuthn, "user handle")
)

// passkeyQueries are the statements of the [user.Passkeys] part, over the
// tables of migration 0003: <prefix>passkey_handles and <prefix>passkeys.
// Their user_id is the user's id as text (the canonical form idArg
// accepts), so they fit any users table.
type passkeyQueries struct {
	lockUser     string // the user's row, share-locked: a racing Delete waits, or wins and leaves none
	handleOf     string // the handle of a user that exists
	insertHandle string // a candidate handle; nothing when the user or the handle has one
	handle       string // the user's handle, whatever users holds
	byHandle     string // the user id of a handle
	insert       string
	list         string
	byID         string
	rename       string
	del          string
	use          string
	owned        string // the credential exists and is the user's
	deleteUser   []string
}

const passkeyColumns = `id, user_id, user_handle, public_key, sign_count, backup_eligible, backup_state,
	transports, attestation_type, aaguid, name, created_at, last_used_at`

func newPasskeyQueries(db *DB) passkeyQueries {
	uq := db.userQuery
	lock := ""
	switch db.dialect {
	case Postgres:
		// KEY SHARE conflicts with DELETE, not with the UPDATEs of the
		// user's other state (a failed login, a session version bump).
		lock = ` FOR KEY SHARE`
	case MySQL:
		lock = ` LOCK IN SHARE MODE` // MySQL 8 and MariaDB both have it
	}
	// SQLite: the transaction's BEGIN IMMEDIATE already excludes writers.
	insertHandle := `INSERT INTO {{prefix}}passkey_handles (user_id, user_handle) VALUES (?, ?)`
	if db.dialect == MySQL {
		// Not INSERT IGNORE, which would also turn a too-long value into
		// a truncated one.
		insertHandle += ` ON DUPLICATE KEY UPDATE user_id = user_id`
	} else {
		insertHandle += ` ON CONFLICT DO NOTHING`
	}
	return passkeyQueries{
		lockUser: uq(`SELECT 1 FROM {{users}} WHERE {{id}} = ?` + lock),
		handleOf: uq(`SELECT h.user_handle FROM {{users}} u, {{prefix}}passkey_handles h
			WHERE u.{{id}} = ? AND h.user_id = ?`),
		insertHandle: uq(insertHandle),
		handle:       uq(`SELECT user_handle FROM {{prefix}}passkey_handles WHERE user_id = ?`),
		byHandle:     uq(`SELECT user_id FROM {{prefix}}passkey_handles WHERE user_handle = ?`),
		insert: uq(`INSERT INTO {{prefix}}passkeys (` + passkeyColumns + `)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		list:   uq(`SELECT ` + passkeyColumns + ` FROM {{prefix}}passkeys WHERE user_id = ? ORDER BY created_at, id`),
		byID:   uq(`SELECT ` + passkeyColumns + ` FROM {{prefix}}passkeys WHERE id = ?`),
		rename: uq(`UPDATE {{prefix}}passkeys SET name = ? WHERE id = ? AND user_id = ?`),
		del:    uq(`DELETE FROM {{prefix}}passkeys WHERE id = ? AND user_id = ?`),
		use: uq(`UPDATE {{prefix}}passkeys SET sign_count = ?, backup_state = ?, last_used_at = ?
			WHERE id = ? AND user_id = ? AND sign_count = ?`),
		owned: uq(`SELECT 1 FROM {{prefix}}passkeys WHERE id = ? AND user_id = ?`),
		deleteUser: []string{
			uq(`DELETE FROM {{prefix}}passkeys WHERE user_id = ?`),
			uq(`DELETE FROM {{prefix}}passkey_handles WHERE user_id = ?`),
		},
	}
}

// passkeyRow is one row of <prefix>passkeys.
type passkeyRow struct {
	ID              []byte        `db:"id"`
	UserID          string        `db:"user_id"`
	UserHandle      []byte        `db:"user_handle"`
	PublicKey       []byte        `db:"public_key"`
	SignCount       int64         `db:"sign_count"`
	BackupEligible  bool          `db:"backup_eligible"`
	BackupState     bool          `db:"backup_state"`
	Transports      string        `db:"transports"`
	AttestationType string        `db:"attestation_type"`
	AAGUID          []byte        `db:"aaguid"`
	Name            string        `db:"name"`
	CreatedAt       int64         `db:"created_at"`
	LastUsedAt      sql.NullInt64 `db:"last_used_at"`
}

func (r *passkeyRow) passkey() (*user.Passkey, error) {
	var transports []string
	if err := json.Unmarshal([]byte(r.Transports), &transports); err != nil {
		return nil, fmt.Errorf("transports is not a JSON array of strings: %w", err)
	}
	if len(transports) == 0 {
		transports = nil
	}
	if r.SignCount < 0 || r.SignCount > 1<<32-1 {
		return nil, fmt.Errorf("sign_count %d is not a uint32", r.SignCount)
	}
	return &user.Passkey{
		ID:              r.ID,
		UserID:          r.UserID,
		UserHandle:      r.UserHandle,
		PublicKey:       r.PublicKey,
		SignCount:       uint32(r.SignCount),
		BackupEligible:  r.BackupEligible,
		BackupState:     r.BackupState,
		Transports:      transports,
		AttestationType: r.AttestationType,
		AAGUID:          nilIfEmpty(r.AAGUID),
		Name:            r.Name,
		CreatedAt:       fromMS(sql.NullInt64{Int64: r.CreatedAt, Valid: true}),
		LastUsedAt:      fromMS(r.LastUsedAt),
	}, nil
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// errPasskeyConflict rolls back a passkey transaction whose condition
// failed: ErrConflict.
var errPasskeyConflict = errors.New("passkey condition failed")

// checkLen refuses an id or handle that the columns cannot hold.
func checkLen(op, what string, b []byte, limit int) error {
	if len(b) == 0 || len(b) > limit {
		return fmt.Errorf("sqlxstore: %s: %s of %d bytes, want 1 to %d", op, what, len(b), limit)
	}
	return nil
}

// PasskeyUserHandle implements [user.Passkeys]. A user who has a handle
// gets it in one read. Otherwise one READ COMMITTED transaction
// share-locks the user's row (so a racing Delete either waits for it or
// has already removed the row: ErrNotFound), inserts the candidate unless
// a handle exists (ON CONFLICT DO NOTHING; MySQL: ON DUPLICATE KEY UPDATE
// of nothing) and reads the handle back: the first committed candidate,
// for every racer. A candidate that another user holds already gives
// ErrConflict.
func (s *UserStore) PasskeyUserHandle(ctx context.Context, id string, candidate []byte) ([]byte, error) {
	const op = "passkey user handle"
	if err := checkLen(op, "candidate", candidate, maxUserHandle); err != nil {
		return nil, err
	}
	idv, ok := s.s.idArg(id)
	if !ok {
		return nil, notFound(op)
	}
	var h []byte
	err := s.db.x.GetContext(ctx, &h, s.pq.handleOf, idv, id)
	if err == nil {
		return h, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, s.db.fail(op, err)
	}
	err = s.db.inTxOpts(ctx, readCommitted, func(q queryer) error {
		if err := lockUser(ctx, q, s.pq.lockUser, idv); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, s.pq.insertHandle, id, candidate); err != nil {
			return err
		}
		err := q.GetContext(ctx, &h, s.pq.handle, id)
		if errors.Is(err, sql.ErrNoRows) {
			return errPasskeyConflict // the user has none, and another holds the candidate
		}
		return err
	})
	return h, s.passkeyErr(op, err, "handle in use")
}

// ByPasskeyUserHandle implements [user.Passkeys].
func (s *UserStore) ByPasskeyUserHandle(ctx context.Context, handle []byte) (*user.User, error) {
	const op = "user by passkey handle"
	var id string
	if err := s.db.getOne(ctx, op, &id, s.pq.byHandle, handle); err != nil {
		return nil, err
	}
	idv, ok := s.s.idArg(id)
	if !ok {
		return nil, notFound(op)
	}
	return s.get(ctx, op, s.q.byID, idv)
}

// AddPasskey implements [user.Passkeys]: one READ COMMITTED transaction
// that share-locks the user's row (ErrNotFound when there is none, also
// when a racing Delete removed it first) and inserts the credential. The
// primary key on the credential id decides duplicates, of any user:
// ErrConflict.
func (s *UserStore) AddPasskey(ctx context.Context, p *user.Passkey) error {
	const op = "add passkey"
	if p == nil {
		return fmt.Errorf("sqlxstore: %s: nil passkey", op)
	}
	if err := checkLen(op, "credential id", p.ID, maxCredentialID); err != nil {
		return err
	}
	if err := checkLen(op, "user handle", p.UserHandle, maxUserHandle); err != nil {
		return err
	}
	idv, ok := s.s.idArg(p.UserID)
	if !ok {
		return notFound(op)
	}
	tj, err := jsonList(p.Transports)
	if err != nil {
		return fmt.Errorf("sqlxstore: %s: transports: %w", op, err)
	}
	aaguid := p.AAGUID
	if aaguid == nil {
		aaguid = []byte{} // NOT NULL: none is empty
	}
	err = s.db.inTxOpts(ctx, readCommitted, func(q queryer) error {
		if err := lockUser(ctx, q, s.pq.lockUser, idv); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, s.pq.insert, p.ID, p.UserID, p.UserHandle, p.PublicKey, int64(p.SignCount),
			p.BackupEligible, p.BackupState, tj, p.AttestationType, aaguid, p.Name,
			p.CreatedAt.UnixMilli(), ms(p.LastUsedAt))
		if unique, _ := s.db.uniqueViolation(err); unique {
			return errPasskeyConflict
		}
		return err
	})
	return s.passkeyErr(op, err, "credential id in use")
}

// lockUser share-locks the row of user idv for the transaction:
// errTxNoRow when there is none.
func lockUser(ctx context.Context, q queryer, query string, idv any) error {
	var one int
	err := q.GetContext(ctx, &one, query, idv)
	if errors.Is(err, sql.ErrNoRows) {
		return errTxNoRow
	}
	return err
}

// passkeyErr answers for a passkey transaction: errTxNoRow is ErrNotFound
// (the user), errPasskeyConflict ErrConflict (why says what conflicted).
func (s *UserStore) passkeyErr(op string, err error, why string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errTxNoRow):
		return notFound(op)
	case errors.Is(err, errPasskeyConflict):
		return fmt.Errorf("sqlxstore: %s: %s: %w", op, why, user.ErrConflict)
	}
	return s.db.fail(op, err)
}

// ListPasskeys implements [user.Passkeys].
func (s *UserStore) ListPasskeys(ctx context.Context, userID string) ([]*user.Passkey, error) {
	const op = "list passkeys"
	if err := s.userExists(ctx, op, userID); err != nil {
		return nil, err
	}
	return selectAs(ctx, s.db, op, (*passkeyRow).passkey, s.pq.list, userID)
}

// PasskeyByID implements [user.Passkeys].
func (s *UserStore) PasskeyByID(ctx context.Context, credentialID []byte) (*user.Passkey, error) {
	return getAs(ctx, s.db, "passkey by id", (*passkeyRow).passkey, s.pq.byID, credentialID)
}

// RenamePasskey implements [user.Passkeys]: one UPDATE of the credential
// with that id and user.
func (s *UserStore) RenamePasskey(ctx context.Context, userID string, credentialID []byte, name string) error {
	const op = "rename passkey"
	return s.execFound(ctx, op, s.pq.rename, name, credentialID, userID)
}

// DeletePasskey implements [user.Passkeys]: one DELETE of the credential
// with that id and user.
func (s *UserStore) DeletePasskey(ctx context.Context, userID string, credentialID []byte) error {
	const op = "delete passkey"
	return s.execFound(ctx, op, s.pq.del, credentialID, userID)
}

// UsePasskey implements [user.Passkeys]: one UPDATE whose WHERE clause
// holds the condition (sign_count = u.OldSignCount), so of two racing
// assertions checked against one count exactly one is recorded. When it
// changes no row, a read tells ErrNotFound (no such credential of the
// user) from ErrConflict.
func (s *UserStore) UsePasskey(ctx context.Context, userID string, credentialID []byte, u user.PasskeyUse) error {
	const op = "use passkey"
	n, err := s.exec(ctx, s.pq.use, int64(u.SignCount), u.BackupState, ms(u.At),
		credentialID, userID, int64(u.OldSignCount))
	if err != nil {
		return s.db.fail(op, err)
	}
	if n > 0 {
		return nil
	}
	var one int
	err = s.db.x.GetContext(ctx, &one, s.pq.owned, credentialID, userID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return notFound(op)
	case err != nil:
		return s.db.fail(op, err)
	}
	return fmt.Errorf("sqlxstore: %s: sign count changed: %w", op, user.ErrConflict)
}

// deletePasskeysOf deletes the passkeys and the handle of user id, in the
// transaction of the user's Delete or Create.
func (s *UserStore) deletePasskeysOf(ctx context.Context, q queryer, id string) error {
	for _, stmt := range s.pq.deleteUser {
		if _, err := q.ExecContext(ctx, stmt, id); err != nil {
			return err
		}
	}
	return nil
}
