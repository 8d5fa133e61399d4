package sqlxstore_test

import (
	"strings"
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
)

// TestLimitClearHashedKeys: a long key, stored hashed, is cleared by "" and
// by "sha256:", not by a prefix of the key itself.
func TestLimitClearHashedKeys(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			s := freshDB(t, openPool(t, b), sqlxstore.Config{CleanupInterval: -1}).Limits()
			long := "register:ip:" + strings.Repeat("x", 300)
			if _, _, err := s.Increment(ctx, long, 60e9); err != nil {
				t.Fatal(err)
			}
			for prefix, want := range map[string]int64{"register:": 0, "\xff": 0, "sha256:": 1} {
				n, err := s.Clear(ctx, prefix)
				if err != nil || n != want {
					t.Fatalf("Clear(%q) = %d, %v; want %d", prefix, n, err, want)
				}
			}
		})
	}
}
