package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore/redistest"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// TestConformanceMiniredis runs the storetest suite on miniredis, on the
// suite's clock (see miniredisStore).
func TestConformanceMiniredis(t *testing.T) {
	storetest.RunLimitStore(t, miniredisStore, storetest.LimitOptions{})
}

// TestRefunderMiniredis runs the Refunder suite on miniredis, on the
// suite's clock.
func TestRefunderMiniredis(t *testing.T) {
	storetest.RunLimitRefunder(t, miniredisStore, storetest.LimitOptions{})
}

// miniredisStore is a store on a fresh miniredis for one subtest of a
// storetest suite. The suite's clock is both the store's clock and the one
// miniredis counts TTLs down and expires keys by: no waiting, and reset
// times exact to the millisecond.
func miniredisStore(t *testing.T, clock *storetest.Clock) ratelimit.Store {
	m := miniredis.RunT(t)
	m.SetTime(clock.Now())
	m.ClockTTL(true)
	c := newClient(t, &redis.Options{Addr: m.Addr()})
	c.AddHook(clockHook{m: m, clock: clock})
	s := New(c, Config{})
	s.now = clock.Now
	return s
}

// TestRefunderRedis runs the Refunder suite on the real Redis, in real time
// (see realRedisStores).
func TestRefunderRedis(t *testing.T) {
	storetest.RunLimitRefunder(t, realRedisStores(t), storetest.LimitOptions{RealTime: true})
}

// TestConformanceRedis runs the storetest suite on the real Redis, in real
// time with short windows (see realRedisStores).
func TestConformanceRedis(t *testing.T) {
	storetest.RunLimitStore(t, realRedisStores(t), storetest.LimitOptions{RealTime: true})
}

// realRedisStores returns the stores of a storetest suite on the real
// Redis: each subtest's under a key prefix of its own, keeping time by the
// wall clock, the store's default clock, as the suite then does.
func realRedisStores(t *testing.T) storetest.LimitStoreFactory {
	t.Helper()
	c := newClient(t, realRedisOptions(t))
	return func(t *testing.T, _ *storetest.Clock) ratelimit.Store {
		prefix := randomPrefix()
		cleanupPrefix(t, c, prefix)
		return New(c, Config{Prefix: prefix})
	}
}

func incr(t *testing.T, s *Store, key string, window time.Duration) (int64, time.Time) {
	t.Helper()
	n, reset, err := s.Increment(t.Context(), key, window)
	if err != nil {
		t.Fatalf("Increment(%q): %v", key, err)
	}
	return n, reset
}

// TestOneRoundTrip counts what the client sends once the script is loaded
// and a connection is open: one EVALSHA per Increment, whether the key is
// new, counting or hashed, and one DEL per Reset. The count is taken twice:
// by a hook (command names) and on the wire (writes on the connection).
func TestOneRoundTrip(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			opts, prefix := b.options(t)
			var writes atomic.Int64
			opts.Dialer = countingDialer(&writes)
			opts.PoolSize = 1
			c := newClient(t, opts)
			cleanupPrefix(t, c, prefix)
			log := &cmdLog{}
			c.AddHook(log)
			s := New(c, Config{Prefix: prefix})

			incr(t, s, "warm-up", time.Minute) // loads the script if needed, opens the connection
			log.take()
			before := writes.Load()
			keys := []string{"a", "a", "a", "b", strings.Repeat("long", 100), "sha256:x", "a"}
			for _, k := range keys {
				incr(t, s, k, time.Minute)
			}
			want := slices.Repeat([]string{"evalsha"}, len(keys))
			if got := log.take(); !slices.Equal(got, want) {
				t.Fatalf("%d Increments sent %q, want %q", len(keys), got, want)
			}
			if got := writes.Load() - before; got != int64(len(keys)) {
				t.Fatalf("%d Increments took %d writes, want %d", len(keys), got, len(keys))
			}

			before = writes.Load()
			if err := s.Reset(t.Context(), "a"); err != nil {
				t.Fatal(err)
			}
			if got := log.take(); !slices.Equal(got, []string{"del"}) {
				t.Fatalf("Reset sent %q, want [del]", got)
			}
			if got := writes.Load() - before; got != 1 {
				t.Fatalf("Reset took %d writes, want 1", got)
			}

			_, reset := incr(t, s, "b", time.Minute)
			if err := s.Refund(t.Context(), "warm-up", reset); err != nil { // loads the script
				t.Fatal(err)
			}
			log.take()
			before = writes.Load()
			if err := s.Refund(t.Context(), "b", reset); err != nil {
				t.Fatal(err)
			}
			if got := log.take(); !slices.Equal(got, []string{"evalsha"}) {
				t.Fatalf("Refund sent %q, want [evalsha]", got)
			}
			if got := writes.Load() - before; got != 1 {
				t.Fatalf("Refund took %d writes, want 1", got)
			}
		})
	}
}

