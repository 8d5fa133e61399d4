package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// realRedisOptions returns the client options for the server named by
// AUTHKIT_TEST_REDIS, or at its usual local address (storetest.ServiceURL).
// It skips tb when there is none, or fails it when
// AUTHKIT_REQUIRE_SERVICES=1. The pool is kept small: the server is shared
// with other tests.
func realRedisOptions(tb testing.TB) *redis.Options {
	tb.Helper()
	opts, err := redis.ParseURL(storetest.ServiceURL(tb, storetest.EnvRedis))
	if err != nil {
		tb.Fatalf("AUTHKIT_TEST_REDIS: %v", err)
	}
	opts.PoolSize = 8
	return opts
}

// newClient returns a client for opts, closed when tb ends.
func newClient(tb testing.TB, opts *redis.Options) *redis.Client {
	tb.Helper()
	c := redis.NewClient(opts)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// newMiniredis starts a miniredis that stops when tb ends, and returns it
// with a client of it.
func newMiniredis(tb testing.TB) (*miniredis.Miniredis, *redis.Client) {
	tb.Helper()
	m := miniredis.RunT(tb)
	return m, newClient(tb, &redis.Options{Addr: m.Addr()})
}

// randomPrefix returns a key prefix of its own for one test:
// "authkit:test:<32 hex digits>:".
func randomPrefix() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "authkit:test:" + hex.EncodeToString(b) + ":"
}

// cleanupPrefix deletes every key under prefix when tb ends, with SCAN and
// UNLINK. The prefix is made by randomPrefix, so it holds no glob character.
func cleanupPrefix(tb testing.TB, c redis.UniversalClient, prefix string) {
	tb.Cleanup(func() {
		// tb's context is cancelled before cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		keys, err := scanPrefix(ctx, c, prefix)
		if err == nil && len(keys) > 0 {
			err = c.Unlink(ctx, keys...).Err()
		}
		if err != nil {
			tb.Errorf("cleanup of %s*: %v", prefix, err)
		}
	})
}

// scanPrefix returns every key under prefix.
func scanPrefix(ctx context.Context, c redis.UniversalClient, prefix string) ([]string, error) {
	var keys []string
	iter := c.Scan(ctx, 0, prefix+"*", 200).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	return keys, iter.Err()
}

// backend is a Redis to run a test on: miniredis or the real server.
type backend struct {
	name string
	// options returns the options of a client for a fresh database or key
	// space; prefix is the key prefix the test must use.
	options func(t *testing.T) (opts *redis.Options, prefix string)
	real    bool
}

// backends returns miniredis and the real Redis (skipped without one, or
// failed when AUTHKIT_REQUIRE_SERVICES=1).
func backends() []backend {
	return []backend{
		{
			name: "miniredis",
			options: func(t *testing.T) (*redis.Options, string) {
				// Its TTLs stand still (miniredis counts them down only
				// when told to), so PTTL, and with the stores' clock
				// stopped at testNow resetAt, are exact.
				m := miniredis.RunT(t)
				return &redis.Options{Addr: m.Addr()}, randomPrefix()
			},
		},
		{
			name: "redis",
			real: true,
			options: func(t *testing.T) (*redis.Options, string) {
				opts := realRedisOptions(t)
				return opts, randomPrefix()
			},
		},
	}
}

// testNow is the time of the stores' stopped clocks in the tests: years
// away from Redis's clock, and not in UTC, so that a resetAt taken from
// Redis's clock, or left in the clock's zone, shows.
var testNow = time.Date(2031, 5, 6, 7, 8, 9, 0, time.FixedZone("UTC+2", 2*60*60))

// stoppedAt returns a clock for Store.now that always reads t.
func stoppedAt(t time.Time) func() time.Time {
	return func() time.Time { return t }
}

// onBackends runs fn as a subtest on each backend, with a client on that
// backend and a store with a prefix of its own, cleaned up at the end, whose
// clock is stopped at testNow. real tells fn whether the backend is the real
// Redis.
func onBackends(t *testing.T, fn func(t *testing.T, c *redis.Client, s *Store, prefix string, real bool)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			opts, prefix := b.options(t)
			c := newClient(t, opts)
			cleanupPrefix(t, c, prefix)
			s := New(c, Config{Prefix: prefix})
			s.now = stoppedAt(testNow)
			fn(t, c, s, prefix, b.real)
		})
	}
}

