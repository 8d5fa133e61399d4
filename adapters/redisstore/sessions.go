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

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// DefaultSessionsPrefix is the key prefix of a [Sessions] store whose
// SessionsConfig.Prefix is empty.
const DefaultSessionsPrefix = "authkit:sess:"

// SessionsHashTag follows a [Sessions] store's prefix in its keys when the
// prefix holds no Cluster hash tag of its own, so that a record and its
// user's index, which a script touches together, share one hash slot: with
// the default prefix a record is at "authkit:sess:{s}r:" + id.
const SessionsHashTag = "{s}"

// SessionsConfig configures a [Sessions] store. The zero value means all
// defaults.
type SessionsConfig struct {
	// Prefix is put before every key. The scripts touch a record and its
	// user's index together, so on a Redis Cluster every key of the store
	// must hash to one slot: a prefix with a hash tag ("{authkit-sess}:")
	// gives the slot; any other prefix is followed by the tag "{s}"
	// (SessionsHashTag). A prefix whose first "{" is followed at once by
	// "}" hashes each key whole, so it works on a single node only.
	// Default: DefaultSessionsPrefix ("authkit:sess:").
	Prefix string
}

// Sessions is a [session.Store] on Redis, for apps that run several
// processes: every process sees every session record, and ending one ends
// it everywhere at once.
//
// Each record is a hash at BASE + "r:" + id (fields u, c, l, e, ip, ua,
// m, and x, its index's key) that expires at the record's ExpiresAt (PEXPIREAT), so Redis drops
// ended lifetimes by itself. BASE is the prefix, followed by
// [SessionsHashTag] unless it holds a hash tag. Each user has an index, a set of record ids
// at BASE + "u:" + the hex SHA-256 of the user id, whose TTL is kept at
// least as long as its longest record's; ids of records Redis expired are
// dropped from it when List meets them, or CreateBounded when the index
// holds more ids than its bound. Create, Touch, Delete and
// DeleteAll are each one Lua script, so atomic: Touch changes only a
// record that exists, so a session deleted while a request used it never
// comes back. It is safe for concurrent use.
//
// On a Redis Cluster every key of one store is in one hash slot, so on
// one primary: the Cluster spreads the rate-limit counters, not the
// session records (give Sessions and TrustedDevices prefixes with
// different hash tags to put them on different primaries).
type Sessions struct {
	client redis.UniversalClient
	base   string // the prefix, and SessionsHashTag unless it has a tag
	now    func() time.Time
}

var (
	_ session.Store   = (*Sessions)(nil)
	_ session.Bounded = (*Sessions)(nil)
)

// NewSessions returns a session-record store on client (any
// redis.UniversalClient; it is not closed by the store). cfg is not
// modified. A nil client is accepted, and every call then returns an
// error.
func NewSessions(client redis.UniversalClient, cfg SessionsConfig) *Sessions {
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = DefaultSessionsPrefix
	}
	if !hasHashTag(prefix) {
		prefix += SessionsHashTag
	}
	return &Sessions{client: client, base: prefix, now: time.Now}
}

// hasHashTag reports whether a key beginning with prefix is hashed by
// Redis Cluster on a tag within prefix: its first "{" is followed, later
// in prefix, by a "}" with at least one byte between them.
func hasHashTag(prefix string) bool {
	_, after, ok := strings.Cut(prefix, "{")
	return ok && strings.IndexByte(after, '}') > 0
}

func (s *Sessions) recordKey(id string) string { return s.base + "r:" + id }

func (s *Sessions) indexKey(userID string) string {
	sum := sha256.Sum256([]byte(userID))
	return s.base + "u:" + hex.EncodeToString(sum[:])
}

// ttlMillis is the milliseconds from now to t, at least 1 (a PEXPIRE of 0
// or less deletes the key at once: the record is dead anyway, but the
// index must not lose its other ids).
func (s *Sessions) ttlMillis(t time.Time) int64 { return max(t.Sub(s.now()).Milliseconds(), 1) }

