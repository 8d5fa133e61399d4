-- Personal API keys (MySQL/MariaDB): DB.Users's user.APIKeys part
-- (auth.Config.APIKeys). id is the key's public id (part of the key),
-- compared byte for byte; hash the SHA-256 of its secret, never the
-- secret; scopes a JSON array of strings. user_id is the user's id as text,
-- so that it fits any users table (no foreign key): deleting a user through
-- the store deletes these rows in the same transaction. Times are BIGINT
-- Unix milliseconds; last_used_at NULL until the key is used.

CREATE TABLE IF NOT EXISTS {{prefix}}api_keys (
	id           VARBINARY(64) NOT NULL,
	user_id      VARBINARY(255) NOT NULL,
	name         VARCHAR(255) COLLATE utf8mb4_bin NOT NULL,
	hash         VARBINARY(64) NOT NULL,
	scopes       TEXT COLLATE utf8mb4_bin NOT NULL,
	created_at   BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL,
	last_used_at BIGINT NULL,
	PRIMARY KEY (id),
	KEY {{prefix}}api_keys_user_idx (user_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
