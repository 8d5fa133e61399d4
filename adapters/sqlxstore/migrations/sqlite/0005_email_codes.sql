-- Mailed second-factor codes (SQLite): at most one per user (UserStore's
-- user.EmailCodes, auth.Config.EmailCode), as a keyed hash, never the
-- code, with its times in Unix milliseconds. user_id is the user's id as
-- text, so that it fits any users table (no foreign key).

CREATE TABLE IF NOT EXISTS {{prefix}}email_codes (
	user_id    TEXT NOT NULL PRIMARY KEY,
	hash       BLOB NOT NULL,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
