package session

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/token"
	"github.com/authkit-go/authkit/core/user"
)

const (
	secretA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	secretB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

// bridge is a fake CookieBridge: req holds the cookies the request carries,
// sets and deletes record the response.
type bridge struct {
	req     map[string]string
	sets    []setCall
	deletes []deleteCall
}

type setCall struct {
	name, value string
	opts        CookieOptions
}

type deleteCall struct {
	name string
	opts CookieOptions
}

func newBridge(cookies ...string) *bridge {
	b := &bridge{req: map[string]string{}}
	for i := 0; i+1 < len(cookies); i += 2 {
		b.req[cookies[i]] = cookies[i+1]
	}
	return b
}

func (b *bridge) Set(name, value string, opts CookieOptions) {
	b.sets = append(b.sets, setCall{name, value, opts})
}

func (b *bridge) Get(name string) (string, bool) {
	v, ok := b.req[name]
	return v, ok
}

func (b *bridge) Delete(name string, opts CookieOptions) {
	b.deletes = append(b.deletes, deleteCall{name, opts})
}

// lastSet returns the value of the only cookie set on the response.
func (b *bridge) lastSet(t *testing.T) string {
	t.Helper()
	if len(b.sets) != 1 {
		t.Fatalf("%d cookies set, want 1: %+v", len(b.sets), b.sets)
	}
	return b.sets[0].value
}

// users is a fake user store that counts lookups. resolve may run on
// several goroutines (the racing refreshes); the tests read the count
// when none runs.
type users struct {
	mu       sync.Mutex
	byID     map[string]*user.User
	err      error
	resolved int
}

func (s *users) resolve(_ context.Context, id string) (*user.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resolved++
	if s.err != nil {
		return nil, s.err
	}
	return s.byID[id], nil
}

// countingHasher is a minimum-cost bcrypt Hasher that counts its calls.
type countingHasher struct {
	hashes, verifies atomic.Int32
	hashErr          error
}

var _ password.Hasher = (*countingHasher)(nil)

func (h *countingHasher) Hash(_ context.Context, pw string) (string, error) {
	h.hashes.Add(1)
	if h.hashErr != nil {
		return "", h.hashErr
	}
	b, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	return string(b), err
}

func (h *countingHasher) Verify(_ context.Context, pw, hash string) (bool, error) {
	h.verifies.Add(1)
	err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw))
	if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
		return false, nil
	}
	return err == nil, err
}

