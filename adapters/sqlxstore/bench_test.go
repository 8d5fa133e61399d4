package sqlxstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/user"
)

// benchBackends opens each backend that is available; PostgreSQL and MySQL
// only when their variables are set.
func benchBackends(b *testing.B, fn func(b *testing.B, db *sqlxstore.DB)) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			fn(b, freshDB(b, openPool(b, be), sqlxstore.Config{CleanupInterval: -1}))
		})
	}
}

// BenchmarkIncrement counts attempts on 100 keys, as a limiter does.
func BenchmarkIncrement(b *testing.B) {
	benchBackends(b, func(b *testing.B, db *sqlxstore.DB) {
		s, ctx := db.Limits(), b.Context()
		keys := make([]string, 100)
		for i := range keys {
			keys[i] = fmt.Sprintf("login:ip:192.0.2.%d", i)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, _, err := s.Increment(ctx, keys[i%len(keys)], time.Hour); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkByEmail reads one of 100 users by email, as login does.
func BenchmarkByEmail(b *testing.B) {
	benchBackends(b, func(b *testing.B, db *sqlxstore.DB) {
		s, ctx := db.Users(), b.Context()
		emails := make([]string, 100)
		for i := range emails {
			emails[i] = fmt.Sprintf("user%d@example.com", i)
			u := &user.User{Email: emails[i], Name: "Bench", PasswordHash: "$2a$12$abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS",
				RecoveryCodeHashes: []string{"h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"}, TwoFactorEnabled: true}
			if _, err := s.Create(ctx, u); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := s.ByEmail(ctx, emails[i%len(emails)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
