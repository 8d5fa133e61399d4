package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Store keeps one counter per key for a fixed window. Implementations must be
// safe for concurrent use; custom stores (Redis, SQL, ...) implement exactly
// these two methods.
type Store interface {
	// Increment atomically adds one to key's counter and returns the new
	// count and the time the window ends. The window starts at the first
	// increment of a key (or the first after it elapsed) and lasts window;
	// later increments in the window do not move resetAt. The first
	// increment of a window returns 1. window is always positive.
	//
	// A store that has no room for a key it does not hold returns an error
	// that matches ErrStoreFull (errors.Is), with a non-zero resetAt when it
	// knows when room is expected and a zero resetAt otherwise. Any other
	// error means the count is unknown.
	Increment(ctx context.Context, key string, window time.Duration) (count int64, resetAt time.Time, err error)

	// Reset clears key's counter, so the next Increment starts a new window.
	// Resetting a missing key is not an error.
	Reset(ctx context.Context, key string) error
}

// Refunder is implemented by a [Store] that can give back one counted
// attempt. It is optional: [Limiter.Refund] uses it when the store has it and
// does nothing otherwise. It exists so that an attempt that turned out to be
// legitimate (a correct password) stops counting against a key that is never
// reset (the client's address), without letting anyone clear that key.
type Refunder interface {
	// Refund atomically subtracts one from key's counter, if the key's
	// current window is the one that ends at resetAt (the resetAt its
	// Increment returned) and its count is above zero. A missing key, a key
	// whose window has ended, and a key in a newer window are left alone;
	// none of these is an error. Refund never moves the window's end. When
	// the count reaches zero the store may keep the key at zero until its
	// window ends or remove it; either way the next Increment returns 1.
	Refund(ctx context.Context, key string, resetAt time.Time) error
}

// Clearer is implemented by a [Store] that can clear many counters at once:
// every key that starts with a prefix. It is optional, and no flow calls it:
// it is for operators and development loops (`authkit limits reset`), such
// as an end-to-end script that registers the same address on every run and
// would otherwise meet the registration limit of its previous runs, kept by a
// shared store across restarts.
type Clearer interface {
	// Clear deletes the counter of every key that starts with prefix (of
	// every key, for ""), so that each one's next Increment starts a new
	// window, and returns how many it deleted (expired counters included,
	// when the store still held them). Counters incremented while it runs
	// may or may not be cleared. A store that keeps some keys in another
	// form (hashed, because they are long) documents which prefixes find
	// them.
	Clear(ctx context.Context, prefix string) (int64, error)
}

// ErrStoreFull is returned by a Store at capacity that refuses a key it does
// not hold yet. The store may return a non-zero resetAt hint (when it expects
// room) with it. [Limiter.Attempt] reports such an attempt as not allowed,
// never as an error (the spec's rule: at capacity, new keys are limited
// immediately until expired entries are evicted), unless the limiter's
// Config.AllowWhenFull says otherwise.
var ErrStoreFull = errors.New("ratelimit: store full")

// ErrInvalidConfig is wrapped by the error [New] returns for an unusable
// [Config].
var ErrInvalidConfig = errors.New("ratelimit: invalid config")

// Config configures a [Limiter]. The zero value is not usable: MaxAttempts and
// Window are required.
type Config struct {
	// MaxAttempts is how many attempts a key may make per window. Required,
	// must be > 0.
	MaxAttempts int

	// Window is the length of the fixed window that starts at a key's first
	// attempt. Required, must be > 0.
	Window time.Duration

	// Store holds the counters. Several limiters may share one store only if
	// their keys never collide (prefix them); see the package documentation
	// for the lock-out risk of sharing a bounded store.
	//
	// Default: a new [MemoryStore] with default settings and the Now below.
	// Nothing closes that default store, so its cleanup goroutine lives as
	// long as the process: create limiters once, at start-up. Callers that
	// care create their own store and Close it.
	Store Store

	// Now returns the current time. It is used for the ResetAt reported when
	// the store is full and gives no hint, and as the clock of the default
	// store. Default: time.Now.
	Now func() time.Time

	// AllowWhenFull decides what an attempt gets when the store is full and
	// refuses its key ([ErrStoreFull]). False (the default, the spec's rule):
	// the attempt is not allowed. True: it is allowed without being counted.
	// Either way Result.StoreFull is set.
	//
	// Set it for keys an attacker can invent for free (an email address
	// typed into a login or forgot-password form): otherwise filling the
	// store with made-up keys refuses every legitimate new key, locking
	// users out or silencing their mail. Keep the default for keys that
	// cost an attacker something each (a client address, a user id), where
	// refusing new keys at capacity is what protects. An attempt allowed
	// this way is bounded only by the caller's other limits.
	AllowWhenFull bool
}

// Limiter counts attempts per key in a fixed window and reports whether each
// attempt is allowed. It is safe for concurrent use.
type Limiter struct {
	max           int
	window        time.Duration
	store         Store
	refunder      Refunder // store's Refunder, nil when it has none
	now           func() time.Time
	allowWhenFull bool
}

