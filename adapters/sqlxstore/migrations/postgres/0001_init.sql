-- authkit users and rate-limit counters (PostgreSQL).
-- Timestamps are BIGINT Unix milliseconds (NULL: never); booleans are
-- BOOLEAN; recovery_code_hashes is the JSON array of the hashes, as text.
-- id and email use the "C" collation: compared byte for byte.

CREATE TABLE IF NOT EXISTS {{prefix}}users (
	id                   TEXT COLLATE "C" NOT NULL,
	email                TEXT COLLATE "C" NOT NULL,
	name                 TEXT NOT NULL,
	password_hash        TEXT NOT NULL,
	two_factor_enabled   BOOLEAN NOT NULL DEFAULT FALSE,
	totp_secret          TEXT NULL,
	pending_totp_secret  TEXT NULL,
	recovery_code_hashes TEXT NULL,
	last_totp_step       BIGINT NULL,
	email_verified_at    BIGINT NULL,
	email_changed_at     BIGINT NULL,
	password_changed_at  BIGINT NULL,
	session_version      BIGINT NOT NULL DEFAULT 0,
	failed_logins        INTEGER NOT NULL DEFAULT 0,
	locked_until         BIGINT NULL,
	created_at           BIGINT NOT NULL,
	CONSTRAINT {{prefix}}users_pkey PRIMARY KEY (id),
	CONSTRAINT {{prefix}}users_email_key UNIQUE (email)
);

CREATE TABLE IF NOT EXISTS {{prefix}}rate_limits (
	limit_key VARCHAR(255) COLLATE "C" NOT NULL,
	hits      BIGINT NOT NULL,
	reset_at  BIGINT NOT NULL,
	CONSTRAINT {{prefix}}rate_limits_pkey PRIMARY KEY (limit_key)
);

CREATE INDEX IF NOT EXISTS {{prefix}}rate_limits_reset_at_idx ON {{prefix}}rate_limits (reset_at);
