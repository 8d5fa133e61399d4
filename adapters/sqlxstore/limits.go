package sqlxstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/authkit-go/authkit/core/ratelimit"
)

// maxKeyBytes is the longest rate-limit key stored as it is; the column
// holds 255 bytes.
const maxKeyBytes = 255

// hashedKeyPrefix starts the stored form of a key that is hashed.
const hashedKeyPrefix = "sha256:"

// errInvalidWindow is returned by Increment for a window under one
// millisecond, the store's precision.
var errInvalidWindow = errors.New("sqlxstore: rate-limit window must be at least 1ms")

// LimitStore is the [ratelimit.Store] over the rate_limits table: one row
// per key with its count and the end of its window, in Unix milliseconds.
// Get it from [DB.Limits]. It is safe for concurrent use, and the counters
// are shared by every process on the database.
//
// Each Increment is one atomic upsert: the first increment of a key (or
// the first after its window ended) writes count 1 and a window end of now
// plus window; later ones add one and keep the window end. PostgreSQL and
// SQLite run it as INSERT ... ON CONFLICT DO UPDATE ... RETURNING; MySQL as
// INSERT ... ON DUPLICATE KEY UPDATE followed by a SELECT of the row it
// just locked, in one short transaction.
//
// Keys longer than 255 bytes, keys that are not valid UTF-8 or hold a NUL
// byte, and keys that start with "sha256:" are stored as "sha256:" and the
// hex SHA-256 of the key, so any key works and none can collide with
// another (short of a SHA-256 collision).
//
// Errors are returned wrapped, never as ratelimit.ErrStoreFull: the
// limiter then fails closed (the auth flows answer 503).
type LimitStore struct {
	db                     *DB
	incr, sel, del, refund string
	sweep                  string

	cleaner *cleaner // the background cleanup (one that never runs without)
}

var (
	_ ratelimit.Store    = (*LimitStore)(nil)
	_ ratelimit.Refunder = (*LimitStore)(nil)
	_ ratelimit.Clearer  = (*LimitStore)(nil)
)

func newLimitStore(db *DB, background bool) *LimitStore {
	s := &LimitStore{db: db}
	switch db.dialect {
	case MySQL:
		// Assignments run left to right: hits is decided from the old
		// reset_at before reset_at itself is written.
		s.incr = db.query(`INSERT INTO {{prefix}}rate_limits (limit_key, hits, reset_at) VALUES (?, 1, ?)
			ON DUPLICATE KEY UPDATE
				hits = CASE WHEN reset_at <= ? THEN 1 ELSE hits + 1 END,
				reset_at = CASE WHEN reset_at <= ? THEN ? ELSE reset_at END`)
		s.sel = db.query(`SELECT hits, reset_at FROM {{prefix}}rate_limits WHERE limit_key = ?`)
	default:
		s.incr = db.query(`INSERT INTO {{prefix}}rate_limits (limit_key, hits, reset_at) VALUES (?, 1, ?)
			ON CONFLICT (limit_key) DO UPDATE SET
				hits = CASE WHEN {{prefix}}rate_limits.reset_at <= ? THEN 1 ELSE {{prefix}}rate_limits.hits + 1 END,
				reset_at = CASE WHEN {{prefix}}rate_limits.reset_at <= ? THEN excluded.reset_at ELSE {{prefix}}rate_limits.reset_at END
			RETURNING hits, reset_at`)
	}
	s.del = db.query(`DELETE FROM {{prefix}}rate_limits WHERE limit_key = ?`)
	// The refund finds its row by the primary key alone: "reset_at + 0"
	// keeps the reset_at index out of the plan. Without it PostgreSQL
	// served the refund from that index with the key as a filter
	// (BenchmarkScale's plans at a million keys), reading every row whose
	// window ends in the same millisecond: a burst of logins in one
	// millisecond made each refund read them all.
	s.refund = db.query(`UPDATE {{prefix}}rate_limits SET hits = hits - 1
		WHERE limit_key = ? AND reset_at + 0 = ? AND hits > 0`)
	s.sweep = db.query(`DELETE FROM {{prefix}}rate_limits WHERE reset_at <= ?`)
	s.cleaner = &cleaner{}
	if background {
		s.cleaner = db.startCleaner("rate-limit", s.Cleanup)
	}
	return s
}

