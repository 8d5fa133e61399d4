-- authkit users and rate-limit counters (SQLite 3.37+, STRICT tables).
-- Timestamps are INTEGER Unix milliseconds (NULL: never); booleans are
-- INTEGER 0/1; recovery_code_hashes is the JSON array of the hashes, as
-- text. TEXT compares with the BINARY collation: byte for byte.

CREATE TABLE IF NOT EXISTS {{prefix}}users (
	id                   TEXT NOT NULL PRIMARY KEY,
	email                TEXT NOT NULL UNIQUE,
	name                 TEXT NOT NULL,
	password_hash        TEXT NOT NULL,
	two_factor_enabled   INTEGER NOT NULL DEFAULT 0 CHECK (two_factor_enabled IN (0, 1)),
	totp_secret          TEXT NULL,
	pending_totp_secret  TEXT NULL,
	recovery_code_hashes TEXT NULL,
	last_totp_step       INTEGER NULL,
	email_verified_at    INTEGER NULL,
	email_changed_at     INTEGER NULL,
	password_changed_at  INTEGER NULL,
	session_version      INTEGER NOT NULL DEFAULT 0,
	failed_logins        INTEGER NOT NULL DEFAULT 0,
	locked_until         INTEGER NULL,
	created_at           INTEGER NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS {{prefix}}rate_limits (
	limit_key TEXT NOT NULL PRIMARY KEY CHECK (length(CAST(limit_key AS BLOB)) <= 255),
	hits      INTEGER NOT NULL,
	reset_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS {{prefix}}rate_limits_reset_at_idx ON {{prefix}}rate_limits (reset_at);
