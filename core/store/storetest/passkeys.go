package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// passkeyTests are the tests of user.Passkeys.
var passkeyTests = []test{
	{"UserHandleGetOrCreate", testHandleGetOrCreate},
	{"UserHandleRace", testHandleRace},
	{"AddAndRead", testPasskeyAddAndRead},
	{"DuplicateCredentialID", testPasskeyDuplicate},
	{"ListOrderAndOwner", testPasskeyList},
	{"RenameAndDelete", testPasskeyRenameDelete},
	{"OtherUsersCredential", testPasskeyOtherUser},
	{"UsePasskey", testUsePasskey},
	{"UsePasskeyRace", testUsePasskeyRace},
	{"AddPasskeyRace", testAddPasskeyRace},
	{"DeleteUserDeletesPasskeys", testDeleteUserPasskeys},
	{"PasskeyRecordsAreCopies", testPasskeyCopies},
}

// withHandle creates a user and gives them a handle.
func withHandle(t *testing.T, s *parts, email string) (*user.User, []byte) {
	t.Helper()
	u := mustCreate(t, s, email)
	h, err := s.PasskeyUserHandle(ctx(t), u.ID, []byte("handle-"+email))
	wantOK(t, "PasskeyUserHandle", err)
	return u, h
}

func newPasskey(u *user.User, handle []byte, id string, created time.Time) *user.Passkey {
	return &user.Passkey{
		ID: []byte(id), UserID: u.ID, UserHandle: handle, PublicKey: []byte("cose-" + id),
		SignCount: 7, BackupEligible: true, BackupState: false, Transports: []string{"internal", "hybrid"},
		AttestationType: "none", AAGUID: bytes.Repeat([]byte{0xAB}, 16), Name: "Key " + id, CreatedAt: created,
	}
}

func checkPasskey(t *testing.T, how string, got, want *user.Passkey) {
	t.Helper()
	switch {
	case !bytes.Equal(got.ID, want.ID), got.UserID != want.UserID, !bytes.Equal(got.UserHandle, want.UserHandle),
		!bytes.Equal(got.PublicKey, want.PublicKey), got.SignCount != want.SignCount,
		got.BackupEligible != want.BackupEligible, got.BackupState != want.BackupState,
		!slices.Equal(got.Transports, want.Transports), got.AttestationType != want.AttestationType,
		!bytes.Equal(got.AAGUID, want.AAGUID), got.Name != want.Name:
		t.Fatalf("%s: got %+v, want %+v", how, got, want)
	case !got.CreatedAt.Equal(ms(want.CreatedAt)), !got.LastUsedAt.Equal(ms(want.LastUsedAt)):
		t.Fatalf("%s: times %v / %v, want %v / %v (millisecond precision)", how, got.CreatedAt, got.LastUsedAt, ms(want.CreatedAt), ms(want.LastUsedAt))
	}
}

func testHandleGetOrCreate(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	h1, err := s.PasskeyUserHandle(ctx(t), u.ID, []byte("first"))
	wantOK(t, "PasskeyUserHandle", err)
	if string(h1) != "first" {
		t.Fatalf("first handle %q, want the candidate %q", h1, "first")
	}
	h2, err := s.PasskeyUserHandle(ctx(t), u.ID, []byte("second"))
	wantOK(t, "PasskeyUserHandle again", err)
	if string(h2) != "first" {
		t.Fatalf("second call gave %q, want the stored %q", h2, "first")
	}
	got, err := s.ByPasskeyUserHandle(ctx(t), []byte("first"))
	wantOK(t, "ByPasskeyUserHandle", err)
	if got.ID != u.ID {
		t.Fatalf("ByPasskeyUserHandle gave user %q, want %q", got.ID, u.ID)
	}
	_, err = s.ByPasskeyUserHandle(ctx(t), []byte("second"))
	wantErr(t, "ByPasskeyUserHandle(unused candidate)", err, user.ErrNotFound)
	_, err = s.ByPasskeyUserHandle(ctx(t), []byte("FIRST"))
	wantErr(t, "ByPasskeyUserHandle(other case)", err, user.ErrNotFound)
	_, err = s.PasskeyUserHandle(ctx(t), "no-such-user", []byte("x"))
	wantErr(t, "PasskeyUserHandle(missing user)", err, user.ErrNotFound)
}

func testHandleRace(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	got := make([][]byte, racers)
	race(t, func(i int) error {
		h, err := s.PasskeyUserHandle(ctx(t), u.ID, fmt.Appendf(nil, "candidate-%d", i))
		got[i] = h
		return err
	})
	for i := range got {
		if !bytes.Equal(got[i], got[0]) {
			t.Fatalf("racing calls returned different handles: %q and %q", got[0], got[i])
		}
	}
}

