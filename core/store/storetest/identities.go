package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// identityTests are the tests of user.Identities.
var identityTests = []test{
	{"AddAndRead", testIdentityAddAndRead},
	{"UniquePerProviderAndSubject", testIdentityUnique},
	{"ListOrderAndOwner", testIdentityList},
	{"DeleteOwnOnly", testIdentityDelete},
	{"DeleteKeepOne", testIdentityKeepOne},
	{"DeleteKeepOneRace", testIdentityKeepOneRace},
	{"AddIdentityRace", testAddIdentityRace},
	{"DeleteUserDeletesIdentities", testDeleteUserIdentities},
}

func link(t *testing.T, s *parts, u *user.User, provider, subject string, at time.Time) *user.Identity {
	t.Helper()
	id, err := s.AddIdentity(ctx(t), &user.Identity{UserID: u.ID, Provider: provider, Subject: subject, Email: "x-" + subject + "@example.com", LinkedAt: at})
	wantOK(t, "AddIdentity", err)
	return id
}

func testIdentityAddAndRead(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	id := link(t, s, u, "google", "sub-1", base)
	if id.ID == "" || id.UserID != u.ID || id.Provider != "google" || id.Subject != "sub-1" || id.Email != "x-sub-1@example.com" || !id.LinkedAt.Equal(ms(base)) {
		t.Fatalf("AddIdentity returned %+v", id)
	}
	got, err := s.IdentityBySubject(ctx(t), "google", "sub-1")
	wantOK(t, "IdentityBySubject", err)
	if *got != *id {
		t.Fatalf("IdentityBySubject = %+v, want %+v", got, id)
	}
	_, err = s.IdentityBySubject(ctx(t), "google", "SUB-1")
	wantErr(t, "IdentityBySubject of another case", err, user.ErrNotFound)
	_, err = s.IdentityBySubject(ctx(t), "gitlab", "sub-1")
	wantErr(t, "IdentityBySubject of another provider", err, user.ErrNotFound)
	_, err = s.AddIdentity(ctx(t), &user.Identity{UserID: "no-such-user", Provider: "google", Subject: "sub-2"})
	wantErr(t, "AddIdentity for no user", err, user.ErrNotFound)
	// LinkedAt defaults to the store's clock.
	d, err := s.AddIdentity(ctx(t), &user.Identity{UserID: u.ID, Provider: "gitlab", Subject: "sub-3"})
	wantOK(t, "AddIdentity without LinkedAt", err)
	if d.LinkedAt.IsZero() {
		t.Fatal("AddIdentity left LinkedAt zero")
	}
	got.Subject = "changed"
	again, err := s.IdentityBySubject(ctx(t), "google", "sub-1")
	wantOK(t, "IdentityBySubject again", err)
	if again.Subject != "sub-1" {
		t.Fatal("a returned record shares memory with the store")
	}
}

func testIdentityUnique(t *testing.T, s *parts) {
	a := mustCreate(t, s, "ada@example.com")
	b := mustCreate(t, s, "bob@example.com")
	link(t, s, a, "google", "sub-1", base)
	_, err := s.AddIdentity(ctx(t), &user.Identity{UserID: b.ID, Provider: "google", Subject: "sub-1"})
	wantErr(t, "the same provider and subject for another user", err, user.ErrConflict)
	_, err = s.AddIdentity(ctx(t), &user.Identity{UserID: a.ID, Provider: "google", Subject: "sub-1"})
	wantErr(t, "the same provider and subject again", err, user.ErrConflict)
	link(t, s, b, "gitlab", "sub-1", base) // another provider's subject is another identity
}

func testIdentityList(t *testing.T, s *parts) {
	a := mustCreate(t, s, "ada@example.com")
	b := mustCreate(t, s, "bob@example.com")
	second := link(t, s, a, "gitlab", "a-2", base.Add(time.Minute))
	first := link(t, s, a, "google", "a-1", base)
	link(t, s, b, "google", "b-1", base)
	got, err := s.ListIdentities(ctx(t), a.ID)
	wantOK(t, "ListIdentities", err)
	if len(got) != 2 || got[0].ID != first.ID || got[1].ID != second.ID {
		t.Fatalf("ListIdentities = %+v, want the two of ada, oldest first", got)
	}
	c := mustCreate(t, s, "cy@example.com")
	none, err := s.ListIdentities(ctx(t), c.ID)
	wantOK(t, "ListIdentities of a user with none", err)
	if none == nil || len(none) != 0 {
		t.Fatalf("ListIdentities of a user with none = %#v, want an empty slice", none)
	}
	_, err = s.ListIdentities(ctx(t), "no-such-user")
	wantErr(t, "ListIdentities of no user", err, user.ErrNotFound)
}

