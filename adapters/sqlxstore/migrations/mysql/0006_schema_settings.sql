-- What the table prefix was migrated for (MySQL/MariaDB): one row per
-- setting. "users" is the user store's Config.Users (its users table and
-- layout) as JSON, "{}" for authkit's own table, so that Migrate refuses a
-- process that opens the database with another one, and authkit's CLI
-- reads the mapping back.

CREATE TABLE IF NOT EXISTS {{prefix}}schema_settings (
	name  VARBINARY(64) NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

INSERT INTO {{prefix}}schema_settings (name, value) VALUES ('users', {{users_setting}}) ON DUPLICATE KEY UPDATE name = name;
