package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/ratelimit"
)

// A limiter of two attempts a minute on Redis (here miniredis, an in-process
// stand-in): the third attempt of the window is blocked.
func Example() {
	srv, err := miniredis.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	limiter, err := ratelimit.New(ratelimit.Config{
		MaxAttempts: 2,
		Window:      time.Minute,
		Store:       redisstore.New(rdb, redisstore.Config{}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		res, err := limiter.Attempt(ctx, "login:email:ada@example.com")
		if err != nil {
			fmt.Println(err) // Redis unreachable: not allowed (fail closed)
			return
		}
		if res.Allowed {
			fmt.Printf("attempt %d: allowed, %d remaining\n", i, res.Remaining)
		} else {
			fmt.Printf("attempt %d: blocked\n", i)
		}
	}
	// Output:
	// attempt 1: allowed, 1 remaining
	// attempt 2: allowed, 0 remaining
	// attempt 3: blocked
}

// One client type for every deployment: redis.NewUniversalClient returns a
// single-node client for one address, a Cluster client for several, and a
// Sentinel failover client when MasterName is set.
func ExampleNew() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:      []string{"sentinel-1:26379", "sentinel-2:26379", "sentinel-3:26379"},
		MasterName: "mymaster", // omit for a single node or a Cluster
		// Bound every call: a request's context, and these timeouts.
		ContextTimeoutEnabled: true,
		DialTimeout:           time.Second,
		ReadTimeout:           500 * time.Millisecond,
		WriteTimeout:          500 * time.Millisecond,
	})
	defer rdb.Close()

	store := redisstore.New(rdb, redisstore.Config{Prefix: "myapp:rl:"})
	limiter, err := ratelimit.New(ratelimit.Config{MaxAttempts: 5, Window: 15 * time.Minute, Store: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := limiter.Attempt(context.Background(), "login:ip:192.0.2.1")
	fmt.Println(res.Allowed, err)
}

// Values taken once, shared by every instance of an app: what one
// instance puts, the first Take on any instance gets, and no other.
func ExampleNewOneTime() {
	srv, err := miniredis.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	st := redisstore.NewOneTime(rdb, redisstore.OneTimeConfig{}) // passkeys.Config{Challenges: st}
	ctx := context.Background()
	now := time.Now()
	if err := st.Put(ctx, "key", []byte("ceremony state"), now.Add(5*time.Minute)); err != nil {
		fmt.Println(err)
		return
	}
	data, err := st.Take(ctx, "key", now)
	fmt.Printf("%s %v\n", data, err)
	_, err = st.Take(ctx, "key", now)
	fmt.Println(errors.Is(err, onetime.ErrNotFound))
	// Output:
	// ceremony state <nil>
	// true
}

// The three stores on a Redis Cluster: one ClusterClient seeded with some
// of its nodes. The limit counters and one-time values spread over every
// primary; each session store keeps its keys in one hash slot, here one
// hash tag per store so that sessions and trusted devices sit on different
// primaries. (No output: it needs a running cluster.)
func ExampleNewSessions_cluster() {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:       []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"},
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
	})
	defer rdb.Close()

	limits := redisstore.New(rdb, redisstore.Config{})                                            // "authkit:rl:" + key
	challenges := redisstore.NewOneTime(rdb, redisstore.OneTimeConfig{})                          // "authkit:once:" + key
	sessions := redisstore.NewSessions(rdb, redisstore.SessionsConfig{Prefix: "{authkit-sess}:"}) // one slot
	trusted := redisstore.NewSessions(rdb, redisstore.SessionsConfig{Prefix: "{authkit-trusted}:"})
	_, _, _, _ = limits, challenges, sessions, trusted
}
