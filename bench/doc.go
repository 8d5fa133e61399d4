// Package bench compares authkit with its peers, each measured the way an
// application uses it, in one run so the ratios share a machine and a
// moment:
//
//   - rate limiting in memory: authkit's ratelimit.MemoryStore against
//     ulule/limiter v3 (memory store) and sethvargo/go-limiter
//     (memorystore), over one hot key, 10,000 uniform keys, zipf over
//     100,000 keys and churn (a new key every call), allowed and denied,
//     serial and parallel, and the bytes each holds per key;
//   - rate limiting on Redis: authkit's redisstore against ulule/limiter's
//     redis store and go-redis/redis_rate, with the commands and round
//     trips per attempt and a check that no key is left without a TTL;
//   - tokens: create and verify against golang-jwt/jwt v5 (HS256) carrying
//     the same claims;
//   - sessions: reading and verifying the session cookie against
//     gorilla/sessions (CookieStore) and alexedwards/scs (memory store);
//   - HTTP: a GET behind RequireUser against the same handler bare, on
//     net/http, gin and fiber, in process here and under load with wrk
//     (cmd/loadbench, cmd/benchserver);
//   - crypto: TOTP verify (against pquerna/otp, which authkit wraps),
//     encrypt and decrypt, the worst case of a recovery-code check, the
//     password hash at its default cost, and a login's cost against the
//     hash alone;
//   - sign-in verifications: a TOTP code, a passkey (second factor and
//     passwordless) and the bcrypt password step, each through its typed
//     method, and go-webauthn's bare assertion check beside them;
//   - whole servers: authkit beside better-auth (TypeScript, Node.js) on
//     the same PostgreSQL and Redis, session check, login, a login flood
//     past the limit, memory (cmd/peerbench, cmd/peerserver, peers/betterauth;
//     make bench-peers).
//
// The module is not part of authkit's release and stays out of go.work, so
// no peer ever reaches authkit's own go.mod files: run it with GOWORK=off,
// as `make bench-compare` does. BENCHMARKS.md at the repository root holds
// the figures and the exact command.
package bench
