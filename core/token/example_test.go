package token_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/token"
)

func ExampleVerifier() {
	// A fixed clock makes the example deterministic; servers leave Now nil.
	now := time.Date(2025, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	v, err := token.NewVerifier(token.Config{
		Secrets: []string{"an example secret of at least 32 bytes, never use it"},
		Purpose: "2fa_pending",
		Expiry:  5 * time.Minute,
		Now:     func() time.Time { return now },
	})
	if err != nil {
		panic(err)
	}

	tok, err := v.Create("user-42")
	if err != nil {
		panic(err)
	}
	c, err := v.Verify(tok)
	fmt.Println(c.UserID, c.IssuedAt.Format(time.RFC3339Nano), c.IssuedAtMs(), err)

	now = now.Add(5 * time.Minute)
	_, err = v.Verify(tok)
	fmt.Println(errors.Is(err, token.ErrExpired))

	// Output:
	// user-42 2025-01-02T03:04:05.678Z 1735787045678 <nil>
	// true
}

func ExampleVerifier_Bind() {
	v, err := token.NewVerifier(token.Config{
		Secrets: []string{"an example secret of at least 32 bytes, never use it"},
		Purpose: "verify_email",
		Expiry:  24 * time.Hour,
	})
	if err != nil {
		panic(err)
	}

	// The link binds the address it is mailed to.
	tok, err := v.CreateWith("user-42", v.Bind("old@example.com"))
	if err != nil {
		panic(err)
	}

	// Later the user changes the address, then clicks the old link.
	c, err := v.Verify(tok)
	if err != nil {
		panic(err)
	}
	fmt.Println(v.BindingHolds(c, "old@example.com"))
	fmt.Println(v.BindingHolds(c, "new@example.com"))

	// Output:
	// true
	// false
}