// createScript: KEYS[1] the record, KEYS[2] the index; ARGV: id, user,
// created, last seen, expires (Unix ms), ip, user agent, remember ("1" or
// "0"), the record's TTL in ms; for CreateBounded also ARGV[10] the bound
// and ARGV[11] the prefix of record keys (BASE + "r:"). With a bound, when
// the index holds more ids than it, ids whose record Redis expired leave
// it, and the oldest records (field c, then id, ascending) past the bound
// are deleted; the record keys share the index's hash slot (the store's
// hash tag). Without one (Create) the script ends once the record is
// stored. Returns 0 when the id exists, else 1.
var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'u', ARGV[2], 'c', ARGV[3], 'l', ARGV[4], 'e', ARGV[5], 'ip', ARGV[6], 'ua', ARGV[7], 'm', ARGV[8], 'x', KEYS[2])
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('SADD', KEYS[2], ARGV[1])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[9]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[9])
end
local max = tonumber(ARGV[10]) or 0
if max < 1 or redis.call('SCARD', KEYS[2]) <= max then
  return 1
end
local live = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local c = redis.call('HGET', ARGV[11] .. id, 'c')
  if c then
    live[#live + 1] = {tonumber(c), id}
  else
    redis.call('SREM', KEYS[2], id)
  end
end
if #live <= max then
  return 1
end
table.sort(live, function(a, b)
  if a[1] ~= b[1] then
    return a[1] < b[1]
  end
  return a[2] < b[2]
end)
for i = 1, #live - max do
  redis.call('DEL', ARGV[11] .. live[i][2])
  redis.call('SREM', KEYS[2], live[i][2])
end
return 1
`)

// Create implements [session.Store]: one script that stores the hash,
// sets its TTL, and adds the id to the user's index.
func (s *Sessions) Create(ctx context.Context, r session.Record) error {
	return s.create(ctx, r, 0)
}

// CreateBounded implements [session.Bounded]: Create and the bound in one
// script, so atomic; it reads the user's records only when they pass max.
func (s *Sessions) CreateBounded(ctx context.Context, r session.Record, max int) error {
	return s.create(ctx, r, max)
}

func (s *Sessions) create(ctx context.Context, r session.Record, max int) error {
	if s.client == nil {
		return fmt.Errorf("redisstore: create session: %w", errNilClient)
	}
	remember := "0"
	if r.Remember {
		remember = "1"
	}
	keys := []string{s.recordKey(r.ID), s.indexKey(r.UserID)}
	args := []any{r.ID, r.UserID, r.CreatedAt.UnixMilli(), r.LastSeenAt.UnixMilli(), r.ExpiresAt.UnixMilli(), r.IP, r.UserAgent, remember,
		s.ttlMillis(r.ExpiresAt)}
	if max > 0 {
		args = append(args, max, s.recordKey(""))
	}
	n, err := createScript.Run(ctx, s.client, keys, args...).Int()
	if err := s.unavailable("create session", err); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("redisstore: create session: id %s exists", r.ID)
	}
	return nil
}

// Get implements [session.Store]: one HGETALL.
func (s *Sessions) Get(ctx context.Context, id string) (session.Record, error) {
	if s.client == nil {
		return session.Record{}, fmt.Errorf("redisstore: get session: %w", errNilClient)
	}
	m, err := s.client.HGetAll(ctx, s.recordKey(id)).Result()
	if err := s.unavailable("get session", err); err != nil {
		return session.Record{}, err
	}
	r, ok := parseRecord(id, m)
	if !ok {
		return session.Record{}, fmt.Errorf("redisstore: get session: %w", user.ErrNotFound)
	}
	return r, nil
}

// parseRecord reads a record's hash; false when it is missing or not one
// this store wrote.
func parseRecord(id string, m map[string]string) (session.Record, bool) {
	u, ok := m["u"]
	if !ok {
		return session.Record{}, false
	}
	var ms [3]int64
	for i, f := range []string{"c", "l", "e"} {
		v, err := strconv.ParseInt(m[f], 10, 64)
		if err != nil {
			return session.Record{}, false
		}
		ms[i] = v
	}
	return session.Record{ID: id, UserID: u, CreatedAt: time.UnixMilli(ms[0]).UTC(), LastSeenAt: time.UnixMilli(ms[1]).UTC(),
		ExpiresAt: time.UnixMilli(ms[2]).UTC(), IP: m["ip"], UserAgent: m["ua"], Remember: m["m"] == "1"}, true
}

// touchScript: KEYS[1] the record; ARGV: last seen, expires (Unix ms),
// TTL in ms. Returns 0 when the record is missing (it creates nothing),
// else 1. The record names its index (field x), whose TTL it keeps at
// least as long as its own.
var touchScript = redis.NewScript(`
local idx = redis.call('HGET', KEYS[1], 'x')
if not idx then
  return 0
end
redis.call('HSET', KEYS[1], 'l', ARGV[1], 'e', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if redis.call('PTTL', idx) < tonumber(ARGV[3]) then
  redis.call('PEXPIRE', idx, ARGV[3])
end
return 1
`)

// Touch implements [session.Store]: one script that updates the record
// only if it exists.
func (s *Sessions) Touch(ctx context.Context, id string, seen, expires time.Time) error {
	return s.runFound(ctx, "touch session", touchScript, []string{s.recordKey(id)}, seen.UnixMilli(), expires.UnixMilli(), s.ttlMillis(expires))
}

// deleteScript: KEYS[1] the record, KEYS[2] the user's index; ARGV[1] the
// user id, ARGV[2] the record id. Returns 0 when the record is missing or
// another user's, else 1.
var deleteScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'u') ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
return 1
`)

// Delete implements [session.Store]: one script that deletes the record
// only if it is userID's.
func (s *Sessions) Delete(ctx context.Context, userID, id string) error {
	return s.runFound(ctx, "delete session", deleteScript, []string{s.recordKey(id), s.indexKey(userID)}, userID, id)
}

// runFound runs script, one that returns 0 when it finds no record to
// change and 1 when it changed it, for op: ErrNotFound for 0.
func (s *Sessions) runFound(ctx context.Context, op string, script *redis.Script, keys []string, args ...any) error {
	if s.client == nil {
		return fmt.Errorf("redisstore: %s: %w", op, errNilClient)
	}
	n, err := script.Run(ctx, s.client, keys, args...).Int()
	if err := s.unavailable(op, err); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("redisstore: %s: %w", op, user.ErrNotFound)
	}
	return nil
}

