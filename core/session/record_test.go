package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// records is a fake Store that counts its calls.
type records struct {
	mu                           sync.Mutex
	byID                         map[string]Record
	gets, touches, creates, dels int
	err                          error
}

func newRecords() *records { return &records{byID: map[string]Record{}} }

func (r *records) Create(_ context.Context, rec Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.creates++
	if r.err != nil {
		return r.err
	}
	r.byID[rec.ID] = rec
	return nil
}

func (r *records) Get(_ context.Context, id string) (Record, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gets++
	if r.err != nil {
		return Record{}, r.err
	}
	rec, ok := r.byID[id]
	if !ok {
		return Record{}, user.ErrNotFound
	}
	return rec, nil
}

func (r *records) Touch(_ context.Context, id string, seen, expires time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.touches++
	rec, ok := r.byID[id]
	if !ok {
		return user.ErrNotFound
	}
	rec.LastSeenAt, rec.ExpiresAt = seen, expires
	r.byID[id] = rec
	return nil
}

func (r *records) Delete(_ context.Context, userID, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dels++
	if rec, ok := r.byID[id]; !ok || rec.UserID != userID {
		return user.ErrNotFound
	}
	delete(r.byID, id)
	return nil
}

func (r *records) List(_ context.Context, userID string) ([]Record, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Record
	for _, rec := range r.byID {
		if rec.UserID == userID {
			out = append(out, rec)
		}
	}
	SortRecords(out)
	return out, nil
}

func (r *records) DeleteAll(_ context.Context, userID, except string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, rec := range r.byID {
		if rec.UserID == userID && id != except {
			delete(r.byID, id)
		}
	}
	return nil
}

func (r *records) only(t *testing.T) Record {
	t.Helper()
	if len(r.byID) != 1 {
		t.Fatalf("%d records, want 1", len(r.byID))
	}
	for _, rec := range r.byID {
		return rec
	}
	panic("unreachable")
}

// recordFixture is a fixture whose Manager keeps records.
func recordFixture(t *testing.T, modify ...func(*Config)) (*fixture, *records) {
	t.Helper()
	recs := newRecords()
	f := newFixture(t, append([]func(*Config){func(c *Config) { c.Store = recs }}, modify...)...)
	return f, recs
}

// loginWithRecord logs alice in and returns her cookie.
func (f *fixture) loginWithRecord(t *testing.T, remember bool) string {
	t.Helper()
	b := newBridge()
	s := f.m.Session(b)
	s.SetClient("203.0.113.7", "Firefox")
	if err := s.Login(context.Background(), f.alice, remember); err != nil {
		t.Fatalf("Login: %v", err)
	}
	if s.RecordID() == "" {
		t.Fatalf("RecordID after Login is empty")
	}
	return b.lastSet(t)
}

func TestRecordLoginStoresRecord(t *testing.T) {
	f, recs := recordFixture(t)
	f.loginWithRecord(t, true)
	rec := recs.only(t)
	want := Record{ID: rec.ID, UserID: f.alice.ID, CreatedAt: t0, LastSeenAt: t0, ExpiresAt: t0.Add(30 * 24 * time.Hour),
		IP: "203.0.113.7", UserAgent: "Firefox", Remember: true}
	if fmt.Sprint(rec) != fmt.Sprint(want) {
		t.Errorf("record %+v, want %+v", rec, want)
	}
	if len(rec.ID) != 32 {
		t.Errorf("record id %q: want 32 hex characters", rec.ID)
	}
}

