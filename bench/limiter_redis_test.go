package bench_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/bench/internal/keys"
	"github.com/authkit-go/authkit/bench/internal/limiters"
	"github.com/authkit-go/authkit/bench/internal/redisinfo"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// redisImpls are the Redis implementations, authkit first, then its peers.
var redisImpls = []limiters.Redis{limiters.AuthkitRedis(), limiters.UluleRedis(), limiters.RedisRate()}

// redisKeys is the key space of the Redis comparison: 1,000 keys drawn
// uniformly.
const redisKeys = 1000

// redisOptions returns the client options for the Redis of
// storetest.ServiceURL (AUTHKIT_TEST_REDIS, or the local one), or skips tb
// naming the variable (fails it when AUTHKIT_REQUIRE_SERVICES=1). The
// server is shared: the pool stays small.
func redisOptions(tb testing.TB) *redis.Options {
	tb.Helper()
	opts, err := redis.ParseURL(storetest.ServiceURL(tb, storetest.EnvRedis))
	if err != nil {
		tb.Fatalf("AUTHKIT_TEST_REDIS: %v", err)
	}
	opts.PoolSize = 16
	return opts
}

// newRedis returns a client with a command counter, and a key prefix of
// its own ("authkit:bench:<hex>:") whose keys are deleted when tb ends.
func newRedis(tb testing.TB) (*redis.Client, *redisinfo.Counter, string) {
	tb.Helper()
	c := redis.NewClient(redisOptions(tb))
	tb.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		if os.Getenv("AUTHKIT_REQUIRE_SERVICES") == "1" {
			tb.Fatalf("Redis at AUTHKIT_TEST_REDIS: %v", err)
		}
		tb.Skipf("Redis at AUTHKIT_TEST_REDIS is unreachable (%v): skipping the Redis comparison", err)
	}
	var counter redisinfo.Counter
	c.AddHook(&counter)
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return c, &counter, "authkit:bench:" + hex.EncodeToString(b) + ":"
}

// BenchmarkLimiterRedis is one attempt on a Redis limiter over 1,000
// uniform keys, allowed or denied (every key over a limit of 1), serial or
// parallel (8 goroutines per CPU: the attempts wait on the network), per
// implementation. Besides the time it reports, over the b.N attempts:
//
//   - cmds/op and trips/op: the commands and round trips the client sent
//     (a go-redis hook: exact);
//   - srv-cmds/op: total_commands_processed per attempt, commands called
//     from scripts included; and srv-scripts/op: EVAL and EVALSHA calls per
//     attempt. Both are INFO deltas of a server that other clients share,
//     so they carry their traffic too: read them over a large b.N;
//     srv-script-us/op is the server's time in those scripts per attempt
//     (what bounds a busy server's throughput), from the same deltas;
//   - keys-no-ttl: keys of the run left without an expiry (want 0).
func BenchmarkLimiterRedis(b *testing.B) {
	dist := keys.Uniform(redisKeys)
	for _, mode := range []string{"allowed", "denied"} {
		for _, run := range []string{"serial", "parallel"} {
			for _, impl := range redisImpls {
				name := fmt.Sprintf("mode=%s/run=%s/impl=%s", mode, run, impl.Name)
				b.Run(name, func(b *testing.B) { benchRedis(b, impl, dist, mode == "allowed", run == "parallel") })
			}
		}
	}
}

func benchRedis(b *testing.B, impl limiters.Redis, d keys.Dist, allowed, parallel bool) {
	c, counter, prefix := newRedis(b)
	ctx := context.Background()
	limit := 1
	if allowed {
		limit = limiters.Unlimited
	}
	l, pattern := impl.NewForTest(b, c, prefix, limit)
	for _, k := range d.Keys {
		for i := range 2 {
			if i == 1 && allowed {
				break
			}
			if ok, err := l.Attempt(ctx, k); err != nil || ok != (i == 0) {
				b.Fatalf("warm-up attempt %d on %s: %v, %v", i+1, k, ok, err)
			}
		}
	}
	before, err := redisinfo.Read(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	cmds0, trips0 := counter.Counts()

	var wrong atomic.Int64
	attempts := func(g int, next func() bool) {
		var w int64
		i := keys.Offset(g, len(d.Seq))
		for next() {
			if ok, err := l.Attempt(ctx, d.Seq[i]); err != nil || ok != allowed {
				w++
			}
			if i++; i == len(d.Seq) {
				i = 0
			}
		}
		wrong.Add(w)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if parallel {
		b.SetParallelism(8)
		var gid atomic.Int64
		b.RunParallel(func(pb *testing.PB) { attempts(int(gid.Add(1)-1), pb.Next) })
	} else {
		n := 0
		attempts(0, func() bool { n++; return n <= b.N })
	}
	b.StopTimer()

	cmds1, trips1 := counter.Counts()
	after, err := redisinfo.Read(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	if w := wrong.Load(); w > 0 {
		b.Fatalf("%d of %d attempts failed or did not answer allowed=%v", w, b.N, allowed)
	}
	n := float64(b.N)
	b.ReportMetric(float64(cmds1-cmds0)/n, "cmds/op")
	b.ReportMetric(float64(trips1-trips0)/n, "trips/op")
	delta := after.Sub(before)
	b.ReportMetric(float64(delta.Total)/n, "srv-cmds/op")
	b.ReportMetric(float64(delta.Scripts())/n, "srv-scripts/op")
	b.ReportMetric(float64(delta.ScriptUsec())/n, "srv-script-us/op")

	keyCount, noTTL, err := redisinfo.KeysWithoutTTL(ctx, c, pattern)
	if err != nil {
		b.Fatal(err)
	}
	if keyCount != redisKeys {
		b.Errorf("%d keys match %s, want %d", keyCount, pattern, redisKeys)
	}
	b.ReportMetric(float64(noTTL), "keys-no-ttl")
	if noTTL > 0 && impl.Name == "authkit" {
		b.Errorf("%d of authkit's keys have no TTL", noTTL)
	}
}
