package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// OneTimeStoreFactory returns a fresh, empty onetime.Store for one
// subtest. A store that reads a clock of its own (to sweep, or to set a
// TTL) reads clock.Now, the time the suite puts and takes at.
type OneTimeStoreFactory func(t *testing.T, clock *Clock) onetime.Store

// RunOneTimeStore runs the conformance suite of onetime.Store.
//
// It proves that Take returns exactly the data Put stored, once: a second
// Take, a Take of a key never put, and a Take at or after the expiry
// (which the suite keeps on whole milliseconds) give onetime.ErrNotFound,
// and one a millisecond before it gets the data; that a Put whose expiry
// is already past stores nothing takeable; that Put of an existing key
// replaces both its data and its expiry; that of racing Takes of one key
// exactly one gets the data; that Put copies data (the caller may reuse
// its buffer) and empty or binary data round-trips; that a done context
// puts and takes nothing and returns an error wrapping it; and that keys
// of any bytes (empty, NUL, invalid UTF-8, Unicode, trailing spaces,
// differing in case only, 10,000 bytes long) are distinct keys.
//
// It also proves the store holds the refresh families of token mode
// (session.TokenConfig.Families), the one use authkit makes of it that
// carries a session: through a session.Manager over it, a refresh token
// rotates, a retired one used again ends the session, and of 50 refreshes
// racing with one token exactly one succeeds.
func RunOneTimeStore(t *testing.T, newStore OneTimeStoreFactory) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s onetime.Store, clock *Clock)
	}{
		{"PutTake", testOneTimePutTake},
		{"SingleUse", testOneTimeSingleUse},
		{"MissingKey", testOneTimeMissing},
		{"ExpiryAtTheBoundary", testOneTimeExpiry},
		{"PutAlreadyExpired", testOneTimePutExpired},
		{"PutReplaces", testOneTimeReplace},
		{"RacingTakesOneWinner", testOneTimeRace},
		{"DataCopied", testOneTimeCopied},
		{"ContextDone", testOneTimeContext},
		{"UnusualKeys", testOneTimeKeys},
		{"RefreshFamilies", testOneTimeRefreshFamilies},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := NewClock(oneTimeT0)
			c.run(t, newStore(t, clock), clock)
		})
	}
}

// oneTimeT0 is the suite's start: on a whole millisecond, so that
// expiries a whole number of milliseconds later are exact in every store.
var oneTimeT0 = time.Date(2031, time.March, 14, 15, 9, 26, 535_000_000, time.UTC)

func put(t *testing.T, s onetime.Store, key string, data []byte, expires time.Time) {
	t.Helper()
	if err := s.Put(ctx(t), key, data, expires); err != nil {
		t.Fatalf("Put(%.40q): %v", key, err)
	}
}