func mustHash(t testing.TB, pw string) string {
	t.Helper()
	b, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type fixture struct {
	t      testing.TB
	clk    *clock
	users  *users
	hasher *countingHasher
	m      *Manager
	alice  *user.User
}

func newFixture(t testing.TB, modify ...func(*Config)) *fixture {
	t.Helper()
	f := &fixture{
		t:      t,
		clk:    &clock{t0},
		users:  &users{byID: map[string]*user.User{}},
		hasher: &countingHasher{},
	}
	f.alice = &user.User{ID: "u-alice", Email: "alice@example.com", PasswordHash: mustHash(t, "correct horse")}
	f.users.byID[f.alice.ID] = f.alice
	cfg := Config{
		Secrets:     []string{secretA},
		ResolveUser: f.users.resolve,
		Now:         f.clk.Now,
	}
	for _, fn := range modify {
		fn(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.m = m
	return f
}

// login logs u in at the current clock and returns the cookie value.
func (f *fixture) login(t *testing.T, u *user.User, remember bool) string {
	t.Helper()
	b := newBridge()
	if err := f.m.Session(b).Login(context.Background(), u, remember); err != nil {
		t.Fatalf("Login: %v", err)
	}
	return b.lastSet(t)
}

// user reads the session of a request carrying cookie. Every read is made
// twice, by Session.User and by Manager.User (the read-only path of
// middleware), which must agree exactly: the same user, the same error.
func (f *fixture) user(cookie string) (*user.User, *bridge, error) {
	b := newBridge(DefaultCookieName, cookie)
	u, err := f.m.Session(b).User(context.Background())
	resolved := f.users.resolved
	u2, err2 := f.m.User(context.Background(), cookie)
	f.users.resolved = resolved // counted once, as the tests expect
	if u2 != u || (err == nil) != (err2 == nil) || err != nil && (err.Error() != err2.Error() || errors.Is(err, ErrNotAuthenticated) != errors.Is(err2, ErrNotAuthenticated)) {
		f.t.Errorf("Manager.User(%q) = %v, %v; Session.User = %v, %v", cookie, u2, err2, u, err)
	}
	return u, b, err
}

var deleted = []deleteCall{{DefaultCookieName, CookieOptions{HTTPOnly: true, Secure: true, SameSite: http.SameSiteLaxMode, Path: "/"}}}

func checkDead(t *testing.T, u *user.User, b *bridge, err error, reason error) {
	t.Helper()
	if u != nil || !errors.Is(err, ErrNotAuthenticated) || !errors.Is(err, reason) {
		t.Errorf("User = %v, %v; want nil, ErrNotAuthenticated wrapping %v", u, err, reason)
	}
	if len(b.deletes) != 1 || b.deletes[0] != deleted[0] || len(b.sets) != 0 {
		t.Errorf("cookie calls: sets %+v, deletes %+v; want one delete %+v", b.sets, b.deletes, deleted[0])
	}
}

func checkAlive(t *testing.T, u *user.User, b *bridge, err error, want *user.User) {
	t.Helper()
	if err != nil || u != want {
		t.Errorf("User = %v, %v; want %v", u, err, want)
	}
	if len(b.deletes) != 0 || len(b.sets) != 0 {
		t.Errorf("cookie calls: sets %+v, deletes %+v; want none", b.sets, b.deletes)
	}
}

// checkAlice reads cookie and checks that it signs Alice in (alive) or is
// refused for reason and deleted.
func (f *fixture) checkAlice(t *testing.T, cookie string, alive bool, reason error) {
	t.Helper()
	u, b, err := f.user(cookie)
	if alive {
		checkAlive(t, u, b, err, f.alice)
	} else {
		checkDead(t, u, b, err, reason)
	}
}

func TestCookieAttributes(t *testing.T) {
	tests := []struct {
		name     string
		modify   func(*Config)
		remember bool
		want     CookieOptions
		wantName string
	}{
		{"defaults", nil, false,
			CookieOptions{HTTPOnly: true, Secure: true, SameSite: http.SameSiteLaxMode, Path: "/"}, "authkit_session"},
		{"defaults, remember", nil, true,
			CookieOptions{HTTPOnly: true, Secure: true, SameSite: http.SameSiteLaxMode, Path: "/", MaxAge: 2592000}, "authkit_session"},
		{"insecure", func(c *Config) { c.Insecure = true }, false,
			CookieOptions{HTTPOnly: true, SameSite: http.SameSiteLaxMode, Path: "/"}, "authkit_session"},
		{"custom", func(c *Config) {
			c.CookieName, c.Path, c.Domain, c.RememberLifetime = "sid", "/app", "example.com", 90*time.Minute+500*time.Millisecond
		}, true,
			CookieOptions{HTTPOnly: true, Secure: true, SameSite: http.SameSiteLaxMode, Path: "/app", Domain: "example.com", MaxAge: 5401}, "sid"}, // rounded up to whole seconds
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mods []func(*Config)
			if tt.modify != nil {
				mods = append(mods, tt.modify)
			}
			f := newFixture(t, mods...)
			b := newBridge()
			s := f.m.Session(b)
			if err := s.Login(context.Background(), f.alice, tt.remember); err != nil {
				t.Fatal(err)
			}
			if len(b.sets) != 1 || b.sets[0].name != tt.wantName || b.sets[0].opts != tt.want {
				t.Errorf("set %+v, want %s with %+v", b.sets, tt.wantName, tt.want)
			}
			if f.m.CookieName() != tt.wantName {
				t.Errorf("CookieName = %q, want %q", f.m.CookieName(), tt.wantName)
			}
			if err := s.Logout(context.Background()); err != nil {
				t.Fatal(err)
			}
			wantDel := tt.want
			wantDel.MaxAge = 0
			if len(b.deletes) != 1 || b.deletes[0] != (deleteCall{tt.wantName, wantDel}) {
				t.Errorf("deletes %+v, want %s with %+v", b.deletes, tt.wantName, wantDel)
			}
		})
	}
}

func TestLoginUserLogout(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	// No cookie.
	b := newBridge()
	s := f.m.Session(b)
	if u, err := s.User(ctx); u != nil || err != ErrNotAuthenticated {
		t.Fatalf("no cookie: User = %v, %v; want nil, ErrNotAuthenticated", u, err)
	}
	if len(b.deletes) != 0 || f.users.resolved != 0 {
		t.Errorf("no cookie: deleted %v, resolved %d", b.deletes, f.users.resolved)
	}

	// Login, then the same request sees the user.
	if err := s.Login(ctx, f.alice, false); err != nil {
		t.Fatal(err)
	}
	if u, err := s.User(ctx); err != nil || u != f.alice {
		t.Fatalf("after Login: User = %v, %v", u, err)
	}
	if f.users.resolved != 0 {
		t.Errorf("User after Login resolved %d times, want 0", f.users.resolved)
	}
	cookie := b.lastSet(t)

	// The next request carries the cookie.
	u, b2, err := f.user(cookie)
	checkAlive(t, u, b2, err, f.alice)

	// Logout on a request that carries the cookie.
	b3 := newBridge(DefaultCookieName, cookie)
	s3 := f.m.Session(b3)
	if err := s3.Logout(ctx); err != nil {
		t.Fatal(err)
	}
	if u, err := s3.User(ctx); u != nil || err != ErrNotAuthenticated {
		t.Errorf("after Logout: User = %v, %v", u, err)
	}
	if len(b3.deletes) != 1 || b3.deletes[0] != deleted[0] {
		t.Errorf("Logout deletes %+v, want %+v", b3.deletes, deleted)
	}
	if err := s3.Logout(ctx); err != nil {
		t.Errorf("second Logout: %v", err)
	}
}

func TestEmptyCookie(t *testing.T) {
	f := newFixture(t)
	u, b, err := f.user("")
	if u != nil || err != ErrNotAuthenticated || len(b.deletes) != 0 {
		t.Errorf("User = %v, %v, deletes %v", u, err, b.deletes)
	}
}

func TestCache(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cookie := f.login(t, f.alice, false)
	s := f.m.Session(newBridge(DefaultCookieName, cookie))
	for i := 0; i < 3; i++ {
		if u, err := s.User(ctx); err != nil || u != f.alice {
			t.Fatalf("call %d: User = %v, %v", i, u, err)
		}
	}
	if f.users.resolved != 1 {
		t.Errorf("ResolveUser called %d times, want 1", f.users.resolved)
	}

	// A failed session is cached too: the request still carries the bad
	// cookie, but it is read and deleted once.
	b := newBridge(DefaultCookieName, "garbage")
	s = f.m.Session(b)
	for i := 0; i < 2; i++ {
		if _, err := s.User(ctx); !errors.Is(err, ErrNotAuthenticated) {
			t.Fatalf("call %d: err = %v", i, err)
		}
	}
	if len(b.deletes) != 1 {
		t.Errorf("deleted %d times, want 1", len(b.deletes))
	}
}

func TestTamperedCookie(t *testing.T) {
	f := newFixture(t)
	cookie := f.login(t, f.alice, true)
	flip := func(c byte) byte {
		if c == 'A' {
			return 'B'
		}
		return 'A'
	}
	tests := []struct {
		name, cookie string
		reason       error
	}{
		{"first char", string(flip(cookie[0])) + cookie[1:], token.ErrMalformed},
		{"id char", cookie[:15] + string(flip(cookie[15])) + cookie[16:], token.ErrSignature},
		{"mac char", cookie[:len(cookie)-5] + string(flip(cookie[len(cookie)-5])) + cookie[len(cookie)-4:], token.ErrSignature},
		{"truncated", cookie[:len(cookie)-4], token.ErrMalformed},
		{"garbage", "not a token", token.ErrMalformed},
		{"huge", strings.Repeat("A", 1<<16), token.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.users.resolved = 0
			u, b, err := f.user(tt.cookie)
			checkDead(t, u, b, err, tt.reason)
			if f.users.resolved != 0 {
				t.Errorf("ResolveUser called for an invalid token")
			}
		})
	}
}

