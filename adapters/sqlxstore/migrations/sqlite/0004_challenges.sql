-- Values taken once (SQLite): DB.OneTime, an onetime.Store, such as the
-- passkeys module's challenges. One row per value: the SHA-256 of its key
-- (so any key fits), the data, and the expiry in Unix milliseconds
-- (indexed for the cleanup).

CREATE TABLE IF NOT EXISTS {{prefix}}challenges (
	key_hash   BLOB NOT NULL PRIMARY KEY,
	data       BLOB NOT NULL,
	expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS {{prefix}}challenges_expires_idx ON {{prefix}}challenges (expires_at);
