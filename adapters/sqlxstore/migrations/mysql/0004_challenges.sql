-- Values taken once (MySQL/MariaDB): DB.OneTime, an onetime.Store, such as
-- the passkeys module's challenges, shared by every instance on the
-- database. One row per value: the SHA-256 of its key (so any key fits),
-- the data, and the expiry in Unix milliseconds (indexed for the cleanup).

CREATE TABLE IF NOT EXISTS {{prefix}}challenges (
	key_hash   BINARY(32) NOT NULL,
	data       MEDIUMBLOB NOT NULL,
	expires_at BIGINT NOT NULL,
	PRIMARY KEY (key_hash),
	KEY {{prefix}}challenges_expires_idx (expires_at)
) ENGINE=InnoDB;
