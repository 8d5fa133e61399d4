// Package proposal holds measured prototypes of changes to authkit's own
// code that the comparisons motivate. BENCHMARKS.md reports each next to
// authkit as it is, as "authkit-next" (or route=auth-next). They are copies
// of authkit's code with one change applied, or thin wrappers over its
// public API, not a second implementation to maintain: each says what it
// changes, and the change belongs in authkit itself. (The cheaper
// MemoryStore clock measured here first is now in core/ratelimit, and its
// prototype is gone.)
//
//   - RedisStore (redis.go): adapters/redisstore's Store with a lighter
//     script (INCR and PTTL on a live key);
//   - RequireUserNetHTTP, RequireUserGin, RequireUserFiber
//     (requireuser.go): RequireUser without Authenticate's per-call
//     allocations, and CookieValue, a cookie lookup that allocates
//     nothing.
//
// Every prototype passes the conformance tests of what it replaces
// (storetest.RunLimitStore; CookieValue is fuzzed against net/http).
package proposal
