-- authkit users and rate-limit counters (MySQL 8 / MariaDB 10.5+).
-- Timestamps are BIGINT Unix milliseconds (NULL: never); booleans are
-- BOOLEAN (TINYINT(1)); recovery_code_hashes is the JSON array of the
-- hashes, as text.
-- Every column that is looked up or compared (id, email, secrets, hashes,
-- rate-limit keys) is binary (VARBINARY/BLOB): compared byte for byte, so
-- 'e' and 'é' differ, and with no space padding ('a' and 'a ' differ, which
-- a PAD SPACE collation such as utf8mb4_bin would not guarantee).
-- MySQL commits DDL implicitly: each statement is idempotent, so a
-- migration interrupted half-way is completed by the next run.

CREATE TABLE IF NOT EXISTS {{prefix}}users (
	id                   VARBINARY(255) NOT NULL,
	email                VARBINARY(320) NOT NULL,
	name                 TEXT NOT NULL,
	password_hash        BLOB NOT NULL,
	two_factor_enabled   BOOLEAN NOT NULL DEFAULT FALSE,
	totp_secret          BLOB NULL,
	pending_totp_secret  BLOB NULL,
	recovery_code_hashes MEDIUMBLOB NULL,
	last_totp_step       BIGINT NULL,
	email_verified_at    BIGINT NULL,
	email_changed_at     BIGINT NULL,
	password_changed_at  BIGINT NULL,
	session_version      BIGINT NOT NULL DEFAULT 0,
	failed_logins        INT NOT NULL DEFAULT 0,
	locked_until         BIGINT NULL,
	created_at           BIGINT NOT NULL,
	PRIMARY KEY (id),
	UNIQUE KEY {{prefix}}users_email_key (email)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{prefix}}rate_limits (
	limit_key VARBINARY(255) NOT NULL,
	hits      BIGINT NOT NULL,
	reset_at  BIGINT NOT NULL,
	PRIMARY KEY (limit_key),
	KEY {{prefix}}rate_limits_reset_at_idx (reset_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
