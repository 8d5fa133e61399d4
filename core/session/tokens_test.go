package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/token"
)

// tokenFixture is a fixture in token mode: records and a family store.
func tokenFixture(t *testing.T, modify ...func(*Config)) (*fixture, *records, *onetime.MemoryStore) {
	t.Helper()
	fam := onetime.NewMemoryStore(onetime.MemoryConfig{})
	f, recs := recordFixture(t, append([]func(*Config){func(c *Config) { c.Tokens.Families = fam }}, modify...)...)
	return f, recs, fam
}

// tokenLogin logs alice in in token mode and returns her tokens.
func (f *fixture) tokenLogin(t *testing.T, remember bool) Tokens {
	t.Helper()
	s := f.m.TokenSession("")
	if err := s.Login(context.Background(), f.alice, remember); err != nil {
		t.Fatalf("Login: %v", err)
	}
	tk, ok := s.Tokens()
	if !ok {
		t.Fatal("Login in token mode issued no tokens")
	}
	return tk
}

func (f *fixture) refresh(refresh string) (Tokens, error) {
	s := f.m.TokenSession("")
	if _, err := s.Refresh(context.Background(), refresh); err != nil {
		return Tokens{}, err
	}
	tk, _ := s.Tokens()
	return tk, nil
}

func TestTokenLoginIssuesTokensNotCookies(t *testing.T) {
	f, recs, _ := tokenFixture(t)
	tk := f.tokenLogin(t, false)
	if !strings.HasPrefix(tk.Access, AccessPrefix) || !strings.HasPrefix(tk.Refresh, RefreshPrefix) {
		t.Fatalf("tokens %q, %q: want prefixes %q and %q", tk.Access, tk.Refresh, AccessPrefix, RefreshPrefix)
	}
	if !tk.AccessExpires.Equal(t0.Add(DefaultAccessLifetime)) {
		t.Errorf("AccessExpires %v, want %v", tk.AccessExpires, t0.Add(DefaultAccessLifetime))
	}
	rec := recs.only(t)
	u, err := f.m.TokenSession(tk.Access).User(context.Background())
	if err != nil || u != f.alice {
		t.Fatalf("User with the access token = %v, %v; want alice", u, err)
	}
	if u, err := f.m.AccessUser(context.Background(), tk.Access); err != nil || u != f.alice {
		t.Fatalf("AccessUser = %v, %v; want alice", u, err)
	}
	s := f.m.TokenSession(tk.Access)
	_, _ = s.User(context.Background())
	if s.RecordID() != rec.ID {
		t.Errorf("RecordID %q, want %q", s.RecordID(), rec.ID)
	}
}

func TestTokensAreNotCookiesNorEachOther(t *testing.T) {
	f, _, _ := tokenFixture(t)
	tk := f.tokenLogin(t, false)
	cookie := f.loginWithRecord(t, false)
	access := strings.TrimPrefix(tk.Access, AccessPrefix)
	refresh := strings.TrimPrefix(tk.Refresh, RefreshPrefix)
	for name, c := range map[string]string{"access token": access, "refresh token": refresh} {
		if _, err := f.m.User(context.Background(), c); !errors.Is(err, ErrNotAuthenticated) || !errors.Is(err, token.ErrSignature) {
			t.Errorf("%s as a cookie: %v, want ErrNotAuthenticated wrapping token.ErrSignature", name, err)
		}
	}
	for name, a := range map[string]string{"cookie": AccessPrefix + cookie, "refresh token": AccessPrefix + refresh, "no prefix": access, "refresh prefix": RefreshPrefix + access} {
		if _, err := f.m.AccessUser(context.Background(), a); !errors.Is(err, ErrNotAuthenticated) {
			t.Errorf("%s as an access token: %v, want ErrNotAuthenticated", name, err)
		}
	}
	for name, r := range map[string]string{"cookie": RefreshPrefix + cookie, "access token": RefreshPrefix + access, "no prefix": refresh, "empty": "", "prefix only": RefreshPrefix} {
		if _, err := f.refresh(r); !errors.Is(err, ErrInvalidRefresh) || errors.Is(err, ErrRefreshReused) {
			t.Errorf("%s as a refresh token: %v, want ErrInvalidRefresh, not reuse", name, err)
		}
	}
	// None of those refusals ended the session.
	if _, err := f.refresh(tk.Refresh); err != nil {
		t.Errorf("the real refresh token after the refusals: %v", err)
	}
}

