package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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

	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/store/storetest"
)

// TestConformanceMiniredis runs the storetest suite on miniredis, whose
// clock (TIME in the script, and key expiry) follows the suite's clock: no
// waiting, and reset times exact to the millisecond.
func TestConformanceMiniredis(t *testing.T) {
	storetest.RunLimitStore(t, func(t *testing.T, clock *storetest.Clock) ratelimit.Store {
		m := miniredis.RunT(t)
		m.SetTime(clock.Now())
		m.ClockTTL(true)
		c := newClient(t, &redis.Options{Addr: m.Addr()})
		c.AddHook(clockHook{m: m, clock: clock})
		return New(c, Config{})
	}, storetest.LimitOptions{})
}

// TestConformanceRedis runs the storetest suite on the real Redis, in real
// time with short windows, each subtest under a key prefix of its own.
func TestConformanceRedis(t *testing.T) {
	c := newClient(t, realRedisOptions(t))
	storetest.RunLimitStore(t, func(t *testing.T, _ *storetest.Clock) ratelimit.Store {
		prefix := randomPrefix()
		cleanupPrefix(t, c, prefix)
		return New(c, Config{Prefix: prefix})
	}, storetest.LimitOptions{RealTime: true})
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
		})
	}
}

// TestScriptLoadedOnFirstUse: a server without the script gets EVALSHA,
// answers NOSCRIPT and gets EVAL; from then on EVALSHA alone. On miniredis
// only: flushing the scripts of the shared server would disturb others.
func TestScriptLoadedOnFirstUse(t *testing.T) {
	m := miniredis.RunT(t)
	c := newClient(t, &redis.Options{Addr: m.Addr()})
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

// serverMillis returns the server's clock in Unix milliseconds.
func serverMillis(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	now, err := c.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMilli()
}

// checkCounter checks that redisKey holds the layout the package documents:
// a hash {count, reset_ms} expiring exactly at reset_ms.
func checkCounter(t *testing.T, c *redis.Client, redisKey string, count int64, resetAt time.Time) {
	t.Helper()
	ctx := t.Context()
	if typ := c.Type(ctx, redisKey).Val(); typ != "hash" {
		t.Fatalf("%s is a %q, want a hash", redisKey, typ)
	}
	h, err := c.HGetAll(ctx, redisKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"count": strconv.FormatInt(count, 10), "reset_ms": strconv.FormatInt(resetAt.UnixMilli(), 10)}
	if len(h) != 2 || h["count"] != want["count"] || h["reset_ms"] != want["reset_ms"] {
		t.Fatalf("%s holds %v, want %v", redisKey, h, want)
	}
	// Not c.PExpireTime: its time.Duration overflows for windows of centuries.
	exp, err := c.Do(ctx, "PEXPIRETIME", redisKey).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if exp != resetAt.UnixMilli() {
		t.Fatalf("%s expires at %d ms, want %d (reset_ms)", redisKey, exp, resetAt.UnixMilli())
	}
}

// TestNoKeyLeftWithoutTTL: after a concurrent burst on many keys, every key
// under the prefix is a counter with its expiry, and every Increment of a
// key reported the same window end.
func TestNoKeyLeftWithoutTTL(t *testing.T) {
	onBackends(t, func(t *testing.T, c *redis.Client, s *Store, prefix string, _ bool) {
		const keys, perKey, workers = 40, 5, 8
		var mu sync.Mutex
		resets := make(map[string]map[time.Time]bool)
		var wg sync.WaitGroup
		errs := make(chan error, workers)
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
					if resets[k] == nil {
						resets[k] = make(map[time.Time]bool)
					}
					resets[k][reset] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
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
			if len(resets[k]) != 1 {
				t.Fatalf("key %q: Increments reported %d different reset times, want 1", k, len(resets[k]))
			}
			ttl, err := c.PTTL(t.Context(), rk).Result()
			if err != nil {
				t.Fatal(err)
			}
			if ttl <= 0 || ttl > time.Minute {
				t.Fatalf("%s: PTTL %v, want in (0, 1m]", rk, ttl)
			}
			for reset := range resets[k] {
				checkCounter(t, c, rk, perKey, reset)
			}
		}
	})
}