func TestOtherPurposeAndBadData(t *testing.T) {
	f := newFixture(t)
	pending, err := token.NewVerifier(token.Config{Secrets: []string{secretA}, Purpose: "2fa_pending", Expiry: 5 * time.Minute, Now: f.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := pending.Create(f.alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	u, b, err := f.user(tok)
	checkDead(t, u, b, err, token.ErrSignature)

	// Session-purpose tokens with data a Login never writes.
	forger, err := token.NewVerifier(token.Config{Secrets: []string{secretA}, Purpose: Purpose, Expiry: time.Hour, Now: f.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{nil, {0}, {2, 0}, {0x81, 0}, {0, 0, 0}, {0, 0x80}} {
		tok, err := forger.CreateWith(f.alice.ID, data)
		if err != nil {
			t.Fatal(err)
		}
		u, b, err := f.user(tok)
		checkDead(t, u, b, err, errData)
	}
}

func TestLifetimes(t *testing.T) {
	tests := []struct {
		name     string
		remember bool
		age      time.Duration
		alive    bool
	}{
		{"session, fresh", false, 0, true},
		{"session, 1ms before 24h", false, 24*time.Hour - time.Millisecond, true},
		{"session, at 24h", false, 24 * time.Hour, false},
		{"session, 29 days", false, 29 * 24 * time.Hour, false},
		{"remember, at 24h", true, 24 * time.Hour, true},
		{"remember, 1ms before 30d", true, 30*24*time.Hour - time.Millisecond, true},
		{"remember, at 30d", true, 30 * 24 * time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			cookie := f.login(t, f.alice, tt.remember)
			f.clk.t = t0.Add(tt.age)
			f.checkAlice(t, cookie, tt.alive, token.ErrExpired)
		})
	}
}

func TestRememberShorterThanLifetime(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Lifetime, c.RememberLifetime = 2*time.Hour, time.Hour })
	cookie := f.login(t, f.alice, true)
	f.clk.t = t0.Add(time.Hour)
	u, b, err := f.user(cookie)
	checkDead(t, u, b, err, token.ErrExpired)
}

func TestRotation(t *testing.T) {
	f := newFixture(t)
	cookie := f.login(t, f.alice, false)

	rotated := newFixture(t, func(c *Config) { c.Secrets = []string{secretB, secretA} })
	u, b, err := rotated.user(cookie)
	checkAlive(t, u, b, err, rotated.alice)

	newOnly := newFixture(t, func(c *Config) { c.Secrets = []string{secretB} })
	u, b, err = newOnly.user(cookie)
	checkDead(t, u, b, err, token.ErrSignature)

	// New sessions are signed with the first secret.
	u, b, err = newOnly.user(rotated.login(t, rotated.alice, false))
	checkAlive(t, u, b, err, newOnly.alice)
}

func TestPasswordChangedAt(t *testing.T) {
	// The password is reset at 1000.500 s. Sessions carry iat in whole
	// seconds (the spec's rule): one issued in the same second, even before the
	// reset, survives this rule; the version rule below ends it.
	reset := time.UnixMilli(1000_500)
	tests := []struct {
		name  string
		iat   time.Time
		alive bool
	}{
		{"same second, after the reset", time.UnixMilli(1000_700), true},
		{"same second, before the reset", time.UnixMilli(1000_200), true},
		{"start of the same second", time.UnixMilli(1000_000), true},
		{"previous second", time.UnixMilli(999_900), false},
		{"last ms of the previous second", time.UnixMilli(999_999), false},
		{"next second", time.UnixMilli(1001_000), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.clk.t = tt.iat
			cookie := f.login(t, f.alice, false)
			f.clk.t = time.UnixMilli(1002_000)
			f.alice.PasswordChangedAt = reset
			f.checkAlice(t, cookie, tt.alive, errPasswordChanged)
		})
	}
}

func TestPasswordResetBumpsVersion(t *testing.T) {
	f := newFixture(t)
	f.clk.t = time.UnixMilli(1000_200)
	before := f.login(t, f.alice, false)

	// The reset at 1000.500 sets PasswordChangedAt and bumps the version.
	f.clk.t = time.UnixMilli(1000_500)
	f.alice.PasswordChangedAt = f.clk.t
	f.alice.SessionVersion++
	f.clk.t = time.UnixMilli(1000_700)
	after := f.login(t, f.alice, false)

	u, b, err := f.user(before)
	checkDead(t, u, b, err, errVersion)
	u, b, err = f.user(after)
	checkAlive(t, u, b, err, f.alice)
}

func TestSessionVersion(t *testing.T) {
	tests := []struct {
		name          string
		issued, later int64
		alive         bool
	}{
		{"same", 3, 3, true},
		{"bumped", 3, 4, false},
		{"bumped a lot", 0, 1 << 40, false},
		{"store behind the token", 5, 4, true},
		{"negative", -2, -2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.alice.SessionVersion = tt.issued
			cookie := f.login(t, f.alice, true)
			f.alice.SessionVersion = tt.later
			f.checkAlice(t, cookie, tt.alive, errVersion)
		})
	}
}

