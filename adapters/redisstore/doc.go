// Package redisstore is a rate-limit store ([ratelimit.Store]) on Redis, so
// that every instance of an application shares one set of counters, and a
// session-record store ([Sessions], a session.Store for
// auth.Config.Sessions), so that every instance sees every session and
// ending one ends it everywhere:
//
//	sessions := redisstore.NewSessions(rdb, redisstore.SessionsConfig{}) // keys under "authkit:sess:{s}"
//	svc, err := auth.New(auth.Config{ /* ... */ Sessions: sessions})
//
// [Sessions] documents its data layout: a hash per record that expires at
// the record's end and a set per user.
//
// [OneTime] is an onetime.Store, values taken once: the passkeys module's
// challenges, so that a ceremony begun on one instance finishes on
// another. Take is one GETDEL (Redis 6.2 or later):
//
//	challenges := redisstore.NewOneTime(rdb, redisstore.OneTimeConfig{}) // keys under "authkit:once:"
//	pk, err := passkeys.New(svc, passkeys.Config{ /* ... */ Challenges: challenges})
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
// Each limiter key is one Redis string at Prefix+key (keys longer than
// [MaxKeyLen] bytes, or beginning with "sha256:", become Prefix+"sha256:"+hex
// SHA-256 of the key) holding the attempts in the current window as an
// integer. Its TTL is the window: set when the window starts, it runs out
// when the window ends, so Redis removes counters by itself and nothing
// needs sweeping. A key INCR refuses (another type, a non-integer string,
// an overflow) starts a new window on its next increment, and so does a
// counter found without a TTL (restored by a tool that drops TTLs, or a
// PERSIST), whose window's end is unknown: no key the store writes is left
// without a TTL.
//
// Upgrading from a version that kept a hash {count, reset_ms} per key needs
// nothing done: the first increment of such a key finds a hash, deletes it
// and starts a new window as a string counter, so each key that was live
// during the upgrade restarts its window once, with a count of 1.
//
// # One round trip
//
// [Store.Increment] is one EVALSHA of a Lua script: INCR, then PEXPIRE when
// the count is 1 (a new window) or PTTL otherwise; it returns the count and
// the milliseconds left in the window. The first call on a server that does
// not know the script gets NOSCRIPT and is followed by one EVAL, which loads
// it. The script touches one key, so Cluster routes it like any single-key
// command. [Store.Reset] is one DEL, and [Store.Refund] (the optional
// [ratelimit.Refunder]) one EVALSHA that recognises the window by its TTL,
// within [RefundTolerance]. Redis 5 or later is required ([OneTime]: 6.2).
//
// # Clock
//
// Windows are kept by Redis: a window ends when its key's TTL runs out, so
// several application servers agree on when each window ends even when
// their clocks differ. The returned resetAt is the application's clock,
// read when the reply arrives, plus the time left in the window (in UTC, to
// the millisecond): the Retry-After an application computes from it is
// right whatever the skew between its clock and Redis's, and too long by at
// most the round trip (the time between the script's PTTL and the clock's
// reading), never too short.
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
//
// # Redis Cluster
//
// Every store runs on a *redis.ClusterClient, tested on a cluster of three
// primaries with a replica each that the tests start (README, "Redis
// Cluster"). The limit script and the one-time commands touch one key, so
// their keys spread over every primary. A session script touches a record
// and its user's index together, so a [Sessions] store keeps its keys in
// one hash slot: its prefix's hash tag, or [SessionsHashTag] after it.
// When a primary fails, its slots' calls fail until its replica is
// elected; every failed call makes a Cluster client reload its map of
// slots (go-redis would otherwise wait for its periodic reload, 60 seconds
// by default). The increments a primary acknowledged but had not yet
// replicated are lost: all in the current window, so a key gets at most
// one window's attempts more per failover; a manual failover (CLUSTER
// FAILOVER) loses nothing.
//
// [Store.Ping] checks that Redis answers, for a readiness check. go-redis
// logs its own troubles through a process-wide logger; [NewLogger] routes
// them to a [log/slog.Logger] (redis.SetLogger(redisstore.NewLogger(l))).
package redisstore
