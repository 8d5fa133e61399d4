package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Before a failover, the failover tests count keys confirmed times, have
// WAIT confirm that the replica holds those counts, then count each
// inFlight times more with no WAIT: attempts acknowledged to the client
// but perhaps not yet on the replica.
const confirmed, inFlight = 3, 2

// countKeys counts each of keys n times through s and returns each key's
// reset time.
func countKeys(t *testing.T, s *Store, keys []string, n int) map[string]time.Time {
	t.Helper()
	resetAt := map[string]time.Time{}
	for _, k := range keys {
		for range n {
			_, r, err := s.Increment(context.Background(), k, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			resetAt[k] = r
		}
	}
	return resetAt
}

// countAroundWait counts each of keys confirmed times through s, has WAIT
// on primary (the client of the primary that holds them) confirm that its
// replica has those counts, then counts each inFlight times more. It
// returns each key's reset time.
func countAroundWait(t *testing.T, s *Store, primary *redis.Client, keys []string) map[string]time.Time {
	t.Helper()
	resetAt := countKeys(t, s, keys, confirmed)
	if n, err := primary.Do(context.Background(), "WAIT", 1, 2000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 on %s = %d, %v; want 1 replica", primary.Options().Addr, n, err)
	}
	countKeys(t, s, keys, inFlight)
	return resetAt
}

// checkCounts counts each of keys once more after a failover and checks
// that its count before was between low and high, and that its window's
// end is the one in resetAt (the replica got the absolute expiry). It
// returns how many counts below high were lost.
func checkCounts(t *testing.T, s *Store, keys []string, resetAt map[string]time.Time, low, high int) (lost int) {
	t.Helper()
	for _, k := range keys {
		n, r, err := s.Increment(context.Background(), k, time.Minute)
		if err != nil {
			t.Fatalf("Increment(%s) after the failover: %v", k, err)
		}
		before := int(n) - 1
		if before < low || before > high {
			t.Errorf("key %s: count %d after the failover, want %d to %d", k, before, low, high)
		}
		lost += high - before
		if d := r.Sub(resetAt[k]).Abs(); d > 250*time.Millisecond {
			t.Errorf("key %s: reset at %v after the failover, %v before: the window moved by %v", k, r, resetAt[k], d)
		}
	}
	return lost
}

// every calls fn every d, in a goroutine of its own, until stop is called;
// stop waits for that goroutine to end.
func every(d time.Duration, fn func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(d):
			}
			fn()
		}
	})
	return func() { close(done); wg.Wait() }
}