// TestServerCommands counts the commands the script runs on the real Redis
// per Increment, from INFO commandstats read just before and just after it.
// The server is shared, so the three run in one MULTI/EXEC: no other
// client's command runs between them, and the deltas are exact. (Its reply
// is checked too; TestOneRoundTrip shows that Increment sends this one
// EVALSHA and nothing else.) Not on miniredis, which has no commandstats.
func TestServerCommands(t *testing.T) {
	c := newClient(t, realRedisOptions(t))
	prefix := randomPrefix()
	cleanupPrefix(t, c, prefix)
	s := New(c, Config{Prefix: prefix})
	ctx := t.Context()
	incr(t, s, "warm-up", time.Minute) // loads the script
	window := strconv.FormatInt(windowMillis(time.Minute), 10)

	steps := []struct {
		name      string
		key       string
		seed      func(rk string) error
		wantCount int64
		want      map[string]int64 // calls per command, INFO's own left out
	}{
		{"new window", "k", nil, 1, map[string]int64{"evalsha": 1, "incr": 1, "pexpire": 1}},
		{"live counter", "k", nil, 2, map[string]int64{"evalsha": 1, "incr": 1, "pttl": 1}},
		{"old hash layout", "old", func(rk string) error {
			return c.HSet(ctx, rk, "count", 4, "reset_ms", time.Now().Add(time.Minute).UnixMilli()).Err()
		}, 1, map[string]int64{"evalsha": 1, "incr": 2, "del": 1, "pexpire": 1}}, // one INCR fails
		{"counter without TTL", "persisted", func(rk string) error {
			return c.Set(ctx, rk, 3, 0).Err()
		}, 1, map[string]int64{"evalsha": 1, "incr": 1, "pttl": 1, "set": 1}},
	}
	for _, st := range steps {
		rk := s.redisKey(st.key)
		if st.seed != nil {
			if err := st.seed(rk); err != nil {
				t.Fatal(err)
			}
		}
		var before, after *redis.StringCmd
		var res *redis.Cmd
		if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			before = p.Info(ctx, "commandstats")
			res = incrementScript.EvalSha(ctx, p, []string{rk}, window)
			after = p.Info(ctx, "commandstats")
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got, err := res.Int64Slice(); err != nil || len(got) != 2 || got[0] != st.wantCount {
			t.Fatalf("%s: script returned %v, %v; want count %d", st.name, got, err, st.wantCount)
		}
		b, a := commandCalls(t, before.Val()), commandCalls(t, after.Val())
		got := make(map[string]int64)
		for name, n := range a {
			if d := n - b[name]; d != 0 && name != "info" {
				got[name] = d
			}
		}
		if !maps.Equal(got, st.want) {
			t.Errorf("%s: the server ran %v, want %v", st.name, got, st.want)
		}
		checkCounter(t, c, rk, st.wantCount, 60_000)
	}
}