func TestUserDeleted(t *testing.T) {
	f := newFixture(t)
	cookie := f.login(t, f.alice, false)
	delete(f.users.byID, f.alice.ID)
	u, b, err := f.user(cookie)
	checkDead(t, u, b, err, errUserGone)
}

func TestResolveUserError(t *testing.T) {
	f := newFixture(t)
	cookie := f.login(t, f.alice, false)
	backend := errors.New("database is down")
	f.users.err = backend
	b := newBridge(DefaultCookieName, cookie)
	s := f.m.Session(b)
	u, err := s.User(context.Background())
	if u != nil || !errors.Is(err, backend) || errors.Is(err, ErrNotAuthenticated) {
		t.Errorf("User = %v, %v; want the backend error, not ErrNotAuthenticated", u, err)
	}
	if len(b.deletes) != 0 {
		t.Errorf("cookie deleted on a backend error")
	}
	if u, err := f.m.User(context.Background(), cookie); u != nil || !errors.Is(err, backend) || errors.Is(err, ErrNotAuthenticated) {
		t.Errorf("Manager.User = %v, %v; want the backend error, not ErrNotAuthenticated", u, err)
	}
	// Not cached: the next call tries again.
	f.users.err = nil
	if u, err := s.User(context.Background()); err != nil || u != f.alice {
		t.Errorf("retry: User = %v, %v", u, err)
	}
}

