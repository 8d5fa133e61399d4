-- Passkeys (SQLite): each user's WebAuthn user handle, and their
-- credentials (DB.Users, the user.Passkeys part). user_id is the user's id
-- as text, so that it fits any users table (no foreign key): deleting a
-- user through the store deletes these rows in the same transaction.
-- Credential ids and handles are BLOBs, compared byte for byte; times are
-- INTEGER Unix milliseconds (last_used_at NULL: never); transports is the
-- JSON array of the browser's transport names, as text.

CREATE TABLE IF NOT EXISTS {{prefix}}passkey_handles (
	user_id     TEXT NOT NULL PRIMARY KEY,
	user_handle BLOB NOT NULL UNIQUE CHECK (length(user_handle) BETWEEN 1 AND 64)
) STRICT, WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS {{prefix}}passkeys (
	id               BLOB NOT NULL PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 1023),
	user_id          TEXT NOT NULL,
	user_handle      BLOB NOT NULL,
	public_key       BLOB NOT NULL,
	sign_count       INTEGER NOT NULL,
	backup_eligible  INTEGER NOT NULL DEFAULT 0 CHECK (backup_eligible IN (0, 1)),
	backup_state     INTEGER NOT NULL DEFAULT 0 CHECK (backup_state IN (0, 1)),
	transports       TEXT NOT NULL,
	attestation_type TEXT NOT NULL,
	aaguid           BLOB NOT NULL,
	name             TEXT NOT NULL,
	created_at       INTEGER NOT NULL,
	last_used_at     INTEGER NULL
) STRICT;

CREATE INDEX IF NOT EXISTS {{prefix}}passkeys_user_idx ON {{prefix}}passkeys (user_id, created_at);
