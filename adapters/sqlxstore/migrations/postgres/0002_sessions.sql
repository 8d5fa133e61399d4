-- Server-side session records and trusted devices (PostgreSQL): one row
-- per session (DB.Sessions) or trusted browser (DB.TrustedDevices), each
-- with its user, its times in Unix milliseconds and its client. user_id is
-- the user's id as text, so that it fits any users table (no foreign key).

CREATE TABLE IF NOT EXISTS {{prefix}}sessions (
	id           VARCHAR(64) COLLATE "C" NOT NULL,
	user_id      VARCHAR(255) COLLATE "C" NOT NULL,
	created_at   BIGINT NOT NULL,
	last_seen_at BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL,
	ip           TEXT NOT NULL,
	user_agent   TEXT NOT NULL,
	remember     BOOLEAN NOT NULL DEFAULT FALSE,
	CONSTRAINT {{prefix}}sessions_pkey PRIMARY KEY (id)
);

CREATE INDEX IF NOT EXISTS {{prefix}}sessions_user_idx ON {{prefix}}sessions (user_id, created_at);

CREATE TABLE IF NOT EXISTS {{prefix}}trusted_devices (
	id           VARCHAR(64) COLLATE "C" NOT NULL,
	user_id      VARCHAR(255) COLLATE "C" NOT NULL,
	created_at   BIGINT NOT NULL,
	last_seen_at BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL,
	ip           TEXT NOT NULL,
	user_agent   TEXT NOT NULL,
	remember     BOOLEAN NOT NULL DEFAULT FALSE,
	CONSTRAINT {{prefix}}trusted_devices_pkey PRIMARY KEY (id)
);

CREATE INDEX IF NOT EXISTS {{prefix}}trusted_devices_user_idx ON {{prefix}}trusted_devices (user_id, created_at);
