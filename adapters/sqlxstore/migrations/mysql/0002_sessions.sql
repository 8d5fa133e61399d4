-- Server-side session records and trusted devices (MySQL/MariaDB): one row
-- per session (DB.Sessions) or trusted browser (DB.TrustedDevices), each
-- with its user, its times in Unix milliseconds and its client. user_id is
-- the user's id as text, so that it fits any users table (no foreign key).

CREATE TABLE IF NOT EXISTS {{prefix}}sessions (
	id           VARBINARY(64) NOT NULL,
	user_id      VARBINARY(255) NOT NULL,
	created_at   BIGINT NOT NULL,
	last_seen_at BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL,
	ip           VARCHAR(64) NOT NULL,
	user_agent   TEXT NOT NULL,
	remember     BOOLEAN NOT NULL DEFAULT FALSE,
	PRIMARY KEY (id),
	KEY {{prefix}}sessions_user_idx (user_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS {{prefix}}trusted_devices (
	id           VARBINARY(64) NOT NULL,
	user_id      VARBINARY(255) NOT NULL,
	created_at   BIGINT NOT NULL,
	last_seen_at BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL,
	ip           VARCHAR(64) NOT NULL,
	user_agent   TEXT NOT NULL,
	remember     BOOLEAN NOT NULL DEFAULT FALSE,
	PRIMARY KEY (id),
	KEY {{prefix}}trusted_devices_user_idx (user_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
