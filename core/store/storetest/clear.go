package storetest

import (
	"testing"

	"github.com/authkit-go/authkit/core/ratelimit"
)

// RunLimitClearer runs the ratelimit.Clearer suite: Clear deletes the
// counters of the keys that start with a prefix, and only those, and says
// how many. A store without a Clearer side fails it. Run it beside
// RunLimitStore, with the same factory and options.
func RunLimitClearer(t *testing.T, newStore LimitStoreFactory, opts LimitOptions) {
	t.Helper()
	runLimitCases(t, newStore, opts, "ratelimit.Clearer", []limitCase[clearStore]{
		{"ClearPrefix", testClearPrefix},
		{"ClearAll", testClearAll},
		{"ClearNothing", testClearNothing},
	})
}

// clearStore is a rate-limit store under test with its Clearer side.
type clearStore interface {
	ratelimit.Store
	ratelimit.Clearer
}

// clearKeys are counted twice each by the Clear tests: the registration
// limit's keys, a login key and keys a LIKE or a glob would misread.
var clearKeys = []string{"register:ip:192.0.2.1", "register:ip:192.0.2.2", "register:email:a@example.com",
	"login:ip:192.0.2.1", "reg%ster:ip:x", "register_ip:x", "register*:x", "REGISTER:ip:192.0.2.1"}

func countTwice(t *testing.T, s ratelimit.Store, e *limitEnv) {
	t.Helper()
	for _, k := range clearKeys {
		for range 2 {
			incr(t, s, k, e.window)
		}
	}
}

// wantCount fails unless key's next Increment returns want.
func wantCount(t *testing.T, s ratelimit.Store, e *limitEnv, key string, want int64) {
	t.Helper()
	if n, _ := incr(t, s, key, e.window); n != want {
		t.Errorf("after Clear, Increment(%q) = %d, want %d", key, n, want)
	}
}

func testClearPrefix(t *testing.T, s clearStore, e *limitEnv) {
	countTwice(t, s, e)
	n, err := s.Clear(t.Context(), "register:ip:")
	if err != nil || n != 2 {
		t.Fatalf(`Clear("register:ip:") = %d, %v; want 2 (the two register:ip keys)`, n, err)
	}
	for _, k := range clearKeys {
		want := int64(3)
		if k == "register:ip:192.0.2.1" || k == "register:ip:192.0.2.2" {
			want = 1 // a new window
		}
		wantCount(t, s, e, k, want)
	}
}

func testClearAll(t *testing.T, s clearStore, e *limitEnv) {
	countTwice(t, s, e)
	n, err := s.Clear(t.Context(), "")
	if err != nil || n != int64(len(clearKeys)) {
		t.Fatalf(`Clear("") = %d, %v; want %d`, n, err, len(clearKeys))
	}
	for _, k := range clearKeys {
		wantCount(t, s, e, k, 1)
	}
}

func testClearNothing(t *testing.T, s clearStore, e *limitEnv) {
	if n, err := s.Clear(t.Context(), ""); err != nil || n != 0 {
		t.Fatalf(`Clear("") of an empty store = %d, %v; want 0`, n, err)
	}
	countTwice(t, s, e)
	if n, err := s.Clear(t.Context(), "nothing:"); err != nil || n != 0 {
		t.Fatalf(`Clear("nothing:") = %d, %v; want 0`, n, err)
	}
	for _, k := range clearKeys {
		wantCount(t, s, e, k, 3)
	}
}
