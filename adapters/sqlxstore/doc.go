// Package sqlxstore keeps authkit's users and rate-limit counters in
// PostgreSQL, MySQL/MariaDB or SQLite, through github.com/jmoiron/sqlx. It
// imports no database driver: it works over the app's pool, opened with the
// driver the app links (tested with pgx, go-sql-driver/mysql and
// modernc.org/sqlite). Package sqlxopen opens one from a database URL,
// linking all three.
//
// [New] takes the app's *sqlx.DB ([NewSQL] a *sql.DB and its [Dialect]) and
// returns a [DB]; [DB.Migrate] creates or upgrades the tables from
// migrations embedded in the package ([Migrations] returns their SQL for
// other migration tools); [DB.Users] is the [user.Store] (with the
// [user.Passkeys] part, for the passkeys module, user.EmailCodes, over
// the email_codes table of migration 0005, user.Identities, for the
// social module, over the identities table of migration 0007, and
// user.SignIns, over the sign_ins table of migration 0008, and
// user.APIKeys, the personal API keys of auth.Config.APIKeys, over the
// api_keys table of migration 0009), [DB.Limits]
// the [ratelimit.Store], [DB.Sessions] and [DB.TrustedDevices] the
// session.Store of auth.Config.Sessions and auth.Config.TrustedDevices,
// and [DB.OneTime] the [onetime.Store] of values taken once (the passkeys
// module's Config.Challenges, shared by every instance):
//
//	pool, err := sqlx.Open("pgx", os.Getenv("DATABASE_URL")) // import _ "github.com/jackc/pgx/v5/stdlib"
//	if err != nil {
//		return err
//	}
//	db, err := sqlxstore.New(pool, sqlxstore.Config{})
//	if err != nil {
//		return err
//	}
//	if err := db.Migrate(ctx); err != nil {
//		return err
//	}
//	svc, err := auth.New(auth.Config{
//		Users:      db.Users(),
//		LimitStore: func(string) ratelimit.Store { return db.Limits() },
//		// ...
//	})
//
// # Schema
//
// Tables named with Config.TablePrefix (default "authkit_"; empty means
// the default): users, rate_limits and schema_migrations (0001),
// sessions and trusted_devices (0002), passkey_handles and passkeys (0003:
// each user's WebAuthn user handle and credentials, the credential id as
// the binary primary key), challenges (0004, the one-time values, keyed
// by the SHA-256 of their key), email_codes (0005), schema_settings
// (0006: the Config.Users the prefix was migrated for, which Migrate
// checks; [DB.RecordedUsers] reads it back), identities (0007: the accounts
// at outside identity providers linked to a user, user.Identities, unique
// per provider and subject), sign_ins (0008: the users that signed in
// since authkit arrived, so that the first sign-in of an account from
// before it mails no "New sign-in"), api_keys (0009: personal API keys,
// the SHA-256 of each secret, never the secret). Timestamps are BIGINT Unix milliseconds on
// every database (NULL for "never"), so they keep the millisecond
// precision the contract asks for and compare the same everywhere. Recovery-code hashes are a JSON array stored as text. Ids and
// emails compare byte for byte: the "C" collation on PostgreSQL, binary
// columns on MySQL/MariaDB, SQLite's BINARY collation; the unique index on
// email is what stops two accounts sharing an address. The tables of 0002
// and 0003 name their user by id, as text, with no foreign key, so they
// fit an app's own users table too; [UserStore.Delete] removes a user's
// passkeys and handle in its transaction. The module's README.md lists
// every column per database.
//
// # An app's own users table
//
// Config.Users ([UsersTable]) puts the user store on a users table the
// app already has, with its own names and id type (text, int64 assigned
// by the database, UUID); authkit's state goes in columns Migrate adds to
// that table ([LayoutColumns]) or in a side table keyed by the app's id
// ([LayoutSideTable]). Migrate never creates or drops the app's table:
//
//	db, err := sqlxstore.Open(ctx, url, sqlxstore.Config{Users: sqlxstore.UsersTable{
//		Table:  "users",
//		IDType: sqlxstore.IDInt64,
//		Layout: sqlxstore.LayoutSideTable,
//	}})
//
// Addresses in mixed case (CaseInsensitiveEmails), legacy bcrypt hashes
// (verified, and upgraded at login) and the verification state of the
// users already there (ExistingUsersVerified) are covered in the module's
// README.md, "Adding authkit to an existing users table", with the SQL of
// each layout.
//
// # Atomicity
//
// Every operation of the [user.Store] contract that changes security state
// is one conditional statement (or, where a database lacks RETURNING, one
// short transaction that locks the row first; with the side-table layout,
// one that locks the app's row first), correct at READ COMMITTED:
// the condition sits in the UPDATE's WHERE clause, so of two racing
// requests exactly one changes the row and the other gets
// [user.ErrConflict]. Races between users for one email are decided by the
// unique index and reported as [user.ErrEmailTaken]. Passkeys follow the
// same rule (the sign count in UsePasskey's WHERE clause, the credential
// id's primary key, ON CONFLICT for the user handle); adding one
// share-locks the user's row in its transaction, so a racing Delete never
// leaves a credential behind. Deadlocks and lock timeouts (MySQL/MariaDB,
// and serialization failures on PostgreSQL) are retried a few times, so
// losers get the contract's answer rather than an error; SQLite waits for
// its write lock (busy_timeout) and takes it at the start of each
// transaction (BEGIN IMMEDIATE).
//
// # Failures
//
// An unreachable or failing database (refused or broken connection,
// timeout, server shutting down, too many connections, SQLite busy past
// its timeout) gives errors wrapping [user.ErrUnavailable], which the
// flows answer with 503. Since each change is a single statement, a
// connection lost mid-request leaves the row either fully changed or as it
// was. The rate-limit store returns plain wrapped errors: the limiter
// fails closed.
package sqlxstore
