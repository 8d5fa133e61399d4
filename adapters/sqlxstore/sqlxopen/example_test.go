package sqlxopen_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/ratelimit"
)

// An in-memory SQLite database: open, create the tables, use the stores.
func Example() {
	ctx := context.Background()
	db, err := sqlxopen.Open(ctx, "sqlite::memory:", sqlxstore.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	applied, err := db.Apply(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range applied {
		fmt.Println("applied", m.Name)
	}
	fmt.Println(db.Dialect(), db.SQLX().Stats().MaxOpenConnections)
	// Output:
	// applied 0001_init
	// applied 0002_sessions
	// applied 0003_passkeys
	// applied 0004_challenges
	// applied 0005_email_codes
	// applied 0006_schema_settings
	// applied 0007_identities
	// applied 0008_sign_ins
	// applied 0009_api_keys
	// sqlite 1
}

// Wiring the stores into the flows: DATABASE_URL names the database; the
// rate limits of every flow share the one rate-limit store (their keys
// carry the limit's name).
func ExampleOpen() {
	ctx := context.Background()
	db, err := sqlxopen.Open(ctx, os.Getenv("DATABASE_URL"), sqlxstore.Config{})
	if err != nil {
		log.Fatal(err) // errors.Is(err, user.ErrUnavailable): the database is down
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	svc, err := auth.New(auth.Config{
		Users:      db.Users(),
		LimitStore: func(string) ratelimit.Store { return db.Limits() },
		// Secrets, Keys, AppURL, Mailer, ...
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close(ctx)
}

// The dialect of a URL, without connecting: what to print the schema for.
func ExampleDialect() {
	d, err := sqlxopen.Dialect("postgres://app@db.internal:5432/app?sslmode=require")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d)
	// Output: postgres
}
