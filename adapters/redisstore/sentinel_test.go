package redisstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore/redistest"
)

// TestSentinel runs the stores through a go-redis failover client on a
// primary with one replica watched by three sentinels, started for it
// (redistest.StartSentinel): the storetest suites of the limit,
// session-record and one-time stores, a failover asked of a sentinel
// (SENTINEL FAILOVER), and last (it kills the primary) a failover.
func TestSentinel(t *testing.T) {
	ts := redistest.StartSentinel(t)
	c := ts.Client(t)

	runStoreSuites(t, c)
	t.Run("ManualFailover", func(t *testing.T) {
		testSentinelFailover(t, ts, c, func(*redistest.Node) {
			sc := redis.NewSentinelClient(&redis.Options{Addr: ts.Sentinels[0].Addr})
			defer sc.Close()
			if err := sc.Failover(t.Context(), redistest.SentinelMasterName).Err(); err != nil {
				t.Fatalf("SENTINEL FAILOVER on %s: %v", ts.Sentinels[0].Addr, err)
			}
		})
		ts.WaitReady(t, maxFailoverErrors) // the old primary back, as the replica
	})
	// The primary killed, on a set of its own: on the set the manual
	// failover has just turned round, the promoted node sometimes lacked
	// keys its replica had acknowledged (WAIT 1) before the kill.
	t.Run("Failover", func(t *testing.T) {
		fresh := redistest.StartSentinel(t)
		testSentinelFailover(t, fresh, fresh.Client(t), (*redistest.Node).Kill)
	})
}

// testSentinelFailover makes the primary of ts fail over to its replica
// with failover, which gets the primary. Before it, each of 20 keys is
// counted 3 times and WAIT confirms that the replica has those counts;
// then each is counted 2 times more with no WAIT (the attempts in flight).
// While it runs, a writer counts one key every 10 ms and keeps the
// increments the store acknowledged. It asserts that
//
//   - the sentinels promote the replica, and the store works on it (a
//     call lands there) less than maxFailoverErrors after the failover
//     began;
//   - no count confirmed on the replica is lost: each key's count after
//     the failover is between 3 and 5, and its window keeps its end;
//
// and logs how long calls failed and how many of the writer's
// acknowledged increments the new primary does not hold: those the old
// primary took after the replica's promotion and before the client
// followed the sentinels' switch.
func testSentinelFailover(t *testing.T, ts *redistest.Sentinel, c *redis.Client, failover func(primary *redistest.Node)) {
	ctx := context.Background()
	s := New(c, Config{Prefix: randomPrefix()})
	primary, replica := ts.Primary(t), ts.Replica(t)
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = keyN(i)
	}
	resetAt := countAroundWait(t, s, c, keys)

	// Every call from here on, the writer's and the probes', is timed:
	// errs spans the failed ones.
	began := time.Now()
	var errs errorSpan
	increment := func(key string) (int64, error) {
		start := time.Now()
		n, _, err := s.Increment(ctx, key, time.Minute)
		if err != nil {
			errs.add(start.Sub(began), time.Since(began), err)
		}
		return n, err
	}
	var acked int64
	stop := every(10*time.Millisecond, func() {
		if _, err := increment("busy"); err == nil {
			acked++
		}
	})
	failover(primary)

	// The failover is over when the replica is a primary and a call of the
	// store lands on it: once promoted it takes no more from the old
	// primary, so its count of the probe is the one the call returned
	// only if the call went to it.
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr})
	defer rc.Close()
	for ; ; time.Sleep(20 * time.Millisecond) {
		if time.Since(began) > maxFailoverErrors {
			stop()
			t.Fatalf("%v after the failover began, the store does not work on the promoted replica %s (%v)",
				maxFailoverErrors, replica.Addr, &errs)
		}
		n, err := increment("probe")
		if err != nil {
			continue
		}
		role, err := rc.Do(ctx, "ROLE").Slice()
		if err != nil || len(role) == 0 || role[0] != "master" {
			continue
		}
		if got, err := rc.Get(ctx, s.redisKey("probe")).Int64(); err == nil && got == n {
			break
		}
	}
	took := time.Since(began)
	stop()
	for p := ts.Primary(t); p != replica; p = ts.Primary(t) {
		if time.Since(began) > maxFailoverErrors {
			t.Fatalf("%v after the failover began, the sentinels name %s as the primary, not the replica %s", maxFailoverErrors, p.Addr, replica.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	held, err := rc.Get(ctx, s.redisKey("busy")).Int64()
	if err != nil {
		t.Fatalf("the writer's key on the promoted replica: %v", err)
	}
	t.Logf("the store works on the promoted replica %v after the failover began; %v", took.Round(time.Millisecond), &errs)
	t.Logf("the writer's increments: %d acknowledged, %d on the promoted replica (%d lost)", acked, held, max(0, acked-held))

	lost := checkCounts(t, s, keys, resetAt, confirmed, confirmed+inFlight)
	t.Logf("attempts lost: %d of the %d in flight (%d keys)", lost, inFlight*len(keys), len(keys))
}

// errorSpan records the failed calls during a failover: how many, from
// when to when (since the failover began), and the last error.
type errorSpan struct {
	mu          sync.Mutex
	n           int
	first, last time.Duration
	err         error
}

func (e *errorSpan) add(start, end time.Duration, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == 0 {
		e.first = start
	}
	e.n, e.last, e.err = e.n+1, end, err
}

func (e *errorSpan) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == 0 {
		return "no call failed"
	}
	return fmt.Sprintf("calls failed from %v to %v after it began (%d calls; the last: %v)",
		e.first.Round(time.Millisecond), e.last.Round(time.Millisecond), e.n, e.err)
}