// wantTake takes key at now and wants data.
func wantTake(t *testing.T, what string, s onetime.Store, key string, now time.Time, data []byte) {
	t.Helper()
	got, err := s.Take(ctx(t), key, now)
	if err != nil {
		t.Fatalf("%s: Take(%.40q) = %v, want the data", what, key, err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("%s: Take(%.40q) = %q, want %q", what, key, got, data)
	}
}

// wantGone takes key at now and wants onetime.ErrNotFound.
func wantGone(t *testing.T, what string, s onetime.Store, key string, now time.Time) {
	t.Helper()
	got, err := s.Take(ctx(t), key, now)
	if !errors.Is(err, onetime.ErrNotFound) {
		t.Fatalf("%s: Take(%.40q) = %q, %v; want onetime.ErrNotFound", what, key, got, err)
	}
}

func testOneTimePutTake(t *testing.T, s onetime.Store, clock *Clock) {
	now := clock.Now()
	put(t, s, "k1", []byte("state of k1"), now.Add(5*time.Minute))
	put(t, s, "k2", []byte("state of k2"), now.Add(5*time.Minute))
	wantTake(t, "k2", s, "k2", now, []byte("state of k2"))
	wantTake(t, "k1", s, "k1", now.Add(time.Minute), []byte("state of k1"))
}

func testOneTimeSingleUse(t *testing.T, s onetime.Store, clock *Clock) {
	now := clock.Now()
	put(t, s, "k", []byte("once"), now.Add(time.Minute))
	wantTake(t, "first Take", s, "k", now, []byte("once"))
	wantGone(t, "second Take", s, "k", now)
	// Taken is gone for good, not hidden until some later time.
	wantGone(t, "third Take, later", s, "k", now.Add(30*time.Second))
	// The key can be used again.
	put(t, s, "k", []byte("again"), now.Add(time.Minute))
	wantTake(t, "Take after a new Put", s, "k", now, []byte("again"))
}

func testOneTimeMissing(t *testing.T, s onetime.Store, clock *Clock) {
	wantGone(t, "Take of a key never put", s, "never", clock.Now())
	put(t, s, "other", []byte("x"), clock.Now().Add(time.Minute))
	wantGone(t, "Take of a key never put, beside another", s, "never", clock.Now())
	wantTake(t, "the other key is untouched", s, "other", clock.Now(), []byte("x"))
}

func testOneTimeExpiry(t *testing.T, s onetime.Store, clock *Clock) {
	now := clock.Now()
	expires := now.Add(5 * time.Minute)
	put(t, s, "live", []byte("a"), expires)
	wantTake(t, "a millisecond before the expiry", s, "live", expires.Add(-time.Millisecond), []byte("a"))
	put(t, s, "at", []byte("b"), expires)
	clock.Set(expires)
	wantGone(t, "at the expiry", s, "at", expires)
	put(t, s, "after", []byte("c"), expires.Add(time.Second))
	clock.Set(expires.Add(time.Hour))
	wantGone(t, "an hour after the expiry", s, "after", expires.Add(time.Hour))
}

func testOneTimePutExpired(t *testing.T, s onetime.Store, clock *Clock) {
	now := clock.Now()
	put(t, s, "past", []byte("a"), now.Add(-time.Minute))
	wantGone(t, "a value put with a past expiry", s, "past", now)
	put(t, s, "now", []byte("b"), now)
	wantGone(t, "a value put expiring now", s, "now", now)
	wantGone(t, "the same, taken at its expiry's earlier time", s, "past", now.Add(-2*time.Minute))
}

func testOneTimeReplace(t *testing.T, s onetime.Store, clock *Clock) {
	now := clock.Now()
	put(t, s, "k", []byte("first"), now.Add(time.Minute))
	put(t, s, "k", []byte("second"), now.Add(time.Hour))
	wantTake(t, "after a replacing Put, with the new expiry", s, "k", now.Add(30*time.Minute), []byte("second"))
	wantGone(t, "a replaced value is not left behind", s, "k", now)

	put(t, s, "k", []byte("long"), now.Add(time.Hour))
	put(t, s, "k", []byte("short"), now.Add(time.Minute))
	wantGone(t, "the replacing Put's earlier expiry holds", s, "k", now.Add(30*time.Minute))

	put(t, s, "k", []byte("live"), now.Add(time.Hour))
	put(t, s, "k", []byte("dead"), now.Add(-time.Minute))
	wantGone(t, "a live value replaced by an expired one", s, "k", now)

	put(t, s, "k", []byte("expired"), now.Add(time.Millisecond))
	clock.Set(now.Add(time.Minute))
	put(t, s, "k", []byte("fresh"), now.Add(2*time.Minute))
	wantTake(t, "an expired value replaced by a live one", s, "k", now.Add(time.Minute), []byte("fresh"))
}

// testOneTimeRace: goroutines take one key at once, round after round:
// exactly one gets the data, every other one ErrNotFound.
func testOneTimeRace(t *testing.T, s onetime.Store, clock *Clock) {
	const takers = 8
	now := clock.Now()
	for round := range 20 {
		key := fmt.Sprintf("race-%d", round)
		data := []byte(fmt.Sprintf("data of round %d", round))
		put(t, s, key, data, now.Add(time.Minute))
		wins := countWinnersN(t, takers, func(int) error {
			got, err := s.Take(ctx(t), key, now)
			if err == nil && !bytes.Equal(got, data) {
				return fmt.Errorf("round %d: took %q, want %q", round, got, data)
			}
			return err
		}, onetime.ErrNotFound)
		if wins != 1 {
			t.Fatalf("round %d: %d of %d racing Takes got the data, want exactly 1", round, wins, takers)
		}
		wantGone(t, "after the race", s, key, now)
	}
}

func testOneTimeCopied(t *testing.T, s onetime.Store, clock *Clock) {
	now := clock.Now()
	buf := []byte("original")
	put(t, s, "k", buf, now.Add(time.Minute))
	copy(buf, "XXXXXXXX")
	wantTake(t, "after the caller reused its buffer", s, "k", now, []byte("original"))

	put(t, s, "empty", []byte{}, now.Add(time.Minute))
	got, err := s.Take(ctx(t), "empty", now)
	if err != nil || len(got) != 0 {
		t.Fatalf("Take of empty data = %q, %v; want no bytes, no error", got, err)
	}
	put(t, s, "nil", nil, now.Add(time.Minute))
	got, err = s.Take(ctx(t), "nil", now)
	if err != nil || len(got) != 0 {
		t.Fatalf("Take of nil data = %q, %v; want no bytes, no error", got, err)
	}

	all := make([]byte, 0, 512)
	for i := range 512 {
		all = append(all, byte(i))
	}
	put(t, s, "binary", all, now.Add(time.Minute))
	wantTake(t, "every byte value", s, "binary", now, all)
	big := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	put(t, s, "big", big, now.Add(time.Minute))
	wantTake(t, "64 KiB", s, "big", now, big)
}

func testOneTimeContext(t *testing.T, s onetime.Store, clock *Clock) {
	now := clock.Now()
	done, cancel := context.WithCancel(ctx(t))
	cancel()
	if err := s.Put(done, "k", []byte("x"), now.Add(time.Minute)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	wantGone(t, "after a Put with a cancelled context", s, "k", now)

	put(t, s, "k", []byte("kept"), now.Add(time.Minute))
	if got, err := s.Take(done, "k", now); !errors.Is(err, context.Canceled) {
		t.Fatalf("Take with a cancelled context = %q, %v; want an error wrapping context.Canceled", got, err)
	}
	wantTake(t, "after a Take with a cancelled context", s, "k", now, []byte("kept"))
}

// testOneTimeKeys: every key below is its own: Put all, then Take each.
func testOneTimeKeys(t *testing.T, s onetime.Store, clock *Clock) {
	keys := []string{
		"",
		"a", "A", "a ", " a", "a\t", // case and padding: binary comparison
		"ü", "u\u0308", // the same letter, composed and not: bytes compare
		"日本語のキー", "😀",
		"nul\x00inside", "\x00",
		"\xff\xfe invalid UTF-8",
		"sha256:" + strings.Repeat("0", 64), // the form some stores hash long keys to
		"%_*?[]{}\\'\"",                     // LIKE, glob and quoting characters
		strings.Repeat("k", 10000),
		strings.Repeat("k", 9999) + "l",
	}
	now := clock.Now()
	for i, k := range keys {
		put(t, s, k, []byte(fmt.Sprintf("value %d", i)), now.Add(time.Minute))
	}
	for i, k := range keys {
		wantTake(t, fmt.Sprintf("key %d", i), s, k, now, []byte(fmt.Sprintf("value %d", i)))
	}
	for i, k := range keys {
		wantGone(t, fmt.Sprintf("key %d, taken", i), s, k, now)
	}
}

// testOneTimeRefreshFamilies runs token mode's refresh families on s.
func testOneTimeRefreshFamilies(t *testing.T, s onetime.Store, clock *Clock) {
	u := &user.User{ID: "u-refresh", Email: "ada@example.com"}
	m, err := session.New(session.Config{
		Secrets:     []string{"storetest-refresh-families-0123456789abcdef"},
		ResolveUser: func(context.Context, string) (*user.User, error) { return u, nil },
		Store:       store.NewMemorySessions(store.MemoryConfig{Now: clock.Now}),
		Tokens:      session.TokenConfig{Families: s},
		Now:         clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	login := func() session.Tokens {
		ts := m.TokenSession("")
		if err := ts.Login(ctx(t), u, false); err != nil {
			t.Fatalf("token-mode Login: %v", err)
		}
		tk, _ := ts.Tokens()
		return tk
	}
	refresh := func(tok string) (session.Tokens, error) {
		ts := m.TokenSession("")
		if _, err := ts.Refresh(ctx(t), tok); err != nil {
			return session.Tokens{}, err
		}
		tk, _ := ts.Tokens()
		return tk, nil
	}
	first := login()
	clock.Advance(time.Second)
	second, err := refresh(first.Refresh)
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	third, err := refresh(second.Refresh)
	if err != nil {
		t.Fatalf("second refresh: %v", err)
	}
	if _, err := refresh(first.Refresh); !errors.Is(err, session.ErrRefreshReused) {
		t.Fatalf("a retired refresh token: %v, want session.ErrRefreshReused", err)
	}
	if _, err := m.AccessUser(ctx(t), third.Access); !errors.Is(err, session.ErrNotAuthenticated) {
		t.Errorf("the newest access token after a reuse: %v, want the session ended", err)
	}

	tk := login()
	wins := countWinnersN(t, 50, func(int) error {
		_, err := refresh(tk.Refresh)
		return err
	}, session.ErrInvalidRefresh)
	if wins != 1 {
		t.Errorf("%d of 50 racing refreshes with one token succeeded, want exactly 1", wins)
	}
}
