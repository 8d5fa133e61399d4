// Package limiters puts authkit's rate limiter and its peers behind one
// small interface, so that the comparisons drive each the same way: in
// memory, authkit's ratelimit.MemoryStore, ulule/limiter's memory store and
// sethvargo/go-limiter's memorystore; on Redis, authkit's redisstore,
// ulule/limiter's redis store and go-redis/redis_rate.
//
// Every limiter allows limit attempts per key per Window (an hour, so
// nothing expires during a run) and is used through the call an
// application makes per request.
package limiters

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/sethvargo/go-limiter/memorystore"
	ulule "github.com/ulule/limiter/v3"
	ulmemory "github.com/ulule/limiter/v3/drivers/store/memory"
	ulredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/authkit-go/authkit/adapters/redisstore"
	"github.com/authkit-go/authkit/bench/internal/redisinfo"
	"github.com/authkit-go/authkit/core/ratelimit"
)

// Window is every limiter's window (token-bucket interval, GCRA period).
const Window = time.Hour

// Unlimited is the limit of the "allowed" runs: never reached.
const Unlimited = 1 << 30

// Limiter is one rate limiter under test.
type Limiter interface {
	// Attempt counts one attempt for key and reports whether it is allowed.
	Attempt(ctx context.Context, key string) (bool, error)
	// Close releases the limiter's background work.
	Close() error
}

// Memory is an in-memory implementation.
type Memory struct {
	// Name is the benchmark label (impl=...).
	Name string
	// New returns a limiter of limit attempts per key per Window.
	New func(limit int) (Limiter, error)
}

// Authkit is authkit's Limiter over a MemoryStore holding up to capacity
// keys (0: the spec's default, 10,000).
func Authkit(name string, capacity int) Memory {
	return Memory{Name: name, New: func(limit int) (Limiter, error) {
		s := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{Capacity: capacity})
		l, err := ratelimit.New(ratelimit.Config{MaxAttempts: limit, Window: Window, Store: s})
		if err != nil {
			s.Close()
			return nil, err
		}
		return authkitLimiter{l, s.Close}, nil
	}}
}

// Ulule is ulule/limiter v3 over its memory store, with its defaults.
func Ulule() Memory {
	return Memory{Name: "ulule", New: func(limit int) (Limiter, error) {
		return &ululeLimiter{l: ulule.New(ulmemory.NewStore(), ulule.Rate{Period: Window, Limit: int64(limit)})}, nil
	}}
}

// Sethvargo is sethvargo/go-limiter's memorystore, a token bucket of limit
// tokens per Window.
func Sethvargo() Memory {
	return Memory{Name: "sethvargo", New: func(limit int) (Limiter, error) {
		s, err := memorystore.New(&memorystore.Config{Tokens: uint64(limit), Interval: Window})
		if err != nil {
			return nil, err
		}
		return sethvargoLimiter{s}, nil
	}}
}

type authkitLimiter struct {
	l     *ratelimit.Limiter
	close func() error
}

func (a authkitLimiter) Attempt(ctx context.Context, key string) (bool, error) {
	r, err := a.l.Attempt(ctx, key)
	return r.Allowed, err
}

func (a authkitLimiter) Close() error { return a.close() }

type ululeLimiter struct{ l *ulule.Limiter }

func (u *ululeLimiter) Attempt(ctx context.Context, key string) (bool, error) {
	c, err := u.l.Get(ctx, key)
	return !c.Reached, err
}

// Close does nothing: ulule's memory store stops its cleaner from a
// finalizer.
func (u *ululeLimiter) Close() error { return nil }

type sethvargoLimiter struct {
	s interface {
		Take(ctx context.Context, key string) (tokens, remaining, reset uint64, ok bool, err error)
		Close(ctx context.Context) error
	}
}

func (s sethvargoLimiter) Attempt(ctx context.Context, key string) (bool, error) {
	_, _, _, ok, err := s.s.Take(ctx, key)
	return ok, err
}

func (s sethvargoLimiter) Close() error { return s.s.Close(context.Background()) }

// Redis is an implementation on Redis.
type Redis struct {
	// Name is the benchmark label (impl=...).
	Name string
	// New returns a limiter of limit attempts per key per Window whose
	// Redis keys all match the returned SCAN pattern, which begins with
	// prefix or with a fixed prefix of the implementation followed by
	// prefix.
	New func(c redis.UniversalClient, prefix string, limit int) (l Limiter, pattern string, err error)
}

// NewForTest is New for a test or a benchmark: it fails tb when the
// limiter cannot be made, and when tb ends it deletes every key matching
// the returned pattern.
func (r Redis) NewForTest(tb testing.TB, c redis.UniversalClient, prefix string, limit int) (l Limiter, pattern string) {
	tb.Helper()
	l, pattern, err := r.New(c, prefix, limit)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := redisinfo.Unlink(ctx, c, pattern); err != nil {
			tb.Error(err)
		}
	})
	return l, pattern
}

// AuthkitRedis is authkit's Limiter over redisstore.
func AuthkitRedis() Redis {
	return Redis{Name: "authkit", New: func(c redis.UniversalClient, prefix string, limit int) (Limiter, string, error) {
		l, err := ratelimit.New(ratelimit.Config{MaxAttempts: limit, Window: Window, Store: redisstore.New(c, redisstore.Config{Prefix: prefix})})
		if err != nil {
			return nil, "", err
		}
		return authkitLimiter{l, func() error { return nil }}, prefix + "*", nil
	}}
}

// UluleRedis is ulule/limiter v3 over its redis store (a Lua script).
func UluleRedis() Redis {
	return Redis{Name: "ulule", New: func(c redis.UniversalClient, prefix string, limit int) (Limiter, string, error) {
		s, err := ulredis.NewStoreWithOptions(c, ulule.StoreOptions{Prefix: prefix + "ulule", MaxRetry: ulule.DefaultMaxRetry})
		if err != nil {
			return nil, "", fmt.Errorf("ulule redis store: %w", err)
		}
		return &ululeLimiter{l: ulule.New(s, ulule.Rate{Period: Window, Limit: int64(limit)})}, prefix + "ulule:*", nil
	}}
}

// RedisRate is go-redis/redis_rate (GCRA in a Lua script), with limit as
// both rate and burst per Window. Its keys are "rate:" + the key.
func RedisRate() Redis {
	return Redis{Name: "redis_rate", New: func(c redis.UniversalClient, prefix string, limit int) (Limiter, string, error) {
		return redisRateLimiter{
			l:      redis_rate.NewLimiter(c),
			prefix: prefix,
			limit:  redis_rate.Limit{Rate: limit, Burst: limit, Period: Window},
		}, "rate:" + prefix + "*", nil
	}}
}

type redisRateLimiter struct {
	l      *redis_rate.Limiter
	prefix string
	limit  redis_rate.Limit
}

// Attempt prefixes key at every call, as an application sharing the
// server with other data must; authkit and ulule do the same inside.
func (r redisRateLimiter) Attempt(ctx context.Context, key string) (bool, error) {
	res, err := r.l.Allow(ctx, r.prefix+key, r.limit)
	if err != nil {
		return false, err
	}
	return res.Allowed > 0, nil
}

func (r redisRateLimiter) Close() error { return nil }
