package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAttempt measures Limiter.Attempt over a MemoryStore in steady
// state: every key already has an entry, so no run allocates.
func BenchmarkAttempt(b *testing.B) {
	ctx := context.Background()
	newLimiter := func(b *testing.B, maxAttempts int) *Limiter {
		store := NewMemoryStore(MemoryConfig{CleanupInterval: -1})
		b.Cleanup(func() { store.Close() })
		l, err := New(Config{MaxAttempts: maxAttempts, Window: time.Hour, Store: store})
		if err != nil {
			b.Fatal(err)
		}
		return l
	}
	attempt := func(b *testing.B, l *Limiter, key string, wantAllowed bool) {
		res, err := l.Attempt(ctx, key)
		if err != nil || res.Allowed != wantAllowed {
			b.Fatalf("Attempt = %+v, %v", res, err)
		}
	}
	keys := make([]string, DefaultMemoryCapacity)
	for i := range keys {
		keys[i] = fmt.Sprintf("login:ip:10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	}
	warm := func(b *testing.B, l *Limiter) {
		for _, k := range keys {
			attempt(b, l, k, true)
		}
	}
	// hotParallel times attempts on the key "hot" from b.RunParallel's
	// goroutines, every one allowed or every one denied.
	hotParallel := func(b *testing.B, l *Limiter, allowed bool) {
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				attempt(b, l, "hot", allowed)
			}
		})
	}

	b.Run("hot-key", func(b *testing.B) {
		b.ReportAllocs()
		l := newLimiter(b, math.MaxInt)
		attempt(b, l, "hot", true)
		for b.Loop() {
			attempt(b, l, "hot", true)
		}
	})
	b.Run("hot-key-parallel", func(b *testing.B) {
		b.ReportAllocs()
		l := newLimiter(b, math.MaxInt)
		attempt(b, l, "hot", true)
		hotParallel(b, l, true)
	})
	b.Run("10k-keys", func(b *testing.B) {
		b.ReportAllocs()
		l := newLimiter(b, math.MaxInt)
		warm(b, l)
		i := 0
		for b.Loop() {
			attempt(b, l, keys[i], true)
			if i++; i == len(keys) {
				i = 0
			}
		}
	})
	b.Run("10k-keys-parallel", func(b *testing.B) {
		b.ReportAllocs()
		l := newLimiter(b, math.MaxInt)
		warm(b, l)
		var goroutine atomic.Int64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			// Each goroutine walks the keys from its own offset.
			i := int(goroutine.Add(1)*7919) % len(keys)
			for pb.Next() {
				attempt(b, l, keys[i], true)
				if i++; i == len(keys) {
					i = 0
				}
			}
		})
	})
	b.Run("denied", func(b *testing.B) {
		b.ReportAllocs()
		l := newLimiter(b, 1)
		attempt(b, l, "hot", true)
		attempt(b, l, "hot", false)
		hotParallel(b, l, false)
	})
	b.Run("full-store-new-key", func(b *testing.B) {
		// A full store refusing keys it has never seen: the attack path,
		// which must not scan the store.
		b.ReportAllocs()
		l := newLimiter(b, math.MaxInt)
		warm(b, l)
		fresh := make([]string, len(keys))
		for i, k := range keys {
			fresh[i] = "new:" + k
		}
		i := 0
		for b.Loop() {
			res, err := l.Attempt(ctx, fresh[i])
			if err != nil || res.Allowed {
				b.Fatalf("Attempt = %+v, %v", res, err)
			}
			if i++; i == len(keys) {
				i = 0
			}
		}
	})
}

// BenchmarkMemoryStoreIncrement measures the store alone on one key.
func BenchmarkMemoryStoreIncrement(b *testing.B) {
	b.ReportAllocs()
	s := NewMemoryStore(MemoryConfig{CleanupInterval: -1})
	defer s.Close()
	ctx := context.Background()
	for b.Loop() {
		if _, _, err := s.Increment(ctx, "hot", time.Hour); err != nil && !errors.Is(err, ErrStoreFull) {
			b.Fatal(err)
		}
	}
}
