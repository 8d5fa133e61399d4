package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// RunSessionStore runs the conformance suite of session.Store, the store
// of server-side session records (auth.Config.Sessions). newStore is called
// once per subtest and must return an empty store.
//
// It proves that a record round-trips with millisecond timestamps; that an
// unknown id is user.ErrNotFound for Get, Touch and Delete, and Touch
// creates nothing; that List returns a user's records newest first and
// only theirs; that a user can neither delete nor list another user's
// record; that DeleteAll keeps exactly the record it is told to; and that
// a Delete racing Touches of the same record always leaves it deleted.
// For a store that implements session.Bounded (skipped, named, for one
// that does not) it proves that CreateBounded keeps a user's newest
// records and no other user's, also when the creates race.
func RunSessionStore[S session.Store](t *testing.T, newStore func(t *testing.T) S) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s session.Store)
	}{
		{"RoundTrip", testSessionRoundTrip},
		{"NotFound", testSessionNotFound},
		{"TouchUpdatesOnlySeenAndExpiry", testSessionTouch},
		{"ListNewestFirstOwnOnly", testSessionList},
		{"DeleteOnlyOwn", testSessionDeleteOwn},
		{"DeleteAllKeepsExcept", testSessionDeleteAll},
		{"DeleteRacingTouchLeavesItDeleted", testSessionDeleteRace},
		{"Bounded/KeepsTheNewest", testBoundedKeepsNewest},
		{"Bounded/OtherUsersUntouched", testBoundedOtherUsers},
		{"Bounded/RacingCreatesKeepTheBound", testBoundedRace},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			if _, ok := session.Store(s).(session.Bounded); !ok && strings.HasPrefix(c.name, "Bounded/") {
				t.Skipf("storetest: %T does not implement session.Bounded", s)
			}
			c.run(t, s)
		})
	}
}

// The Bounded part: CreateBounded keeps a user's newest records.

func createBounded(t *testing.T, s session.Store, r session.Record, max int) {
	t.Helper()
	if err := s.(session.Bounded).CreateBounded(ctx(t), r, max); err != nil {
		t.Fatalf("CreateBounded(%s, %d): %v", r.ID, max, err)
	}
}

// testBoundedKeepsNewest: a user at the bound loses their oldest record to
// a new one; the new one stays; a bound of 0 bounds nothing.
func testBoundedKeepsNewest(t *testing.T, s session.Store) {
	for n := range 3 {
		createBounded(t, s, recordN("u1", n), 3)
	}
	wantIDs(t, "three records under a bound of 3", listIDs(t, s, "u1"), recordN("u1", 2).ID, recordN("u1", 1).ID, recordN("u1", 0).ID)
	createBounded(t, s, recordN("u1", 3), 3)
	wantIDs(t, "a fourth under a bound of 3", listIDs(t, s, "u1"), recordN("u1", 3).ID, recordN("u1", 2).ID, recordN("u1", 1).ID)
	if _, err := s.Get(ctx(t), recordN("u1", 0).ID); !errors.Is(err, user.ErrNotFound) {
		t.Errorf("Get of the record past the bound = %v, want user.ErrNotFound", err)
	}
	createBounded(t, s, recordN("u1", 6), 1)
	wantIDs(t, "a bound of 1", listIDs(t, s, "u1"), recordN("u1", 6).ID)
	// Ties in CreatedAt: the lower ID goes first.
	tie := recordN("u1", 6)
	tie.ID = fmt.Sprintf("%032x", 0xfff000)
	createBounded(t, s, tie, 1)
	wantIDs(t, "a tie in CreatedAt", listIDs(t, s, "u1"), tie.ID)
	createBounded(t, s, recordN("u1", 7), 0)
	createBounded(t, s, recordN("u1", 8), 0)
	wantIDs(t, "a bound of 0", listIDs(t, s, "u1"), recordN("u1", 8).ID, recordN("u1", 7).ID, tie.ID)
}

// testBoundedOtherUsers: one user's bound removes none of another's.
func testBoundedOtherUsers(t *testing.T, s session.Store) {
	mustCreateRecord(t, s, recordN("u2", 0))
	mustCreateRecord(t, s, recordN("u2", 1))
	for n := range 4 {
		createBounded(t, s, recordN("u1", 10+n), 2)
	}
	wantIDs(t, "u1's records", listIDs(t, s, "u1"), recordN("u1", 13).ID, recordN("u1", 12).ID)
	wantIDs(t, "u2's records", listIDs(t, s, "u2"), recordN("u2", 1).ID, recordN("u2", 0).ID)
}

