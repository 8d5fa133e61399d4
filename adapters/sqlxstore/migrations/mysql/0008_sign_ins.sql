-- First sign-ins under authkit (MySQL/MariaDB): one row per user that has
-- signed in or registered since authkit arrived (UserStore's user.SignIns),
-- so that an account from before authkit is not mailed "New sign-in" at its
-- first sign-in. user_id is the user's id as text, so that it fits any users
-- table (no foreign key); at is in Unix milliseconds.

CREATE TABLE IF NOT EXISTS {{prefix}}sign_ins (
	user_id VARBINARY(255) NOT NULL,
	at      BIGINT NOT NULL,
	PRIMARY KEY (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
