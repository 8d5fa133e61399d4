-- Mailed second-factor codes (PostgreSQL): at most one per user
-- (UserStore's user.EmailCodes, auth.Config.EmailCode), as a keyed hash,
-- never the code, with its times in Unix milliseconds. user_id is the
-- user's id as text, so that it fits any users table (no foreign key).

CREATE TABLE IF NOT EXISTS {{prefix}}email_codes (
	user_id    VARCHAR(255) COLLATE "C" NOT NULL,
	hash       BYTEA NOT NULL,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	CONSTRAINT {{prefix}}email_codes_pkey PRIMARY KEY (user_id)
);