// New returns a Limiter for cfg. It returns an error wrapping
// [ErrInvalidConfig] when MaxAttempts or Window is not positive. cfg is not
// modified.
func New(cfg Config) (*Limiter, error) {
	if cfg.MaxAttempts <= 0 {
		return nil, fmt.Errorf("%w: MaxAttempts must be > 0, got %d", ErrInvalidConfig, cfg.MaxAttempts)
	}
	if cfg.Window <= 0 {
		return nil, fmt.Errorf("%w: Window must be > 0, got %v", ErrInvalidConfig, cfg.Window)
	}
	l := &Limiter{max: cfg.MaxAttempts, window: cfg.Window, store: cfg.Store, now: cfg.Now, allowWhenFull: cfg.AllowWhenFull}
	if l.now == nil {
		l.now = time.Now
	}
	if l.store == nil {
		l.store = NewMemoryStore(MemoryConfig{Now: cfg.Now})
	}
	l.refunder, _ = l.store.(Refunder)
	return l, nil
}

// Result is the outcome of one [Limiter.Attempt].
type Result struct {
	// Allowed is true while the key's count in the window is at most Limit.
	Allowed bool

	// Remaining is how many further attempts the window allows; never
	// negative, 0 once the limit is reached.
	Remaining int

	// ResetAt is when the window ends and the key's counter starts afresh.
	ResetAt time.Time

	// Limit is the limiter's MaxAttempts, handy for response headers.
	Limit int

	// StoreFull reports that the store was full and did not count this
	// attempt. Allowed is then Config.AllowWhenFull, Remaining is 0 and
	// ResetAt is the store's hint, or the time of the attempt plus Window.
	StoreFull bool
}

// RetryAfter returns the time from now until ResetAt, rounded up to whole
// seconds (1.2 s gives 2 s, exactly 2 s stays 2 s), and 0 when ResetAt is not
// after now. Its seconds are the value of a Retry-After header (docs/api.md,
// Rate limits: "rounded up"). Rounding up means a client that waits that long
// never arrives before the window ends.
func (r Result) RetryAfter(now time.Time) time.Duration {
	d := r.ResetAt.Sub(now) // saturates instead of overflowing
	if d <= 0 {
		return 0
	}
	secs := d / time.Second
	if d%time.Second != 0 && secs < math.MaxInt64/time.Second {
		secs++
	}
	return secs * time.Second
}

// Attempt counts one attempt for key and reports whether it is allowed: the
// n-th attempt of a window is allowed while n <= MaxAttempts. Attempts that
// are not allowed still count, but never extend the window.
//
// When the store is full ([ErrStoreFull]) the attempt is not counted,
// Result.StoreFull is set, Allowed is Config.AllowWhenFull, and the error is
// nil; ResetAt is the store's hint, or now plus Window without one.
// Any other store error is returned wrapped, with Allowed false: callers fail
// closed unless they decide otherwise. key is passed to the store as given.
func (l *Limiter) Attempt(ctx context.Context, key string) (Result, error) {
	count, resetAt, err := l.store.Increment(ctx, key, l.window)
	if err != nil {
		if errors.Is(err, ErrStoreFull) {
			if resetAt.IsZero() {
				resetAt = l.now().Add(l.window)
			}
			return Result{Allowed: l.allowWhenFull, ResetAt: resetAt, Limit: l.max, StoreFull: true}, nil
		}
		return Result{Limit: l.max}, fmt.Errorf("ratelimit: increment: %w", err)
	}
	if count < 1 {
		// A correct store never does this; trusting it would allow more
		// than MaxAttempts.
		return Result{Limit: l.max}, fmt.Errorf("ratelimit: increment: store returned count %d", count)
	}
	if count > int64(l.max) {
		return Result{ResetAt: resetAt, Limit: l.max}, nil
	}
	// 0 <= l.max-count < max: fits in an int.
	return Result{Allowed: true, Remaining: l.max - int(count), ResetAt: resetAt, Limit: l.max}, nil
}

// Reset clears key's counter (as a successful login clears its email
// key). Resetting a key that has no counter is not an error. A store error
// is returned wrapped.
func (l *Limiter) Reset(ctx context.Context, key string) error {
	if err := l.store.Reset(ctx, key); err != nil {
		return fmt.Errorf("ratelimit: reset: %w", err)
	}
	return nil
}

// Refund gives back the attempt that r reports for key, when the store
// implements [Refunder]: key's count goes down by one if it is still in the
// window r counted in (r.ResetAt). It does nothing for a store without
// Refunder, and for an attempt that was not counted (r.StoreFull, or a zero
// Result). It never resets key, so refunding only the attempts that turned
// out legitimate leaves every other attempt of the window counted. A store
// error is returned wrapped.
func (l *Limiter) Refund(ctx context.Context, key string, r Result) error {
	if l.refunder == nil || r.StoreFull || r.ResetAt.IsZero() {
		return nil
	}
	if err := l.refunder.Refund(ctx, key, r.ResetAt); err != nil {
		return fmt.Errorf("ratelimit: refund: %w", err)
	}
	return nil
}