// TestRepair: a key under the prefix that is not a live, well-formed
// counter, or that lost its expiry, is made one by the next Increment.
func TestRepair(t *testing.T) {
	onBackends(t, func(t *testing.T, c *redis.Client, s *Store, _ string, _ bool) {
		ctx := t.Context()
		now := serverMillis(t, c)
		future := now + 60_000
		tests := []struct {
			name      string
			seed      func(rk string) error
			wantCount int64
			wantReset int64 // 0: a new window
		}{
			{"live hash without expiry keeps counting", func(rk string) error {
				return c.HSet(ctx, rk, "count", 5, "reset_ms", future).Err()
			}, 6, future},
			{"live hash with expiry keeps counting", func(rk string) error {
				if err := c.HSet(ctx, rk, "count", 2, "reset_ms", future).Err(); err != nil {
					return err
				}
				return c.PExpireAt(ctx, rk, time.UnixMilli(future)).Err()
			}, 3, future},
			{"ended window without expiry", func(rk string) error {
				return c.HSet(ctx, rk, "count", 9, "reset_ms", now-1000).Err()
			}, 1, 0},
			{"hash without reset_ms", func(rk string) error {
				return c.HSet(ctx, rk, "count", 7).Err()
			}, 1, 0},
			{"non-numeric reset_ms", func(rk string) error {
				return c.HSet(ctx, rk, "count", 7, "reset_ms", "soon").Err()
			}, 1, 0},
			{"non-numeric count", func(rk string) error {
				return c.HSet(ctx, rk, "count", "many", "reset_ms", future).Err()
			}, 1, 0},
			{"extra fields", func(rk string) error {
				return c.HSet(ctx, rk, "count", 1, "reset_ms", now-1, "other", "x").Err()
			}, 1, 0},
			{"string without expiry", func(rk string) error {
				return c.Set(ctx, rk, "junk", 0).Err()
			}, 1, 0},
			{"list", func(rk string) error {
				return c.RPush(ctx, rk, "a", "b").Err()
			}, 1, 0},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				key := "repair:" + strconv.Itoa(i)
				rk := s.redisKey(key)
				if err := tt.seed(rk); err != nil {
					t.Fatal(err)
				}
				n, reset := incr(t, s, key, time.Minute)
				if n != tt.wantCount {
					t.Fatalf("count %d, want %d", n, tt.wantCount)
				}
				if tt.wantReset != 0 && reset.UnixMilli() != tt.wantReset {
					t.Fatalf("resetAt %d ms, want the stored %d", reset.UnixMilli(), tt.wantReset)
				}
				if tt.wantReset == 0 && reset.UnixMilli() < now+60_000 {
					t.Fatalf("resetAt %d ms: want a new window, ending at or after %d", reset.UnixMilli(), now+60_000)
				}
				checkCounter(t, c, rk, n, reset)
			})
		}
	})
}

// TestWindowEnd: the window's end is the server's time at the first
// increment plus the window, exact for windows of any length, and stored as
// an integer (no float formatting on the way through Lua).
func TestWindowEnd(t *testing.T) {
	onBackends(t, func(t *testing.T, c *redis.Client, s *Store, _ string, real bool) {
		windows := []time.Duration{time.Minute, 90 * 24 * time.Hour, 100 * 365 * 24 * time.Hour}
		if real {
			// miniredis keeps TTLs as a time.Duration, which this one
			// overflows once rounded up to whole milliseconds.
			windows = append(windows, math.MaxInt64)
		}
		for _, w := range windows {
			key := "window:" + w.String()
			before := serverMillis(t, c)
			n, reset := incr(t, s, key, w)
			after := serverMillis(t, c)
			wms := int64(math.Ceil(float64(w) / float64(time.Millisecond)))
			if w == math.MaxInt64 {
				wms = math.MaxInt64/int64(time.Millisecond) + 1
			}
			if n != 1 || reset.UnixMilli() < before+wms || reset.UnixMilli() > after+wms {
				t.Fatalf("window %v: count %d, resetAt %d ms, want 1 and in [%d, %d]", w, n, reset.UnixMilli(), before+wms, after+wms)
			}
			if reset.Location() != time.UTC {
				t.Fatalf("resetAt in %v, want UTC", reset.Location())
			}
			checkCounter(t, c, s.redisKey(key), 1, reset)
		}
	})
}

// TestWindowRoundsUpToMilliseconds, on miniredis with its time fixed.
func TestWindowRoundsUpToMilliseconds(t *testing.T) {
	m := miniredis.RunT(t)
	now := time.Date(2026, 3, 14, 15, 9, 26, 535_000_000, time.UTC)
	m.SetTime(now)
	s := New(newClient(t, &redis.Options{Addr: m.Addr()}), Config{})
	for i, tt := range []struct {
		window time.Duration
		want   time.Duration
	}{
		{time.Nanosecond, time.Millisecond},
		{1500 * time.Microsecond, 2 * time.Millisecond},
		{3 * time.Millisecond, 3 * time.Millisecond},
		{15 * time.Minute, 15 * time.Minute},
	} {
		_, reset := incr(t, s, strconv.Itoa(i), tt.window)
		if want := now.Add(tt.want); !reset.Equal(want) {
			t.Errorf("window %v: resetAt %v, want %v", tt.window, reset, want)
		}
	}
}

func TestInvalidWindow(t *testing.T) {
	m := miniredis.RunT(t)
	s := New(newClient(t, &redis.Options{Addr: m.Addr()}), Config{})
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
	m := miniredis.RunT(t)
	s := New(newClient(t, &redis.Options{Addr: m.Addr()}), Config{})
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
			p := startProxy(t, opts.Addr)
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
			l, err := ratelimit.New(ratelimit.Config{MaxAttempts: 5, Window: time.Minute, Store: s})
			if err != nil {
				t.Fatal(err)
			}
			// A guard only: the client's timeouts must end every call first.
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()

			incr(t, s, "k", time.Minute)
			_, reset := incr(t, s, "k", time.Minute)

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

			p.Restore()
			n, again, err := s.Increment(ctx, "k", time.Minute)
			if err != nil {
				t.Fatalf("Increment after Restore: %v", err)
			}
			if n != 3 || !again.Equal(reset) {
				t.Fatalf("Increment after Restore = %d, %v; want 3, %v (the failed calls never reached the server)", n, again, reset)
			}
			if res, err := l.Attempt(ctx, "k"); err != nil || !res.Allowed || res.Remaining != 1 {
				t.Fatalf("Attempt after Restore = %+v, %v; want allowed, 1 remaining", res, err)
			}
		})
	}
}
