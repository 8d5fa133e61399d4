-- External identities (MySQL/MariaDB): the accounts at outside identity
-- providers linked to a user (DB.Users, the user.Identities part; the
-- social module). user_id is the user's id as text, so that it fits any
-- users table (no foreign key): deleting a user through the store deletes
-- these rows in the same transaction. provider and subject are VARBINARY:
-- compared byte for byte, unique together; linked_at is BIGINT Unix
-- milliseconds.

CREATE TABLE IF NOT EXISTS {{prefix}}identities (
	id        VARBINARY(64) NOT NULL,
	user_id   VARBINARY(255) NOT NULL,
	provider  VARBINARY(64) NOT NULL,
	subject   VARBINARY(255) NOT NULL,
	email     VARCHAR(320) NOT NULL,
	linked_at BIGINT NOT NULL,
	PRIMARY KEY (id),
	UNIQUE KEY {{prefix}}identities_subject_key (provider, subject),
	KEY {{prefix}}identities_user_idx (user_id, linked_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
