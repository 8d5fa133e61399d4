package auth_test

import (
	"fmt"
	"strings"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/user"
)

// yourStore stands for the app's user store (store.NewMemory, an sqlx
// store, or a custom user.Store).
type yourStore struct{ user.Store }

func ExampleService_Routes() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{
		Users:   yourStore{},
		Secrets: []string{strings.Repeat("x", 32)}, // SESSION_SECRET: at least 32 random bytes
		Keys:    keys,
		AppURL:  "https://app.example.com",
	})
	if err != nil {
		panic(err)
	}
	for _, rt := range svc.Routes() {
		fmt.Println(rt.Method, rt.Pattern)
	}
	// Output:
	// POST /api/2fa/setup
	// POST /api/2fa/confirm
	// POST /api/login
	// POST /api/auth/login
	// POST /api/2fa/verify
	// POST /api/2fa/recover
	// POST /api/2fa/regenerate-codes
	// POST /api/2fa/disable
	// POST /api/auth/register
	// GET /api/auth/verify-email/{token}
	// POST /api/auth/resend-verification
	// POST /api/auth/change-email
	// POST /api/auth/forgot-password
	// POST /api/auth/reset-password/{token}
	// POST /api/auth/logout
	// POST /api/auth/logout-all
	// GET /api/auth/me
	// POST /api/auth/change-password
}