func TestRenew(t *testing.T) {
	for _, remember := range []bool{false, true} {
		f := newFixture(t)
		ctx := context.Background()
		cookie := f.login(t, f.alice, remember)

		b := newBridge(DefaultCookieName, cookie)
		s := f.m.Session(b)
		if err := s.Renew(ctx, f.alice); err != ErrNotAuthenticated {
			t.Errorf("Renew before User: err = %v, want ErrNotAuthenticated", err)
		}
		if _, err := s.User(ctx); err != nil {
			t.Fatal(err)
		}
		// Change password: bump the version, keep this session.
		f.clk.t = t0.Add(time.Hour)
		f.alice.PasswordChangedAt = f.clk.t
		f.alice.SessionVersion++
		if err := s.Renew(ctx, &user.User{ID: "u-bob"}); err == nil {
			t.Error("Renew with another user succeeded")
		}
		if err := s.Renew(ctx, f.alice); err != nil {
			t.Fatal(err)
		}
		renewed := b.lastSet(t)
		// The renewed cookie lives for what is left of the session: 30 days
		// from the Login, not from the renewal.
		if remember && b.sets[0].opts.MaxAge != 2592000-3600 || !remember && b.sets[0].opts.MaxAge != 0 {
			t.Errorf("remember %v: renewed MaxAge = %d", remember, b.sets[0].opts.MaxAge)
		}
		u, b2, err := f.user(cookie)
		checkDead(t, u, b2, err, errPasswordChanged)
		u, b2, err = f.user(renewed)
		checkAlive(t, u, b2, err, f.alice)
	}
}

