package store

import (
	"context"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

var _ user.SignIns = (*Memory)(nil)

// MarkSignedIn implements [user.SignIns]: the first call for a user id
// records it (until Delete) and reports true, under the store's lock.
func (m *Memory) MarkSignedIn(ctx context.Context, userID string, at time.Time) (bool, error) {
	return locked(ctx, &m.mu, func() (bool, error) {
		if _, ok := m.signedIn[userID]; ok {
			return false, nil
		}
		m.signedIn[userID] = at
		return true, nil
	})
}