// TestScriptLoadedOnFirstUse: a server without the script gets EVALSHA,
// answers NOSCRIPT and gets EVAL; from then on EVALSHA alone. On miniredis
// only: flushing the scripts of the shared server would disturb others.
func TestScriptLoadedOnFirstUse(t *testing.T) {
	_, c := newMiniredis(t)
	log := &cmdLog{}
	c.AddHook(log)
	s := New(c, Config{})
	if err := c.Ping(t.Context()).Err(); err != nil { // opens the connection
		t.Fatal(err)
	}
	log.take()

	steps := []struct {
		flush bool
		count int64
		sent  []string
	}{
		{count: 1, sent: []string{"evalsha", "eval"}},
		{count: 2, sent: []string{"evalsha"}},
		{flush: true, count: 3, sent: []string{"evalsha", "eval"}},
		{count: 4, sent: []string{"evalsha"}},
	}
	for i, st := range steps {
		if st.flush {
			if err := c.ScriptFlush(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
			log.take()
		}
		if n, _ := incr(t, s, "k", time.Minute); n != st.count {
			t.Fatalf("step %d: count %d, want %d", i, n, st.count)
		}
		if got := log.take(); !slices.Equal(got, st.sent) {
			t.Fatalf("step %d sent %q, want %q", i, got, st.sent)
		}
	}
}

// checkReset checks a resetAt of a store whose clock is stopped at clock:
// clock plus the leftMs milliseconds the window had to go, in UTC. Exact on
// miniredis, whose TTLs stand still; on the real Redis the TTL counts down,
// so resetAt may be earlier by the time since the window had leftMs to go
// (and 1 ms of rounding), never later.
func checkReset(t *testing.T, real bool, got, clock time.Time, leftMs int64, since time.Duration) {
	t.Helper()
	if got.Location() != time.UTC {
		t.Fatalf("resetAt %v in %v, want UTC", got, got.Location())
	}
	want := addMillis(clock, leftMs)
	if !real {
		if !got.Equal(want) {
			t.Fatalf("resetAt %v, want %v (the store's clock plus %d ms)", got, want.UTC(), leftMs)
		}
		return
	}
	earliest := want.UnixMilli() - since.Milliseconds() - 1
	if ms := got.UnixMilli(); ms < earliest || ms > want.UnixMilli() {
		t.Fatalf("resetAt %v, want the store's clock plus %d ms (%v), less at most %v", got, leftMs, want.UTC(), since)
	}
}

// checkCounter checks that redisKey holds the layout the package documents:
// an integer string holding count, whose TTL is at most the window of
// windowMs milliseconds, and not gone.
func checkCounter(t *testing.T, c *redis.Client, redisKey string, count, windowMs int64) {
	t.Helper()
	ctx := t.Context()
	if typ := c.Type(ctx, redisKey).Val(); typ != "string" {
		t.Fatalf("%s is a %q, want a string", redisKey, typ)
	}
	v, err := c.Get(ctx, redisKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatInt(count, 10); v != want {
		t.Fatalf("%s holds %q, want %q", redisKey, v, want)
	}
	// Not c.PTTL: its time.Duration overflows for windows of centuries.
	ttl, err := c.Do(ctx, "PTTL", redisKey).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 0 || ttl > windowMs {
		t.Fatalf("%s: PTTL %d ms, want in (0, %d]", redisKey, ttl, windowMs)
	}
}

// TestNoKeyLeftWithoutTTL: after a concurrent burst on many keys, every key
// under the prefix is a counter with its TTL, and every Increment of a key
// reported the window that the key's first Increment started.
func TestNoKeyLeftWithoutTTL(t *testing.T) {
	onBackends(t, func(t *testing.T, c *redis.Client, s *Store, prefix string, real bool) {
		const keys, perKey, workers = 40, 5, 8
		var mu sync.Mutex
		resets := make(map[string][]time.Time)
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		start := time.Now()
		for w := range workers {
			wg.Go(func() {
				for i := w; i < keys*perKey; i += workers {
					k := "burst:" + strconv.Itoa(i%keys)
					_, reset, err := s.Increment(t.Context(), k, time.Minute)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					resets[k] = append(resets[k], reset)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		since := time.Since(start)
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}

		found, err := scanPrefix(t.Context(), c, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != keys {
			t.Fatalf("%d keys under the prefix, want %d", len(found), keys)
		}
		for _, rk := range found {
			k := strings.TrimPrefix(rk, prefix)
			if len(resets[k]) != perKey {
				t.Fatalf("key %q: %d Increments reported, want %d", k, len(resets[k]), perKey)
			}
			for _, reset := range resets[k] {
				checkReset(t, real, reset, testNow, 60_000, since)
			}
			checkCounter(t, c, rk, perKey, 60_000)
		}
	})
}

// TestRepair: a key under the prefix that INCR refuses, or a counter that
// lost its TTL, starts a new window, with a TTL, at its next Increment; a
// counter with its TTL keeps counting in its window.
func TestRepair(t *testing.T) {
	onBackends(t, func(t *testing.T, c *redis.Client, s *Store, _ string, real bool) {
		ctx := t.Context()
		future := time.Now().Add(time.Minute)
		tests := []struct {
			name      string
			seed      func(rk string) error
			wantCount int64
			wantLeft  int64 // ms left in the window
		}{
			{"counter keeps counting", func(rk string) error {
				return c.Set(ctx, rk, 2, 30*time.Second).Err()
			}, 3, 30_000},
			{"counter without TTL (PERSIST)", func(rk string) error {
				if err := c.Set(ctx, rk, 5, 30*time.Second).Err(); err != nil {
					return err
				}
				return c.Persist(ctx, rk).Err()
			}, 1, 60_000},
			{"zero without TTL", func(rk string) error {
				return c.Set(ctx, rk, 0, 0).Err()
			}, 1, 60_000},
			{"old hash layout", func(rk string) error {
				if err := c.HSet(ctx, rk, "count", 4, "reset_ms", future.UnixMilli()).Err(); err != nil {
					return err
				}
				return c.PExpireAt(ctx, rk, future).Err()
			}, 1, 60_000},
			{"old hash layout without TTL", func(rk string) error {
				return c.HSet(ctx, rk, "count", 4, "reset_ms", future.UnixMilli()).Err()
			}, 1, 60_000},
			{"non-integer string", func(rk string) error {
				return c.Set(ctx, rk, "many", 30*time.Second).Err()
			}, 1, 60_000},
			{"counter at the int64 limit", func(rk string) error {
				return c.Set(ctx, rk, int64(math.MaxInt64), 30*time.Second).Err()
			}, 1, 60_000},
			{"list", func(rk string) error {
				return c.RPush(ctx, rk, "a", "b").Err()
			}, 1, 60_000},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				key := "repair:" + strconv.Itoa(i)
				rk := s.redisKey(key)
				start := time.Now()
				if err := tt.seed(rk); err != nil {
					t.Fatal(err)
				}
				n, reset := incr(t, s, key, time.Minute)
				if n != tt.wantCount {
					t.Fatalf("count %d, want %d", n, tt.wantCount)
				}
				checkReset(t, real, reset, testNow, tt.wantLeft, time.Since(start))
				checkCounter(t, c, rk, n, tt.wantLeft)
			})
		}
	})
}

// TestOldHashLayout: a counter written by an earlier version (a hash
// {count, reset_ms} expiring at reset_ms) starts a new window once, as a
// string counter with a TTL, which then counts on.
func TestOldHashLayout(t *testing.T) {
	onBackends(t, func(t *testing.T, c *redis.Client, s *Store, _ string, real bool) {
		ctx := t.Context()
		rk := s.redisKey("login:ip:192.0.2.1")
		future := time.Now().Add(10 * time.Minute)
		if err := c.HSet(ctx, rk, "count", 4, "reset_ms", future.UnixMilli()).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.PExpireAt(ctx, rk, future).Err(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for want := int64(1); want <= 2; want++ {
			n, reset := incr(t, s, "login:ip:192.0.2.1", time.Minute)
			if n != want {
				t.Fatalf("Increment %d on the old layout: count %d", want, n)
			}
			checkReset(t, real, reset, testNow, 60_000, time.Since(start))
			checkCounter(t, c, rk, want, 60_000)
		}
	})
}

// TestWindowEnd: resetAt is the store's clock (stopped years away from
// Redis's) plus the time left in the window, exact for windows of any length
// (no float formatting on the way through Lua, no time.Duration overflow).
func TestWindowEnd(t *testing.T) {
	onBackends(t, func(t *testing.T, c *redis.Client, s *Store, _ string, real bool) {
		windows := []time.Duration{time.Millisecond, time.Minute, 90 * 24 * time.Hour, 100 * 365 * 24 * time.Hour}
		if real {
			// miniredis keeps TTLs as a time.Duration, which this one
			// overflows once rounded up to whole milliseconds.
			windows = append(windows, math.MaxInt64)
		}
		for _, w := range windows {
			key := "window:" + w.String()
			wms := int64(math.Ceil(float64(w) / float64(time.Millisecond)))
			if w == math.MaxInt64 {
				wms = math.MaxInt64/int64(time.Millisecond) + 1
			}
			start := time.Now()
			n, reset := incr(t, s, key, w)
			if n != 1 {
				t.Fatalf("window %v: count %d, want 1", w, n)
			}
			checkReset(t, real, reset, testNow, wms, time.Since(start))
			if w > time.Millisecond { // a 1 ms window may be over already
				checkCounter(t, c, s.redisKey(key), 1, wms)
			}
		}
	})
}

// TestServersAgree: two application servers whose clocks differ by an hour
// share one window: they count on the same counter, and each reports the
// window's end by its own clock, the same time left.
func TestServersAgree(t *testing.T) {
	onBackends(t, func(t *testing.T, c *redis.Client, a *Store, prefix string, real bool) {
		b := New(c, Config{Prefix: prefix})
		later := testNow.Add(time.Hour + 7*time.Millisecond)
		b.now = stoppedAt(later)
		start := time.Now()
		for i, st := range []struct {
			s     *Store
			clock time.Time
		}{{a, testNow}, {b, later}, {a, testNow}, {b, later}} {
			n, reset := incr(t, st.s, "k", time.Minute)
			if n != int64(i+1) {
				t.Fatalf("Increment %d: count %d, want %d", i+1, n, i+1)
			}
			checkReset(t, real, reset, st.clock, 60_000, time.Since(start))
		}
	})
}

// TestWindowRoundsUpToMilliseconds, on miniredis, whose TTLs stand still,
// with the store's clock stopped.
func TestWindowRoundsUpToMilliseconds(t *testing.T) {
	m := miniredis.RunT(t)
	now := time.Date(2026, 3, 14, 15, 9, 26, 535_000_000, time.UTC)
	s := New(newClient(t, &redis.Options{Addr: m.Addr()}), Config{})
	s.now = stoppedAt(now)
	for i, tt := range []struct {
		window time.Duration
		want   time.Duration
	}{
		{time.Nanosecond, time.Millisecond},
		{1500 * time.Microsecond, 2 * time.Millisecond},
		{3 * time.Millisecond, 3 * time.Millisecond},
		{15 * time.Minute, 15 * time.Minute},
	} {
		key := strconv.Itoa(i)
		_, reset := incr(t, s, key, tt.window)
		if want := now.Add(tt.want); !reset.Equal(want) {
			t.Errorf("window %v: resetAt %v, want %v", tt.window, reset, want)
		}
		if ttl := m.TTL(s.redisKey(key)); ttl != tt.want {
			t.Errorf("window %v: TTL %v, want %v", tt.window, ttl, tt.want)
		}
	}
}

func TestInvalidWindow(t *testing.T) {
	m, c := newMiniredis(t)
	s := New(c, Config{})
	for _, w := range []time.Duration{0, -time.Second, math.MinInt64} {
		n, reset, err := s.Increment(t.Context(), "k", w)
		if err == nil || err.Error() != "redisstore: increment: window must be positive" || n != 0 || !reset.IsZero() {
			t.Fatalf("Increment(window %v) = %d, %v, %v; want 0, zero time, window error", w, n, reset, err)
		}
	}
	if keys := m.Keys(); len(keys) != 0 {
		t.Fatalf("invalid windows created keys %q", keys)
	}
}

func TestNilClient(t *testing.T) {
	s := New(nil, Config{})
	if _, _, err := s.Increment(t.Context(), "k", time.Minute); err == nil || err.Error() != "redisstore: increment: nil redis client" {
		t.Fatalf("Increment: %v", err)
	}
	if err := s.Reset(t.Context(), "k"); err == nil || err.Error() != "redisstore: reset: nil redis client" {
		t.Fatalf("Reset: %v", err)
	}
}

func TestRedisKey(t *testing.T) {
	hashed := func(prefix, key string) string {
		sum := sha256.Sum256([]byte(key))
		return prefix + "sha256:" + hex.EncodeToString(sum[:])
	}
	longest := strings.Repeat("k", MaxKeyLen)
	over := longest + "k"
	tests := []struct {
		prefix, key, want string
	}{
		{"", "login:ip:192.0.2.1", "authkit:rl:login:ip:192.0.2.1"},
		{"app1:", "login:ip:192.0.2.1", "app1:login:ip:192.0.2.1"},
		{"", "", "authkit:rl:"},
		{"", longest, "authkit:rl:" + longest},
		{"", over, hashed("authkit:rl:", over)},
		{"", "sha256:abc", hashed("authkit:rl:", "sha256:abc")},
		{"", "login:email:sha256:abc", "authkit:rl:login:email:sha256:abc"},
	}
	for _, tt := range tests {
		s := New(nil, Config{Prefix: tt.prefix})
		if got := s.redisKey(tt.key); got != tt.want {
			t.Errorf("prefix %q, key %q: got %q, want %q", tt.prefix, tt.key, got, tt.want)
		}
	}
}

// TestHashedKeysAreDistinct: a long key and the literal "sha256:<its hash>"
// count separately, and neither is stored longer than the hashed form.
func TestHashedKeysAreDistinct(t *testing.T) {
	m, c := newMiniredis(t)
	s := New(c, Config{})
	long := strings.Repeat("x", MaxKeyLen+1)
	sum := sha256.Sum256([]byte(long))
	literal := "sha256:" + hex.EncodeToString(sum[:])
	incr(t, s, long, time.Minute)
	incr(t, s, long, time.Minute)
	if n, _ := incr(t, s, literal, time.Minute); n != 1 {
		t.Fatalf("%q counted with the long key it names: count %d", literal, n)
	}
	keys := m.Keys()
	if len(keys) != 2 {
		t.Fatalf("keys %q, want 2", keys)
	}
	for _, k := range keys {
		if len(k) != len(DefaultPrefix)+len("sha256:")+64 || !strings.HasPrefix(k, DefaultPrefix+"sha256:") {
			t.Fatalf("key %q: want the default prefix, sha256: and 64 hex digits", k)
		}
	}
}

// TestUnreachable cuts the network between the client and the server with
// a proxy: calls fail with the client's error (not by the test's deadline),
// the limiter fails closed, and once the network is back the counters go on
// where they were.
func TestUnreachable(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			opts, prefix := b.options(t)
			p := redistest.StartProxy(t, opts.Addr)
			direct := newClient(t, opts)
			cleanupPrefix(t, direct, prefix)

			viaProxy := *opts
			viaProxy.Addr = p.Addr()
			viaProxy.DialTimeout = 500 * time.Millisecond
			viaProxy.ReadTimeout = 500 * time.Millisecond
			viaProxy.WriteTimeout = 500 * time.Millisecond
			viaProxy.MaxRetries = 1
			viaProxy.PoolSize = 2
			s := New(newClient(t, &viaProxy), Config{Prefix: prefix})
			s.now = stoppedAt(testNow)
			l, err := ratelimit.New(ratelimit.Config{MaxAttempts: 5, Window: time.Minute, Store: s})
			if err != nil {
				t.Fatal(err)
			}
			// A guard only: the client's timeouts must end every call first.
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()

			start := time.Now()
			incr(t, s, "k", time.Minute)
			incr(t, s, "k", time.Minute)

			p.Cut()
			for i := range 3 {
				n, at, err := s.Increment(ctx, "k", time.Minute)
				if err == nil || !strings.HasPrefix(err.Error(), "redisstore: increment: ") || errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Increment %d while cut: %d, %v, %v; want the client's error, wrapped", i, n, at, err)
				}
				if n != 0 || !at.IsZero() {
					t.Fatalf("Increment %d while cut returned %d, %v with its error", i, n, at)
				}
			}
			res, err := l.Attempt(ctx, "k")
			if err == nil || res.Allowed {
				t.Fatalf("Attempt while cut = %+v, %v; want not allowed and an error", res, err)
			}
			if err := s.Reset(ctx, "k"); err == nil || !strings.HasPrefix(err.Error(), "redisstore: reset: ") || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Reset while cut: %v; want the client's error, wrapped", err)
			}

			if err := p.Restore(); err != nil {
				t.Fatal(err)
			}
			n, again, err := s.Increment(ctx, "k", time.Minute)
			if err != nil {
				t.Fatalf("Increment after Restore: %v", err)
			}
			if n != 3 {
				t.Fatalf("Increment after Restore: count %d, want 3 (the failed calls never reached the server)", n)
			}
			checkReset(t, b.real, again, testNow, 60_000, time.Since(start)) // the same window
			if res, err := l.Attempt(ctx, "k"); err != nil || !res.Allowed || res.Remaining != 1 {
				t.Fatalf("Attempt after Restore = %+v, %v; want allowed, 1 remaining", res, err)
			}
		})
	}
}

