-- Personal API keys (SQLite): DB.Users's user.APIKeys part
-- (auth.Config.APIKeys). id is the key's public id (part of the key),
-- compared byte for byte; hash the SHA-256 of its secret, never the
-- secret; scopes a JSON array of strings. user_id is the user's id as text,
-- so that it fits any users table (no foreign key): deleting a user through
-- the store deletes these rows in the same transaction. Times are INTEGER
-- Unix milliseconds; last_used_at NULL until the key is used.

CREATE TABLE IF NOT EXISTS {{prefix}}api_keys (
	id           TEXT NOT NULL PRIMARY KEY,
	user_id      TEXT NOT NULL,
	name         TEXT NOT NULL,
	hash         BLOB NOT NULL,
	scopes       TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	last_used_at INTEGER
) STRICT;

CREATE INDEX IF NOT EXISTS {{prefix}}api_keys_user_idx ON {{prefix}}api_keys (user_id, created_at);
