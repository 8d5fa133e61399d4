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

// Store is a [ratelimit.Store] on Redis: one hash per key, counted and
// expired by a Lua script in one round trip, on Redis's clock. It is safe for
// concurrent use; several application servers that share the Redis share the
// counters and agree on the windows.
type Store struct {
	client redis.UniversalClient
	prefix string
}

var _ ratelimit.Store = (*Store)(nil)

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
	return &Store{client: client, prefix: prefix}
}

// incrementScript counts one attempt on the hash KEYS[1] for a window of
// ARGV[1] milliseconds and returns {count, reset_ms}: the count after this
// attempt and the window's end in Unix milliseconds, both by the server's
// clock. The hash holds two fields, count and reset_ms; the key expires at
// reset_ms (PEXPIREAT, set once when the window starts). A key that is not
// such a hash (another type, missing or non-numeric fields) or whose
// reset_ms has passed starts a new window; a live key found without an
// expiry gets one again.
//
// It touches one key only (Cluster routes it by that key) and needs Redis 5
// or later, where scripts may write after reading TIME.
var incrementScript = redis.NewScript(`
local key = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reset = redis.pcall('HGET', key, 'reset_ms')
if type(reset) ~= 'table' then
  reset = tonumber(reset)
  if reset and reset > now then
    local count = redis.pcall('HINCRBY', key, 'count', 1)
    if type(count) == 'number' then
      if redis.call('PTTL', key) < 0 then
        redis.call('PEXPIREAT', key, reset)
      end
      return {count, reset}
    end
  end
end
reset = now + tonumber(ARGV[1])
redis.call('DEL', key)
redis.call('HSET', key, 'count', 1, 'reset_ms', reset)
redis.call('PEXPIREAT', key, reset)
return {1, reset}
`)

// Increment implements [ratelimit.Store]: one EVALSHA (EVAL the first time
// a server sees the script) that counts the attempt and returns the count
// and the window's end. The window is rounded up to whole milliseconds;
// resetAt is by Redis's clock, in UTC. Errors are wrapped with the prefix
// "redisstore: increment: "; a window that is not positive is an error.
func (s *Store) Increment(ctx context.Context, key string, window time.Duration) (int64, time.Time, error) {
	if window <= 0 {
		return 0, time.Time{}, fmt.Errorf("redisstore: increment: %w", errInvalidWindow)
	}
	if s.client == nil {
		return 0, time.Time{}, fmt.Errorf("redisstore: increment: %w", errNilClient)
	}
	ms := window.Milliseconds()
	if window%time.Millisecond != 0 {
		ms++
	}
	res, err := incrementScript.Run(ctx, s.client, []string{s.redisKey(key)}, strconv.FormatInt(ms, 10)).Int64Slice()
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("redisstore: increment: %w", err)
	}
	if len(res) != 2 {
		return 0, time.Time{}, fmt.Errorf("redisstore: increment: script returned %d values, want 2", len(res))
	}
	return res[0], time.UnixMilli(res[1]).UTC(), nil
}

// Reset implements [ratelimit.Store]: it deletes key's hash (DEL: the hash
// is two fields, so freeing it in the background buys nothing). Resetting a
// missing key is not an error. Errors are wrapped with the prefix
// "redisstore: reset: ".
func (s *Store) Reset(ctx context.Context, key string) error {
	if s.client == nil {
		return fmt.Errorf("redisstore: reset: %w", errNilClient)
	}
	if err := s.client.Del(ctx, s.redisKey(key)).Err(); err != nil {
		return fmt.Errorf("redisstore: reset: %w", err)
	}
	return nil
}

// redisKey returns the Redis key of limiter key: the prefix and the key as
// it is, or the prefix, "sha256:" and the hex SHA-256 of the key when it is
// longer than MaxKeyLen or begins with "sha256:".
func (s *Store) redisKey(key string) string {
	if len(key) <= MaxKeyLen && !strings.HasPrefix(key, hashedMark) {
		return s.prefix + key
	}
	sum := sha256.Sum256([]byte(key))
	return s.prefix + hashedMark + hex.EncodeToString(sum[:])
}
