package passkeys

import (
	"log/slog"
	"testing"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// TestChallengePoolConformance: the default challenge store keeps the
// onetime.Store contract, as its anonymous part and as a user's (whose
// share the suite's many keys would pass).
func TestChallengePoolConformance(t *testing.T) {
	t.Run("anonymous", func(t *testing.T) {
		storetest.RunOneTimeStore(t, func(t *testing.T, clock *storetest.Clock) onetime.Store {
			return newChallengePool(0, clock.Now, slog.Default())
		})
	})
	t.Run("a user's", func(t *testing.T) {
		storetest.RunOneTimeStore(t, func(t *testing.T, clock *storetest.Clock) onetime.Store {
			p := newChallengePool(0, clock.Now, slog.Default())
			p.perUser = DefaultChallengeCapacity
			return p.owned("user-1")
		})
	})
}
