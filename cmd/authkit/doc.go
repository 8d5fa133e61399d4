// Authkit is the command-line tool of the authkit library. It makes the
// secrets an authkit app is configured with, creates or upgrades authkit's
// tables in an SQL database, and runs a support team's operations on one
// account.
//
// Usage:
//
//	authkit <command> [arguments]
//
// The commands are:
//
//	encryption-key  print a new key for ENCRYPTION_KEY
//	session-secret  print a new secret for SESSION_SECRET
//	migrate         create or upgrade authkit's tables, or print their SQL
//	user            support operations on one account: find, unlock, disable-2fa, ...
//	openapi         print the OpenAPI 3.1 document of authkit's JSON routes
//	limits          clear rate-limit counters kept in SQL or Redis (development, tests)
//	help            print help about a command
//
// Install it with
//
//	go install github.com/authkit-go/authkit/cmd/authkit@latest
//
// or run it from a checkout with
//
//	go run ./cmd/authkit encryption-key
//
// # encryption-key
//
// Prints a new random key and a newline on stdout: "ak1_" followed by 32
// random bytes in unpadded base64url (see package secretbox). The key
// encrypts the TOTP secrets stored in the database:
//
//	export ENCRYPTION_KEY="$(authkit encryption-key)"
//
// ENCRYPTION_KEY may list several keys separated by commas: the first
// encrypts, all decrypt. To rotate, put a new key first and keep the old one
// until every stored value has been re-encrypted.
//
// # session-secret
//
// Prints a new random secret and a newline on stdout: 32 random bytes in
// unpadded base64url, for SESSION_SECRET, which signs session cookies and the
// tokens in mailed links:
//
//	export SESSION_SECRET="$(authkit session-secret)"
//
// # migrate
//
//	authkit migrate [--database-url URL] [--table-prefix PREFIX]
//	authkit migrate status [--database-url URL] [--table-prefix PREFIX]
//	authkit migrate --print [--dialect postgres|mysql|sqlite] [--table-prefix PREFIX]
//
// Applies authkit's schema migrations (package sqlxstore) to the database
// that --database-url, or else DATABASE_URL, names: a postgres://, mysql://
// or sqlite:// URL. It is safe to run again, and from several processes at
// once. --table-prefix sets the prefix of the table names (default
// "authkit_"). It prints "authkit migrate: applied <name>" for each
// migration it applied, or "authkit migrate: <dialect> is up to date" when
// there was none.
//
// "migrate status" lists every migration as applied (with the time) or
// pending. "migrate --print" prints the SQL of every migration without a
// database, for the dialect --dialect names or else the URL's; each
// migration ends by recording itself where migrate looks.
//
// An app's own users table (sqlxstore.Config.Users) is named by the
// --users-* flags the first time; the migrations record the mapping, and
// later runs, of migrate and of user, read it back from the database and
// need none. Flags that describe another mapping are refused (exit 1).
//
// # user
//
//	authkit user find|unlock|disable-2fa|end-sessions|verify-email|delete <id-or-email>
//		[--database-url URL] [--table-prefix PREFIX] [--users-table TABLE [mapping flags]]
//		[--actor WHO] [--yes]
//
// Support operations on one user (auth.Support), named by id or, with an
// "@", by address, on the database and tables migrate names with the same
// flags. "find" prints what authkit holds about the user, never a secret.
// "unlock" clears a lock-out; "disable-2fa" turns off TOTP and deletes every
// passkey of a user who lost every factor, ends their sessions and trusted
// devices and mails them a notice (SMTP_URL and MAIL_FROM, else printed on
// stdout); "end-sessions" raises the session version and deletes the
// session records and trusted devices, and revokes the API keys;
// "verify-email" marks the address
// verified; "delete" deletes the account and everything authkit holds for
// it. Every change asks for confirmation on stdin ("y") unless --yes, prints
// what it changed, and is audited as a support_* event logged as JSON on
// stderr, with --actor (default $USER) as its detail.
//
// # openapi
//
//	authkit openapi [-o file] [-session-cookie name]
//
// Prints the OpenAPI 3.1 document (auth.Service.OpenAPI) of a Service with
// every feature on and every optional store (session records, trusted
// devices, email codes): every JSON route of core/auth. An app's own
// Service builds the document of its configuration, a module's routes (the
// passkeys module's) included; this command, which does not depend on the
// passkeys module, leaves those out.
//
// # limits
//
//	authkit limits reset [--key PREFIX] [--database-url URL] [--table-prefix PREFIX]
//		[--redis-url URL] [--redis-prefix PREFIX]
//
// Clears the rate-limit counters whose key starts with --key (every one
// without it) in sqlxstore's table (--database-url, else DATABASE_URL) and
// in Redis (--redis-url, else REDIS_URL, REDIS_CLUSTER_URL or
// REDIS_SENTINEL_URL; --redis-prefix, else REDIS_PREFIX): for development
// and CI, where counters in a shared store outlive restarts.
//
// # Exit status
//
// 0 on success (help included), 1 when the command failed (such as a
// database that cannot be reached, a failed migration or output that could
// not be written), 2 on a usage error: no command, an unknown command, an
// unknown flag or an unexpected argument, migrate without a database URL,
// an invalid URL, dialect or table prefix, --print without a dialect,
// --dialect without --print, or status with --print, user without a
// subcommand, a user or an actor. `authkit user` also exits 3 when no user
// has the id or address, and 4 when the confirmation was declined (nothing
// changed).
package main
