-- First sign-ins under authkit (PostgreSQL): one row per user that has
-- signed in or registered since authkit arrived (UserStore's user.SignIns),
-- so that an account from before authkit is not mailed "New sign-in" at its
-- first sign-in. user_id is the user's id as text, so that it fits any users
-- table (no foreign key); at is in Unix milliseconds.

CREATE TABLE IF NOT EXISTS {{prefix}}sign_ins (
	user_id VARCHAR(255) COLLATE "C" NOT NULL,
	at      BIGINT NOT NULL,
	CONSTRAINT {{prefix}}sign_ins_pkey PRIMARY KEY (user_id)
);
