package onetime_test

import (
	"errors"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.RunOneTimeStore(t, func(t *testing.T, clock *storetest.Clock) onetime.Store {
		return onetime.NewMemoryStore(onetime.MemoryConfig{Now: clock.Now})
	})
}

// TestMemoryCapacity: a full store drops its expired values for a new key,
// refuses one when all are live, and still replaces the keys it holds.
func TestMemoryCapacity(t *testing.T) {
	ctx := t.Context()
	t0 := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0
	s := onetime.NewMemoryStore(onetime.MemoryConfig{Capacity: 3, Now: func() time.Time { return now }})
	for _, k := range []string{"a", "b", "c"} {
		if err := s.Put(ctx, k, []byte(k), t0.Add(time.Minute)); err != nil {
			t.Fatalf("Put(%s): %v", k, err)
		}
	}
	if err := s.Put(ctx, "d", []byte("d"), t0.Add(time.Minute)); !errors.Is(err, onetime.ErrFull) {
		t.Fatalf("Put of a fourth key into a full store = %v, want ErrFull", err)
	}
	if err := s.Put(ctx, "a", []byte("a2"), t0.Add(2*time.Minute)); err != nil {
		t.Fatalf("Put replacing a key of a full store = %v, want nil", err)
	}
	if err := s.Put(ctx, "b", []byte("b"), t0.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "d", []byte("d"), t0.Add(time.Minute)); err != nil {
		t.Fatalf("Put of a new key with an expired value to drop = %v, want nil", err)
	}
	if got := s.Len(); got != 3 {
		t.Fatalf("Len = %d, want 3 (a, c, d; b dropped)", got)
	}
	if _, err := s.Take(ctx, "b", t0.Add(-time.Hour)); !errors.Is(err, onetime.ErrNotFound) {
		t.Fatalf("Take of the dropped key = %v, want ErrNotFound", err)
	}
	now = t0.Add(time.Minute)
	if err := s.Put(ctx, "e", []byte("e"), t0.Add(time.Hour)); err != nil {
		t.Fatalf("Put once c and d expired = %v, want nil", err)
	}
	if got := s.Len(); got != 2 {
		t.Fatalf("Len = %d, want 2 (a, e)", got)
	}
	if got, err := s.Take(ctx, "a", now); err != nil || string(got) != "a2" {
		t.Fatalf("Take(a) = %q, %v; want a2", got, err)
	}
	if got := s.Len(); got != 1 {
		t.Fatalf("Len after Take = %d, want 1", got)
	}
}
