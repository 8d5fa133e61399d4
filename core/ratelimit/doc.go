// Package ratelimit counts attempts per key in a fixed window (docs/api.md,
// Rate limits).
//
// A [Limiter] allows MaxAttempts attempts per key per Window. The window
// starts at a key's first attempt and does not slide: attempts inside it,
// allowed or not, never move its end. Once it has ended the key starts
// afresh, and [Limiter.Reset] clears a key at once.
//
//	limiter, err := ratelimit.New(ratelimit.Config{
//		MaxAttempts: 5,
//		Window:      15 * time.Minute,
//		Store:       store, // e.g. ratelimit.NewMemoryStore(ratelimit.MemoryConfig{})
//	})
//	if err != nil {
//		return err
//	}
//	res, err := limiter.Attempt(ctx, "login:email:"+email)
//	if err != nil {
//		return err // the store failed: fail closed
//	}
//	if !res.Allowed {
//		w.Header().Set("Retry-After", strconv.Itoa(int(res.RetryAfter(time.Now())/time.Second)))
//		// answer 429
//	}
//
// # Stores
//
// Counters live in a [Store], an interface of exactly two methods (Increment
// and Reset) that Redis or SQL stores implement. [MemoryStore] is the
// built-in one: per process, lost on restart, never shared between processes
// (the spec's scope). It holds at most Capacity keys (default 10,000); an
// existing key keeps counting at capacity, but a new key is refused with
// [ErrStoreFull] until expired entries are removed, which the limiter reports
// as "not allowed" rather than as an error. Expired entries are removed every
// CleanupInterval (default 60 seconds) by a background goroutine, stopped by
// [MemoryStore.Close], and also on demand when a full store meets a new key.
//
// A store may also implement [Refunder], an optional interface discovered by
// type assertion: [Limiter.Refund] then gives back one counted attempt of the
// current window, for an attempt that turned out legitimate. The authkit
// flows count a login against the client's address before the password check
// (so concurrent guesses never exceed the limit) and refund it when the
// password was correct: a success never resets the address's key, so failures
// stay counted however many successes come between them. [MemoryStore] and
// the sqlxstore and redisstore stores implement it; with a store that does
// not, Refund does nothing and every attempt counts.
//
// # A full store
//
// What a full store's refusal means is the limiter's choice
// (Config.AllowWhenFull). By default (the spec's rule) the attempt is not
// allowed, which protects for keys that cost an attacker something each: a
// client address, a user id. For keys an attacker invents for free (the email
// typed into a login form) that rule hands the attacker everyone else's new
// keys: about 10,000 made-up addresses refuse every legitimate one. With
// AllowWhenFull such an attempt is allowed uncounted, and Result.StoreFull
// says so either way, so the caller can report it. The limits that bound
// such attempts are then the caller's others (per address, per account).
//
// # Lock-out risk of a shared store
//
// Capacity belongs to a store, not to a limiter. An attacker who fills a
// store shared by several limiters (by sending many distinct IP addresses or
// email addresses) locks out every new key of every one of those limiters,
// legitimate users included, until the attacker's entries expire. Give every
// limiter its own store, or size Capacity for the traffic you expect; the
// authkit flows give each limit its own store. Keys must also never collide
// between limiters that share a store: prefix them ("login:ip:", ...).
//
// Keys reach the store as given. The memory store accepts any key, even a
// megabyte long, but holds it for the whole window, so keys derived from
// client input should be hashed or capped first (the authkit flows do).
package ratelimit
