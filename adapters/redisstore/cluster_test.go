package redisstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore/redistest"
	"github.com/authkit-go/authkit/core/ratelimit"
)

// TestCluster runs the stores on a Redis Cluster of three primaries, each
// with a replica, started for it (redistest.StartCluster): the storetest suites of
// the limit, session-record and one-time stores, limits on keys spread
// over every primary, a manual failover, and last (it kills a primary) a
// failover.
func TestCluster(t *testing.T) {
	start := time.Now()
	tc := redistest.StartCluster(t)
	c := tc.Client(t)

	runStoreSuites(t, c)
	t.Run("SessionKeysShareASlot", func(t *testing.T) {
		for _, prefix := range []string{"", "app:sess:", "{app-sess}:", "a{", "a}{b"} {
			s := NewSessions(c, SessionsConfig{Prefix: prefix})
			rec, err := c.ClusterKeySlot(t.Context(), s.recordKey("0123abcd")).Result()
			if err != nil {
				t.Fatal(err)
			}
			idx, err := c.ClusterKeySlot(t.Context(), s.indexKey("user-1")).Result()
			if err != nil {
				t.Fatal(err)
			}
			if rec != idx {
				t.Errorf("prefix %q: record in slot %d, index in slot %d", prefix, rec, idx)
			}
		}
	})
	t.Run("LimitsHoldAcrossSlots", func(t *testing.T) { testLimitsAcrossSlots(t, c) })
	t.Run("ManualFailover", func(t *testing.T) { testManualFailover(t, c) })
	t.Run("Failover", func(t *testing.T) {
		awaitMap(t, c, tc.Nodes[0].Addr) // whatever ManualFailover left
		testFailover(t, tc, c)
	})
	t.Logf("cluster tests took %v", time.Since(start).Round(time.Millisecond))
}

// testLimitsAcrossSlots: 300 keys, spread over the three primaries, each
// tried 8 times at once through a Limiter of 5 attempts: every key allows
// exactly 5, and its counter, read on the primary that serves its slot,
// holds exactly 8.
func testLimitsAcrossSlots(t *testing.T, c *redis.ClusterClient) {
	const keys, tries, limit = 300, 8, 5
	prefix := randomPrefix()
	lim, err := ratelimit.New(ratelimit.Config{MaxAttempts: limit, Window: time.Minute, Store: New(c, Config{Prefix: prefix})})
	if err != nil {
		t.Fatal(err)
	}
	perPrimary := map[string]int{}
	for k := range keys {
		perPrimary[masterAddr(t, c, prefix+keyN(k))]++
	}
	if len(perPrimary) != 3 {
		t.Fatalf("the %d keys are on %d primaries (%v), want all 3", keys, len(perPrimary), perPrimary)
	}
	for addr, n := range perPrimary {
		if n < keys/6 {
			t.Errorf("primary %s serves %d of the %d keys: not spread", addr, n, keys)
		}
	}
	allowed := make([]int, keys)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k := range keys {
		for range tries {
			wg.Go(func() {
				res, err := lim.Attempt(context.Background(), keyN(k))
				if err != nil {
					t.Errorf("Attempt(%s): %v", keyN(k), err)
					return
				}
				if res.Allowed {
					mu.Lock()
					allowed[k]++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	for k, n := range allowed {
		if n != limit {
			t.Errorf("key %s: %d of %d attempts allowed, want %d", keyN(k), n, tries, limit)
		}
		m, err := c.MasterForKey(t.Context(), prefix+keyN(k))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := m.Get(t.Context(), prefix+keyN(k)).Int(); err != nil || got != tries {
			t.Errorf("key %s on its primary %s = %d, %v; want %d", keyN(k), m.Options().Addr, got, err, tries)
		}
	}
	t.Logf("keys per primary: %v", perPrimary)
}

func keyN(k int) string { return fmt.Sprintf("login:ip:198.51.100.%d:user-%d", k%256, k) }