func TestAccessTokenExpires(t *testing.T) {
	f, _, _ := tokenFixture(t, func(c *Config) { c.Tokens.AccessLifetime = 5 * time.Minute })
	tk := f.tokenLogin(t, true)
	f.clk.t = t0.Add(5*time.Minute - time.Millisecond)
	if _, err := f.m.AccessUser(context.Background(), tk.Access); err != nil {
		t.Fatalf("just before its end: %v", err)
	}
	f.clk.t = t0.Add(5 * time.Minute)
	if _, err := f.m.AccessUser(context.Background(), tk.Access); !errors.Is(err, ErrNotAuthenticated) || !errors.Is(err, token.ErrExpired) {
		t.Fatalf("at its end: %v, want ErrNotAuthenticated wrapping token.ErrExpired", err)
	}
	next, err := f.refresh(tk.Refresh)
	if err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if u, err := f.m.AccessUser(context.Background(), next.Access); err != nil || u != f.alice {
		t.Fatalf("the refreshed access token: %v, %v", u, err)
	}
}

func TestRefreshRotatesAndReuseEndsTheSession(t *testing.T) {
	f, recs, _ := tokenFixture(t)
	first := f.tokenLogin(t, false)
	f.clk.t = t0.Add(2 * time.Minute)
	second, err := f.refresh(first.Refresh)
	if err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if second.Refresh == first.Refresh || second.Access == first.Access {
		t.Fatal("Refresh handed out the same tokens again")
	}
	if got := recs.only(t).LastSeenAt; !got.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("LastSeenAt after the refresh %v, want %v", got, t0.Add(2*time.Minute))
	}
	third, err := f.refresh(second.Refresh)
	if err != nil {
		t.Fatalf("second Refresh: %v", err)
	}
	// The first refresh token, two generations old, is a copy: the
	// session ends, for the thief and for the client alike.
	if _, err := f.refresh(first.Refresh); !errors.Is(err, ErrInvalidRefresh) || !errors.Is(err, ErrRefreshReused) {
		t.Fatalf("reused refresh token: %v, want ErrInvalidRefresh wrapping ErrRefreshReused", err)
	}
	if len(recs.byID) != 0 {
		t.Errorf("%d records after a reuse, want 0", len(recs.byID))
	}
	if _, err := f.m.AccessUser(context.Background(), third.Access); !errors.Is(err, ErrNotAuthenticated) || !errors.Is(err, errRecordGone) {
		t.Errorf("the newest access token after a reuse: %v, want ErrNotAuthenticated (record gone)", err)
	}
	if _, err := f.refresh(third.Refresh); !errors.Is(err, ErrInvalidRefresh) {
		t.Errorf("the newest refresh token after a reuse: %v, want ErrInvalidRefresh", err)
	}
}

func TestRefreshRaceHasOneWinner(t *testing.T) {
	f, recs, _ := tokenFixture(t)
	tk := f.tokenLogin(t, false)
	const n = 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []Tokens
	reused := 0
	for range n {
		wg.Go(func() {
			got, err := f.refresh(tk.Refresh)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, got)
			case errors.Is(err, ErrRefreshReused), errors.Is(err, ErrInvalidRefresh):
				reused++
			default:
				t.Errorf("Refresh: %v", err)
			}
		})
	}
	wg.Wait()
	if len(won) != 1 || reused != n-1 {
		t.Fatalf("%d refreshes won, %d refused; want exactly 1 and %d", len(won), reused, n-1)
	}
	// The losers used a retired token: the session ended.
	if len(recs.byID) != 0 {
		t.Errorf("%d records after a raced refresh, want 0", len(recs.byID))
	}
}

func TestRefreshEndsWithTheSession(t *testing.T) {
	ctx := context.Background()
	t.Run("logout", func(t *testing.T) {
		f, _, _ := tokenFixture(t)
		tk := f.tokenLogin(t, false)
		if err := f.m.TokenSession(tk.Access).Logout(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := f.refresh(tk.Refresh); !errors.Is(err, ErrInvalidRefresh) || !errors.Is(err, errRecordGone) {
			t.Errorf("refresh after logout: %v, want ErrInvalidRefresh (record gone)", err)
		}
		if _, err := f.m.AccessUser(ctx, tk.Access); !errors.Is(err, ErrNotAuthenticated) {
			t.Errorf("access token after logout: %v", err)
		}
	})
	// A session that ended on its own is refused with the reason, and the
	// refresh deletes its record.
	for _, tc := range []struct {
		name   string
		config []func(*Config)
		end    func(f *fixture)
		reason error
	}{
		{"session version", nil, func(f *fixture) { f.alice.SessionVersion++ }, errVersion},
		{"password changed", nil, func(f *fixture) {
			f.clk.t = t0.Add(time.Minute)
			f.alice.PasswordChangedAt = f.clk.t
		}, errPasswordChanged},
		{"idle", []func(*Config){func(c *Config) { c.IdleTimeout = 30 * time.Minute }}, func(f *fixture) { f.clk.t = t0.Add(30 * time.Minute) }, errIdle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, recs, _ := tokenFixture(t, tc.config...)
			tk := f.tokenLogin(t, false)
			tc.end(f)
			if _, err := f.refresh(tk.Refresh); !errors.Is(err, ErrInvalidRefresh) || !errors.Is(err, tc.reason) {
				t.Errorf("refresh: %v, want ErrInvalidRefresh (%v)", err, tc.reason)
			}
			if len(recs.byID) != 0 {
				t.Errorf("%d records, want 0", len(recs.byID))
			}
		})
	}
	t.Run("lifetime", func(t *testing.T) {
		f, _, _ := tokenFixture(t)
		tk := f.tokenLogin(t, false)
		for i := 1; i <= 23; i++ { // refreshed within every idle window, a day long
			f.clk.t = t0.Add(time.Duration(i) * time.Hour)
			var err error
			if tk, err = f.refresh(tk.Refresh); err != nil {
				t.Fatalf("refresh at %dh: %v", i, err)
			}
		}
		f.clk.t = t0.Add(24 * time.Hour)
		if _, err := f.refresh(tk.Refresh); !errors.Is(err, ErrInvalidRefresh) {
			t.Errorf("refresh at the session's end: %v, want ErrInvalidRefresh", err)
		}
	})
}

