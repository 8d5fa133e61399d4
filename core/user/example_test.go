package user_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

func ExampleUser_Public() {
	u := &user.User{
		ID: "3q2-7wAAAAAAAAAAAAAAAA", Email: "ada@example.com", Name: "Ada",
		PasswordHash:    "$2a$12$...", // never serialised
		EmailVerifiedAt: time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC),
	}
	b, _ := json.Marshal(u.Public())
	fmt.Println(string(b))
	// Output:
	// {"id":"3q2-7wAAAAAAAAAAAAAAAA","email":"ada@example.com","name":"Ada","emailVerified":true,"emailVerifiedAt":"2026-11-21T09:30:00Z","twoFactorEnabled":false,"recoveryCodesRemaining":0}
}
