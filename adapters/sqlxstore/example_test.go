package sqlxstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/user"
)

// A SQLite file: open, create the tables, store a user and find it again.
func Example() {
	dir, err := os.MkdirTemp("", "authkit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	db, err := sqlxstore.Open(ctx, "sqlite://"+filepath.Join(dir, "authkit.db"), sqlxstore.Config{})
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
	db, err := sqlxstore.Open(ctx, "sqlite::memory:", sqlxstore.Config{Now: func() time.Time { return now }})
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

// Wiring the stores into the flows: DATABASE_URL names the database; the
// rate limits of every flow share the one rate-limit store (their keys
// carry the limit's name).
func ExampleOpen() {
	ctx := context.Background()
	db, err := sqlxstore.Open(ctx, os.Getenv("DATABASE_URL"), sqlxstore.Config{})
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
