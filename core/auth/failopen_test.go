package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/user"
)

// downStore is a rate-limit store whose backend is gone.
type downStore struct{}

func (downStore) Increment(context.Context, string, time.Duration) (int64, time.Time, error) {
	return 0, time.Time{}, errors.New("dial tcp 127.0.0.1:6379: connection refused")
}
func (downStore) Reset(context.Context, string) error { return errors.New("connection refused") }

// noUsers is a user store without users.
type noUsers struct{ user.Store }

func (noUsers) ByEmail(context.Context, string) (*user.User, error) {
	return nil, fmt.Errorf("test: %w", user.ErrNotFound)
}

// downUsers is a user store whose database is unreachable.
type downUsers struct{ user.Store }

func (downUsers) ByEmail(context.Context, string) (*user.User, error) {
	return nil, fmt.Errorf("test: dial: %w", user.ErrUnavailable)
}

func testService(t testing.TB, users user.Store, failOpen bool) *Service {
	t.Helper()
	return mustNewWith(t, func(c *Config) {
		c.Users = users
		c.LimitStore = func(string) ratelimit.Store { return downStore{} }
		c.RateLimitFailOpen = failOpen
	})
}

func login(t *testing.T, s *Service) (int, string) {
	t.Helper()
	resp := loginWith(t, s, context.Background())
	var body map[string]string
	_ = json.Unmarshal(resp.Body, &body)
	if resp.Status == 503 && resp.Header.Get("Retry-After") != "5" {
		t.Errorf("503 with Retry-After %q, want \"5\" (RetryAfterUnavailable)", resp.Header.Get("Retry-After"))
	}
	if resp.Status != 503 && resp.Header.Get("Retry-After") != "" {
		t.Errorf("%d with Retry-After %q, want none", resp.Status, resp.Header.Get("Retry-After"))
	}
	return resp.Status, body["error"]
}

func loginWith(t *testing.T, s *Service, ctx context.Context) Response {
	t.Helper()
	r := jsonReq(`{"email":"ada@example.com","password":"correct horse"}`)
	r.remote = "203.0.113.9:5000"
	r.ctx = ctx
	for _, rt := range s.Modules().Routes() {
		if rt.Pattern == "/api/login" {
			return s.Modules().Handle(rt, r)
		}
	}
	t.Fatal("no login route")
	return Response{}
}

// ctxUsers is a user store that fails the way a database driver does when
// the request's context ends: with the context's error.
type ctxUsers struct{ user.Store }

func (ctxUsers) ByEmail(ctx context.Context, _ string) (*user.User, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("test: query: %w", err)
	}
	return nil, fmt.Errorf("test: %w", user.ErrNotFound)
}

// levels records the levels of the records logged.
type levels struct {
	mu  sync.Mutex
	got []slog.Level
}

func (l *levels) Enabled(context.Context, slog.Level) bool { return true }
func (l *levels) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, r.Level)
	return nil
}
func (l *levels) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levels) WithGroup(string) slog.Handler      { return l }

// TestCanceledRequest: a request whose client hung up is logged once, at
// debug level, never as an error, and answered 503 (which nobody reads).
func TestCanceledRequest(t *testing.T) {
	lv := &levels{}
	s := mustNewWith(t, func(c *Config) {
		c.Users, c.Logger = ctxUsers{}, slog.New(lv)
		c.Lockout, c.Limits = LockoutOff, Limits{LoginIP: Off, LoginEmail: Off}
	})
	lv.mu.Lock()
	lv.got = nil // New's own records (its console-mailer warning) are not the request's
	lv.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp := loginWith(t, s, ctx)
	if resp.Status != 503 || resp.Header.Get("Retry-After") != "5" {
		t.Errorf("canceled: %d, Retry-After %q; want 503 and 5", resp.Status, resp.Header.Get("Retry-After"))
	}
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if len(lv.got) != 1 || lv.got[0] != slog.LevelDebug {
		t.Errorf("canceled: logged at levels %v, want one debug record", lv.got)
	}
}

// TestRateLimitStoreDown: by default a limit whose store fails refuses the
// request with 503 (fail closed); with RateLimitFailOpen it lets it
// through to the password check.
func TestRateLimitStoreDown(t *testing.T) {
	if status, msg := login(t, testService(t, noUsers{}, false)); status != 503 || msg != ErrUnavailable.Message {
		t.Fatalf("fail closed: %d %q, want 503 %q", status, msg, ErrUnavailable.Message)
	}
	if status, msg := login(t, testService(t, noUsers{}, true)); status != 401 || msg != ErrInvalidCredentials.Message {
		t.Fatalf("fail open: %d %q, want 401 %q", status, msg, ErrInvalidCredentials.Message)
	}
}

// TestUserStoreDown: an unreachable user store answers 503, not 401.
func TestUserStoreDown(t *testing.T) {
	if status, msg := login(t, testService(t, downUsers{}, true)); status != 503 || msg != ErrUnavailable.Message {
		t.Fatalf("%d %q, want 503 %q", status, msg, ErrUnavailable.Message)
	}
}

func TestSessionCookieName(t *testing.T) {
	s := testService(t, noUsers{}, false)
	if got := s.Modules().SessionManager().CookieName(); got != SecureSessionCookie {
		t.Fatalf("default cookie name %q with Secure cookies, want %s", got, SecureSessionCookie)
	}
	dev := mustNewWith(t, func(c *Config) { c.AppURL, c.Insecure = "http://localhost", true })
	if got := dev.Modules().SessionManager().CookieName(); got != "authkit_session" {
		t.Fatalf("default cookie name %q with Insecure, want authkit_session (a browser refuses __Host- over plain HTTP)", got)
	}
	h := mustNewWith(t, func(c *Config) { c.AppURL, c.SessionCookie = "https://app.test", "__Host-sid" })
	if got := h.Modules().SessionManager().CookieName(); got != "__Host-sid" {
		t.Fatalf("cookie name %q, want __Host-sid", got)
	}
}
