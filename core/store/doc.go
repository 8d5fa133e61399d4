// Package store holds authkit's in-memory user store and, in the storetest
// subpackage, the conformance suite every user store and rate-limit store
// must pass.
//
// The in-memory rate-limit store lives in core (ratelimit.MemoryStore)
// because the limiter defaults to it; stores that need a driver live in
// their own modules (adapters/sqlxstore, adapters/redisstore) so that an app
// on the memory store never downloads one.
//
//	users := store.NewMemory(store.MemoryConfig{})
//	u, err := users.Create(ctx, &user.User{Email: "ada@example.com", PasswordHash: h})
package store