// commandCalls parses the reply of INFO commandstats into the calls of each
// command ("cmdstat_incr:calls=2,usec=..." gives "incr": 2). Failed calls
// are calls too.
func commandCalls(tb testing.TB, info string) map[string]int64 {
	tb.Helper()
	calls := make(map[string]int64)
	for line := range strings.Lines(info) {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		field, _, _ := strings.Cut(stats, ",")
		n, ok := strings.CutPrefix(field, "calls=")
		if !ok {
			tb.Fatalf("INFO commandstats line %q: no calls", line)
		}
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			tb.Fatalf("INFO commandstats line %q: %v", line, err)
		}
		calls[strings.TrimPrefix(name, "cmdstat_")] = v
	}
	return calls
}

// cmdLog is a go-redis hook that records the name of every command the
// client sends, pipelined or not.
type cmdLog struct {
	mu    sync.Mutex
	names []string
}

func (l *cmdLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (l *cmdLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		l.add(cmd.Name())
		return next(ctx, cmd)
	}
}

func (l *cmdLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			l.add(cmd.Name())
		}
		return next(ctx, cmds)
	}
}

func (l *cmdLog) add(name string) {
	l.mu.Lock()
	l.names = append(l.names, name)
	l.mu.Unlock()
}

// take returns the names recorded since the last take and forgets them.
func (l *cmdLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.names
	l.names = nil
	return n
}

// countingConn counts the writes on a connection: go-redis writes each
// command (or pipeline) with one flush, so writes are round trips.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// countingDialer returns a Dialer for redis.Options whose connections add
// their writes to writes.
func countingDialer(writes *atomic.Int64) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: conn, writes: writes}, nil
	}
}

// clockHook sets a miniredis server's time to a storetest clock before
// every command, so that with ClockTTL the keys' TTLs count down, and the
// keys expire, by the clock the suite moves.
type clockHook struct {
	m     *miniredis.Miniredis
	clock *storetest.Clock
}

func (h clockHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h clockHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.m.SetTime(h.clock.Now())
		return next(ctx, cmd)
	}
}

func (h clockHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.m.SetTime(h.clock.Now())
		return next(ctx, cmds)
	}
}

// runStoreSuites runs the storetest suites of the three stores on c, a
// replicated Redis started for the test (a Cluster or a Sentinel set):
// RunLimitStore and RunLimitRefunder in real time, RunSessionStore as
// session records (a prefix with no hash tag: the store adds
// SessionsHashTag) and as trusted devices (a prefix with one), and
// RunOneTimeStore. The keys are left: the servers die with the test.
func runStoreSuites(t *testing.T, c redis.UniversalClient) {
	t.Run("LimitStore", func(t *testing.T) {
		storetest.RunLimitStore(t, func(t *testing.T, _ *storetest.Clock) ratelimit.Store {
			return New(c, Config{Prefix: randomPrefix()})
		}, storetest.LimitOptions{RealTime: true})
	})
	t.Run("LimitRefunder", func(t *testing.T) {
		storetest.RunLimitRefunder(t, func(t *testing.T, _ *storetest.Clock) ratelimit.Store {
			return New(c, Config{Prefix: randomPrefix()})
		}, storetest.LimitOptions{RealTime: true})
	})
	t.Run("LimitClearer", func(t *testing.T) {
		storetest.RunLimitClearer(t, func(t *testing.T, _ *storetest.Clock) ratelimit.Store {
			return New(c, Config{Prefix: randomPrefix()})
		}, storetest.LimitOptions{RealTime: true})
	})
	t.Run("Sessions", func(t *testing.T) {
		// A prefix with no hash tag: the store adds SessionsHashTag.
		storetest.RunSessionStore(t, func(t *testing.T) *Sessions {
			return NewSessions(c, SessionsConfig{Prefix: randomPrefix()})
		})
	})
	t.Run("TrustedDevices", func(t *testing.T) {
		// auth.Config.TrustedDevices is a session.Store of its own: the
		// same type under another prefix, here one with a hash tag.
		storetest.RunSessionStore(t, func(t *testing.T) *Sessions {
			return NewSessions(c, SessionsConfig{Prefix: "{" + randomPrefix() + "}trusted:"})
		})
	})
	t.Run("OneTime", func(t *testing.T) {
		storetest.RunOneTimeStore(t, func(t *testing.T, clock *storetest.Clock) onetime.Store {
			s := NewOneTime(c, OneTimeConfig{Prefix: randomPrefix()})
			s.now = clock.Now
			return s
		})
	})
}
