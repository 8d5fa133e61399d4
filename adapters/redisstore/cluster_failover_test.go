package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore/redistest"
)

// maxFailoverErrors bounds the time, from the moment a primary dies, during
// which the limit store may fail on that primary's keys: Redis marks the
// primary failed after redistest.ClusterNodeTimeout, its replica waits 0.5 to 1
// second more and is elected; the client then learns the new map (Sentinel:
// the sentinels agree, then promote). That takes a few seconds; the bound
// leaves room for a 2-core machine running the other test packages beside
// (10 s was passed there). Each test logs how long its failover took.
const maxFailoverErrors = 30 * time.Second

// testFailover kills one primary (SIGKILL) and lets its replica take over,
// as Redis Cluster does by itself. Before the kill each of 20 keys on that
// primary is counted 3 times and WAIT confirms that the replica has those
// counts; then each is counted 2 times more with no WAIT: those are the
// attempts in flight, acknowledged to the client but perhaps not yet on
// the replica. It asserts that
//
//   - the store fails on the dead primary's keys for less than
//     maxFailoverErrors, then works again, on the promoted replica;
//   - no count confirmed on the replica is lost: each key's count after
//     the failover is between 3 and 5, so at most the 2 attempts in flight
//     are lost, all of them in the current window (a counter holds nothing
//     else);
//   - the window is not restarted: the key's reset time is the one it had
//     before the failover (the replica got the absolute expiry).
func testFailover(t *testing.T, tc *redistest.Cluster, c *redis.ClusterClient) {
	ctx := context.Background()
	s := New(c, Config{Prefix: randomPrefix()})
	victim := masterAddr(t, c, s.redisKey("probe"))
	replica := replicaOf(t, victim)
	keys := keysOn(t, c, s, victim, 20)
	primary, err := c.MasterForKey(ctx, s.redisKey(keys[0]))
	if err != nil {
		t.Fatal(err)
	}
	resetAt := countAroundWait(t, s, primary, keys)

	var other string // a key on another primary, tried while the victim is down
	prims, _ := clusterPrimaries(t, replica)
	for _, p := range prims {
		if p != victim {
			other = keysOn(t, c, s, p, 1)[0]
			break
		}
	}
	var otherCalls, otherFailures int
	var otherErr error
	stop := every(50*time.Millisecond, func() {
		otherCalls++
		if _, _, err := s.Increment(ctx, other, time.Minute); err != nil {
			otherFailures, otherErr = otherFailures+1, err
		}
	})

	tc.Node(victim).Kill()
	died := time.Now()
	failures := 0
	for {
		_, _, err := s.Increment(ctx, "probe", time.Minute)
		if err == nil {
			break
		}
		failures++
		if time.Since(died) > maxFailoverErrors {
			t.Fatalf("the store still fails %v after the primary died: %v", maxFailoverErrors, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	window := time.Since(died)
	stop()
	t.Logf("errors for %v after the kill (%d failed calls), then working", window.Round(time.Millisecond), failures)
	t.Logf("meanwhile a key on another primary failed %d of %d calls (last error: %v)", otherFailures, otherCalls, otherErr)
	prims, _ = clusterPrimaries(t, replica)
	if !slices.Contains(prims, replica) || slices.Contains(prims, victim) {
		t.Errorf("primaries after the failover %v: want %s in, %s out", prims, replica, victim)
	}
	rc := redis.NewClient(&redis.Options{Addr: replica})
	defer rc.Close()
	if got, err := rc.Get(ctx, s.redisKey("probe")).Int(); err != nil || got != 1 {
		t.Errorf("the probe on the promoted replica %s = %d, %v; want 1", replica, got, err)
	}

	lost := checkCounts(t, s, keys, resetAt, confirmed, confirmed+inFlight)
	t.Logf("attempts lost: %d of the %d in flight (%d keys)", lost, inFlight*len(keys), len(keys))
}

// testManualFailover asks a replica to take over from its primary
// (CLUSTER FAILOVER, as for maintenance): the primary stops taking writes,
// the replica catches up with it and only then is promoted, so nothing is
// lost. Each of 20 keys on that primary is counted 3 times, with no WAIT;
// after the failover each count is exactly 3 and the window keeps its end.
func testManualFailover(t *testing.T, c *redis.ClusterClient) {
	ctx := context.Background()
	s := New(c, Config{Prefix: randomPrefix()})
	primary := masterAddr(t, c, s.redisKey("manual"))
	replica := replicaOf(t, primary)
	keys := keysOn(t, c, s, primary, 20)
	resetAt := countKeys(t, s, keys, confirmed)
	rc := redis.NewClient(&redis.Options{Addr: replica})
	defer rc.Close()
	began := time.Now()
	if err := rc.ClusterFailover(ctx).Err(); err != nil {
		t.Fatalf("CLUSTER FAILOVER on %s: %v", replica, err)
	}
	for {
		info, err := rc.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "role:master") {
			break
		}
		if time.Since(began) > maxFailoverErrors {
			t.Fatalf("%s is no primary %v after CLUSTER FAILOVER", replica, maxFailoverErrors)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("manual failover of %s to %s took %v", primary, replica, time.Since(began).Round(time.Millisecond))
	checkCounts(t, s, keys, resetAt, confirmed, confirmed)
	for _, k := range keys {
		if got, err := rc.Get(ctx, s.redisKey(k)).Int(); err != nil || got != confirmed+1 {
			t.Errorf("key %s on the promoted replica %s = %d, %v; want %d", k, replica, got, err, confirmed+1)
		}
	}
	awaitMap(t, c, replica)
	if got := replicaOf(t, replica); got != primary {
		t.Errorf("the promoted %s has the replica %s, want its old primary %s", replica, got, primary)
	}
}

// replicaOf returns the address of primary's replica once primary sees
// it in CLUSTER NODES and the replica is in sync with it (a demoted
// primary takes a moment to become its successor's replica), failing t
// after maxFailoverErrors.
func replicaOf(t *testing.T, primary string) string {
	t.Helper()
	for began := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		_, replicas := clusterPrimaries(t, primary)
		if r := replicas[primary]; r != "" {
			rc := redis.NewClient(&redis.Options{Addr: r})
			info, err := rc.Info(context.Background(), "replication").Result()
			_ = rc.Close()
			if err == nil && strings.Contains(info, "role:slave") && strings.Contains(info, "master_link_status:up") &&
				strings.Contains(info, "master_port:"+primary[strings.LastIndexByte(primary, ':')+1:]) {
				return r
			}
		}
		if time.Since(began) > maxFailoverErrors {
			t.Fatalf("primary %s has no replica in sync after %v", primary, maxFailoverErrors)
		}
	}
}

// awaitMap waits until c's map of the cluster names the primaries that
// node seed names: go-redis reloads its map in the background.
func awaitMap(t *testing.T, c *redis.ClusterClient, seed string) {
	t.Helper()
	ctx := context.Background()
	want, _ := clusterPrimaries(t, seed)
	for began := time.Now(); ; {
		var mu sync.Mutex
		var got []string
		err := c.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			got = append(got, m.Options().Addr)
			mu.Unlock()
			return nil
		})
		slices.Sort(got)
		if err == nil && slices.Equal(got, want) {
			return
		}
		if time.Since(began) > maxFailoverErrors {
			t.Fatalf("the client's primaries are %v, the cluster's %v", got, want)
		}
		c.ReloadState(ctx)
		time.Sleep(100 * time.Millisecond)
	}
}

// keysOn returns n limiter keys whose counters under s are on primary.
func keysOn(t *testing.T, c *redis.ClusterClient, s *Store, primary string, n int) []string {
	t.Helper()
	var keys []string
	for i := 0; len(keys) < n; i++ {
		if k := fmt.Sprintf("login:email:user-%d", i); masterAddr(t, c, s.redisKey(k)) == primary {
			keys = append(keys, k)
		}
	}
	return keys
}
