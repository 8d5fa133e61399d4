package storetest

import (
	"errors"
	"testing"
)

// signInTests are the tests of user.SignIns.
var signInTests = []test{
	{"FirstOnce", testSignInFirstOnce},
	{"FirstRace", testSignInRace},
}

func testSignInFirstOnce(t *testing.T, s *parts) {
	a := mustCreate(t, s, "ada@example.com")
	b := mustCreate(t, s, "bob@example.com")
	for i, want := range []bool{true, false, false} {
		first, err := s.MarkSignedIn(ctx(t), a.ID, base)
		wantOK(t, "MarkSignedIn", err)
		if first != want {
			t.Fatalf("MarkSignedIn call %d for one user: first = %v, want %v", i+1, first, want)
		}
	}
	// Another user's record is their own.
	first, err := s.MarkSignedIn(ctx(t), b.ID, base)
	wantOK(t, "MarkSignedIn", err)
	if !first {
		t.Fatal("MarkSignedIn of a second user: first = false, want true")
	}
}

func testSignInRace(t *testing.T, s *parts) {
	u := mustCreate(t, s, "race@example.com")
	n := countWinners(t, func(int) error {
		first, err := s.MarkSignedIn(ctx(t), u.ID, base)
		if err == nil && !first {
			return errNotFirst
		}
		return err
	}, errNotFirst)
	if n != 1 {
		t.Fatalf("racing MarkSignedIn for one user: %d reported first, want 1", n)
	}
}

var errNotFirst = errors.New("storetest: not the first sign-in")
