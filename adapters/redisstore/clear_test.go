package redisstore

import (
	"testing"

	"github.com/authkit-go/authkit/core/store/storetest"
)

// TestClearerMiniredis runs the Clearer suite on miniredis, on the suite's
// clock.
func TestClearerMiniredis(t *testing.T) {
	storetest.RunLimitClearer(t, miniredisStore, storetest.LimitOptions{})
}

// TestClearerRedis runs the Clearer suite on the real Redis, each subtest
// under a key prefix of its own, so a Clear("") clears only its own.
func TestClearerRedis(t *testing.T) {
	storetest.RunLimitClearer(t, realRedisStores(t), storetest.LimitOptions{RealTime: true})
}

// TestGlobEscape: a limiter prefix holding SCAN's pattern characters
// matches only itself.
func TestGlobEscape(t *testing.T) {
	for in, want := range map[string]string{
		"authkit:rl:register:": "authkit:rl:register:",
		`a*b?c[d]e\f`:          `a\*b\?c\[d\]e\\f`,
		"\xff*":                "\xff\\*",
	} {
		if got := globEscape(in); got != want {
			t.Errorf("globEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
