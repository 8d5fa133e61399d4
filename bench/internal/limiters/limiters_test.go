package limiters_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/bench/internal/limiters"
	"github.com/authkit-go/authkit/bench/internal/redisinfo"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// check drives l with a limit of 2 on two keys: each gets two attempts
// allowed, then refusals, independently of the other.
func check(t *testing.T, l limiters.Limiter) {
	t.Helper()
	ctx := context.Background()
	for _, step := range []struct {
		key  string
		want bool
	}{
		{"a", true}, {"a", true}, {"b", true}, {"a", false}, {"a", false}, {"b", true}, {"b", false},
	} {
		got, err := l.Attempt(ctx, step.key)
		if err != nil {
			t.Fatalf("Attempt(%s): %v", step.key, err)
		}
		if got != step.want {
			t.Fatalf("Attempt(%s) = %v, want %v", step.key, got, step.want)
		}
	}
}

func TestMemoryLimitersCount(t *testing.T) {
	for _, impl := range []limiters.Memory{limiters.Authkit("authkit", 0), limiters.Ulule(), limiters.Sethvargo()} {
		t.Run(impl.Name, func(t *testing.T) {
			l, err := impl.New(2)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			check(t, l)
		})
	}
}

func TestAuthkitCapacity(t *testing.T) {
	l, err := limiters.Authkit("capped", 1).New(limiters.Unlimited)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if ok, err := l.Attempt(ctx, "a"); !ok || err != nil {
		t.Fatalf("first key: %v, %v", ok, err)
	}
	if ok, err := l.Attempt(ctx, "b"); ok || err != nil {
		t.Fatalf("second key in a store of capacity 1: %v, %v; want refused without error", ok, err)
	}
}

// TestRedisLimiters checks, on the real Redis, that every Redis limiter
// counts like the others, sends one command in one round trip per attempt,
// and leaves every key with a TTL.
func TestRedisLimiters(t *testing.T) {
	opts, err := redis.ParseURL(storetest.ServiceURL(t, storetest.EnvRedis))
	if err != nil {
		t.Fatal(err)
	}
	opts.PoolSize = 2
	for _, impl := range []limiters.Redis{limiters.AuthkitRedis(), limiters.UluleRedis(), limiters.RedisRate()} {
		t.Run(impl.Name, func(t *testing.T) {
			c := redis.NewClient(opts)
			t.Cleanup(func() { _ = c.Close() })
			var counter redisinfo.Counter
			c.AddHook(&counter)
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			prefix := "authkit:test:bench:" + hex.EncodeToString(b) + ":"
			l, pattern := impl.NewForTest(t, c, prefix, 2)
			// The first attempt on a server that has not seen the script
			// yet loads it (NOSCRIPT, then EVAL): once per server, not per
			// attempt, so it is left out of the count.
			if _, err := l.Attempt(context.Background(), "warm-up"); err != nil {
				t.Fatal(err)
			}
			cmds0, trips0 := counter.Counts()
			check(t, l)
			cmds, trips := counter.Counts()
			if cmds-cmds0 != 7 || trips-trips0 != 7 {
				t.Errorf("7 attempts sent %d commands in %d round trips, want 7 and 7", cmds-cmds0, trips-trips0)
			}
			keys, noTTL, err := redisinfo.KeysWithoutTTL(context.Background(), c, pattern)
			if err != nil {
				t.Fatal(err)
			}
			if keys != 3 || noTTL != 0 {
				t.Errorf("%d keys match %s, %d without TTL; want 3 and 0", keys, pattern, noTTL)
			}
		})
	}
}