func testIdentityDelete(t *testing.T, s *parts) {
	a := mustCreate(t, s, "ada@example.com")
	b := mustCreate(t, s, "bob@example.com")
	ia := link(t, s, a, "google", "a-1", base)
	wantErr(t, "DeleteIdentity of another user's", s.DeleteIdentity(ctx(t), b.ID, ia.ID, false), user.ErrNotFound)
	wantOK(t, "DeleteIdentity", s.DeleteIdentity(ctx(t), a.ID, ia.ID, false))
	_, err := s.IdentityBySubject(ctx(t), "google", "a-1")
	wantErr(t, "IdentityBySubject after the delete", err, user.ErrNotFound)
	wantErr(t, "DeleteIdentity again", s.DeleteIdentity(ctx(t), a.ID, ia.ID, false), user.ErrNotFound)
	link(t, s, b, "google", "a-1", base) // the subject is free again
}

func testIdentityKeepOne(t *testing.T, s *parts) {
	a := mustCreate(t, s, "ada@example.com")
	one := link(t, s, a, "google", "a-1", base)
	wantErr(t, "DeleteIdentity of the last one with keepOne", s.DeleteIdentity(ctx(t), a.ID, one.ID, true), user.ErrConflict)
	two := link(t, s, a, "gitlab", "a-2", base)
	wantOK(t, "DeleteIdentity of one of two with keepOne", s.DeleteIdentity(ctx(t), a.ID, one.ID, true))
	got, err := s.ListIdentities(ctx(t), a.ID)
	wantOK(t, "ListIdentities", err)
	if len(got) != 1 || got[0].ID != two.ID {
		t.Fatalf("after the delete: %+v, want only %s", got, two.ID)
	}
}

// testIdentityKeepOneRace: racing deletes of a user's last two identities,
// each keeping one: exactly one succeeds.
func testIdentityKeepOneRace(t *testing.T, s *parts) {
	for round := range 5 {
		a := mustCreate(t, s, fmt.Sprintf("ada%d@example.com", round))
		ids := []*user.Identity{link(t, s, a, "google", fmt.Sprint("g", round), base), link(t, s, a, "gitlab", fmt.Sprint("l", round), base)}
		ok := countWinnersN(t, len(ids), func(i int) error {
			return s.DeleteIdentity(ctx(t), a.ID, ids[i].ID, true)
		}, user.ErrConflict) // the others: conflicts
		left, err := s.ListIdentities(ctx(t), a.ID)
		wantOK(t, "ListIdentities", err)
		if ok != 1 || len(left) != 1 {
			t.Fatalf("round %d: %d deleted, %d conflicts, %d left; want 1, 1, 1", round, ok, len(ids)-ok, len(left))
		}
	}
}

// testAddIdentityRace: racing links of one provider account to different
// users: one wins.
func testAddIdentityRace(t *testing.T, s *parts) {
	const n = 8
	users := make([]*user.User, n)
	for i := range users {
		users[i] = mustCreate(t, s, fmt.Sprintf("u%d@example.com", i))
	}
	ok := countWinnersN(t, n, func(i int) error {
		_, err := s.AddIdentity(ctx(t), &user.Identity{UserID: users[i].ID, Provider: "google", Subject: "contested"})
		return err
	}, user.ErrConflict) // the others: conflicts
	if ok != 1 {
		t.Fatalf("%d linked, %d conflicts; want 1 and %d", ok, n-ok, n-1)
	}
}

func testDeleteUserIdentities(t *testing.T, s *parts) {
	needRegistration(t, s)
	a := mustCreate(t, s, "ada@example.com")
	link(t, s, a, "google", "a-1", base)
	wantOK(t, "Delete", s.Delete(ctx(t), a.ID))
	_, err := s.IdentityBySubject(ctx(t), "google", "a-1")
	wantErr(t, "IdentityBySubject after the user was deleted", err, user.ErrNotFound)
	b := mustCreate(t, s, "bob@example.com")
	link(t, s, b, "google", "a-1", base) // free again
}
