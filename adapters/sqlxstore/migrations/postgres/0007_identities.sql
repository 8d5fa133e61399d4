-- External identities (PostgreSQL): the accounts at outside identity
-- providers linked to a user (DB.Users, the user.Identities part; the
-- social module). user_id is the user's id as text, so that it fits any
-- users table (no foreign key): deleting a user through the store deletes
-- these rows in the same transaction. provider and subject are compared
-- byte for byte (COLLATE "C"), unique together; linked_at is BIGINT Unix
-- milliseconds.

CREATE TABLE IF NOT EXISTS {{prefix}}identities (
	id        VARCHAR(64) COLLATE "C" NOT NULL,
	user_id   VARCHAR(255) COLLATE "C" NOT NULL,
	provider  VARCHAR(64) COLLATE "C" NOT NULL,
	subject   VARCHAR(255) COLLATE "C" NOT NULL,
	email     VARCHAR(320) NOT NULL,
	linked_at BIGINT NOT NULL,
	CONSTRAINT {{prefix}}identities_pkey PRIMARY KEY (id),
	CONSTRAINT {{prefix}}identities_subject_key UNIQUE (provider, subject)
);

CREATE INDEX IF NOT EXISTS {{prefix}}identities_user_idx ON {{prefix}}identities (user_id, linked_at);
