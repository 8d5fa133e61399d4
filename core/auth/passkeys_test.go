package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
)

// addKey stores a passkey of u with credential id id, as the passkeys
// module does after a registration, and returns its PasskeyInfo.ID.
func (f *flow) addKey(u *user.User, id, name string) string {
	f.t.Helper()
	st := f.s.users.passkeys
	ctx := context.Background()
	handle, err := st.PasskeyUserHandle(ctx, u.ID, []byte("handle-"+u.ID))
	if err != nil {
		f.t.Fatal(err)
	}
	err = st.AddPasskey(ctx, &user.Passkey{ID: []byte(id), UserID: u.ID, UserHandle: handle, PublicKey: []byte("key"),
		BackupEligible: true, Name: name, CreatedAt: f.now})
	if err != nil {
		f.t.Fatal(err)
	}
	f.now = f.now.Add(time.Second)
	return base64.RawURLEncoding.EncodeToString([]byte(id))
}

func (f *flow) listKeys(b *browser) ([]PasskeyInfo, error) {
	var out []PasskeyInfo
	err := f.do(b, func(v *Visit) (err error) {
		out, err = f.s.ListPasskeys(context.Background(), v)
		return err
	})
	return out, err
}

// TestListPasskeys: the signed-in user's passkeys, oldest first, with the
// fields the list shows; none is an empty slice; another user's are not
// listed; no session is ErrNotAuthenticated.
func TestListPasskeys(t *testing.T) {
	f := newFlow(t, nil)
	ada, u := f.register("ada@example.com", goodPW)
	_, bob := f.register("bob@example.com", goodPW)
	if got, err := f.listKeys(ada); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("ListPasskeys with none = %#v, %v; want an empty slice", got, err)
	}
	created := f.now
	first := f.addKey(u, "cred-1", "Laptop")
	second := f.addKey(u, "cred-2", "Phone")
	f.addKey(bob, "cred-3", "Bob's")
	used := f.now.Add(time.Hour)
	if err := f.s.users.passkeys.UsePasskey(context.Background(), u.ID, []byte("cred-2"), user.PasskeyUse{SignCount: 7, BackupState: true, At: used}); err != nil {
		t.Fatal(err)
	}

	got, err := f.listKeys(ada)
	if err != nil || len(got) != 2 {
		t.Fatalf("ListPasskeys = %+v, %v; want two", got, err)
	}
	if w := (PasskeyInfo{ID: first, Name: "Laptop", CreatedAt: created, BackupEligible: true}); got[0] != w {
		t.Errorf("first = %+v, want %+v", got[0], w)
	}
	if w := (PasskeyInfo{ID: second, Name: "Phone", CreatedAt: created.Add(time.Second), LastUsedAt: used, BackupEligible: true, BackedUp: true}); got[1] != w {
		t.Errorf("second = %+v, want %+v", got[1], w)
	}
	if _, err := f.listKeys(newBrowser()); err != ErrNotAuthenticated {
		t.Fatalf("ListPasskeys without a session: %v, want ErrNotAuthenticated", err)
	}
}

