-- What the table prefix was migrated for (SQLite): one row per setting.
-- "users" is the user store's Config.Users (its users table and layout)
-- as JSON, "{}" for authkit's own table, so that Migrate refuses a process
-- that opens the database with another one, and authkit's CLI reads the
-- mapping back.

CREATE TABLE IF NOT EXISTS {{prefix}}schema_settings (
	name  TEXT NOT NULL PRIMARY KEY,
	value TEXT NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO {{prefix}}schema_settings (name, value) VALUES ('users', {{users_setting}}) ON CONFLICT (name) DO NOTHING;
