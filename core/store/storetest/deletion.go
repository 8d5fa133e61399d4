package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/authkit-go/authkit/core/user"
)

// accountDeleterTests are the tests of user.AccountDeleter.
var accountDeleterTests = []test{
	{"DeleteWithRunsBeforeThenDeletes", testDeleteWith},
	{"DeleteWithBeforeFails", testDeleteWithBeforeFails},
	{"DeleteWithUnknownUser", testDeleteWithUnknown},
	{"DeleteWithRace", testDeleteWithRace},
}

func testDeleteWith(t *testing.T, s *parts) {
	ada := mustCreate(t, s, "ada@example.com")
	bob := mustCreate(t, s, "bob@example.com")
	calls := 0
	err := s.DeleteWith(ctx(t), ada.ID, func(c context.Context) error {
		calls++
		if c == nil {
			t.Error("before got a nil context")
		}
		return nil
	})
	wantOK(t, "DeleteWith", err)
	if calls != 1 {
		t.Errorf("before ran %d times, want 1", calls)
	}
	_, err = s.ByID(ctx(t), ada.ID)
	wantErr(t, "ByID after DeleteWith", err, user.ErrNotFound)
	_, err = s.ByEmail(ctx(t), "ada@example.com")
	wantErr(t, "ByEmail after DeleteWith", err, user.ErrNotFound)
	mustGet(t, s, bob.ID) // another user stays
	// The address is free again.
	again := mustCreate(t, s, "ada@example.com")
	if again.ID == ada.ID {
		t.Errorf("a new account reuses the deleted id %q", ada.ID)
	}
}

func testDeleteWithBeforeFails(t *testing.T, s *parts) {
	ada := mustCreate(t, s, "ada@example.com")
	veto := errors.New("the app refuses")
	err := s.DeleteWith(ctx(t), ada.ID, func(context.Context) error { return veto })
	if !errors.Is(err, veto) {
		t.Fatalf("DeleteWith with a failing before = %v, want the callback's error wrapped", err)
	}
	mustGet(t, s, ada.ID)
}

func testDeleteWithUnknown(t *testing.T, s *parts) {
	err := s.DeleteWith(ctx(t), "no-such-user", func(context.Context) error { return nil })
	wantErr(t, "DeleteWith of an unknown id", err, user.ErrNotFound)
	u := mustCreate(t, s, "ada@example.com")
	wantOK(t, "Delete", s.Delete(ctx(t), u.ID))
	err = s.DeleteWith(ctx(t), u.ID, nil)
	wantErr(t, "DeleteWith of a deleted user", err, user.ErrNotFound)
}

// Racing deletions of one user: exactly one succeeds, the others find no
// user.
func testDeleteWithRace(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	const n = 50
	won := countWinnersN(t, n, func(int) error {
		return s.DeleteWith(ctx(t), u.ID, func(context.Context) error { return nil })
	}, user.ErrNotFound)
	if won != 1 {
		t.Errorf("%d racers deleted the user, want exactly 1", won)
	}
	_, err := s.ByID(ctx(t), u.ID)
	wantErr(t, "ByID after the race", err, user.ErrNotFound)
}
