// Package storetest is the conformance suite for authkit stores. Every store
// authkit ships runs it, and so should a custom one:
//
//	func TestMyStore(t *testing.T) {
//		storetest.RunUserStore(t, func(t *testing.T) *mystore.Store {
//			return mystore.New(openTestDB(t)) // a fresh, empty store per subtest
//		})
//	}
//
// [RunUserStore] proves every rule of the user-store contract, part by part
// (core/user: Accounts, TwoFactor, EmailVerification, EmailChange,
// PasswordReset, PasswordChange, PasswordRehash, SessionVersions, Lockout,
// Passkeys;
// EmailCodes, the mailed second-factor codes: single use, expiry, the hash
// as the condition, one winner of racing takes; EmailCodeEraser, the
// deletion of a user's code with the account; APIKeys, personal API keys:
// the per-user bound under racing creates, one winner of racing revokes;
// a part the store does not implement is skipped, with the reason): the records
// round-trip with millisecond timestamps, the sentinel errors come back
// wrapped, and each conditional operation holds under racing goroutines
// (exactly one winner, every loser told ErrConflict or ErrEmailTaken, never
// a half-applied change). [RunLimitStore] does the same for ratelimit.Store:
// the window starts at the first increment, does not slide, restarts after
// it elapses, and concurrent increments each see a distinct count.
// [RunLimitRefunder] proves the optional ratelimit.Refunder of a store that
// has one: a refund gives back exactly one attempt of the window it names.
// [RunLimitClearer] proves the optional ratelimit.Clearer: Clear deletes the
// counters under a key prefix, compared byte for byte, and no other.
// [RunOneTimeStore] proves an onetime.Store (values taken once): a Take
// returns the data once, never at or after its expiry, racing Takes of one
// key have exactly one winner, and keys of any bytes are distinct.
//
// The constructor is called once per subtest and must return an empty store;
// tests that share a database should give each call its own schema or table
// prefix and register cleanup with t.Cleanup.
package storetest