// TestRenamePasskey: a session is enough (no recent authentication); the
// name is trimmed and checked; another user's id, an unknown one and one
// that is not base64url are ErrPasskeyNotFound, and change nothing.
func TestRenamePasskey(t *testing.T) {
	f := newFlow(t, nil)
	ada, u := f.register("ada@example.com", goodPW)
	_, bob := f.register("bob@example.com", goodPW)
	id := f.addKey(u, "cred-1", "Laptop")
	bobs := f.addKey(bob, "cred-2", "Bob's")
	f.now = f.now.Add(DefaultReauthWindow + time.Minute) // stale: rename does not need a recent authentication
	rename := func(b *browser, id, name string) (PasskeyInfo, error) {
		var out PasskeyInfo
		err := f.do(b, func(v *Visit) (err error) {
			out, err = f.s.RenamePasskey(context.Background(), v, RenamePasskeyInput{ID: id, Name: name})
			return err
		})
		return out, err
	}

	got, err := rename(ada, id, "  Work laptop \t")
	if err != nil || got.ID != id || got.Name != "Work laptop" {
		t.Fatalf("RenamePasskey = %+v, %v; want %s named %q", got, err, id, "Work laptop")
	}
	for _, tt := range []struct {
		name, id, newName string
		want              *Error
	}{
		{"empty name", id, "   ", ErrNameRequired},
		{"control character", id, "a\x00b", ErrInvalidCharacters},
		{"invalid UTF-8", id, "a\xffb", ErrInvalidCharacters},
		{"right-to-left override", id, "Laptop\u202Egpj.exe", ErrInvalidCharacters},
		{"too long", id, strings.Repeat("é", MaxPasskeyName+1), ErrNameTooLong},
		{"another user's", bobs, "Mine now", ErrPasskeyNotFound},
		{"unknown", base64.RawURLEncoding.EncodeToString([]byte("nope")), "X", ErrPasskeyNotFound},
		{"not base64url", "!!", "X", ErrPasskeyNotFound},
		{"empty id", "", "X", ErrPasskeyNotFound},
	} {
		if _, err := rename(ada, tt.id, tt.newName); err != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := rename(ada, id, strings.Repeat("é", MaxPasskeyName)); err != nil {
		t.Errorf("a name of MaxPasskeyName characters: %v", err)
	}
	if p, _ := f.s.users.passkeys.PasskeyByID(context.Background(), []byte("cred-2")); p.Name != "Bob's" {
		t.Errorf("another user's passkey was renamed to %q", p.Name)
	}
	if _, err := rename(newBrowser(), id, "X"); err != ErrNotAuthenticated {
		t.Errorf("without a session: %v, want ErrNotAuthenticated", err)
	}
}

// TestDeletePasskey: a stale session is refused with the 403 and deletes
// nothing; a recent one deletes, audits and mails the notice; another
// user's id is ErrPasskeyNotFound and stays; a deleted one is not found.
func TestDeletePasskey(t *testing.T) {
	f := newFlow(t, nil)
	ada, u := f.register("ada@example.com", goodPW)
	_, bob := f.register("bob@example.com", goodPW)
	id := f.addKey(u, "cred-1", "Laptop")
	bobs := f.addKey(bob, "cred-2", "Bob's")
	del := func(b *browser, id string) error {
		return f.do(b, func(v *Visit) error {
			return f.s.DeletePasskey(context.Background(), v, DeletePasskeyInput{ID: id})
		})
	}
	ctx := context.Background()

	f.now = f.now.Add(DefaultReauthWindow)
	var e *Error
	if err := del(ada, id); !errors.As(err, &e) || e != ErrReauthenticationRequired || e.Status != 403 {
		t.Fatalf("stale delete: %v, want ErrReauthenticationRequired", err)
	}
	if _, err := f.s.users.passkeys.PasskeyByID(ctx, []byte("cred-1")); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}
	if err := f.do(ada, func(v *Visit) error {
		_, err := f.s.ConfirmPassword(ctx, v, ConfirmPasswordInput{Password: goodPW})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	if err := del(ada, bobs); err != ErrPasskeyNotFound {
		t.Fatalf("delete another user's: %v, want ErrPasskeyNotFound", err)
	}
	if _, err := f.s.users.passkeys.PasskeyByID(ctx, []byte("cred-2")); err != nil {
		t.Fatalf("another user's passkey is gone: %v", err)
	}
	if err := del(ada, "!!"); err != ErrPasskeyNotFound {
		t.Fatalf("delete a malformed id: %v, want ErrPasskeyNotFound", err)
	}
	if n := len(f.mails(mail.KindPasskeyDeleted)); n != 0 {
		t.Fatalf("%d notices before any deletion", n)
	}
	if _, ok := f.event(EventPasskeyDeleted); ok {
		t.Fatal("a refused delete was audited")
	}

	if err := del(ada, id); err != nil {
		t.Fatalf("DeletePasskey: %v", err)
	}
	if _, err := f.s.users.passkeys.PasskeyByID(ctx, []byte("cred-1")); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("after delete, PasskeyByID: %v, want ErrNotFound", err)
	}
	if ev, ok := f.event(EventPasskeyDeleted); !ok || ev.UserID != u.ID || ev.Detail != "Laptop" || ev.IP != "192.0.2.7" {
		t.Errorf("audit: %+v, want %s of Laptop for %s", ev, EventPasskeyDeleted, u.ID)
	}
	ms := f.mails(mail.KindPasskeyDeleted)
	if len(ms) != 1 || ms[0].To != "ada@example.com" || !strings.Contains(ms[0].Text, "Laptop") {
		t.Fatalf("notices %+v, want one to ada@example.com naming Laptop", ms)
	}
	if err := del(ada, id); err != ErrPasskeyNotFound {
		t.Fatalf("delete again: %v, want ErrPasskeyNotFound", err)
	}
	if err := del(newBrowser(), id); err != ErrNotAuthenticated {
		t.Fatalf("without a session: %v, want ErrNotAuthenticated", err)
	}
}

// TestPasskeyManagementNeedsStore: a store without user.Passkeys is
// accepted by New, and the methods fail with ErrFeatureDisabled.
func TestPasskeyManagementNeedsStore(t *testing.T) {
	m := store.NewMemory(store.MemoryConfig{})
	f := newFlow(t, func(c *Config) { c.Users = noLockout{requiredOf(m), m, m, m, m, m}; c.Lockout = LockoutOff })
	b, _ := f.register("ada@example.com", goodPW)
	if _, err := f.listKeys(b); err != ErrFeatureDisabled {
		t.Errorf("ListPasskeys: %v, want ErrFeatureDisabled", err)
	}
	err := f.do(b, func(v *Visit) error {
		_, err := f.s.RenamePasskey(context.Background(), v, RenamePasskeyInput{ID: "eA", Name: "x"})
		return err
	})
	if err != ErrFeatureDisabled {
		t.Errorf("RenamePasskey: %v, want ErrFeatureDisabled", err)
	}
	if err := f.do(b, func(v *Visit) error {
		return f.s.DeletePasskey(context.Background(), v, DeletePasskeyInput{ID: "eA"})
	}); err != ErrFeatureDisabled {
		t.Errorf("DeletePasskey: %v, want ErrFeatureDisabled", err)
	}
}

// TestCheckPasskeyName: the table of the name rule.
func TestCheckPasskeyName(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		err      error
	}{
		{"Laptop", "Laptop", nil},
		{"  Phone\n", "Phone", nil},
		{"", "", ErrNameRequired},
		{"\t ", "", ErrNameRequired},
		{"a\u0007b", "", ErrInvalidCharacters},
		// The format characters a user's name may not hold either: they
		// reorder or hide what the list and the notice mails show.
		{"Laptop\u202Eexe.txt", "", ErrInvalidCharacters},   // right-to-left override
		{"Work\u2066Phone\u2069", "", ErrInvalidCharacters}, // left-to-right isolate
		{"Key\u200B", "", ErrInvalidCharacters},             // zero-width space
		{"Key\uFEFF", "", ErrInvalidCharacters},             // zero-width no-break space
		{"\u00adKey", "", ErrInvalidCharacters},             // soft hyphen
		{"Clé de Zoë", "Clé de Zoë", nil},
		{strings.Repeat("x", MaxPasskeyName), strings.Repeat("x", MaxPasskeyName), nil},
		{strings.Repeat("x", MaxPasskeyName+1), "", ErrNameTooLong},
	} {
		got, err := CheckPasskeyName(tt.in)
		if got != tt.want || err != tt.err {
			t.Errorf("CheckPasskeyName(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestAuditLevels: without Config.Audit, the events that suggest an attack
// or a copied credential are logged at WARN, the rest at INFO; LogAudit
// logs at the same levels.
func TestAuditLevels(t *testing.T) {
	for _, tt := range []struct {
		event EventType
		level string
	}{
		{EventPasskeyCountRegressed, "WARN"},
		{EventLoginFailed, "WARN"},
		{EventLimitStoreFull, "WARN"},
		{EventPasskeyAdded, "INFO"},
		{EventLoginSucceeded, "INFO"},
	} {
		var logs, wrapped bytes.Buffer
		f := newFlow(t, func(c *Config) {
			c.Audit = nil
			c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		})
		f.s.Modules().Audit(context.Background(), f.visit(newBrowser()), Event{Type: tt.event, UserID: "u1", Detail: "stored 7, received 3, refused false"})
		want := "level=" + tt.level + " msg=\"authkit: " + string(tt.event) + "\""
		if !strings.Contains(logs.String(), want) {
			t.Errorf("%s logged as %q, want %s", tt.event, logs.String(), want)
		}
		LogAudit(slog.New(slog.NewTextHandler(&wrapped, nil)))(context.Background(), Event{Type: tt.event})
		if !strings.Contains(wrapped.String(), want) {
			t.Errorf("LogAudit: %s logged as %q, want %s", tt.event, wrapped.String(), want)
		}
	}
}

// noPasswordStore is the memory store with every account read without a
// password (a sign-up by email, a social provider or a passkey), whose
// DeletePasskey waits until two deletions are under way, so that both
// checked the account's ways in before either deletes.
type noPasswordStore struct {
	*store.Memory
	arrived chan struct{}
}

func (s *noPasswordStore) ByID(ctx context.Context, id string) (*user.User, error) {
	u, err := s.Memory.ByID(ctx, id)
	if u != nil {
		u.PasswordHash = ""
	}
	return u, err
}

func (s *noPasswordStore) DeletePasskey(ctx context.Context, userID string, id []byte) error {
	s.arrived <- struct{}{}
	deadline := time.After(5 * time.Second)
	for len(s.arrived) < cap(s.arrived) {
		select {
		case <-deadline:
			return errors.New("the other deletion never came")
		case <-time.After(time.Millisecond):
		}
	}
	return s.Memory.DeletePasskey(ctx, userID, id)
}

// TestDeleteLastTwoPasskeysRacing: an account without a password deletes
// its last two passkeys at once, each deletion checking before the other
// deletes: together they may not leave it without a way in, so at most
// one wins, the other is refused with ErrLastSignInMethod (its passkey
// stored again), and only a deletion that won is audited.
func TestDeleteLastTwoPasskeysRacing(t *testing.T) {
	st := &noPasswordStore{Memory: store.NewMemory(store.MemoryConfig{}), arrived: make(chan struct{}, 2)}
	f := newFlow(t, func(c *Config) { c.Users = st })
	ada, u := f.register("ada@example.com", goodPW)
	ids := []string{f.addKey(u, "cred-1", "Laptop"), f.addKey(u, "cred-2", "Phone")}
	errs := make([]error, 2)
	visits := []*Visit{f.visit(ada), f.visit(ada)}
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			errs[i] = f.s.DeletePasskey(context.Background(), visits[i], DeletePasskeyInput{ID: ids[i]})
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch err {
		case nil:
			won++
		case ErrLastSignInMethod:
		default:
			t.Errorf("deletion %d: %v, want nil or ErrLastSignInMethod", i, err)
		}
	}
	keys, err := st.ListPasskeys(context.Background(), u.ID)
	if err != nil || won > 1 || len(keys) != 2-won {
		t.Fatalf("after the race: %d won, %d passkeys left, %v; want at most one won and a passkey left", won, len(keys), err)
	}
	audited := 0
	for _, e := range f.events {
		if e.Type == EventPasskeyDeleted {
			audited++
		}
	}
	if audited != won {
		t.Errorf("%d deletions audited, %d won", audited, won)
	}
}