// storageKey is the form of key stored in the limit_key column.
func storageKey(key string) string {
	if len(key) <= maxKeyBytes && utf8.ValidString(key) && !strings.ContainsRune(key, 0) &&
		!strings.HasPrefix(key, hashedKeyPrefix) {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return hashedKeyPrefix + hex.EncodeToString(sum[:])
}

// windowMS is window in whole milliseconds, rounded up.
func windowMS(window time.Duration) int64 {
	n := int64(window / time.Millisecond)
	if window%time.Millisecond != 0 {
		n++
	}
	return n
}

// Increment implements [ratelimit.Store]. Windows are kept to the
// millisecond (a window is rounded up to whole milliseconds); a window
// below one millisecond is an error.
func (s *LimitStore) Increment(ctx context.Context, key string, window time.Duration) (int64, time.Time, error) {
	if window < time.Millisecond {
		return 0, time.Time{}, errInvalidWindow
	}
	k := storageKey(key)
	now := s.db.now().UnixMilli()
	end := now + windowMS(window)
	var count, resetAt int64
	var err error
	if s.db.dialect == MySQL {
		err = s.db.inTx(ctx, func(q queryer) error {
			if _, err := q.ExecContext(ctx, s.incr, k, end, now, now, end); err != nil {
				return err
			}
			return q.QueryRowxContext(ctx, s.sel, k).Scan(&count, &resetAt)
		})
	} else {
		err = s.db.retry(ctx, func() error {
			return s.db.x.QueryRowxContext(ctx, s.incr, k, end, now, now).Scan(&count, &resetAt)
		})
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("sqlxstore: rate limit increment: %w", err)
	}
	return count, time.UnixMilli(resetAt).UTC(), nil
}

// Reset implements [ratelimit.Store].
func (s *LimitStore) Reset(ctx context.Context, key string) error {
	err := s.db.retry(ctx, func() error {
		_, err := s.db.x.ExecContext(ctx, s.del, storageKey(key))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlxstore: rate limit reset: %w", err)
	}
	return nil
}

// Refund implements [ratelimit.Refunder] with one conditional UPDATE, atomic
// on every dialect: the count goes down by one only while the row's window
// end is resetAt (to the millisecond, as Increment returned it), that window
// has not ended and the count is above zero. A row refunded to zero stays
// until its window ends (the next Increment in the window counts 1) or
// Cleanup deletes it.
func (s *LimitStore) Refund(ctx context.Context, key string, resetAt time.Time) error {
	at := resetAt.UnixMilli()
	if at <= s.db.now().UnixMilli() {
		return nil // that window has ended: nothing to give back
	}
	k := storageKey(key)
	err := s.db.retry(ctx, func() error {
		_, err := s.db.x.ExecContext(ctx, s.refund, k, at)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlxstore: rate limit refund: %w", err)
	}
	return nil
}

// Cleanup deletes the counters whose window has ended and returns how
// many it deleted. The background cleanup calls it every
// Config.CleanupInterval; call it yourself when that is negative.
func (s *LimitStore) Cleanup(ctx context.Context) (int64, error) {
	n, err := s.db.deleteExpired(ctx, s.sweep)
	if err != nil {
		return 0, fmt.Errorf("sqlxstore: rate limit cleanup: %w", err)
	}
	return n, nil
}

// Close stops the background cleanup, cancelling a cleanup in progress,
// and waits for it to return. It is idempotent and returns nil. The store
// keeps working after Close; [DB.Close] calls it.
func (s *LimitStore) Close() error {
	s.cleaner.close()
	return nil
}
