package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/secretbox"
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
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	s, err := New(Config{
		Users: users, Secrets: []string{strings.Repeat("k", 32)}, Keys: keys, AppURL: "http://app.test",
		Hasher: password.ForTesting(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		LimitStore:        func(string) ratelimit.Store { return downStore{} },
		RateLimitFailOpen: failOpen,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func login(t *testing.T, s *Service) (int, string) {
	t.Helper()
	r := jsonReq(`{"email":"ada@example.com","password":"correct horse"}`)
	r.remote = "203.0.113.9:5000"
	for _, rt := range s.Routes() {
		if rt.Pattern == "/api/login" {
			resp := s.Handle(rt, r)
			var body map[string]string
			_ = json.Unmarshal(resp.Body, &body)
			return resp.Status, body["error"]
		}
	}
	t.Fatal("no login route")
	return 0, ""
}

// TestRateLimitStoreDown: by default a limit whose store fails refuses the
// request with 503 (fail closed); with RateLimitFailOpen it lets it
// through to the password check.
func TestRateLimitStoreDown(t *testing.T) {
	if status, msg := login(t, testService(t, noUsers{}, false)); status != 503 || msg != msgUnavailable {
		t.Fatalf("fail closed: %d %q, want 503 %q", status, msg, msgUnavailable)
	}
	if status, msg := login(t, testService(t, noUsers{}, true)); status != 401 || msg != msgInvalidCredentials {
		t.Fatalf("fail open: %d %q, want 401 %q", status, msg, msgInvalidCredentials)
	}
}

// TestUserStoreDown: an unreachable user store answers 503, not 401.
func TestUserStoreDown(t *testing.T) {
	if status, msg := login(t, testService(t, downUsers{}, true)); status != 503 || msg != msgUnavailable {
		t.Fatalf("%d %q, want 503 %q", status, msg, msgUnavailable)
	}
}

func TestSessionCookieName(t *testing.T) {
	s := testService(t, noUsers{}, false)
	if got := s.Sessions().CookieName(); got != "authkit_session" {
		t.Fatalf("default cookie name %q", got)
	}
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	h, err := New(Config{Users: noUsers{}, Secrets: []string{strings.Repeat("k", 32)}, Keys: keys,
		AppURL: "https://app.test", Hasher: password.ForTesting(), SessionCookie: "__Host-sid"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if got := h.Sessions().CookieName(); got != "__Host-sid" {
		t.Fatalf("cookie name %q, want __Host-sid", got)
	}
}
