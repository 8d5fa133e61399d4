-- First sign-ins under authkit (SQLite): one row per user that has signed
-- in or registered since authkit arrived (UserStore's user.SignIns), so
-- that an account from before authkit is not mailed "New sign-in" at its
-- first sign-in. user_id is the user's id as text, so that it fits any
-- users table (no foreign key); at is in Unix milliseconds.

CREATE TABLE IF NOT EXISTS {{prefix}}sign_ins (
	user_id TEXT NOT NULL PRIMARY KEY,
	at      INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