func TestTokenRenewAndReauthenticate(t *testing.T) {
	ctx := context.Background()
	f, recs, _ := tokenFixture(t)
	tk := f.tokenLogin(t, true)
	// A change in this session raises the version and renews it.
	s := f.m.TokenSession(tk.Access)
	if _, err := s.User(ctx); err != nil {
		t.Fatal(err)
	}
	f.alice.SessionVersion++
	if err := s.Renew(ctx, f.alice); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	renewed, ok := s.Tokens()
	if !ok {
		t.Fatal("Renew issued no tokens")
	}
	if _, err := f.m.AccessUser(ctx, tk.Access); !errors.Is(err, errVersion) {
		t.Errorf("the access token from before the change: %v, want refused (version)", err)
	}
	if _, err := f.m.AccessUser(ctx, renewed.Access); err != nil {
		t.Errorf("the renewed access token: %v", err)
	}
	// Re-authentication moves the session to a new record: the refresh
	// token from before it is retired with the old record.
	f.clk.t = t0.Add(time.Minute)
	s = f.m.TokenSession(renewed.Access)
	if _, err := s.User(ctx); err != nil {
		t.Fatal(err)
	}
	old := s.RecordID()
	if err := s.Reauthenticate(ctx, f.alice); err != nil {
		t.Fatalf("Reauthenticate: %v", err)
	}
	reauth, _ := s.Tokens()
	if s.RecordID() == old || !s.AuthenticatedAt().Equal(f.clk.t) {
		t.Errorf("after Reauthenticate: record %q (was %q), authenticated at %v", s.RecordID(), old, s.AuthenticatedAt())
	}
	if _, err := f.refresh(renewed.Refresh); !errors.Is(err, ErrRefreshReused) {
		t.Errorf("the refresh token from before the re-authentication: %v, want reuse", err)
	}
	next, err := f.refresh(reauth.Refresh)
	if err != nil {
		t.Fatalf("refresh after Reauthenticate: %v", err)
	}
	s = f.m.TokenSession(next.Access)
	if _, err := s.User(ctx); err != nil || !s.AuthenticatedAt().Equal(f.clk.t) {
		t.Errorf("refreshed session: %v, authenticated at %v; want the re-authentication's time", err, s.AuthenticatedAt())
	}
	if rec, ok := recs.byID[s.RecordID()]; !ok || !rec.Remember {
		t.Errorf("the session's record after the refresh: %+v, %v; want the remembered one", rec, ok)
	}
}

func TestTokenModeConfig(t *testing.T) {
	fam := onetime.NewMemoryStore(onetime.MemoryConfig{})
	for name, cfg := range map[string]Config{
		"no store":               {Tokens: TokenConfig{Families: fam}},
		"lifetime without store": {Store: newRecords(), Tokens: TokenConfig{AccessLifetime: time.Minute}},
		"lifetime too short":     {Store: newRecords(), Tokens: TokenConfig{Families: fam, AccessLifetime: time.Millisecond}},
	} {
		cfg.Secrets = []string{secretA}
		cfg.ResolveUser = (&users{}).resolve
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig", name, err)
		}
	}
	// Without token mode a token session never authenticates.
	f, _ := recordFixture(t)
	if err := f.m.TokenSession("").Login(context.Background(), f.alice, false); err == nil {
		t.Error("Login in token mode without Config.Tokens succeeded")
	}
	if _, err := f.m.TokenSession("").Refresh(context.Background(), RefreshPrefix+"x"); !errors.Is(err, ErrInvalidRefresh) {
		t.Errorf("Refresh without Config.Tokens: %v", err)
	}
}
