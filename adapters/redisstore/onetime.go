package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/core/onetime"
)

// DefaultOneTimePrefix is the key prefix of a [OneTime] store whose
// OneTimeConfig.Prefix is empty.
const DefaultOneTimePrefix = "authkit:once:"

// OneTimeConfig configures a [OneTime] store. The zero value means all
// defaults.
type OneTimeConfig struct {
	// Prefix is put before every key, so that the values share a database
	// with other data and other stores (give each a different prefix).
	// Default: DefaultOneTimePrefix ("authkit:once:").
	Prefix string
}

// OneTime is an [onetime.Store] on Redis, so that a value put by one
// instance of an app (a passkey ceremony's challenge, passkeys.Config's
// Challenges) is taken by whichever instance the next request reaches.
// It is safe for concurrent use.
//
// Each value is one Redis string at Prefix+key (a key longer than
// [MaxKeyLen] bytes, or beginning with "sha256:", becomes Prefix+"sha256:"+
// hex SHA-256 of the key, as in [Store]): the expiry in Unix milliseconds
// as 8 bytes, big-endian, then the data. Put is one SET with PX, the time
// from the application's clock to the expiry rounded up to the
// millisecond, so Redis drops the values nobody took; a Put whose expiry
// is already past is one DEL (the value replaced, nothing stored). Take is
// one GETDEL, atomic: of racing Takes one gets the value, the others nil.
// The expiry written in the value, not the TTL, decides whether a taken
// value is still good, at the now Take is given; the TTL only frees the
// memory, and is never shorter than the value's life whatever the skew
// between the application's clock and Redis's.
//
// GETDEL needs Redis 6.2 or later (tested on 7.0). Every command touches
// one key, so a Cluster routes them like any single-key command.
type OneTime struct {
	client redis.UniversalClient
	prefix string
	now    func() time.Time // the application's clock, for the TTL
}

var _ onetime.Store = (*OneTime)(nil)

// errMalformed is Take's error for a value this store did not write.
var errMalformed = errors.New("value is not one this store wrote (shorter than its 8-byte expiry)")

// NewOneTime returns a store of values taken once on client (any
// redis.UniversalClient; the store does not close it). cfg is not
// modified. A nil client is accepted, and every call then returns an
// error.
func NewOneTime(client redis.UniversalClient, cfg OneTimeConfig) *OneTime {
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = DefaultOneTimePrefix
	}
	return &OneTime{client: client, prefix: prefix, now: time.Now}
}

// Put implements [onetime.Store]: one SET key value PX ttl, or one DEL
// when expires is not after the application's clock. expires is kept to
// the millisecond, rounded down. Errors are wrapped with the prefix
// "redisstore: put one-time value: ".
func (s *OneTime) Put(ctx context.Context, key string, data []byte, expires time.Time) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("redisstore: put one-time value: %w", err)
	}
	k := prefixedKey(s.prefix, key)
	exp := expires.UnixMilli()
	ttl := time.UnixMilli(exp).Sub(s.now())
	var err error
	if ttl <= 0 {
		err = s.client.Del(ctx, k).Err()
	} else {
		v := make([]byte, 8, 8+len(data))
		binary.BigEndian.PutUint64(v, uint64(exp))
		err = s.client.Set(ctx, k, append(v, data...), time.Duration(windowMillis(ttl))*time.Millisecond).Err()
	}
	reloadAfter(s.client, err)
	if err != nil {
		return fmt.Errorf("redisstore: put one-time value: %w", err)
	}
	return nil
}

// Take implements [onetime.Store]: one GETDEL. A missing key, and a value
// whose expiry is not after now, give onetime.ErrNotFound (wrapped).
// Other errors are wrapped with the prefix "redisstore: take one-time
// value: ".
func (s *OneTime) Take(ctx context.Context, key string, now time.Time) ([]byte, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("redisstore: take one-time value: %w", err)
	}
	v, err := s.client.GetDel(ctx, prefixedKey(s.prefix, key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("redisstore: take one-time value: %w", onetime.ErrNotFound)
	}
	reloadAfter(s.client, err)
	if err != nil {
		return nil, fmt.Errorf("redisstore: take one-time value: %w", err)
	}
	if len(v) < 8 {
		return nil, fmt.Errorf("redisstore: take one-time value: %w", errMalformed)
	}
	if !time.UnixMilli(int64(binary.BigEndian.Uint64(v))).After(now) {
		return nil, fmt.Errorf("redisstore: take one-time value: %w", onetime.ErrNotFound)
	}
	return v[8:], nil
}

// check returns the error of a call that cannot be made: a done ctx, a
// nil client.
func (s *OneTime) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.client == nil {
		return errNilClient
	}
	return nil
}
