// Package onetime keeps values until they expire and hands each out once:
// [Store.Put] stores data under a key with an expiry, and [Store.Take]
// returns it and deletes it in one atomic step, so that of two racing
// Takes of one key at most one gets the data.
//
// It is the store of state that lives between two requests of one
// ceremony and must be used once: the passkeys module keeps its WebAuthn
// challenges in one (passkeys.Config.Challenges). The interface is in core
// so that a store on Redis or SQL implements it without importing the
// module that uses it:
//
//	st := onetime.NewMemoryStore(onetime.MemoryConfig{}) // one process
//	err := st.Put(ctx, key, state, time.Now().Add(5*time.Minute))
//	// ... a later request:
//	state, err := st.Take(ctx, key, time.Now())
//	if errors.Is(err, onetime.ErrNotFound) {
//		// never put, taken already, or expired
//	}
//
// # Stores
//
// [MemoryStore] is per process, bounded (Capacity; expired values are
// dropped when it fills) and lost on restart. Apps with several instances
// share one store between them: redisstore.NewOneTime (Redis) or
// sqlxstore's DB.OneTime (the challenges table of migration 0004). Every
// store runs core/store/storetest.RunOneTimeStore.
//
// Keys should be unguessable (random, 256 bits) or derived from such a
// value: whoever knows a key can take its value first.
package onetime