// unavailable answers a call of op that returned err: nil for nil, else
// err as ErrUnavailable, after a Cluster client is told to reload its
// slots (reloadAfter).
func (s *Sessions) unavailable(op string, err error) error {
	reloadAfter(s.client, err)
	if err != nil {
		return fmt.Errorf("redisstore: %s: %w: %w", op, user.ErrUnavailable, err)
	}
	return nil
}

// List implements [session.Store]: SMEMBERS of the index, then one
// pipelined HGETALL per id; ids whose record is gone are removed from the
// index.
func (s *Sessions) List(ctx context.Context, userID string) ([]session.Record, error) {
	if s.client == nil {
		return nil, fmt.Errorf("redisstore: list sessions: %w", errNilClient)
	}
	idx := s.indexKey(userID)
	ids, err := s.client.SMembers(ctx, idx).Result()
	if err := s.unavailable("list sessions", err); err != nil {
		return nil, err
	}
	out := make([]session.Record, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, s.recordKey(id))
		}
		return nil
	})
	if err := s.unavailable("list sessions", err); err != nil {
		return nil, err
	}
	var gone []any
	for i, c := range cmds {
		r, ok := parseRecord(ids[i], c.Val())
		if !ok || r.UserID != userID {
			gone = append(gone, ids[i])
			continue
		}
		out = append(out, r)
	}
	if len(gone) > 0 {
		_ = s.client.SRem(ctx, idx, gone...).Err() // tidying only
	}
	session.SortRecords(out)
	return out, nil
}

// deleteAllScript: KEYS[1] the user's index; ARGV[1] the record key
// prefix, ARGV[2] the id to keep ("" for none). It deletes every record the
// index names but that one, and leaves the index holding only it.
var deleteAllScript = redis.NewScript(`
local ids = redis.call('SMEMBERS', KEYS[1])
for _, id in ipairs(ids) do
  if id ~= ARGV[2] then
    redis.call('DEL', ARGV[1] .. id)
    redis.call('SREM', KEYS[1], id)
  end
end
return 1
`)

// DeleteAll implements [session.Store]: one script over the user's index.
func (s *Sessions) DeleteAll(ctx context.Context, userID, except string) error {
	if s.client == nil {
		return fmt.Errorf("redisstore: delete sessions: %w", errNilClient)
	}
	err := deleteAllScript.Run(ctx, s.client, []string{s.indexKey(userID)}, s.base+"r:", except).Err()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return s.unavailable("delete sessions", err)
}
