package accounts_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/examples/customstore/accounts"
)

// An app with an existing accounts table adds authkit's columns and reads
// its old rows as authkit users.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "accounts-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := accounts.Open(ctx, filepath.Join(dir, "app.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	// The app's table and one of its rows, from before authkit.
	if _, err := db.ExecContext(ctx, `CREATE TABLE accounts (
		account_id TEXT PRIMARY KEY, login_email TEXT NOT NULL UNIQUE,
		display_name TEXT, pw_hash TEXT, created TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`); err != nil {
		log.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO accounts VALUES
		('acc_1001', 'ada@example.com', 'Ada', '$2y$10$...', '2019-05-01 09:30:00')`); err != nil {
		log.Fatal(err)
	}

	if err := accounts.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}
	users := accounts.New(db, accounts.Config{})

	ada, err := users.ByEmail(ctx, "ada@example.com")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ada.ID, ada.Name, ada.CreatedAt.Format("2006-01-02"), ada.TwoFactorEnabled)

	_, err = users.Create(ctx, &user.User{Email: "ada@example.com"})
	fmt.Println(errors.Is(err, user.ErrEmailTaken))

	err = users.VerifyEmail(ctx, ada.ID, "old@example.com", ada.CreatedAt)
	fmt.Println(errors.Is(err, user.ErrConflict))
	// Output:
	// acc_1001 Ada 2019-05-01 false
	// true
	// true
}