func testPasskeyAddAndRead(t *testing.T, s *parts) {
	u, h := withHandle(t, s, "ada@example.com")
	p := newPasskey(u, h, "cred-1", base)
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), p))
	got, err := s.PasskeyByID(ctx(t), []byte("cred-1"))
	wantOK(t, "PasskeyByID", err)
	checkPasskey(t, "PasskeyByID", got, p)
	list, err := s.ListPasskeys(ctx(t), u.ID)
	wantOK(t, "ListPasskeys", err)
	if len(list) != 1 {
		t.Fatalf("ListPasskeys: %d credentials, want 1", len(list))
	}
	checkPasskey(t, "ListPasskeys", list[0], p)
	_, err = s.PasskeyByID(ctx(t), []byte("cred-2"))
	wantErr(t, "PasskeyByID(missing)", err, user.ErrNotFound)
	err = s.AddPasskey(ctx(t), newPasskey(&user.User{ID: "no-such-user"}, h, "cred-3", base))
	wantErr(t, "AddPasskey(missing user)", err, user.ErrNotFound)
	_, err = s.ListPasskeys(ctx(t), "no-such-user")
	wantErr(t, "ListPasskeys(missing user)", err, user.ErrNotFound)
}

func testPasskeyDuplicate(t *testing.T, s *parts) {
	ada, ha := withHandle(t, s, "ada@example.com")
	bob, hb := withHandle(t, s, "bob@example.com")
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), newPasskey(ada, ha, "cred-1", base)))
	wantErr(t, "AddPasskey(same id, same user)", s.AddPasskey(ctx(t), newPasskey(ada, ha, "cred-1", base)), user.ErrConflict)
	dup := newPasskey(bob, hb, "cred-1", base)
	dup.PublicKey = []byte("attacker key")
	wantErr(t, "AddPasskey(same id, other user)", s.AddPasskey(ctx(t), dup), user.ErrConflict)
	got, err := s.PasskeyByID(ctx(t), []byte("cred-1"))
	wantOK(t, "PasskeyByID", err)
	if got.UserID != ada.ID || string(got.PublicKey) != "cose-cred-1" {
		t.Fatalf("a refused duplicate changed the credential: %+v", got)
	}
}

func testPasskeyList(t *testing.T, s *parts) {
	ada, ha := withHandle(t, s, "ada@example.com")
	bob, hb := withHandle(t, s, "bob@example.com")
	empty, err := s.ListPasskeys(ctx(t), ada.ID)
	wantOK(t, "ListPasskeys(none)", err)
	if empty == nil || len(empty) != 0 {
		t.Fatalf("ListPasskeys of a user without any: %#v, want an empty slice", empty)
	}
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), newPasskey(ada, ha, "c-late", base.Add(2*time.Second))))
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), newPasskey(ada, ha, "b-early", base)))
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), newPasskey(ada, ha, "a-early", base)))
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), newPasskey(bob, hb, "bob-1", base)))
	list, err := s.ListPasskeys(ctx(t), ada.ID)
	wantOK(t, "ListPasskeys", err)
	var ids []string
	for _, p := range list {
		ids = append(ids, string(p.ID))
	}
	if want := []string{"a-early", "b-early", "c-late"}; !slices.Equal(ids, want) {
		t.Fatalf("ListPasskeys order %q, want %q (CreatedAt, then ID)", ids, want)
	}
}

func testPasskeyRenameDelete(t *testing.T, s *parts) {
	u, h := withHandle(t, s, "ada@example.com")
	p := newPasskey(u, h, "cred-1", base)
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), p))
	wantOK(t, "RenamePasskey", s.RenamePasskey(ctx(t), u.ID, p.ID, "Laptop"))
	got, err := s.PasskeyByID(ctx(t), p.ID)
	wantOK(t, "PasskeyByID", err)
	p.Name = "Laptop"
	checkPasskey(t, "after rename", got, p)
	wantOK(t, "DeletePasskey", s.DeletePasskey(ctx(t), u.ID, p.ID))
	_, err = s.PasskeyByID(ctx(t), p.ID)
	wantErr(t, "PasskeyByID(deleted)", err, user.ErrNotFound)
	wantErr(t, "DeletePasskey(again)", s.DeletePasskey(ctx(t), u.ID, p.ID), user.ErrNotFound)
	wantErr(t, "RenamePasskey(deleted)", s.RenamePasskey(ctx(t), u.ID, p.ID, "x"), user.ErrNotFound)
	if h2, err := s.PasskeyUserHandle(ctx(t), u.ID, []byte("new")); err != nil || !bytes.Equal(h2, h) {
		t.Fatalf("the handle after deleting the last passkey: %q, %v; want %q kept", h2, err, h)
	}
}

func testPasskeyOtherUser(t *testing.T, s *parts) {
	ada, ha := withHandle(t, s, "ada@example.com")
	bob, _ := withHandle(t, s, "bob@example.com")
	p := newPasskey(ada, ha, "cred-1", base)
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), p))
	wantErr(t, "RenamePasskey(other user)", s.RenamePasskey(ctx(t), bob.ID, p.ID, "mine"), user.ErrNotFound)
	wantErr(t, "DeletePasskey(other user)", s.DeletePasskey(ctx(t), bob.ID, p.ID), user.ErrNotFound)
	wantErr(t, "UsePasskey(other user)", s.UsePasskey(ctx(t), bob.ID, p.ID, user.PasskeyUse{OldSignCount: 7, SignCount: 8, At: base}), user.ErrNotFound)
	got, err := s.PasskeyByID(ctx(t), p.ID)
	wantOK(t, "PasskeyByID", err)
	checkPasskey(t, "after another user's attempts", got, p)
}

