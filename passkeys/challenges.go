package passkeys

import (
	"time"

	"github.com/authkit-go/authkit/core/onetime"
)

// ChallengeStore keeps the state of the ceremonies between begin and
// finish: the challenge, what it is bound to, and what it is for, under
// the hash of the key in the browser's challenge cookie (256 random
// bits), until Config.ChallengeLifetime has passed. It is core's
// onetime.Store, whose Take is atomic: of two racing finishes of one
// ceremony at most one gets its state.
//
// The default, onetime.MemoryStore, is per process: a ceremony begun on
// one instance is not found on another. Apps with several instances give
// Config.Challenges a store they share: redisstore.NewOneTime (Redis) or
// sqlxstore's DB.OneTime (the challenges table of migration 0004), or
// route each browser to one instance.
type ChallengeStore = onetime.Store

// ErrChallengeNotFound is what ChallengeStore.Take returns for a key it
// does not hold, or holds no longer (taken, or expired): onetime's
// ErrNotFound.
var ErrChallengeNotFound = onetime.ErrNotFound

// memoryChallenges is Config.Challenges' default: an in-process store
// that sweeps expired challenges by now when it fills.
func memoryChallenges(now func() time.Time) ChallengeStore {
	return onetime.NewMemoryStore(onetime.MemoryConfig{Now: now})
}
