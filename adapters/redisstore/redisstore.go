package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/core/ratelimit"
)

// DefaultPrefix is the key prefix of a [Store] whose Config.Prefix is empty.
const DefaultPrefix = "authkit:rl:"

// MaxKeyLen is the longest limiter key, in bytes, stored as it is. Longer
// keys, and keys that begin with "sha256:", are stored as "sha256:" and the
// hex SHA-256 of the key, so no caller can make Redis hold large keys and
// the mapping stays one-to-one.
const MaxKeyLen = 200

// hashedMark begins the Redis key of every hashed limiter key. A limiter
// key that itself begins with it is hashed too, so a hashed key never equals
// a key stored as it is.
const hashedMark = "sha256:"

var (
	errInvalidWindow = errors.New("window must be positive")
	errNilClient     = errors.New("nil redis client")
)

// Config configures a [Store]. The zero value means all defaults.
type Config struct {
	// Prefix is put before every limiter key to make the Redis key, so that
	// the counters share a database with other data and with other stores
	// (give each a different prefix). A prefix holding a Cluster hash tag
	// ("{authkit}:rl:") puts every counter in one slot, on one node.
	// Default: DefaultPrefix ("authkit:rl:").
	Prefix string
}

// Store is a [ratelimit.Store] on Redis: one integer counter per key, whose
// TTL is the window, counted and expired by a Lua script in one round trip.
// It is safe for concurrent use; several application servers that share the
// Redis share the counters and agree on the windows.
type Store struct {
	client redis.UniversalClient
	prefix string
	now    func() time.Time // the application's clock, for resetAt
}

var (
	_ ratelimit.Store    = (*Store)(nil)
	_ ratelimit.Refunder = (*Store)(nil)
)

// RefundTolerance is how far the time left in a counter's window may be from
// the time left until the resetAt given to [Store.Refund] for the refund to
// apply. The two differ by about one round trip (the reply that carried
// resetAt and the refund's request); a newer window of the key has about a
// whole window more left, so windows longer than RefundTolerance plus the
// round trip are never mistaken for each other. A refund that misses it
// (a round trip slower than this) is skipped: the attempt stays counted.
const RefundTolerance = 250 * time.Millisecond

// New returns a Store that keeps its counters in client: a single node
// (*redis.Client), a Cluster (*redis.ClusterClient), a Sentinel-managed
// failover client, or any client made by redis.NewUniversalClient. The Store
// does not close client. cfg is not modified.
//
// A nil client is accepted, and every call then returns an error.
func New(client redis.UniversalClient, cfg Config) *Store {
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Store{client: client, prefix: prefix, now: time.Now}
}

// incrementScript counts one attempt on the counter KEYS[1] for a window of
// ARGV[1] milliseconds and returns {count, pttl}: the count after this
// attempt and the milliseconds left in the window. The counter is an
// integer string whose TTL is the window: INCR counts, and the increment
// that makes it 1 starts the window (PEXPIRE); later ones read the time
// left (PTTL). A key INCR refuses (another type, such as the hash of
// earlier versions, a non-integer string, an overflow) is replaced by a new
// counter; a live counter found without a TTL starts a new window with one.
// No key is left without a TTL.
//
// It touches one key only (Cluster routes it by that key) and reads no
// clock: the TTL is the only time it keeps.
var incrementScript = redis.NewScript(`
local key = KEYS[1]
local count = redis.pcall('INCR', key)
if type(count) ~= 'number' then
  redis.call('DEL', key)
  count = redis.call('INCR', key)
end
if count == 1 then
  redis.call('PEXPIRE', key, ARGV[1])
  return {1, tonumber(ARGV[1])}
end
local ttl = redis.call('PTTL', key)
if ttl < 0 then
  redis.call('SET', key, 1, 'PX', ARGV[1])
  return {1, tonumber(ARGV[1])}
end
return {count, ttl}
`)

// Increment implements [ratelimit.Store]: one EVALSHA (EVAL the first time
// a server sees the script) that counts the attempt and returns the count
// and the time left in the window. The window is rounded up to whole
// milliseconds. resetAt is the application's clock when the reply arrives
// plus that time left, in UTC: it is never earlier than the window's end,
// and later by at most the round trip. Errors are wrapped with the prefix
// "redisstore: increment: "; a window that is not positive is an error.
func (s *Store) Increment(ctx context.Context, key string, window time.Duration) (int64, time.Time, error) {
	if window <= 0 {
		return 0, time.Time{}, fmt.Errorf("redisstore: increment: %w", errInvalidWindow)
	}
	if s.client == nil {
		return 0, time.Time{}, fmt.Errorf("redisstore: increment: %w", errNilClient)
	}
	res, err := incrementScript.Run(ctx, s.client, []string{s.redisKey(key)}, strconv.FormatInt(windowMillis(window), 10)).Int64Slice()
	reloadAfter(s.client, err)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("redisstore: increment: %w", err)
	}
	if len(res) != 2 {
		return 0, time.Time{}, fmt.Errorf("redisstore: increment: script returned %d values, want 2", len(res))
	}
	return res[0], addMillis(s.now(), res[1]).UTC(), nil
}

