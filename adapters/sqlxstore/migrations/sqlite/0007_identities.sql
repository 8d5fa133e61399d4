-- External identities (SQLite): the accounts at outside identity
-- providers linked to a user (DB.Users, the user.Identities part; the
-- social module). user_id is the user's id as text, so that it fits any
-- users table (no foreign key): deleting a user through the store deletes
-- these rows in the same transaction. provider and subject are TEXT,
-- compared byte for byte (BINARY), unique together; linked_at is INTEGER
-- Unix milliseconds.

CREATE TABLE IF NOT EXISTS {{prefix}}identities (
	id        TEXT NOT NULL PRIMARY KEY,
	user_id   TEXT NOT NULL,
	provider  TEXT NOT NULL,
	subject   TEXT NOT NULL,
	email     TEXT NOT NULL,
	linked_at INTEGER NOT NULL,
	UNIQUE (provider, subject)
) STRICT;

CREATE INDEX IF NOT EXISTS {{prefix}}identities_user_idx ON {{prefix}}identities (user_id, linked_at);