// TestRenewalKeepsTheLifetime: a session reauthenticated (a password
// confirmation) or renewed (a password change) every few hours still ends
// its lifetime after its Login, the remembered cookie's Max-Age shrinking
// with it.
func TestRenewalKeepsTheLifetime(t *testing.T) {
	for _, remember := range []bool{false, true} {
		f := newFixture(t)
		ctx := context.Background()
		life := 24 * time.Hour
		if remember {
			life = 30 * 24 * time.Hour
		}
		cookie := f.login(t, f.alice, remember)
		step := life / 4
		for i := 1; i < 4; i++ {
			f.clk.t = t0.Add(time.Duration(i) * step)
			b := newBridge(DefaultCookieName, cookie)
			s := f.m.Session(b)
			if _, err := s.User(ctx); err != nil {
				t.Fatalf("remember %t, renewal %d: %v", remember, i, err)
			}
			renew := s.Reauthenticate
			if i == 2 {
				renew = s.Renew
			}
			if err := renew(ctx, f.alice); err != nil {
				t.Fatal(err)
			}
			cookie = b.lastSet(t)
			if want := int((life - time.Duration(i)*step) / time.Second); remember && b.sets[0].opts.MaxAge != want {
				t.Errorf("renewal %d: Max-Age %d, want %d", i, b.sets[0].opts.MaxAge, want)
			}
		}
		f.clk.t = t0.Add(life - time.Millisecond)
		u, b, err := f.user(cookie)
		checkAlive(t, u, b, err, f.alice)
		f.clk.t = t0.Add(life)
		u, b, err = f.user(cookie)
		checkDead(t, u, b, err, token.ErrExpired)
	}
}

func TestLoginInvalidUser(t *testing.T) {
	f := newFixture(t)
	for _, u := range []*user.User{nil, {}, {ID: strings.Repeat("x", 256)}} {
		b := newBridge()
		s := f.m.Session(b)
		if err := s.Login(context.Background(), u, false); err == nil {
			t.Errorf("Login(%v) succeeded", u)
		}
		if len(b.sets) != 0 {
			t.Errorf("Login(%v) set a cookie", u)
		}
		if _, err := s.User(context.Background()); err != ErrNotAuthenticated {
			t.Errorf("User after failed Login: %v", err)
		}
	}
}

