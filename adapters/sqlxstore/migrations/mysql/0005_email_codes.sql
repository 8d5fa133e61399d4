-- Mailed second-factor codes (MySQL/MariaDB): at most one per user
-- (UserStore's user.EmailCodes, auth.Config.EmailCode), as a keyed hash,
-- never the code, with its times in Unix milliseconds. user_id is the
-- user's id as text, so that it fits any users table (no foreign key).

CREATE TABLE IF NOT EXISTS {{prefix}}email_codes (
	user_id    VARBINARY(255) NOT NULL,
	hash       VARBINARY(64) NOT NULL,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	PRIMARY KEY (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
