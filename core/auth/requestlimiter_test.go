package auth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clientip"
	"github.com/authkit-go/authkit/core/ratelimit"
)

var limiterNow = time.Date(2031, time.March, 14, 15, 9, 26, 0, time.UTC)

// keysStore is a rate-limit store that records the keys it is asked for,
// over a memory store, or fails every call when down.
type keysStore struct {
	*ratelimit.MemoryStore
	keys []string
	down bool
}

func (s *keysStore) Increment(ctx context.Context, key string, window time.Duration) (int64, time.Time, error) {
	s.keys = append(s.keys, key)
	if s.down {
		return 0, time.Time{}, errors.New("dial tcp 127.0.0.1:6379: connection refused")
	}
	return s.MemoryStore.Increment(ctx, key, window)
}

func newRequestLimiter(t *testing.T, max int, edit func(*auth.RequestLimiterConfig)) (*auth.RequestLimiter, *keysStore) {
	t.Helper()
	now := func() time.Time { return limiterNow }
	store := &keysStore{MemoryStore: ratelimit.NewMemoryStore(ratelimit.MemoryConfig{Now: now})}
	t.Cleanup(func() { _ = store.Close() })
	lim, err := ratelimit.New(ratelimit.Config{MaxAttempts: max, Window: time.Minute, Store: store, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	cfg := auth.RequestLimiterConfig{Limiter: lim, Name: "search", Now: now}
	if edit != nil {
		edit(&cfg)
	}
	l, err := auth.NewRequestLimiter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l, store
}

func limiterRequest(remote string, header ...string) auth.Request {
	r := httptest.NewRequest(http.MethodGet, "/search", nil)
	r.RemoteAddr = remote
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	return auth.HTTPRequest(r, nil)
}

func decodeBody(t *testing.T, resp *auth.Response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(resp.Body, &m); err != nil {
		t.Fatalf("body %q: %v", resp.Body, err)
	}
	return m
}

func TestRequestLimiterAnswersAsTheRoutes(t *testing.T) {
	l, store := newRequestLimiter(t, 2, nil)
	for i, remaining := range []string{"1", "0"} {
		h, deny := l.Check(limiterRequest("192.0.2.7:4000"))
		if deny != nil {
			t.Fatalf("request %d refused: %d %s", i+1, deny.Status, deny.Body)
		}
		if got := h.Get("X-RateLimit-Remaining"); got != remaining {
			t.Errorf("request %d: X-RateLimit-Remaining %q, want %q", i+1, got, remaining)
		}
		if got := h.Get("X-RateLimit-Reset"); got != "2031-03-14T15:10:26.000Z" {
			t.Errorf("request %d: X-RateLimit-Reset %q", i+1, got)
		}
	}
	h, deny := l.Check(limiterRequest("192.0.2.7:4000"))
	if h != nil || deny == nil || deny.Status != http.StatusTooManyRequests {
		t.Fatalf("third request: headers %v, deny %+v; want 429", h, deny)
	}
	body := decodeBody(t, deny)
	if body["error"] != "Too many requests. Try again later." || body["code"] != "too_many_requests" ||
		body["retryAfter"] != "2031-03-14T15:10:26.000Z" || len(body) != 3 {
		t.Errorf("429 body %s", deny.Body)
	}
	for name, want := range map[string]string{
		"Retry-After": "60", "X-RateLimit-Remaining": "0", "Content-Type": "application/json; charset=utf-8",
		"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
	} {
		if got := deny.Header.Get(name); got != want {
			t.Errorf("429 %s %q, want %q", name, got, want)
		}
	}
	// Another client has its own window; the keys carry the limit's name
	// and the address as authkit's own limits key it.
	if _, deny := l.Check(limiterRequest("198.51.100.9:4000")); deny != nil {
		t.Errorf("another client refused: %s", deny.Body)
	}
	if want := []string{"search:192.0.2.7", "search:192.0.2.7", "search:192.0.2.7", "search:198.51.100.9"}; strings.Join(store.keys, " ") != strings.Join(want, " ") {
		t.Errorf("keys %q, want %q", store.keys, want)
	}
}

func TestRequestLimiterKeys(t *testing.T) {
	t.Run("behind a trusted proxy, the forwarded client", func(t *testing.T) {
		proxies, err := clientip.Parse("10.0.0.0/8")
		if err != nil {
			t.Fatal(err)
		}
		l, store := newRequestLimiter(t, 5, func(c *auth.RequestLimiterConfig) { c.Proxies = proxies })
		l.Check(limiterRequest("10.1.2.3:4000", "X-Forwarded-For", "203.0.113.5"))
		l.Check(limiterRequest("192.0.2.7:4000", "X-Forwarded-For", "203.0.113.5")) // not a proxy: its own address
		l.Check(limiterRequest("[2001:db8:1:2:3:4:5:6]:4000"))
		want := "search:203.0.113.5 search:192.0.2.7 search:2001:db8:1:2::/64"
		if got := strings.Join(store.keys, " "); got != want {
			t.Errorf("keys %q, want %q", got, want)
		}
	})
	t.Run("the app's key, a long one hashed", func(t *testing.T) {
		l, store := newRequestLimiter(t, 5, func(c *auth.RequestLimiterConfig) {
			c.Key = func(r auth.Request) string { return r.Header("X-Api-Client") }
		})
		l.Check(limiterRequest("192.0.2.7:4000", "X-Api-Client", "acme"))
		l.Check(limiterRequest("192.0.2.7:4000", "X-Api-Client", strings.Repeat("é", 400)))
		if len(store.keys) != 2 || store.keys[0] != "search:acme" || !strings.HasPrefix(store.keys[1], "search:sha256:") || len(store.keys[1]) != len("search:sha256:")+64 {
			t.Errorf("keys %q, want search:acme and a hashed long key", store.keys)
		}
	})
}

func TestRequestLimiterMessage(t *testing.T) {
	l, _ := newRequestLimiter(t, 1, func(c *auth.RequestLimiterConfig) { c.Message = "Slow down, searcher." })
	l.Check(limiterRequest("192.0.2.7:4000"))
	_, deny := l.Check(limiterRequest("192.0.2.7:4000"))
	if deny == nil {
		t.Fatal("second request allowed")
	}
	if body := decodeBody(t, deny); body["error"] != "Slow down, searcher." || body["code"] != "too_many_requests" {
		t.Errorf("429 body %s", deny.Body)
	}
}

func TestRequestLimiterStoreDown(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	t.Run("fails closed", func(t *testing.T) {
		l, store := newRequestLimiter(t, 5, func(c *auth.RequestLimiterConfig) { c.Logger = logger })
		store.down = true
		h, deny := l.Check(limiterRequest("192.0.2.7:4000"))
		if h != nil || deny == nil || deny.Status != http.StatusServiceUnavailable || deny.Header.Get("Retry-After") != "5" {
			t.Fatalf("store down: %v %+v, want 503 with Retry-After 5", h, deny)
		}
		if body := decodeBody(t, deny); body["code"] != "service_unavailable" || body["error"] != "Service temporarily unavailable. Try again later." {
			t.Errorf("503 body %s", deny.Body)
		}
	})
	t.Run("fails open when asked", func(t *testing.T) {
		l, store := newRequestLimiter(t, 5, func(c *auth.RequestLimiterConfig) { c.Logger = logger; c.FailOpen = true })
		store.down = true
		h, deny := l.Check(limiterRequest("192.0.2.7:4000"))
		if deny != nil || h == nil || len(h) != 0 {
			t.Fatalf("store down, fail open: %v %+v, want through without rate headers", h, deny)
		}
	})
	if n := strings.Count(logs.String(), "rate-limit store failed"); n != 2 {
		t.Errorf("%d store failures logged, want 2:\n%s", n, logs.String())
	}
}

func TestRequestLimiterStoreFull(t *testing.T) {
	now := func() time.Time { return limiterNow }
	store := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{Now: now, Capacity: 1})
	t.Cleanup(func() { _ = store.Close() })
	lim, err := ratelimit.New(ratelimit.Config{MaxAttempts: 5, Window: time.Minute, Store: store, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	l, err := auth.NewRequestLimiter(auth.RequestLimiterConfig{Limiter: lim, Name: "search", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, deny := l.Check(limiterRequest("192.0.2.7:4000")); deny != nil {
		t.Fatalf("first client refused: %s", deny.Body)
	}
	// The store holds one key: a new client is limited (the ratelimit
	// package's rule at capacity), the known one still counted.
	if _, deny := l.Check(limiterRequest("198.51.100.9:4000")); deny == nil || deny.Status != http.StatusTooManyRequests {
		t.Errorf("new client at capacity: %+v, want 429", deny)
	}
	if h, deny := l.Check(limiterRequest("192.0.2.7:4000")); deny != nil || h.Get("X-RateLimit-Remaining") != "3" {
		t.Errorf("known client at capacity: %v %+v, want through with 3 left", h, deny)
	}
}

func TestNewRequestLimiterNamesWhatIsMissing(t *testing.T) {
	_, err := auth.NewRequestLimiter(auth.RequestLimiterConfig{})
	if err == nil || !strings.Contains(err.Error(), "the Limiter is required") || !strings.Contains(err.Error(), "a Name is required") {
		t.Errorf("err = %v, want both Limiter and Name named", err)
	}
}