func TestNewConfig(t *testing.T) {
	resolve := func(context.Context, string) (*user.User, error) { return nil, nil }
	tests := []struct {
		name   string
		modify func(*Config)
		valid  bool
	}{
		{"minimal", func(c *Config) {}, true},
		{"no resolver", func(c *Config) { c.ResolveUser = nil }, false},
		{"no secret", func(c *Config) { c.Secrets = nil }, false},
		{"short secret", func(c *Config) { c.Secrets = []string{"short"} }, false},
		{"bad cookie name", func(c *Config) { c.CookieName = "a;b" }, false},
		{"cookie name with space", func(c *Config) { c.CookieName = "a b" }, false},
		{"relative path", func(c *Config) { c.Path = "app" }, false},
		{"path with semicolon", func(c *Config) { c.Path = "/a;b" }, false},
		{"domain with semicolon", func(c *Config) { c.Domain = "a.com;x" }, false},
		{"negative lifetime", func(c *Config) { c.Lifetime = -time.Hour }, false},
		{"remember under a second", func(c *Config) { c.RememberLifetime = time.Millisecond }, false},
		{"negative remember", func(c *Config) { c.RememberLifetime = -time.Hour }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Secrets: []string{secretA}, ResolveUser: resolve}
			tt.modify(&cfg)
			name, path, life := cfg.CookieName, cfg.Path, cfg.Lifetime
			m, err := New(cfg)
			if tt.valid && (err != nil || m == nil) {
				t.Errorf("New: %v", err)
			}
			if !tt.valid && (!errors.Is(err, ErrInvalidConfig) || m != nil) {
				t.Errorf("New = %v, %v; want ErrInvalidConfig", m, err)
			}
			if cfg.CookieName != name || cfg.Path != path || cfg.Lifetime != life || cfg.Now != nil {
				t.Error("New changed the config")
			}
		})
	}
}

