package redisstore

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// benchKeys are the keys the benchmarks count on, made once so that the
// loop measures the store, not strconv.
var benchKeys = func() []string {
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "login:ip:192.0.2." + strconv.Itoa(i)
	}
	return keys
}()

func benchIncrement(b *testing.B, s *Store) {
	ctx := b.Context()
	if _, _, err := s.Increment(ctx, "warm-up", time.Minute); err != nil { // loads the script
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, _, err := s.Increment(ctx, benchKeys[i%len(benchKeys)], time.Minute); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := next.Add(1)
				if _, _, err := s.Increment(ctx, benchKeys[i%int64(len(benchKeys))], time.Minute); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkIncrementRedis measures Increment on the real Redis: one round
// trip on the loopback each, the script included.
func BenchmarkIncrementRedis(b *testing.B) {
	c := newClient(b, realRedisOptions(b))
	prefix := randomPrefix()
	cleanupPrefix(b, c, prefix)
	benchIncrement(b, New(c, Config{Prefix: prefix}))
}

// BenchmarkIncrementMiniredis measures Increment on miniredis (the Lua
// interpreter of gopher-lua dominates; useful for the client-side cost and
// allocations only).
func BenchmarkIncrementMiniredis(b *testing.B) {
	m := miniredis.RunT(b)
	c := newClient(b, &redis.Options{Addr: m.Addr()})
	benchIncrement(b, New(c, Config{}))
}
