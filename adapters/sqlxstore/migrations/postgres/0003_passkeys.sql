-- Passkeys (PostgreSQL): each user's WebAuthn user handle, and their
-- credentials (DB.Users, the user.Passkeys part). user_id is the user's id
-- as text, so that it fits any users table (no foreign key): deleting a
-- user through the store deletes these rows in the same transaction.
-- Credential ids and handles are BYTEA, compared byte for byte; times are
-- BIGINT Unix milliseconds (last_used_at NULL: never); transports is the
-- JSON array of the browser's transport names, as text.

CREATE TABLE IF NOT EXISTS {{prefix}}passkey_handles (
	user_id     VARCHAR(255) COLLATE "C" NOT NULL,
	user_handle BYTEA NOT NULL,
	CONSTRAINT {{prefix}}passkey_handles_pkey PRIMARY KEY (user_id),
	CONSTRAINT {{prefix}}passkey_handles_handle_key UNIQUE (user_handle),
	CONSTRAINT {{prefix}}passkey_handles_handle_check CHECK (octet_length(user_handle) BETWEEN 1 AND 64)
);

CREATE TABLE IF NOT EXISTS {{prefix}}passkeys (
	id               BYTEA NOT NULL,
	user_id          VARCHAR(255) COLLATE "C" NOT NULL,
	user_handle      BYTEA NOT NULL,
	public_key       BYTEA NOT NULL,
	sign_count       BIGINT NOT NULL,
	backup_eligible  BOOLEAN NOT NULL DEFAULT FALSE,
	backup_state     BOOLEAN NOT NULL DEFAULT FALSE,
	transports       TEXT NOT NULL,
	attestation_type TEXT NOT NULL,
	aaguid           BYTEA NOT NULL,
	name             TEXT NOT NULL,
	created_at       BIGINT NOT NULL,
	last_used_at     BIGINT NULL,
	CONSTRAINT {{prefix}}passkeys_pkey PRIMARY KEY (id),
	CONSTRAINT {{prefix}}passkeys_id_check CHECK (octet_length(id) BETWEEN 1 AND 1023)
);

CREATE INDEX IF NOT EXISTS {{prefix}}passkeys_user_idx ON {{prefix}}passkeys (user_id, created_at);