// TestRefundForeignValues: a refund leaves alone what it did not count: the
// hash of earlier versions, a non-integer string, a counter without a TTL.
func TestRefundForeignValues(t *testing.T) {
	onBackends(t, func(t *testing.T, c *redis.Client, s *Store, _ string, _ bool) {
		ctx := t.Context()
		reset := testNow.Add(time.Minute)
		tests := []struct {
			key  string
			seed func(rk string) error
			read func(rk string) (string, error)
			want string
		}{
			{"hash", func(rk string) error { return c.HSet(ctx, rk, "count", 4).Err() },
				func(rk string) (string, error) { return c.HGet(ctx, rk, "count").Result() }, "4"},
			{"text", func(rk string) error { return c.Set(ctx, rk, "x", time.Minute).Err() },
				func(rk string) (string, error) { return c.Get(ctx, rk).Result() }, "x"},
			{"persist", func(rk string) error { return c.Set(ctx, rk, 3, 0).Err() },
				func(rk string) (string, error) { return c.Get(ctx, rk).Result() }, "3"},
		}
		for _, tt := range tests {
			rk := s.redisKey(tt.key)
			if err := tt.seed(rk); err != nil {
				t.Fatal(err)
			}
			if err := s.Refund(ctx, tt.key, reset); err != nil {
				t.Fatalf("Refund of a %s key: %v", tt.key, err)
			}
			if got, err := tt.read(rk); err != nil || got != tt.want {
				t.Fatalf("%s key after Refund = %q, %v; want %q", tt.key, got, err, tt.want)
			}
		}
	})
}
