-- Passkeys (MySQL/MariaDB): each user's WebAuthn user handle, and their
-- credentials (DB.Users, the user.Passkeys part). user_id is the user's id
-- as text, so that it fits any users table (no foreign key): deleting a
-- user through the store deletes these rows in the same transaction.
-- Credential ids (at most 1023 bytes, as WebAuthn allows) and handles (at
-- most 64) are VARBINARY: compared byte for byte, no padding. Times are
-- BIGINT Unix milliseconds (last_used_at NULL: never); transports is the
-- JSON array of the browser's transport names, as text.

CREATE TABLE IF NOT EXISTS {{prefix}}passkey_handles (
	user_id     VARBINARY(255) NOT NULL,
	user_handle VARBINARY(64) NOT NULL,
	PRIMARY KEY (user_id),
	UNIQUE KEY {{prefix}}passkey_handles_handle_key (user_handle)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{prefix}}passkeys (
	id               VARBINARY(1023) NOT NULL,
	user_id          VARBINARY(255) NOT NULL,
	user_handle      VARBINARY(64) NOT NULL,
	public_key       BLOB NOT NULL,
	sign_count       BIGINT NOT NULL,
	backup_eligible  BOOLEAN NOT NULL DEFAULT FALSE,
	backup_state     BOOLEAN NOT NULL DEFAULT FALSE,
	transports       TEXT NOT NULL,
	attestation_type TEXT NOT NULL,
	aaguid           VARBINARY(16) NOT NULL,
	name             TEXT NOT NULL,
	created_at       BIGINT NOT NULL,
	last_used_at     BIGINT NULL,
	PRIMARY KEY (id),
	KEY {{prefix}}passkeys_user_idx (user_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
