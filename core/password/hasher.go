package password

import "context"

// Hasher turns a password into a storable hash and checks a password against
// one. Implementations must be safe for concurrent use.
//
// Verify returns (false, nil) for a wrong password and a non-nil error only
// when the hash cannot be checked at all (an unknown or malformed format, or
// ctx done before the work started).
type Hasher interface {
	Hash(ctx context.Context, password string) (string, error)
	Verify(ctx context.Context, password, hash string) (bool, error)
}

// Decoy is implemented by hashers that can make, without the work of
// hashing, a hash that no password matches and that costs a Verify exactly
// what a real hash of theirs costs: same algorithm, same cost, a random
// salt and digest. auth.New checks the logins of unknown accounts against
// one (SECURITY.md "Timing"); for a hasher without it, New hashes a random
// password instead, once. Callers discover it with a type assertion.
type Decoy interface {
	DecoyHash() (string, error)
}

// Rehasher is implemented by hashers that can tell when a stored hash was
// made with an older algorithm or cost, so a successful login can store a
// fresh one. Callers discover it with a type assertion.
type Rehasher interface {
	NeedsRehash(hash string) bool
}