// testBoundedRace: 24 CreateBounded of one user racing under a bound of 5
// leave, once all have returned, the 5 newest records.
func testBoundedRace(t *testing.T, s session.Store) {
	const n, bound = 24, 5
	raceN(t, n, func(i int) error {
		if err := s.(session.Bounded).CreateBounded(ctx(t), recordN("u1", i), bound); err != nil {
			return fmt.Errorf("CreateBounded: %w", err)
		}
		return nil
	})
	want := []string{}
	for i := n - 1; i >= n-bound; i-- {
		want = append(want, recordN("u1", i).ID)
	}
	wantIDs(t, "after the racing creates", listIDs(t, s, "u1"), want...)
}

// sessionT0 has digits below the millisecond, which a store drops.
var sessionT0 = time.Date(2031, time.March, 14, 15, 9, 26, 535_897_932, time.UTC)

// recordN returns record n of userID, created n minutes after sessionT0.
func recordN(userID string, n int) session.Record {
	at := sessionT0.Add(time.Duration(n) * time.Minute)
	return session.Record{
		ID:         fmt.Sprintf("%032x", 0xabc000+n),
		UserID:     userID,
		CreatedAt:  at,
		LastSeenAt: at.Add(time.Second),
		ExpiresAt:  at.Add(24 * time.Hour),
		IP:         "203.0.113.7",
		UserAgent:  "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0 ü",
		Remember:   n%2 == 1,
	}
}

func mustCreateRecord(t *testing.T, s session.Store, r session.Record) {
	t.Helper()
	if err := s.Create(ctx(t), r); err != nil {
		t.Fatalf("Create(%s): %v", r.ID, err)
	}
}

// wantRecord compares got with want, times to the millisecond.
func wantRecord(t *testing.T, what string, got, want session.Record) {
	t.Helper()
	want.CreatedAt = want.CreatedAt.Truncate(time.Millisecond)
	want.LastSeenAt = want.LastSeenAt.Truncate(time.Millisecond)
	want.ExpiresAt = want.ExpiresAt.Truncate(time.Millisecond)
	if got.ID != want.ID || got.UserID != want.UserID || got.IP != want.IP || got.UserAgent != want.UserAgent || got.Remember != want.Remember {
		t.Errorf("%s: got %+v, want %+v", what, got, want)
	}
	for _, tt := range []struct {
		name      string
		got, want time.Time
	}{{"CreatedAt", got.CreatedAt, want.CreatedAt}, {"LastSeenAt", got.LastSeenAt, want.LastSeenAt}, {"ExpiresAt", got.ExpiresAt, want.ExpiresAt}} {
		if !tt.got.Equal(tt.want) {
			t.Errorf("%s: %s = %v, want %v (millisecond precision)", what, tt.name, tt.got, tt.want)
		}
	}
}

