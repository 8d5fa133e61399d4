package store_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// A memory store: create a user, read it back by email, and meet the
// one-account-per-address rule.
func Example() {
	ctx := context.Background()
	now := time.Date(2031, 3, 14, 15, 9, 26, 535897932, time.UTC)
	users := store.NewMemory(store.MemoryConfig{Now: func() time.Time { return now }})

	created, err := users.Create(ctx, &user.User{
		Email:        "ada@example.com", // the flows pass emails lowercased
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
	fmt.Println(got.Name, got.ID == created.ID, got.ID != "")
	fmt.Println(got.CreatedAt.Format(time.RFC3339Nano)) // kept to the millisecond

	_, err = users.Create(ctx, &user.User{Email: "ada@example.com"})
	fmt.Println(errors.Is(err, user.ErrEmailTaken), err)

	_, err = users.ByEmail(ctx, "grace@example.com")
	fmt.Println(errors.Is(err, user.ErrNotFound))
	// Output:
	// Ada Lovelace true true
	// 2031-03-14T15:09:26.535Z
	// true store: create: user: email already taken
	// true
}

// Every change to security state is conditional and atomic: of two requests
// that confirm 2FA with the same pending secret, exactly one succeeds, and
// the other is told ErrConflict.
func ExampleMemory_EnableTOTP() {
	ctx := context.Background()
	users := store.NewMemory(store.MemoryConfig{})
	u, err := users.Create(ctx, &user.User{Email: "ada@example.com"})
	if err != nil {
		log.Fatal(err)
	}
	// The flows store secrets encrypted (package secretbox); any text will do here.
	if err := users.BeginTOTPSetup(ctx, u.ID, "v1.pending"); err != nil {
		log.Fatal(err)
	}
	enable := user.EnableTOTP{
		Pending:            "v1.pending",
		Secret:             "v1.secret",
		RecoveryCodeHashes: []string{"hash-1", "hash-2"},
		Step:               65_000_000,
	}
	fmt.Println(users.EnableTOTP(ctx, u.ID, enable))
	err = users.EnableTOTP(ctx, u.ID, enable) // the second confirmation
	fmt.Println(errors.Is(err, user.ErrConflict))

	got, err := users.ByID(ctx, u.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.TwoFactorEnabled, got.PendingTOTPSecret == "", got.LastTOTPStep, len(got.RecoveryCodeHashes))
	// Output:
	// <nil>
	// true
	// true true 65000000 2
}
