-- Values taken once (PostgreSQL): DB.OneTime, an onetime.Store, such as
-- the passkeys module's challenges, shared by every instance on the
-- database. One row per value: the SHA-256 of its key (so any key fits),
-- the data, and the expiry in Unix milliseconds (indexed for the cleanup).

CREATE TABLE IF NOT EXISTS {{prefix}}challenges (
	key_hash   BYTEA NOT NULL,
	data       BYTEA NOT NULL,
	expires_at BIGINT NOT NULL,
	CONSTRAINT {{prefix}}challenges_pkey PRIMARY KEY (key_hash)
);

CREATE INDEX IF NOT EXISTS {{prefix}}challenges_expires_idx ON {{prefix}}challenges (expires_at);
