package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// TestSecureDefaults: the shortest configuration keeps session records in
// a user store that offers them (so logout means logout), ends sessions
// idle for 30 minutes (not those the user asked to remember), and keeps
// the logins waiting for their second step in the user store's one-time
// store when it offers one; stateless cookies only when asked for.
func TestSecureDefaults(t *testing.T) {
	m := store.NewMemory(store.MemoryConfig{})
	s := mustNewWith(t, func(c *Config) { c.Users = m })
	if s.cfg.Sessions != m.SessionStore() || !s.HasSessionRecords() {
		t.Errorf("Sessions = %v, want the memory store's own records", s.cfg.Sessions)
	}
	if s.cfg.SessionIdleTimeout != DefaultSessionIdleTimeout || s.cfg.RememberIdleTimeout != 0 {
		t.Errorf("idle timeouts %v, remember %v; want %v and none", s.cfg.SessionIdleTimeout, s.cfg.RememberIdleTimeout, DefaultSessionIdleTimeout)
	}

	s = mustNewWith(t, func(c *Config) { c.Users, c.StatelessSessions = m, true })
	if s.cfg.Sessions != nil || s.HasSessionRecords() || s.cfg.SessionIdleTimeout != 0 {
		t.Errorf("StatelessSessions: Sessions %v, idle %v; want none, none", s.cfg.Sessions, s.cfg.SessionIdleTimeout)
	}
	if _, err := newWith(t, func(c *Config) {
		c.Users, c.StatelessSessions, c.Sessions = m, true, store.NewMemorySessions(store.MemoryConfig{})
	}); err == nil {
		t.Error("StatelessSessions with Sessions: New accepted it")
	}

	// A user store that offers no records: stateless, no idle timeout.
	s = mustNewWith(t, func(c *Config) { c.Users, c.Disable, c.Lockout = requiredOf(m), allFeatures, LockoutOff })
	if s.cfg.Sessions != nil || s.cfg.SessionIdleTimeout != 0 {
		t.Errorf("a store without records: Sessions %v, idle %v; want none, none", s.cfg.Sessions, s.cfg.SessionIdleTimeout)
	}

	// An idle timeout the app sets applies to remembered sessions too,
	// unless it sets theirs.
	s = mustNewWith(t, func(c *Config) { c.Users, c.SessionIdleTimeout = m, time.Hour })
	if s.cfg.SessionIdleTimeout != time.Hour || s.cfg.RememberIdleTimeout != time.Hour {
		t.Errorf("SessionIdleTimeout 1h: idle %v, remember %v; want 1h, 1h", s.cfg.SessionIdleTimeout, s.cfg.RememberIdleTimeout)
	}
	s = mustNewWith(t, func(c *Config) { c.Users, c.RememberIdleTimeout = m, 7*24*time.Hour })
	if s.cfg.SessionIdleTimeout != DefaultSessionIdleTimeout || s.cfg.RememberIdleTimeout != 7*24*time.Hour {
		t.Errorf("RememberIdleTimeout 7d: idle %v, remember %v", s.cfg.SessionIdleTimeout, s.cfg.RememberIdleTimeout)
	}
	s = mustNewWith(t, func(c *Config) { c.Users, c.SessionIdleTimeout = m, -1 })
	if s.cfg.SessionIdleTimeout != 0 || s.cfg.RememberIdleTimeout != 0 {
		t.Errorf("SessionIdleTimeout off: idle %v, remember %v; want none", s.cfg.SessionIdleTimeout, s.cfg.RememberIdleTimeout)
	}

	// Pending logins: the user store's one-time store when it offers one.
	ot := onetime.NewMemoryStore(onetime.MemoryConfig{})
	s = mustNewWith(t, func(c *Config) { c.Users = oneTimeUsers{m, ot} })
	if s.pendingLogins != onetime.Store(ot) {
		t.Errorf("pending logins in %T, want the user store's one-time store", s.pendingLogins)
	}
	own := onetime.NewMemoryStore(onetime.MemoryConfig{})
	s = mustNewWith(t, func(c *Config) { c.Users, c.PendingLogins = oneTimeUsers{m, ot}, own })
	if s.pendingLogins != onetime.Store(own) {
		t.Errorf("pending logins in %T, want Config.PendingLogins", s.pendingLogins)
	}
}

// oneTimeUsers is a memory store that offers a one-time store
// (onetime.Provider), as sqlxstore's user store does.
type oneTimeUsers struct {
	*store.Memory
	ot onetime.Store
}

func (u oneTimeUsers) OneTimeStore() onetime.Store { return u.ot }

// downOneTime is a one-time store whose backend is down.
type downOneTime struct{}

func (downOneTime) Put(context.Context, string, []byte, time.Time) error {
	return errors.New("connection refused")
}
func (downOneTime) Take(context.Context, string, time.Time) ([]byte, error) {
	return nil, errors.New("connection refused")
}

// TestPendingStoreDown: when Config.PendingLogins cannot keep a pending
// login, the password step of a 2FA account answers 503 (not 500) and
// sets no pending cookie.
func TestPendingStoreDown(t *testing.T) {
	ctx := context.Background()
	m := store.NewMemory(store.MemoryConfig{})
	s := mustNewWith(t, func(c *Config) { c.Users, c.PendingLogins = m, downOneTime{} })
	h, err := password.ForTesting().Hash(ctx, goodPW)
	if err != nil {
		t.Fatal(err)
	}
	u, err := m.Create(ctx, &user.User{Email: "ada@example.com", Name: "Ada", PasswordHash: h})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.BeginTOTPSetup(ctx, u.ID, "pending"); err != nil {
		t.Fatal(err)
	}
	if err := m.EnableTOTP(ctx, u.ID, user.EnableTOTP{Pending: "pending", Secret: "sealed", RecoveryCodeHashes: []string{"h"}}); err != nil {
		t.Fatal(err)
	}
	v := s.Visit(jsonReq(`{}`))
	_, err = s.Login(ctx, v, LoginInput{Email: "ada@example.com", Password: goodPW})
	if got := AsError(err); got != ErrUnavailable {
		t.Fatalf("login with the pending store down: %v (%v), want 503", got, err)
	}
	for _, c := range v.Cookies() {
		if c.Name == PendingCookie && c.MaxAge >= 0 {
			t.Errorf("a pending cookie was set: %v", c)
		}
	}
}
