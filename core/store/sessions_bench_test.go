package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/store"
)

// BenchmarkSessionsLoginAt40000 is the record a login creates for a user
// who holds 40,000 live records already: Create without a bound, and
// CreateBounded under the default bound, which ends the oldest 39,900
// before the timer starts (the user then holds 100).
func BenchmarkSessionsLoginAt40000(b *testing.B) {
	now := time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)
	rec := func(i int) session.Record {
		return session.Record{ID: fmt.Sprintf("%032x", i), UserID: "u1", CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	b.Run("Create", func(b *testing.B) {
		s := store.NewMemorySessions(store.MemoryConfig{Now: func() time.Time { return now }})
		for i := range 40000 {
			if err := s.Create(context.Background(), rec(i)); err != nil {
				b.Fatal(err)
			}
		}
		for i := 0; b.Loop(); i++ {
			if err := s.Create(context.Background(), rec(40000+i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CreateBounded", func(b *testing.B) {
		s := store.NewMemorySessions(store.MemoryConfig{Now: func() time.Time { return now }})
		for i := range 40000 {
			if err := s.Create(context.Background(), rec(i)); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.CreateBounded(context.Background(), rec(40000), session.DefaultMaxPerUser); err != nil {
			b.Fatal(err)
		}
		for i := 1; b.Loop(); i++ {
			if err := s.CreateBounded(context.Background(), rec(40000+i), session.DefaultMaxPerUser); err != nil {
				b.Fatal(err)
			}
		}
	})
}
