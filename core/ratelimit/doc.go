// Package ratelimit counts attempts per key in a fixed window (spec sections
// 2.1, 3.5 and 8).
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
// (spec section 8). It holds at most Capacity keys (default 10,000); an
// existing key keeps counting at capacity, but a new key is refused with
// [ErrStoreFull] until expired entries are removed, which the limiter reports
// as "not allowed" rather than as an error. Expired entries are removed every
// CleanupInterval (default 60 seconds) by a background goroutine, stopped by
// [MemoryStore.Close], and also on demand when a full store meets a new key.
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