func testUsePasskey(t *testing.T, s *parts) {
	u, h := withHandle(t, s, "ada@example.com")
	p := newPasskey(u, h, "cred-1", base)
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), p))
	at := base.Add(time.Hour)
	wantOK(t, "UsePasskey", s.UsePasskey(ctx(t), u.ID, p.ID, user.PasskeyUse{OldSignCount: 7, SignCount: 9, BackupState: true, At: at}))
	wantErr(t, "UsePasskey(stale count)", s.UsePasskey(ctx(t), u.ID, p.ID, user.PasskeyUse{OldSignCount: 7, SignCount: 10, At: at}), user.ErrConflict)
	got, err := s.PasskeyByID(ctx(t), p.ID)
	wantOK(t, "PasskeyByID", err)
	p.SignCount, p.BackupState, p.LastUsedAt = 9, true, at
	checkPasskey(t, "after use", got, p)
	// A counter that goes backwards is the caller's decision: the store
	// records what it is given when the condition holds.
	wantOK(t, "UsePasskey(lower count)", s.UsePasskey(ctx(t), u.ID, p.ID, user.PasskeyUse{OldSignCount: 9, SignCount: 3, At: at}))
	got, _ = s.PasskeyByID(ctx(t), p.ID)
	if got.SignCount != 3 || got.BackupState {
		t.Fatalf("after a lower count: SignCount %d, BackupState %v; want 3, false", got.SignCount, got.BackupState)
	}
	wantErr(t, "UsePasskey(missing)", s.UsePasskey(ctx(t), u.ID, []byte("nope"), user.PasskeyUse{}), user.ErrNotFound)
}

func testUsePasskeyRace(t *testing.T, s *parts) {
	u, h := withHandle(t, s, "ada@example.com")
	p := newPasskey(u, h, "cred-1", base)
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), p))
	n := countWinners(t, func(i int) error {
		return s.UsePasskey(ctx(t), u.ID, p.ID, user.PasskeyUse{OldSignCount: 7, SignCount: uint32(100 + i), At: base})
	}, user.ErrConflict)
	if n != 1 {
		t.Fatalf("racing UsePasskey: %d won, want 1 (and ErrConflict for the others)", n)
	}
	got, _ := s.PasskeyByID(ctx(t), p.ID)
	if got.SignCount < 100 || got.SignCount >= 100+racers {
		t.Fatalf("SignCount %d is not one of the racers'", got.SignCount)
	}
}

func testAddPasskeyRace(t *testing.T, s *parts) {
	ada, ha := withHandle(t, s, "ada@example.com")
	n := countWinners(t, func(i int) error {
		p := newPasskey(ada, ha, "cred-1", base)
		p.Name = fmt.Sprint("racer ", i)
		return s.AddPasskey(ctx(t), p)
	}, user.ErrConflict)
	if n != 1 {
		t.Fatalf("racing AddPasskey: %d won, want 1 (and ErrConflict for the others)", n)
	}
	list, _ := s.ListPasskeys(ctx(t), ada.ID)
	if len(list) != 1 {
		t.Fatalf("%d credentials stored, want 1", len(list))
	}
}

func testDeleteUserPasskeys(t *testing.T, s *parts) {
	needRegistration(t, s)
	u, h := withHandle(t, s, "ada@example.com")
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), newPasskey(u, h, "cred-1", base)))
	wantOK(t, "Delete", s.Delete(ctx(t), u.ID))
	_, err := s.PasskeyByID(ctx(t), []byte("cred-1"))
	wantErr(t, "PasskeyByID(after user delete)", err, user.ErrNotFound)
	_, err = s.ByPasskeyUserHandle(ctx(t), h)
	wantErr(t, "ByPasskeyUserHandle(after user delete)", err, user.ErrNotFound)
}

func testPasskeyCopies(t *testing.T, s *parts) {
	u, h := withHandle(t, s, "ada@example.com")
	p := newPasskey(u, h, "cred-1", base)
	wantOK(t, "AddPasskey", s.AddPasskey(ctx(t), p))
	p.PublicKey[0] = 'X'
	p.Transports[0] = "changed"
	got, _ := s.PasskeyByID(ctx(t), []byte("cred-1"))
	got.ID[0] = 'X'
	got.Transports[1] = "changed"
	again, _ := s.PasskeyByID(ctx(t), []byte("cred-1"))
	if string(again.PublicKey) != "cose-cred-1" || string(again.ID) != "cred-1" || !slices.Equal(again.Transports, []string{"internal", "hybrid"}) {
		t.Fatalf("the store shares memory with its callers: %+v", again)
	}
}
