package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// supportRig is a Support over memory stores with a fixed clock, a captured
// mailer and an audit log.
type supportRig struct {
	t        *testing.T
	sp       *Support
	users    *store.Memory
	sessions *store.MemorySessions
	trusted  *store.MemorySessions
	mail     *mail.Capture
	events   []Event
	ada      *user.User
}

var supportNow = time.Date(2031, time.March, 14, 15, 9, 26, 535_000_000, time.UTC)

func newSupportRig(t *testing.T) *supportRig {
	t.Helper()
	now := func() time.Time { return supportNow }
	r := &supportRig{t: t, users: store.NewMemory(store.MemoryConfig{Now: now}),
		sessions: store.NewMemorySessions(store.MemoryConfig{Now: now}),
		trusted:  store.NewMemorySessions(store.MemoryConfig{Now: now}), mail: &mail.Capture{}}
	sp, err := NewSupport(SupportConfig{Users: r.users, Sessions: r.sessions, TrustedDevices: r.trusted,
		Mailer: r.mail, AppName: "Acme", Now: now,
		Audit: func(_ context.Context, e Event) { r.events = append(r.events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	r.sp = sp
	r.ada, err = r.users.Create(context.Background(), &user.User{Email: "ada@example.com", Name: "Ada", PasswordHash: "$2a$04$x"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *supportRig) ctx() context.Context { return context.Background() }

// record adds a session record (or a trusted device) of u expiring at exp.
func (r *supportRig) record(st *store.MemorySessions, id string, u *user.User, exp time.Time) {
	r.t.Helper()
	if err := st.Create(r.ctx(), session.Record{ID: id, UserID: u.ID, CreatedAt: supportNow.Add(-time.Hour),
		LastSeenAt: supportNow.Add(-time.Hour), ExpiresAt: exp}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *supportRig) passkey(u *user.User, id string) {
	r.t.Helper()
	h, err := r.users.PasskeyUserHandle(r.ctx(), u.ID, []byte("handle-"+u.ID))
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.users.AddPasskey(r.ctx(), &user.Passkey{ID: []byte(id), UserID: u.ID, UserHandle: h, PublicKey: []byte("k"), CreatedAt: supportNow}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *supportRig) enableTOTP(u *user.User) {
	r.t.Helper()
	if err := r.users.BeginTOTPSetup(r.ctx(), u.ID, "pending"); err != nil {
		r.t.Fatal(err)
	}
	if err := r.users.EnableTOTP(r.ctx(), u.ID, user.EnableTOTP{Pending: "pending", Secret: "secret", RecoveryCodeHashes: []string{"h1", "h2"}, Step: 7}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *supportRig) reload(u *user.User) *user.User {
	r.t.Helper()
	got, err := r.users.ByID(r.ctx(), u.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return got
}

// wantEvents fails unless the audit log is exactly these events of ada by
// "carol: ticket 7".
func (r *supportRig) wantEvents(types ...EventType) {
	r.t.Helper()
	if len(r.events) != len(types) {
		r.t.Fatalf("events %+v, want types %v", r.events, types)
	}
	for i, e := range r.events {
		want := Event{Type: types[i], Time: supportNow, UserID: r.ada.ID, Email: "ada@example.com", Detail: "carol: ticket 7"}
		if e != want {
			r.t.Fatalf("event %d: %+v, want %+v", i, e, want)
		}
	}
}

const actor = "carol: ticket 7"

func TestSupportFind(t *testing.T) {
	r := newSupportRig(t)
	r.enableTOTP(r.ada)
	r.passkey(r.ada, "pk1")
	r.passkey(r.ada, "pk2")
	r.record(r.sessions, "s1", r.ada, supportNow.Add(time.Hour))
	r.record(r.sessions, "s2", r.ada, supportNow.Add(-time.Millisecond)) // expired: not counted
	r.record(r.trusted, "t1", r.ada, supportNow.Add(time.Hour))
	if _, _, err := r.users.RecordLoginFailure(r.ctx(), r.ada.ID, 2, 15*time.Minute, supportNow); err != nil {
		t.Fatal(err)
	}
	want := Account{ID: r.ada.ID, Email: "ada@example.com", Name: "Ada", CreatedAt: r.ada.CreatedAt,
		TwoFactorEnabled: true, RecoveryCodes: 2, Passkeys: 2, FailedLogins: 1, Sessions: 1, TrustedDevices: 1}
	for _, q := range []string{r.ada.ID, "ada@example.com", " ADA@Example.com"} {
		got, err := r.sp.Find(r.ctx(), q)
		if err != nil {
			t.Fatalf("Find(%q): %v", q, err)
		}
		if got != want {
			t.Fatalf("Find(%q) = %+v, want %+v", q, got, want)
		}
	}
	for _, q := range []string{"bob@example.com", "no-such-id", ""} {
		if _, err := r.sp.Find(r.ctx(), q); !errors.Is(err, user.ErrNotFound) {
			t.Fatalf("Find(%q): %v, want user.ErrNotFound", q, err)
		}
	}
	if len(r.events) != 0 {
		t.Fatalf("Find audited %+v", r.events)
	}
}

func TestSupportFindWithoutRecordStores(t *testing.T) {
	users := store.NewMemory(store.MemoryConfig{})
	u, _ := users.Create(context.Background(), &user.User{Email: "ada@example.com"})
	sp, _ := NewSupport(SupportConfig{Users: users})
	got, err := sp.Find(context.Background(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sessions != -1 || got.TrustedDevices != -1 || got.Passkeys != 0 {
		t.Fatalf("Find: sessions %d trusted %d passkeys %d, want -1 -1 0", got.Sessions, got.TrustedDevices, got.Passkeys)
	}
}

func TestSupportActorRequired(t *testing.T) {
	r := newSupportRig(t)
	calls := map[string]func() error{
		"Unlock":           func() error { _, err := r.sp.Unlock(r.ctx(), r.ada.ID, " "); return err },
		"DisableTwoFactor": func() error { _, err := r.sp.DisableTwoFactor(r.ctx(), r.ada.ID, ""); return err },
		"EndSessions":      func() error { _, err := r.sp.EndSessions(r.ctx(), r.ada.ID, ""); return err },
		"VerifyEmail":      func() error { _, err := r.sp.VerifyEmail(r.ctx(), r.ada.ID, ""); return err },
		"DeleteAccount":    func() error { _, err := r.sp.DeleteAccount(r.ctx(), r.ada.ID, ""); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrSupportActor) {
			t.Errorf("%s without an actor: %v, want ErrSupportActor", name, err)
		}
	}
	if got := r.reload(r.ada); got.SessionVersion != r.ada.SessionVersion || len(r.events) != 0 {
		t.Fatalf("something changed: version %d, events %+v", got.SessionVersion, r.events)
	}
}

func TestSupportUnknownUser(t *testing.T) {
	r := newSupportRig(t)
	if _, err := r.sp.Unlock(r.ctx(), "no-such-id", actor); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("Unlock: %v, want user.ErrNotFound", err)
	}
	if _, err := r.sp.DeleteAccount(r.ctx(), "no-such-id", actor); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("DeleteAccount: %v, want user.ErrNotFound", err)
	}
}

func TestSupportUnlock(t *testing.T) {
	r := newSupportRig(t)
	if _, until, err := r.users.RecordLoginFailure(r.ctx(), r.ada.ID, 1, 15*time.Minute, supportNow); err != nil || !until.Equal(supportNow.Add(15*time.Minute)) {
		t.Fatalf("lock: %v %v", until, err)
	}
	was, err := r.sp.Unlock(r.ctx(), r.ada.ID, actor)
	if err != nil || !was {
		t.Fatalf("Unlock = %v, %v; want true, nil", was, err)
	}
	if got := r.reload(r.ada); got.FailedLogins != 0 || !got.LockedUntil.IsZero() {
		t.Fatalf("after Unlock: failures %d, locked until %v", got.FailedLogins, got.LockedUntil)
	}
	if was, err := r.sp.Unlock(r.ctx(), r.ada.ID, actor); err != nil || was {
		t.Fatalf("second Unlock = %v, %v; want false, nil", was, err)
	}
	r.wantEvents(EventSupportUnlocked, EventSupportUnlocked)
}

func TestSupportDisableTwoFactor(t *testing.T) {
	r := newSupportRig(t)
	r.enableTOTP(r.ada)
	r.passkey(r.ada, "pk1")
	r.record(r.sessions, "s1", r.ada, supportNow.Add(time.Hour))
	r.record(r.trusted, "t1", r.ada, supportNow.Add(time.Hour))
	bob, _ := r.users.Create(r.ctx(), &user.User{Email: "bob@example.com"})
	r.passkey(bob, "pk-bob")
	r.record(r.sessions, "s-bob", bob, supportNow.Add(time.Hour))

	res, err := r.sp.DisableTwoFactor(r.ctx(), r.ada.ID, actor)
	if err != nil {
		t.Fatal(err)
	}
	if want := (TwoFactorReset{TOTP: true, Passkeys: 1, Sessions: 1, Trusted: 1, Notified: true}); res != want {
		t.Fatalf("DisableTwoFactor = %+v, want %+v", res, want)
	}
	got := r.reload(r.ada)
	if got.TwoFactorEnabled || got.TOTPSecret != "" || len(got.RecoveryCodeHashes) != 0 || got.SessionVersion != r.ada.SessionVersion+1 {
		t.Fatalf("after: 2FA %v secret %q codes %v version %d (was %d)", got.TwoFactorEnabled, got.TOTPSecret, got.RecoveryCodeHashes, got.SessionVersion, r.ada.SessionVersion)
	}
	if keys, _ := r.users.ListPasskeys(r.ctx(), r.ada.ID); len(keys) != 0 {
		t.Fatalf("ada's passkeys left: %d", len(keys))
	}
	if keys, _ := r.users.ListPasskeys(r.ctx(), bob.ID); len(keys) != 1 {
		t.Fatalf("bob's passkeys: %d, want 1", len(keys))
	}
	if recs, _ := r.sessions.List(r.ctx(), r.ada.ID); len(recs) != 0 {
		t.Fatalf("ada's sessions left: %d", len(recs))
	}
	if recs, _ := r.trusted.List(r.ctx(), r.ada.ID); len(recs) != 0 {
		t.Fatalf("ada's trusted devices left: %d", len(recs))
	}
	if recs, _ := r.sessions.List(r.ctx(), bob.ID); len(recs) != 1 {
		t.Fatalf("bob's sessions: %d, want 1", len(recs))
	}
	msgs := r.mail.Messages()
	if len(msgs) != 1 || msgs[0].Kind != mail.KindTwoFactorDisabled || msgs[0].To != "ada@example.com" ||
		msgs[0].Subject != "Acme: Two-factor authentication was turned off" {
		t.Fatalf("mails %+v, want one two_factor_disabled notice to ada", msgs)
	}
	r.wantEvents(EventSupportTwoFactorDisabled)

	// Again: nothing left to turn off, so no change, no mail, no event.
	res, err = r.sp.DisableTwoFactor(r.ctx(), r.ada.ID, actor)
	if want := (TwoFactorReset{Sessions: -1, Trusted: -1}); err != nil || res != want || res.Changed() {
		t.Fatalf("second DisableTwoFactor = %+v, %v; want %+v", res, err, want)
	}
	if r.mail.Len() != 1 || len(r.events) != 1 {
		t.Fatalf("second call mailed (%d) or audited (%d)", r.mail.Len(), len(r.events))
	}
}

func TestSupportDisableTwoFactorPasskeysOnly(t *testing.T) {
	r := newSupportRig(t)
	r.passkey(r.ada, "pk1")
	res, err := r.sp.DisableTwoFactor(r.ctx(), r.ada.ID, actor)
	if want := (TwoFactorReset{Passkeys: 1, Sessions: 0, Trusted: 0, Notified: true}); err != nil || res != want {
		t.Fatalf("DisableTwoFactor = %+v, %v; want %+v", res, err, want)
	}
	if v := r.reload(r.ada).SessionVersion; v != r.ada.SessionVersion+1 {
		t.Fatalf("session version %d, want %d: a session a lost passkey opened must end", v, r.ada.SessionVersion+1)
	}
	r.wantEvents(EventSupportTwoFactorDisabled)
}

func TestSupportDisableTwoFactorMailFails(t *testing.T) {
	r := newSupportRig(t)
	r.enableTOTP(r.ada)
	r.mail.SetFail(errors.New("smtp down"))
	res, err := r.sp.DisableTwoFactor(r.ctx(), r.ada.ID, actor)
	if err == nil || err.Error() != "auth: support: 2FA is off, but the notice was not sent: smtp down" {
		t.Fatalf("err = %v", err)
	}
	if want := (TwoFactorReset{TOTP: true, Sessions: 0, Trusted: 0}); res != want {
		t.Fatalf("DisableTwoFactor = %+v, want %+v", res, want)
	}
	if r.reload(r.ada).TwoFactorEnabled {
		t.Fatal("2FA still on")
	}
	r.wantEvents(EventSupportTwoFactorDisabled)
}

func TestSupportEndSessions(t *testing.T) {
	r := newSupportRig(t)
	r.record(r.sessions, "s1", r.ada, supportNow.Add(time.Hour))
	r.record(r.sessions, "s2", r.ada, supportNow.Add(time.Hour))
	r.record(r.trusted, "t1", r.ada, supportNow.Add(time.Hour))
	for _, k := range []*user.APIKey{
		{ID: "k1", UserID: r.ada.ID, Hash: make([]byte, 32), CreatedAt: supportNow, ExpiresAt: supportNow.Add(time.Hour)},
		{ID: "k2", UserID: r.ada.ID, Hash: make([]byte, 32), CreatedAt: supportNow, ExpiresAt: supportNow.Add(time.Hour)},
		{ID: "k3", UserID: "someone-else", Hash: make([]byte, 32), CreatedAt: supportNow, ExpiresAt: supportNow.Add(time.Hour)},
	} {
		if err := r.users.CreateAPIKey(r.ctx(), k, 20); err != nil {
			t.Fatal(err)
		}
	}
	res, err := r.sp.EndSessions(r.ctx(), r.ada.ID, actor)
	if want := (EndedSessions{SessionVersion: r.ada.SessionVersion + 1, Sessions: 2, Trusted: 1, APIKeys: 2}); err != nil || res != want {
		t.Fatalf("EndSessions = %+v, %v; want %+v", res, err, want)
	}
	if got := r.reload(r.ada).SessionVersion; got != r.ada.SessionVersion+1 {
		t.Fatalf("session version %d, want %d", got, r.ada.SessionVersion+1)
	}
	for _, st := range []*store.MemorySessions{r.sessions, r.trusted} {
		if recs, _ := st.List(r.ctx(), r.ada.ID); len(recs) != 0 {
			t.Fatalf("records left: %+v", recs)
		}
	}
	if left, _ := r.users.ListAPIKeys(r.ctx(), r.ada.ID); len(left) != 0 {
		t.Fatalf("API keys left: %+v", left)
	}
	if _, err := r.users.APIKeyByID(r.ctx(), "k3"); err != nil {
		t.Fatalf("another user's key: %v", err)
	}
	r.wantEvents(EventSupportSessionsEnded)
}

func TestSupportVerifyEmail(t *testing.T) {
	r := newSupportRig(t)
	already, err := r.sp.VerifyEmail(r.ctx(), r.ada.ID, actor)
	if err != nil || already {
		t.Fatalf("VerifyEmail = %v, %v; want false, nil", already, err)
	}
	if got := r.reload(r.ada).EmailVerifiedAt; !got.Equal(supportNow) {
		t.Fatalf("EmailVerifiedAt %v, want %v", got, supportNow)
	}
	if already, err := r.sp.VerifyEmail(r.ctx(), r.ada.ID, actor); err != nil || !already {
		t.Fatalf("second VerifyEmail = %v, %v; want true, nil", already, err)
	}
	r.wantEvents(EventSupportEmailVerified)
}

func TestSupportDeleteAccount(t *testing.T) {
	r := newSupportRig(t)
	r.passkey(r.ada, "pk1")
	r.record(r.sessions, "s1", r.ada, supportNow.Add(time.Hour))
	r.record(r.trusted, "t1", r.ada, supportNow.Add(time.Hour))
	if err := r.users.PutEmailCode(r.ctx(), user.EmailCode{UserID: r.ada.ID, Hash: []byte("h"), CreatedAt: supportNow, ExpiresAt: supportNow.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	res, err := r.sp.DeleteAccount(r.ctx(), r.ada.ID, actor)
	if want := (DeletedAccount{User: true, Passkeys: 1, Sessions: 1, Trusted: 1, EmailCodes: true}); err != nil || res != want {
		t.Fatalf("DeleteAccount = %+v, %v; want %+v", res, err, want)
	}
	if _, err := r.users.ByID(r.ctx(), r.ada.ID); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("ByID after delete: %v", err)
	}
	if _, err := r.users.PasskeyByID(r.ctx(), []byte("pk1")); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("passkey after delete: %v", err)
	}
	if _, err := r.users.ByPasskeyUserHandle(r.ctx(), []byte("handle-"+r.ada.ID)); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("user handle after delete: %v", err)
	}
	if _, err := r.users.EmailCode(r.ctx(), r.ada.ID); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("email code after delete: %v", err)
	}
	for _, st := range []*store.MemorySessions{r.sessions, r.trusted} {
		if recs, _ := st.List(r.ctx(), r.ada.ID); len(recs) != 0 {
			t.Fatalf("records left: %+v", recs)
		}
	}
	r.wantEvents(EventSupportAccountDeleted)
	if msgs := r.mail.Messages(); len(msgs) != 1 || msgs[0].Kind != mail.KindAccountDeleted || msgs[0].To != "ada@example.com" {
		t.Fatalf("mails %+v, want one account_deleted notice to ada@example.com", msgs)
	}
}

// TestSupportDeleteAccountHook: SupportConfig.BeforeDeleteAccount runs
// before the user is deleted, and its error vetoes: nothing is deleted,
// audited or mailed.
func TestSupportDeleteAccountHook(t *testing.T) {
	r := newSupportRig(t)
	veto := &user.ReferencedError{Table: "orders", Constraint: "orders_user_fk"}
	var seen []string
	r.sp.cfg.BeforeDeleteAccount = func(_ context.Context, u *user.User) error {
		seen = append(seen, u.ID)
		return veto
	}
	_, err := r.sp.DeleteAccount(r.ctx(), r.ada.ID, actor)
	if !errors.Is(err, user.ErrReferenced) || !strings.Contains(err.Error(), "table orders (foreign key orders_user_fk)") {
		t.Fatalf("DeleteAccount with a vetoing hook = %v, want the ReferencedError naming orders_user_fk", err)
	}
	r.reload(r.ada)
	r.wantEvents()
	if n := r.mail.Len(); n != 0 {
		t.Fatalf("%d mails after a vetoed deletion", n)
	}
	r.sp.cfg.BeforeDeleteAccount = func(_ context.Context, u *user.User) error { seen = append(seen, u.ID); return nil }
	if res, err := r.sp.DeleteAccount(r.ctx(), r.ada.ID, actor); err != nil || !res.User {
		t.Fatalf("DeleteAccount = %+v, %v", res, err)
	}
	if len(seen) != 2 || seen[1] != r.ada.ID {
		t.Fatalf("the hook saw %v, want ada twice", seen)
	}
}

// A store with Accounts only: each changing operation names the part it
// lacks.
func TestSupportUnsupported(t *testing.T) {
	sp, _ := NewSupport(SupportConfig{Users: accountsOnly{store.NewMemory(store.MemoryConfig{})}})
	_, err := sp.Unlock(context.Background(), "x", actor)
	if !errors.Is(err, ErrSupportUnsupported) || err.Error() != "auth: support: the store does not support this operation: the user store does not implement user.Lockout" {
		t.Fatalf("Unlock: %v", err)
	}
	if _, err := sp.DeleteAccount(context.Background(), "x", actor); !errors.Is(err, ErrSupportUnsupported) {
		t.Fatalf("DeleteAccount: %v", err)
	}
}

type accountsOnly struct{ m *store.Memory }

func (a accountsOnly) ByID(ctx context.Context, id string) (*user.User, error) {
	return a.m.ByID(ctx, id)
}
func (a accountsOnly) ByEmail(ctx context.Context, e string) (*user.User, error) {
	return a.m.ByEmail(ctx, e)
}

// Service.Support acts on the Service's stores: a session the flows made
// ends.
func TestServiceSupportEndsSession(t *testing.T) {
	f := newFlow(t, nil)
	b, u := f.register("ada@example.com", "correct horse battery")
	if err := f.do(b, func(v *Visit) error { _, err := f.s.CurrentUser(context.Background(), v); return err }); err != nil {
		t.Fatalf("CurrentUser before: %v", err)
	}
	if _, err := f.s.Support().EndSessions(context.Background(), u.ID, actor); err != nil {
		t.Fatal(err)
	}
	err := f.do(b, func(v *Visit) error { _, err := f.s.CurrentUser(context.Background(), v); return err })
	if !errors.Is(err, ErrNotAuthenticated) {
		t.Fatalf("CurrentUser after EndSessions: %v, want ErrNotAuthenticated", err)
	}
	if e, ok := f.event(EventSupportSessionsEnded); !ok || e.UserID != u.ID || e.Detail != actor {
		t.Fatalf("event %+v, %v", e, ok)
	}
}

// failingPasskeys is a memory store whose passkeys cannot be deleted.
type failingPasskeys struct{ *store.Memory }

func (failingPasskeys) DeletePasskey(context.Context, string, []byte) error {
	return user.ErrUnavailable
}

// A step that fails after TOTP went off still leaves the change audited.
func TestSupportDisableTwoFactorAuditsPartialChange(t *testing.T) {
	r := newSupportRig(t)
	r.enableTOTP(r.ada)
	r.passkey(r.ada, "pk1")
	r.sp.cfg.Users = failingPasskeys{r.users}
	res, err := r.sp.DisableTwoFactor(r.ctx(), r.ada.ID, actor)
	if !errors.Is(err, user.ErrUnavailable) || err.Error() != "auth: support: delete passkey: user: store unavailable" {
		t.Fatalf("err = %v", err)
	}
	if want := (TwoFactorReset{TOTP: true}); res != want {
		t.Fatalf("DisableTwoFactor = %+v, want %+v", res, want)
	}
	if r.reload(r.ada).TwoFactorEnabled || r.mail.Len() != 0 {
		t.Fatalf("2FA on %v, mails %d; want off, none", r.reload(r.ada).TwoFactorEnabled, r.mail.Len())
	}
	r.wantEvents(EventSupportTwoFactorDisabled)
}
