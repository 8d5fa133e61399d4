package proposal

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/core/ratelimit"
)

// RedisStore is adapters/redisstore's Store with a lighter script: the
// counter is a plain integer whose TTL is the window, so counting a live
// key is INCR and PTTL (redisstore's script runs TIME, HGET, HINCRBY and
// PTTL, and DEL, HSET and PEXPIREAT to start a window). The window's end is
// returned as the time left (PTTL) and turned into a time by this process's
// clock, so Retry-After stays right when this server's clock and Redis's
// differ; the window itself is still kept by Redis, so every server agrees
// on it. A key of another type, or a live key found without an expiry
// (PERSIST by hand), starts a new window with one. Key prefixing and
// hashing of long keys are left out of the prototype.
type RedisStore struct {
	client redis.UniversalClient
	prefix string
	now    func() time.Time
}

var _ ratelimit.Store = (*RedisStore)(nil)

// NewRedisStore returns a RedisStore keeping its counters under prefix.
func NewRedisStore(client redis.UniversalClient, prefix string) *RedisStore {
	return &RedisStore{client: client, prefix: prefix, now: time.Now}
}

// incrScript counts one attempt on KEYS[1] for a window of ARGV[1]
// milliseconds and returns {count, pttl}.
var incrScript = redis.NewScript(`
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

var errWindow = errors.New("window must be positive")

// Increment implements ratelimit.Store: one EVALSHA.
func (s *RedisStore) Increment(ctx context.Context, key string, window time.Duration) (int64, time.Time, error) {
	if window <= 0 {
		return 0, time.Time{}, fmt.Errorf("proposal: increment: %w", errWindow)
	}
	ms := window.Milliseconds()
	if window%time.Millisecond != 0 {
		ms++
	}
	res, err := incrScript.Run(ctx, s.client, []string{s.prefix + key}, strconv.FormatInt(ms, 10)).Int64Slice()
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("proposal: increment: %w", err)
	}
	if len(res) != 2 {
		return 0, time.Time{}, fmt.Errorf("proposal: increment: script returned %d values, want 2", len(res))
	}
	return res[0], s.now().Add(time.Duration(res[1]) * time.Millisecond).UTC(), nil
}

// Reset implements ratelimit.Store.
func (s *RedisStore) Reset(ctx context.Context, key string) error {
	if err := s.client.Del(ctx, s.prefix+key).Err(); err != nil {
		return fmt.Errorf("proposal: reset: %w", err)
	}
	return nil
}