// refundScript gives back one attempt on the counter KEYS[1] if its window
// is the one the caller counted in: the time left in it (PTTL) must be
// within ARGV[2] milliseconds of ARGV[1], the time the caller expects to be
// left. The counter keeps no other trace of its window, and the script
// reads no clock, so the TTL is the window's identity. A counter that is
// missing, has no TTL, is not a positive integer, or is in another window is
// left alone. A counter refunded to zero is deleted (as if never counted),
// since its next INCR would start a new window anyway. Returns 1 when it
// refunded, else 0.
var refundScript = redis.NewScript(`
local key = KEYS[1]
local v = redis.pcall('GET', key)
if type(v) ~= 'string' then
  return 0
end
local n = tonumber(v)
if not n or n < 1 then
  return 0
end
local ttl = redis.call('PTTL', key)
if ttl < 0 or math.abs(ttl - tonumber(ARGV[1])) > tonumber(ARGV[2]) then
  return 0
end
if n == 1 then
  redis.call('DEL', key)
else
  redis.call('DECR', key)
end
return 1
`)

// Refund implements [ratelimit.Refunder]: one EVALSHA of a script that
// subtracts one from key's counter when its window is the one that ends at
// resetAt. A counter keeps nothing but its count and its TTL, so the window
// is recognised by its TTL: the time left must be within [RefundTolerance]
// of resetAt minus the application's clock now. A resetAt already past on
// that clock is left alone without a round trip. Refunding to zero deletes
// the counter. Errors are wrapped with the prefix "redisstore: refund: ".
func (s *Store) Refund(ctx context.Context, key string, resetAt time.Time) error {
	if s.client == nil {
		return fmt.Errorf("redisstore: refund: %w", errNilClient)
	}
	left := resetAt.Sub(s.now()).Milliseconds()
	if left <= 0 {
		return nil
	}
	err := refundScript.Run(ctx, s.client, []string{s.redisKey(key)},
		strconv.FormatInt(left, 10), strconv.FormatInt(RefundTolerance.Milliseconds(), 10)).Err()
	reloadAfter(s.client, err)
	if err != nil {
		return fmt.Errorf("redisstore: refund: %w", err)
	}
	return nil
}

// windowMillis returns window in milliseconds, rounded up.
func windowMillis(window time.Duration) int64 {
	ms := window.Milliseconds()
	if window%time.Millisecond != 0 {
		ms++
	}
	return ms
}

// addMillis returns t plus ms milliseconds. A window of close to
// math.MaxInt64 nanoseconds, rounded up, is more milliseconds than a
// time.Duration holds, so the whole seconds are added apart.
func addMillis(t time.Time, ms int64) time.Time {
	return t.Add(time.Duration(ms/1000) * time.Second).Add(time.Duration(ms%1000) * time.Millisecond)
}

// Reset implements [ratelimit.Store]: it deletes key's counter (DEL: an
// integer, so freeing it in the background buys nothing). Resetting a
// missing key is not an error. Errors are wrapped with the prefix
// "redisstore: reset: ".
func (s *Store) Reset(ctx context.Context, key string) error {
	if s.client == nil {
		return fmt.Errorf("redisstore: reset: %w", errNilClient)
	}
	err := s.client.Del(ctx, s.redisKey(key)).Err()
	reloadAfter(s.client, err)
	if err != nil {
		return fmt.Errorf("redisstore: reset: %w", err)
	}
	return nil
}

// Ping checks that Redis answers (one PING), for a readiness check: nil
// when it does, else the client's error wrapped with the prefix
// "redisstore: ping: ". ctx bounds the wait when the client's
// ContextTimeoutEnabled is set; the client's own timeouts bound it always.
func (s *Store) Ping(ctx context.Context) error {
	if s.client == nil {
		return fmt.Errorf("redisstore: ping: %w", errNilClient)
	}
	err := s.client.Ping(ctx).Err()
	reloadAfter(s.client, err)
	if err != nil {
		return fmt.Errorf("redisstore: ping: %w", err)
	}
	return nil
}

// redisKey returns the Redis key of limiter key: the prefix and the key as
// it is, or the prefix, "sha256:" and the hex SHA-256 of the key when it is
// longer than MaxKeyLen or begins with "sha256:".
func (s *Store) redisKey(key string) string { return prefixedKey(s.prefix, key) }

// prefixedKey is the Redis key of key under prefix: the two joined, or,
// for a key longer than MaxKeyLen or beginning with "sha256:", prefix,
// "sha256:" and the key's hex SHA-256. The stores of this package share it.
func prefixedKey(prefix, key string) string {
	if len(key) <= MaxKeyLen && !strings.HasPrefix(key, hashedMark) {
		return prefix + key
	}
	sum := sha256.Sum256([]byte(key))
	return prefix + hashedMark + hex.EncodeToString(sum[:])
}
