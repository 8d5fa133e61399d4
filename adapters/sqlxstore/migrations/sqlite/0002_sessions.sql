-- Server-side session records and trusted devices (SQLite): one row per
-- session (DB.Sessions) or trusted browser (DB.TrustedDevices), each with
-- its user, its times in Unix milliseconds and its client. user_id is the
-- user's id as text, so that it fits any users table (no foreign key).

CREATE TABLE IF NOT EXISTS {{prefix}}sessions (
	id           TEXT NOT NULL PRIMARY KEY,
	user_id      TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	last_seen_at INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	ip           TEXT NOT NULL,
	user_agent   TEXT NOT NULL,
	remember     INTEGER NOT NULL DEFAULT 0 CHECK (remember IN (0, 1))
) STRICT, WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS {{prefix}}sessions_user_idx ON {{prefix}}sessions (user_id, created_at);

CREATE TABLE IF NOT EXISTS {{prefix}}trusted_devices (
	id           TEXT NOT NULL PRIMARY KEY,
	user_id      TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	last_seen_at INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	ip           TEXT NOT NULL,
	user_agent   TEXT NOT NULL,
	remember     INTEGER NOT NULL DEFAULT 0 CHECK (remember IN (0, 1))
) STRICT, WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS {{prefix}}trusted_devices_user_idx ON {{prefix}}trusted_devices (user_id, created_at);