func TestRecordOneReadPerRequest(t *testing.T) {
	f, recs := recordFixture(t)
	tok := f.loginWithRecord(t, false)
	recs.gets, recs.touches = 0, 0
	f.users.resolved = 0
	for range 3 { // three requests within the touch interval
		f.clk.t = f.clk.t.Add(10 * time.Second)
		if _, err := f.m.Session(newBridge(DefaultCookieName, tok)).User(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if recs.gets != 3 || recs.touches != 0 || f.users.resolved != 3 {
		t.Errorf("3 requests within a minute: %d record reads, %d touches, %d user reads; want 3, 0, 3", recs.gets, recs.touches, f.users.resolved)
	}
	f.clk.t = t0.Add(time.Minute)
	if _, err := f.m.User(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	if recs.touches != 1 {
		t.Errorf("a request a minute after the last write: %d touches, want 1", recs.touches)
	}
	if got := recs.only(t).LastSeenAt; !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("LastSeenAt %v, want %v", got, t0.Add(time.Minute))
	}
}

func TestRecordLogoutEndsEveryCopy(t *testing.T) {
	f, recs := recordFixture(t)
	tok := f.loginWithRecord(t, false)
	// Logout in a request that never read the session.
	if err := f.m.Session(newBridge(DefaultCookieName, tok)).Logout(context.Background()); err != nil {
		t.Fatalf("Logout: %v", err)
	}
	if len(recs.byID) != 0 {
		t.Fatalf("%d records after Logout, want 0", len(recs.byID))
	}
	u, b, err := f.user(tok)
	checkDead(t, u, b, err, errRecordGone)
}

func TestRecordStoreDown(t *testing.T) {
	f, recs := recordFixture(t)
	tok := f.loginWithRecord(t, false)
	recs.err = user.ErrUnavailable
	// A failing read is a backend error (503), not a logout.
	_, err := f.m.User(context.Background(), tok)
	if !errors.Is(err, user.ErrUnavailable) || errors.Is(err, ErrNotAuthenticated) {
		t.Errorf("User with the record store down = %v, want user.ErrUnavailable, not ErrNotAuthenticated", err)
	}
	// A failing Login sets no cookie.
	b := newBridge()
	if err := f.m.Session(b).Login(context.Background(), f.alice, false); !errors.Is(err, user.ErrUnavailable) || len(b.sets) != 0 {
		t.Errorf("Login with the record store down = %v, %d cookies; want user.ErrUnavailable, none", err, len(b.sets))
	}
}

func TestRecordIdleTimeout(t *testing.T) {
	f, recs := recordFixture(t, func(c *Config) { c.IdleTimeout = 30 * time.Minute })
	tok := f.loginWithRecord(t, false)
	f.clk.t = t0.Add(30*time.Minute - time.Millisecond)
	u, b, err := f.user(tok) // seen: touched
	checkAlive(t, u, b, err, f.alice)
	f.clk.t = f.clk.t.Add(30*time.Minute - time.Millisecond)
	u, b, err = f.user(tok)
	checkAlive(t, u, b, err, f.alice)
	f.clk.t = f.clk.t.Add(30 * time.Minute)
	b = newBridge(DefaultCookieName, tok)
	u, err = f.m.Session(b).User(context.Background())
	checkDead(t, u, b, err, errIdle)
	if len(recs.byID) != 0 {
		t.Errorf("an idle session's record was kept")
	}
}

func TestRecordIdleTimeoutNeedsStore(t *testing.T) {
	_, err := New(Config{Secrets: []string{secretA}, ResolveUser: (&users{}).resolve, IdleTimeout: time.Minute})
	if !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("IdleTimeout without Store: %v, want ErrInvalidConfig", err)
	}
}

func TestRecordCookieFormats(t *testing.T) {
	stateless := newFixture(t)
	old := stateless.login(t, stateless.alice, false)
	f, recs := recordFixture(t, func(c *Config) { c.Now = stateless.clk.Now })
	withRecord := f.loginWithRecord(t, false)
	// A stateless cookie is refused where records are kept.
	u, b, err := f.user(old)
	checkDead(t, u, b, err, errNoRecord)
	// A record's cookie is accepted where none are kept (the app switched
	// records off; its users stay signed in).
	u, b, err = stateless.user(withRecord)
	checkAlive(t, u, b, err, stateless.alice)
	// Another user's record id is no session: forge a cookie of bob's
	// naming alice's record.
	rec := recs.only(t)
	bob := &user.User{ID: "u-bob"}
	f.users.byID[bob.ID] = bob
	s := f.m.Session(newBridge())
	if err := s.issue(context.Background(), bob, false, t0, t0, rec.ID, 0); err != nil {
		t.Fatal(err)
	}
	forged := s.cookies.(*bridge).lastSet(t)
	u, b, err = f.user(forged)
	checkDead(t, u, b, err, errRecordGone)
}

func TestRecordRenewKeepsRecord(t *testing.T) {
	f, recs := recordFixture(t)
	tok := f.loginWithRecord(t, false)
	id := recs.only(t).ID
	f.clk.t = t0.Add(time.Hour)
	s, _ := f.open(t, tok)
	if err := s.Renew(context.Background(), f.alice); err != nil {
		t.Fatal(err)
	}
	if s.RecordID() != id {
		t.Errorf("renewed RecordID %q, want %q", s.RecordID(), id)
	}
	// A renewal never extends the session: the record still ends 24 hours
	// after the login.
	if got := recs.only(t).ExpiresAt; !got.Equal(t0.Add(24 * time.Hour)) {
		t.Errorf("renewed record expires %v, want %v", got, t0.Add(24*time.Hour))
	}
	// A record ended meanwhile cannot be renewed.
	recs.byID = map[string]Record{}
	if err := s.Renew(context.Background(), f.alice); !errors.Is(err, ErrNotAuthenticated) {
		t.Errorf("Renew of an ended record = %v, want ErrNotAuthenticated", err)
	}
}

// TestRecordReauthenticateRetiresOldCookie: a re-authentication moves the
// session to a new record (same creation, expiry, client, remember) and
// deletes the old one, so the cookie the request came with, and every
// copy of it, stops working; the new cookie works.
func TestRecordReauthenticateRetiresOldCookie(t *testing.T) {
	f, recs := recordFixture(t)
	old := f.loginWithRecord(t, true)
	before := recs.only(t)
	f.clk.t = t0.Add(time.Hour)
	s, b := f.open(t, old)
	if err := s.Reauthenticate(context.Background(), f.alice); err != nil {
		t.Fatal(err)
	}
	after, ok := recs.byID[s.RecordID()]
	if !ok || after.ID == before.ID || len(recs.byID) != 2 {
		t.Fatalf("records %v after re-authentication (session's %q), want %q retired and a new one", recs.byID, s.RecordID(), before.ID)
	}
	want := before
	want.ID, want.LastSeenAt = after.ID, t0.Add(time.Hour)
	if fmt.Sprint(after) != fmt.Sprint(want) {
		t.Errorf("new record %+v, want %+v", after, want)
	}
	retired := before
	retired.LastSeenAt, retired.ExpiresAt = t0.Add(time.Hour), t0.Add(time.Hour+RetireGrace)
	if got := recs.byID[before.ID]; fmt.Sprint(got) != fmt.Sprint(retired) {
		t.Errorf("old record %+v, want %+v", got, retired)
	}
	fresh := b.lastSet(t)
	// Requests under way with the old cookie finish within the grace.
	f.clk.t = t0.Add(time.Hour + RetireGrace - time.Millisecond)
	if u, _, err := f.user(old); err != nil || u == nil {
		t.Errorf("the old cookie within the grace: %v, want the session", err)
	}
	f.clk.t = t0.Add(time.Hour + RetireGrace)
	if u, _, err := f.user(fresh); err != nil || u == nil {
		t.Errorf("the new cookie: %v, want the session", err)
	}
	u, ob, err := f.user(old)
	checkDead(t, u, ob, err, errRecordGone)
	// Renewing with the old cookie (read within the grace) never
	// extends its record again.
	if got := recs.byID[before.ID].ExpiresAt; !got.Equal(retired.ExpiresAt) {
		t.Errorf("old record expires %v after its end, want %v", got, retired.ExpiresAt)
	}
	if s.AuthenticatedAt().IsZero() {
		t.Errorf("AuthenticatedAt %v, want %v", s.AuthenticatedAt(), t0.Add(time.Hour))
	}
}

// TestRecordReauthenticateEndedMeanwhile: a record ended between the
// request's read and its re-authentication ends the session, and leaves
// no record behind.
func TestRecordReauthenticateEndedMeanwhile(t *testing.T) {
	f, recs := recordFixture(t)
	tok := f.loginWithRecord(t, false)
	s, _ := f.open(t, tok)
	recs.byID = map[string]Record{}
	if err := s.Reauthenticate(context.Background(), f.alice); !errors.Is(err, ErrNotAuthenticated) {
		t.Errorf("Reauthenticate of an ended record = %v, want ErrNotAuthenticated", err)
	}
	if len(recs.byID) != 0 {
		t.Errorf("%d records left, want 0", len(recs.byID))
	}
}
