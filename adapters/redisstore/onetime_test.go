package redisstore

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// TestOneTimeMiniredis runs the one-time suite on miniredis.
func TestOneTimeMiniredis(t *testing.T) {
	storetest.RunOneTimeStore(t, func(t *testing.T, clock *storetest.Clock) onetime.Store {
		_, c := newMiniredis(t)
		s := NewOneTime(c, OneTimeConfig{})
		s.now = clock.Now
		return s
	})
}

// TestOneTimeRedis runs the one-time suite on the real Redis of
// AUTHKIT_TEST_REDIS, each subtest under a prefix of its own, deleted at
// its end.
func TestOneTimeRedis(t *testing.T) {
	opts := realRedisOptions(t)
	storetest.RunOneTimeStore(t, func(t *testing.T, clock *storetest.Clock) onetime.Store {
		c := newClient(t, opts)
		prefix := randomPrefix()
		cleanupPrefix(t, c, prefix)
		s := NewOneTime(c, OneTimeConfig{Prefix: prefix})
		s.now = clock.Now
		return s
	})
}

// TestOneTimeLayout: the key, the value (expiry, then data) and the TTL
// that Put writes, the hashed form of a long key, the DEL of a Put whose
// expiry is past, and a value this store did not write.
func TestOneTimeLayout(t *testing.T) {
	m, c := newMiniredis(t)
	s := NewOneTime(c, OneTimeConfig{Prefix: "p:"})
	now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	s.now = func() time.Time { return now }
	ctx := t.Context()

	expires := now.Add(5*time.Minute + 1500*time.Microsecond) // kept as +5m1ms
	if err := s.Put(ctx, "k", []byte("data"), expires); err != nil {
		t.Fatal(err)
	}
	got, err := m.Get("p:k")
	if err != nil {
		t.Fatal(err)
	}
	var head [8]byte
	binary.BigEndian.PutUint64(head[:], uint64(now.Add(5*time.Minute+time.Millisecond).UnixMilli()))
	want := string(head[:]) + "data"
	if got != want {
		t.Errorf("value %q, want %q", got, want)
	}
	if ttl := m.TTL("p:k"); ttl != 5*time.Minute+time.Millisecond {
		t.Errorf("TTL %v, want 5m0.001s", ttl)
	}

	long := string(make([]byte, MaxKeyLen+1))
	if err := s.Put(ctx, long, []byte("x"), expires); err != nil {
		t.Fatal(err)
	}
	if !m.Exists("p:sha256:" + hexSHA256(long)) {
		t.Errorf("a key over MaxKeyLen is not stored as its hash; keys: %q", m.Keys())
	}

	if err := s.Put(ctx, "k", []byte("dead"), now); err != nil {
		t.Fatal(err)
	}
	if m.Exists("p:k") {
		t.Error("a Put expiring now left the key in Redis")
	}

	if err := m.Set("p:odd", "short"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ctx, "odd", now); err == nil || errors.Is(err, onetime.ErrNotFound) {
		t.Errorf("Take of a value not written by the store = %v, want an error other than ErrNotFound", err)
	}
	if _, err := NewOneTime(nil, OneTimeConfig{}).Take(ctx, "k", now); !errors.Is(err, errNilClient) {
		t.Errorf("Take on a nil client = %v, want errNilClient", err)
	}
}

func hexSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
