package sqlxstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // the app's driver: sqlxstore links none

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/user"
)

// A SQLite file opened by the app with its own driver: create the tables,
// store a user and find it again.
func Example() {
	dir, err := os.MkdirTemp("", "authkit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	pool, err := sqlx.Open("sqlite", filepath.Join(dir, "authkit.db")+
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()                                 // New leaves the pool to the app
	db, err := sqlxstore.New(pool, sqlxstore.Config{}) // the dialect from the driver name, "sqlite"
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	users := db.Users()
	created, err := users.Create(ctx, &user.User{
		Email:        "ada@example.com", // flows pass emails lowercased
		Name:         "Ada Lovelace",
		PasswordHash: "$2a$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW",
	})
	if err != nil {
		log.Fatal(err)
	}
	got, err := users.ByEmail(ctx, "ada@example.com")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Name, got.ID == created.ID, got.TwoFactorEnabled)

	_, err = users.Create(ctx, &user.User{Email: "ada@example.com"})
	fmt.Println(err)
	// Output:
	// Ada Lovelace true false
	// sqlxstore: create user: user: email already taken
}

// The rate-limit store counts attempts in fixed windows; its clock is the
// Config's Now.
func ExampleDB_Limits() {
	ctx := context.Background()
	now := time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)
	db, err := sqlxopen.Open(ctx, "sqlite::memory:", sqlxstore.Config{Now: func() time.Time { return now }})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	limits := db.Limits()
	for range 3 {
		n, resetAt, err := limits.Increment(ctx, "login:ip:192.0.2.1", 15*time.Minute)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(n, resetAt.Format(time.TimeOnly))
	}
	// Output:
	// 1 15:24:26
	// 2 15:24:26
	// 3 15:24:26
}

// A *sql.DB does not know its dialect: NewSQL takes it.
func ExampleNewSQL() {
	pool, err := sql.Open("sqlite", ":memory:?_pragma=busy_timeout(5000)&_txlock=immediate")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	pool.SetMaxOpenConns(1) // every connection to :memory: is a database of its own
	db, err := sqlxstore.NewSQL(pool, sqlxstore.SQLite, sqlxstore.Config{TablePrefix: "auth_"})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	status, err := db.MigrationStatus(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range status {
		fmt.Println(m.Name, m.Applied)
	}
	// Output:
	// 0001_init true
	// 0002_sessions true
	// 0003_passkeys true
	// 0004_challenges true
	// 0005_email_codes true
	// 0006_schema_settings true
	// 0007_identities true
	// 0008_sign_ins true
	// 0009_api_keys true
}

// The schema as SQL, without a database: for goose, golang-migrate, atlas
// or a review. Each migration ends by recording itself in the table
// Migrate reads, so the two ways of migrating can be mixed.
func ExampleMigrations() {
	ms, err := sqlxstore.Migrations(sqlxstore.Postgres, sqlxstore.Config{TablePrefix: "auth_"})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range ms {
		lines := strings.Split(strings.TrimSpace(m.SQL), "\n")
		fmt.Println(m.Version, m.Name)
		fmt.Println(lines[0])
		fmt.Println(lines[len(lines)-1])
	}
	// Output:
	// 1 0001_init
	// CREATE TABLE IF NOT EXISTS auth_users (
	// INSERT INTO auth_schema_migrations (version, applied_at) VALUES (1, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT) ON CONFLICT (version) DO NOTHING;
	// 2 0002_sessions
	// CREATE TABLE IF NOT EXISTS auth_sessions (
	// INSERT INTO auth_schema_migrations (version, applied_at) VALUES (2, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT) ON CONFLICT (version) DO NOTHING;
	// 3 0003_passkeys
	// CREATE TABLE IF NOT EXISTS auth_passkey_handles (
	// INSERT INTO auth_schema_migrations (version, applied_at) VALUES (3, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT) ON CONFLICT (version) DO NOTHING;
	// 4 0004_challenges
	// CREATE TABLE IF NOT EXISTS auth_challenges (
	// INSERT INTO auth_schema_migrations (version, applied_at) VALUES (4, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT) ON CONFLICT (version) DO NOTHING;
	// 5 0005_email_codes
	// CREATE TABLE IF NOT EXISTS auth_email_codes (
	// INSERT INTO auth_schema_migrations (version, applied_at) VALUES (5, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT) ON CONFLICT (version) DO NOTHING;
	// 6 0006_schema_settings
	// CREATE TABLE IF NOT EXISTS auth_schema_settings (
	// INSERT INTO auth_schema_migrations (version, applied_at) VALUES (6, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT) ON CONFLICT (version) DO NOTHING;
	// 7 0007_identities
	// CREATE TABLE IF NOT EXISTS auth_identities (
	// INSERT INTO auth_schema_migrations (version, applied_at) VALUES (7, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT) ON CONFLICT (version) DO NOTHING;
	// 8 0008_sign_ins
	// CREATE TABLE IF NOT EXISTS auth_sign_ins (
	// INSERT INTO auth_schema_migrations (version, applied_at) VALUES (8, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT) ON CONFLICT (version) DO NOTHING;
	// 9 0009_api_keys
	// CREATE TABLE IF NOT EXISTS auth_api_keys (
	// INSERT INTO auth_schema_migrations (version, applied_at) VALUES (9, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT) ON CONFLICT (version) DO NOTHING;
}
