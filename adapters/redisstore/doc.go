// Package redisstore is a rate-limit store ([ratelimit.Store]) on Redis, so
// that every instance of an application shares one set of counters.
//
// It takes a redis.UniversalClient from github.com/redis/go-redis/v9, so a
// single node, a Cluster and a Sentinel-managed failover set all work:
//
//	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"127.0.0.1:6379"}})
//	store := redisstore.New(rdb, redisstore.Config{}) // keys under "authkit:rl:"
//	limiter, err := ratelimit.New(ratelimit.Config{MaxAttempts: 5, Window: 15 * time.Minute, Store: store})
//
// or, for the flows, auth.Config{LimitStore: func(string) ratelimit.Store { return store }}: the flows'
// keys already begin with the limit's name ("login:ip:..."), so one store serves every limit.
//
// # Data layout
//
// Each limiter key is one Redis hash at Prefix+key (keys longer than
// [MaxKeyLen] bytes, or beginning with "sha256:", become Prefix+"sha256:"+hex
// SHA-256 of the key) with two fields: count, the attempts in the current
// window, and reset_ms, the window's end in Unix milliseconds. The key
// expires at reset_ms (PEXPIREAT, set when the window starts), so Redis
// removes counters by itself and nothing needs sweeping. A hash whose
// reset_ms has passed, or a key that is not such a hash, starts a new window
// on its next increment; a live hash found without an expiry (restored by a
// tool that drops TTLs, say) gets it back.
//
// # One round trip
//
// [Store.Increment] is one EVALSHA of a Lua script that reads the server's
// clock (TIME), counts, sets the expiry at the window's first increment and
// returns the count and reset_ms. The first call on a server that does not
// know the script gets NOSCRIPT and is followed by one EVAL, which loads it.
// The script touches one key, so Cluster routes it like any single-key
// command. [Store.Reset] is one DEL. Redis 5 or later is required.
//
// # Clock
//
// Windows start and end by Redis's clock, not the application's: several
// application servers agree on every window even when their clocks differ.
// The returned resetAt is by that clock too (in UTC, to the millisecond); the
// Retry-After an application computes from it is off by the skew between
// the two clocks, which NTP keeps to milliseconds.
//
// # Failures
//
// An unreachable Redis makes Increment and Reset return an error (after the
// client's own retries and timeouts; set DialTimeout, ReadTimeout and
// WriteTimeout, and ContextTimeoutEnabled so that a request's context also
// bounds the call). [ratelimit.Limiter.Attempt] then reports the attempt as
// not allowed with that error, and authkit's flows answer 503: they fail
// closed unless auth.Config.RateLimitFailOpen is set. A command retried by
// the client after its reply was lost may count an attempt twice, which errs
// towards limiting.
package redisstore