func listIDs(t *testing.T, s session.Store, userID string) []string {
	t.Helper()
	rs, err := s.List(ctx(t), userID)
	if err != nil {
		t.Fatalf("List(%s): %v", userID, err)
	}
	ids := []string{}
	for _, r := range rs {
		if r.UserID != userID {
			t.Errorf("List(%s) returned a record of %s", userID, r.UserID)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

func wantIDs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: ids %v, want %v", what, got, want)
	}
}

func testSessionRoundTrip(t *testing.T, s session.Store) {
	r := recordN("u1", 1)
	mustCreateRecord(t, s, r)
	got, err := s.Get(ctx(t), r.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	wantRecord(t, "Get after Create", got, r)
	plain := recordN("u1", 2)
	plain.IP, plain.UserAgent, plain.Remember = "", "", false
	mustCreateRecord(t, s, plain)
	got, err = s.Get(ctx(t), plain.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	wantRecord(t, "Get of a record without address and agent", got, plain)
}

func testSessionNotFound(t *testing.T, s session.Store) {
	r := recordN("u1", 1)
	_, err := s.Get(ctx(t), r.ID)
	wantErr(t, "Get of an unknown id", err, user.ErrNotFound)
	wantErr(t, "Touch of an unknown id", s.Touch(ctx(t), r.ID, sessionT0, sessionT0.Add(time.Hour)), user.ErrNotFound)
	_, err = s.Get(ctx(t), r.ID)
	wantErr(t, "Get after a Touch of an unknown id (Touch must create nothing)", err, user.ErrNotFound)
	wantErr(t, "Delete of an unknown id", s.Delete(ctx(t), "u1", r.ID), user.ErrNotFound)
	wantIDs(t, "List of a user without records", listIDs(t, s, "u1"))
	wantOK(t, "DeleteAll of a user without records", s.DeleteAll(ctx(t), "u1", ""))
}

func testSessionTouch(t *testing.T, s session.Store) {
	r := recordN("u1", 1)
	mustCreateRecord(t, s, r)
	seen, expires := sessionT0.Add(90*time.Minute+time.Microsecond), sessionT0.Add(48*time.Hour+time.Microsecond)
	wantOK(t, "Touch", s.Touch(ctx(t), r.ID, seen, expires))
	got, err := s.Get(ctx(t), r.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	want := r
	want.LastSeenAt, want.ExpiresAt = seen, expires
	wantRecord(t, "Get after Touch", got, want)
}

func testSessionList(t *testing.T, s session.Store) {
	for _, n := range []int{2, 1, 3} {
		mustCreateRecord(t, s, recordN("u1", n))
	}
	mustCreateRecord(t, s, recordN("u2", 4))
	// Same CreatedAt: ties by id, descending.
	twin := recordN("u1", 3)
	twin.ID = fmt.Sprintf("%032x", 0xfff000)
	mustCreateRecord(t, s, twin)
	wantIDs(t, "List(u1)", listIDs(t, s, "u1"), twin.ID, recordN("", 3).ID, recordN("", 2).ID, recordN("", 1).ID)
	wantIDs(t, "List(u2)", listIDs(t, s, "u2"), recordN("", 4).ID)
	wantIDs(t, "List(u3)", listIDs(t, s, "u3"))
	rs, err := s.List(ctx(t), "u1")
	if err != nil || len(rs) != 4 {
		t.Fatalf("List(u1) = %d records, %v", len(rs), err)
	}
	wantRecord(t, "List(u1)[3]", rs[3], recordN("u1", 1))
}

func testSessionDeleteOwn(t *testing.T, s session.Store) {
	mine, theirs := recordN("u1", 1), recordN("u2", 2)
	mustCreateRecord(t, s, mine)
	mustCreateRecord(t, s, theirs)
	wantErr(t, "u1 deletes u2's record", s.Delete(ctx(t), "u1", theirs.ID), user.ErrNotFound)
	if _, err := s.Get(ctx(t), theirs.ID); err != nil {
		t.Errorf("u2's record after u1 tried to delete it: %v", err)
	}
	wantOK(t, "u1 deletes its own record", s.Delete(ctx(t), "u1", mine.ID))
	_, err := s.Get(ctx(t), mine.ID)
	wantErr(t, "Get after Delete", err, user.ErrNotFound)
	wantErr(t, "Delete twice", s.Delete(ctx(t), "u1", mine.ID), user.ErrNotFound)
	wantErr(t, "Touch after Delete", s.Touch(ctx(t), mine.ID, sessionT0, sessionT0.Add(time.Hour)), user.ErrNotFound)
	wantIDs(t, "List(u1) after Delete", listIDs(t, s, "u1"))
	wantIDs(t, "List(u2)", listIDs(t, s, "u2"), theirs.ID)
}

func testSessionDeleteAll(t *testing.T, s session.Store) {
	for n := 1; n <= 3; n++ {
		mustCreateRecord(t, s, recordN("u1", n))
	}
	mustCreateRecord(t, s, recordN("u2", 4))
	wantOK(t, "DeleteAll(u1, except 2)", s.DeleteAll(ctx(t), "u1", recordN("", 2).ID))
	wantIDs(t, "List(u1) after DeleteAll except 2", listIDs(t, s, "u1"), recordN("", 2).ID)
	wantOK(t, "DeleteAll(u1, except u2's)", s.DeleteAll(ctx(t), "u1", recordN("", 4).ID))
	wantIDs(t, "List(u1) after DeleteAll", listIDs(t, s, "u1"))
	wantIDs(t, "List(u2) after u1's DeleteAll", listIDs(t, s, "u2"), recordN("", 4).ID)
	for n := 1; n <= 3; n++ {
		_, err := s.Get(ctx(t), recordN("", n).ID)
		wantErr(t, "Get after DeleteAll", err, user.ErrNotFound)
	}
	mustCreateRecord(t, s, recordN("u1", 5))
	wantIDs(t, "List(u1) after a new Create", listIDs(t, s, "u1"), recordN("", 5).ID)
}

// testSessionDeleteRace: one goroutine deletes a record while others touch
// it (a request using the session at that moment). However they
// interleave, the record ends deleted, in Get and in List.
func testSessionDeleteRace(t *testing.T, s session.Store) {
	for round := range 20 {
		r := recordN("u1", round)
		mustCreateRecord(t, s, r)
		const touches = 8
		raceN(t, touches+1, func(i int) error { // the last one deletes
			if i == touches {
				if err := s.Delete(ctx(t), "u1", r.ID); err != nil {
					return fmt.Errorf("round %d: delete: %w", round, err)
				}
				return nil
			}
			err := s.Touch(ctx(t), r.ID, sessionT0.Add(time.Duration(i)*time.Second), r.ExpiresAt)
			if err != nil && !errors.Is(err, user.ErrNotFound) {
				return fmt.Errorf("round %d: touch: %w", round, err)
			}
			return nil
		})
		if _, err := s.Get(ctx(t), r.ID); !errors.Is(err, user.ErrNotFound) {
			t.Fatalf("round %d: Get after Delete raced Touches = %v, want user.ErrNotFound (the session came back)", round, err)
		}
		wantIDs(t, "List after the race", listIDs(t, s, "u1"))
	}
}