func BenchmarkUser(b *testing.B) {
	f := newFixture(b)
	f.alice.SessionVersion = 7
	lb := newBridge()
	if err := f.m.Session(lb).Login(context.Background(), f.alice, true); err != nil {
		b.Fatal(err)
	}
	req := newBridge(DefaultCookieName, lb.sets[0].value)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.m.Session(req).User(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// open reads the session of a request carrying cookie, as a handler does
// before it changes the session, and returns it with the request's
// bridge; a session that does not authenticate fails the test.
func (f *fixture) open(t *testing.T, cookie string) (*Session, *bridge) {
	t.Helper()
	b := newBridge(DefaultCookieName, cookie)
	s := f.m.Session(b)
	if _, err := s.User(context.Background()); err != nil {
		t.Fatalf("User: %v", err)
	}
	return s, b
}

// sessionAt reads the session of a request carrying cookie and returns its
// time of authentication.
func (f *fixture) sessionAt(t *testing.T, cookie string) time.Time {
	t.Helper()
	s, _ := f.open(t, cookie)
	return s.AuthenticatedAt()
}

// TestAuthenticatedAt: a Login records its time in the cookie; Renew keeps
// it, Reauthenticate makes it now; a cookie of the format before the time
// was recorded still authenticates, with a zero time (never recent).
func TestAuthenticatedAt(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cookie := f.login(t, f.alice, true)
	if got := f.sessionAt(t, cookie); !got.Equal(t0) {
		t.Fatalf("after Login: AuthenticatedAt = %v, want %v", got, t0)
	}
	if got := f.m.Session(newBridge()).AuthenticatedAt(); !got.IsZero() {
		t.Errorf("without a session: AuthenticatedAt = %v, want zero", got)
	}

	f.clk.t = t0.Add(20 * time.Minute)
	b := newBridge(DefaultCookieName, cookie)
	s := f.m.Session(b)
	if err := s.Reauthenticate(ctx, f.alice); err != ErrNotAuthenticated {
		t.Errorf("Reauthenticate before User: %v, want ErrNotAuthenticated", err)
	}
	if _, err := s.User(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Renew(ctx, f.alice); err != nil {
		t.Fatal(err)
	}
	renewed := b.lastSet(t)
	if got := f.sessionAt(t, renewed); !got.Equal(t0) {
		t.Errorf("after Renew: AuthenticatedAt = %v, want the login's %v", got, t0)
	}
	if b.sets[0].opts.MaxAge != 2592000-20*60 { // what is left of the 30 days
		t.Errorf("Renew dropped remember: MaxAge %d", b.sets[0].opts.MaxAge)
	}
	b.sets = nil
	if err := s.Reauthenticate(ctx, &user.User{ID: "u-bob"}); err == nil {
		t.Error("Reauthenticate with another user succeeded")
	}
	if err := s.Reauthenticate(ctx, f.alice); err != nil {
		t.Fatal(err)
	}
	if got := s.AuthenticatedAt(); !got.Equal(f.clk.t) {
		t.Errorf("same request after Reauthenticate: AuthenticatedAt = %v, want %v", got, f.clk.t)
	}
	if got := f.sessionAt(t, b.lastSet(t)); !got.Equal(f.clk.t) {
		t.Errorf("after Reauthenticate: AuthenticatedAt = %v, want %v", got, f.clk.t)
	}
	if err := s.Logout(ctx); err != nil || !s.AuthenticatedAt().IsZero() {
		t.Errorf("after Logout: AuthenticatedAt = %v, %v; want zero", s.AuthenticatedAt(), err)
	}
}

// TestOldFormatCookie: a cookie of the format without the authentication
// time (flags byte, version) keeps its user and remember choice, and has a
// zero AuthenticatedAt.
func TestOldFormatCookie(t *testing.T) {
	f := newFixture(t)
	forger, err := token.NewVerifier(token.Config{Secrets: []string{secretA}, Purpose: Purpose, Expiry: 30 * 24 * time.Hour, Now: f.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, remember := range []bool{false, true} {
		old := []byte{0, 0}
		if remember {
			old[0] = flagRemember
		}
		tok, err := forger.CreateWith(f.alice.ID, old)
		if err != nil {
			t.Fatal(err)
		}
		b := newBridge(DefaultCookieName, tok)
		s := f.m.Session(b)
		if u, err := s.User(context.Background()); err != nil || u != f.alice {
			t.Fatalf("old cookie (remember %v): User = %v, %v", remember, u, err)
		}
		if got := s.AuthenticatedAt(); !got.IsZero() {
			t.Errorf("old cookie: AuthenticatedAt = %v, want zero", got)
		}
		if err := s.Renew(context.Background(), f.alice); err != nil {
			t.Fatal(err)
		}
		if (b.sets[0].opts.MaxAge != 0) != remember {
			t.Errorf("old cookie renewed: MaxAge %d, remember %v", b.sets[0].opts.MaxAge, remember)
		}
	}
}

// TestBadAuthTimeData: session data with the time flag but a missing,
// zero, negative or trailing time is refused like any malformed data.
func TestBadAuthTimeData(t *testing.T) {
	f := newFixture(t)
	forger, err := token.NewVerifier(token.Config{Secrets: []string{secretA}, Purpose: Purpose, Expiry: time.Hour, Now: f.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	good, err := appendData(nil, false, 0, t0, t0, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range [][]byte{
		{flagAuthTime, 0},                   // flag without the time
		{flagAuthTime, 0, 0},                // time zero
		{flagAuthTime, 0, 1},                // time negative (zigzag 1 = -1)
		{0, 0, 2},                           // a time without the flag
		append(good, 0),                     // trailing byte
		{16, 0},                             // an unknown flag
		{flagRecord, 0},                     // a record without the time
		{flagStart, 0, 2},                   // a start without the time
		{flagAuthTime | flagStart, 0, 2},    // the start missing
		{flagAuthTime | flagStart, 0, 2, 0}, // the start zero
		append(append([]byte{flagAuthTime | flagStart | flagRecord}, good[1:]...), make([]byte, 15)...), // a record id cut short
	} {
		tok, err := forger.CreateWith(f.alice.ID, d)
		if err != nil {
			t.Fatal(err)
		}
		u, b, err := f.user(tok)
		checkDead(t, u, b, err, errData)
	}
	tok, _ := forger.CreateWith(f.alice.ID, good)
	u, b, err := f.user(tok)
	checkAlive(t, u, b, err, f.alice)
}
