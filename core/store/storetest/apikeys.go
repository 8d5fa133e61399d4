package storetest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// apiKeyTests are the tests of user.APIKeys.
var apiKeyTests = []test{
	{"CreateAndRead", testAPIKeyCreateAndRead},
	{"IDsAreUnique", testAPIKeyUniqueID},
	{"ListOrderAndOwner", testAPIKeyList},
	{"Touch", testAPIKeyTouch},
	{"RevokeOwnOnly", testAPIKeyRevoke},
	{"RevokeAll", testAPIKeyRevokeAll},
	{"Bound", testAPIKeyBound},
	{"BoundSweepsExpired", testAPIKeyBoundExpired},
	{"CreateRaceAtBound", testAPIKeyCreateRace},
	{"RevokeRace", testAPIKeyRevokeRace},
	{"DeleteUserDeletesKeys", testDeleteUserAPIKeys},
}

// apiKeyID is the i-th key id of a test: 16 characters, like auth's.
func apiKeyID(prefix string, i int) string { return fmt.Sprintf("%s%015d", prefix, i)[:16] }

func newAPIKey(u *user.User, id string, created time.Time) *user.APIKey {
	h := sha256.Sum256([]byte("secret-" + id))
	return &user.APIKey{ID: id, UserID: u.ID, Name: "key " + id, Hash: h[:], Scopes: []string{"read", "write"},
		CreatedAt: created, ExpiresAt: created.Add(30 * 24 * time.Hour)}
}

func mustCreateAPIKey(t *testing.T, s *parts, k *user.APIKey) {
	t.Helper()
	wantOK(t, "CreateAPIKey", s.CreateAPIKey(ctx(t), k, 20))
}

func sameAPIKey(a, b *user.APIKey) bool {
	return a.ID == b.ID && a.UserID == b.UserID && a.Name == b.Name && bytes.Equal(a.Hash, b.Hash) &&
		slices.Equal(a.Scopes, b.Scopes) && a.CreatedAt.Equal(ms(b.CreatedAt)) && a.ExpiresAt.Equal(ms(b.ExpiresAt)) &&
		a.LastUsedAt.Equal(ms(b.LastUsedAt))
}

func testAPIKeyCreateAndRead(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	k := newAPIKey(u, apiKeyID("a", 1), base)
	mustCreateAPIKey(t, s, k)
	got, err := s.APIKeyByID(ctx(t), k.ID)
	wantOK(t, "APIKeyByID", err)
	if !sameAPIKey(got, k) {
		t.Fatalf("APIKeyByID = %+v, want %+v", got, k)
	}
	if !got.CreatedAt.Equal(ms(base)) || !got.LastUsedAt.IsZero() {
		t.Fatalf("APIKeyByID times: created %v, last used %v; want %v and zero", got.CreatedAt, got.LastUsedAt, ms(base))
	}
	// No scopes round-trip as an empty list.
	none := newAPIKey(u, apiKeyID("b", 1), base)
	none.Scopes = []string{}
	mustCreateAPIKey(t, s, none)
	got2, err := s.APIKeyByID(ctx(t), none.ID)
	wantOK(t, "APIKeyByID of a key without scopes", err)
	if len(got2.Scopes) != 0 {
		t.Fatalf("scopes of a key created without = %q, want none", got2.Scopes)
	}
	_, err = s.APIKeyByID(ctx(t), apiKeyID("z", 9))
	wantErr(t, "APIKeyByID of no key", err, user.ErrNotFound)
	_, err = s.APIKeyByID(ctx(t), k.ID[:15]+"X")
	wantErr(t, "APIKeyByID of a near id", err, user.ErrNotFound)
	// Records are copies.
	got.Hash[0] ^= 0xff
	got.Scopes[0] = "changed"
	again, err := s.APIKeyByID(ctx(t), k.ID)
	wantOK(t, "APIKeyByID again", err)
	if !sameAPIKey(again, k) {
		t.Fatal("a returned record shares memory with the store")
	}
}

func testAPIKeyUniqueID(t *testing.T, s *parts) {
	a := mustCreate(t, s, "ada@example.com")
	b := mustCreate(t, s, "bob@example.com")
	id := apiKeyID("a", 1)
	mustCreateAPIKey(t, s, newAPIKey(a, id, base))
	wantErr(t, "CreateAPIKey of an id in use by another user", s.CreateAPIKey(ctx(t), newAPIKey(b, id, base), 20), user.ErrConflict)
	wantErr(t, "CreateAPIKey of an id in use", s.CreateAPIKey(ctx(t), newAPIKey(a, id, base), 20), user.ErrConflict)
	got, err := s.APIKeyByID(ctx(t), id)
	wantOK(t, "APIKeyByID", err)
	if got.UserID != a.ID {
		t.Fatalf("the key's owner after a refused create = %q, want %q", got.UserID, a.ID)
	}
}

func testAPIKeyList(t *testing.T, s *parts) {
	a := mustCreate(t, s, "ada@example.com")
	b := mustCreate(t, s, "bob@example.com")
	second := newAPIKey(a, apiKeyID("a", 2), base.Add(time.Minute))
	first := newAPIKey(a, apiKeyID("a", 1), base)
	third := newAPIKey(a, apiKeyID("a", 3), base.Add(time.Minute)) // same time: by id
	for _, k := range []*user.APIKey{third, second, first, newAPIKey(b, apiKeyID("b", 1), base)} {
		mustCreateAPIKey(t, s, k)
	}
	got, err := s.ListAPIKeys(ctx(t), a.ID)
	wantOK(t, "ListAPIKeys", err)
	if len(got) != 3 || !sameAPIKey(got[0], first) || !sameAPIKey(got[1], second) || !sameAPIKey(got[2], third) {
		t.Fatalf("ListAPIKeys = %+v, want the three of ada, oldest first", got)
	}
	c := mustCreate(t, s, "cy@example.com")
	for _, id := range []string{c.ID, "no-such-user"} {
		none, err := s.ListAPIKeys(ctx(t), id)
		wantOK(t, "ListAPIKeys of a user with none", err)
		if none == nil || len(none) != 0 {
			t.Fatalf("ListAPIKeys of a user with none = %#v, want an empty slice", none)
		}
	}
}

func testAPIKeyTouch(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	k := newAPIKey(u, apiKeyID("a", 1), base)
	mustCreateAPIKey(t, s, k)
	at := base.Add(time.Hour)
	wantOK(t, "TouchAPIKey", s.TouchAPIKey(ctx(t), k.ID, at))
	got, err := s.APIKeyByID(ctx(t), k.ID)
	wantOK(t, "APIKeyByID", err)
	k.LastUsedAt = at
	if !sameAPIKey(got, k) {
		t.Fatalf("after TouchAPIKey: %+v, want %+v", got, k)
	}
	wantErr(t, "TouchAPIKey of no key", s.TouchAPIKey(ctx(t), apiKeyID("z", 1), at), user.ErrNotFound)
}

func testAPIKeyRevoke(t *testing.T, s *parts) {
	a := mustCreate(t, s, "ada@example.com")
	b := mustCreate(t, s, "bob@example.com")
	ka, keep := newAPIKey(a, apiKeyID("a", 1), base), newAPIKey(a, apiKeyID("a", 2), base)
	mustCreateAPIKey(t, s, ka)
	mustCreateAPIKey(t, s, keep)
	wantErr(t, "RevokeAPIKey of another user's", s.RevokeAPIKey(ctx(t), b.ID, ka.ID), user.ErrNotFound)
	_, err := s.APIKeyByID(ctx(t), ka.ID)
	wantOK(t, "APIKeyByID after another user's revoke", err)
	wantOK(t, "RevokeAPIKey", s.RevokeAPIKey(ctx(t), a.ID, ka.ID))
	_, err = s.APIKeyByID(ctx(t), ka.ID)
	wantErr(t, "APIKeyByID after the revoke", err, user.ErrNotFound)
	wantErr(t, "RevokeAPIKey again", s.RevokeAPIKey(ctx(t), a.ID, ka.ID), user.ErrNotFound)
	left, err := s.ListAPIKeys(ctx(t), a.ID)
	wantOK(t, "ListAPIKeys", err)
	if len(left) != 1 || left[0].ID != keep.ID {
		t.Fatalf("after the revoke: %+v, want only %s", left, keep.ID)
	}
}

func testAPIKeyRevokeAll(t *testing.T, s *parts) {
	a := mustCreate(t, s, "ada@example.com")
	b := mustCreate(t, s, "bob@example.com")
	for i := range 3 {
		mustCreateAPIKey(t, s, newAPIKey(a, apiKeyID("a", i), base))
	}
	kb := newAPIKey(b, apiKeyID("b", 1), base)
	mustCreateAPIKey(t, s, kb)
	n, err := s.RevokeAPIKeys(ctx(t), a.ID)
	wantOK(t, "RevokeAPIKeys", err)
	if n != 3 {
		t.Fatalf("RevokeAPIKeys = %d, want 3", n)
	}
	left, err := s.ListAPIKeys(ctx(t), a.ID)
	wantOK(t, "ListAPIKeys", err)
	if len(left) != 0 {
		t.Fatalf("after RevokeAPIKeys: %d keys, want none", len(left))
	}
	if _, err := s.APIKeyByID(ctx(t), kb.ID); err != nil {
		t.Fatalf("another user's key after RevokeAPIKeys: %v", err)
	}
	n, err = s.RevokeAPIKeys(ctx(t), a.ID)
	wantOK(t, "RevokeAPIKeys again", err)
	if n != 0 {
		t.Fatalf("RevokeAPIKeys again = %d, want 0", n)
	}
}

func testAPIKeyBound(t *testing.T, s *parts) {
	a := mustCreate(t, s, "ada@example.com")
	b := mustCreate(t, s, "bob@example.com")
	for i := range 3 {
		wantOK(t, "CreateAPIKey under the bound", s.CreateAPIKey(ctx(t), newAPIKey(a, apiKeyID("a", i), base), 3))
	}
	over := newAPIKey(a, apiKeyID("a", 3), base)
	wantErr(t, "CreateAPIKey at the bound", s.CreateAPIKey(ctx(t), over, 3), user.ErrTooManyAPIKeys)
	_, err := s.APIKeyByID(ctx(t), over.ID)
	wantErr(t, "APIKeyByID of the refused key", err, user.ErrNotFound)
	wantOK(t, "CreateAPIKey of another user", s.CreateAPIKey(ctx(t), newAPIKey(b, apiKeyID("b", 0), base), 3))
	wantOK(t, "RevokeAPIKey", s.RevokeAPIKey(ctx(t), a.ID, apiKeyID("a", 0)))
	wantOK(t, "CreateAPIKey after a revoke", s.CreateAPIKey(ctx(t), over, 3))
}

// testAPIKeyBoundExpired: expired keys do not count against the bound,
// and the create that finds them deletes them.
func testAPIKeyBoundExpired(t *testing.T, s *parts) {
	a := mustCreate(t, s, "ada@example.com")
	old := newAPIKey(a, apiKeyID("a", 0), base)
	old.ExpiresAt = base.Add(time.Hour)
	live := newAPIKey(a, apiKeyID("a", 1), base)
	wantOK(t, "CreateAPIKey", s.CreateAPIKey(ctx(t), old, 2))
	wantOK(t, "CreateAPIKey", s.CreateAPIKey(ctx(t), live, 2))
	early := newAPIKey(a, apiKeyID("a", 2), base.Add(time.Hour-time.Millisecond))
	wantErr(t, "CreateAPIKey before the old key expires", s.CreateAPIKey(ctx(t), early, 2), user.ErrTooManyAPIKeys)
	later := newAPIKey(a, apiKeyID("a", 3), base.Add(time.Hour))
	wantOK(t, "CreateAPIKey once the old key expired", s.CreateAPIKey(ctx(t), later, 2))
	_, err := s.APIKeyByID(ctx(t), old.ID)
	wantErr(t, "APIKeyByID of the swept key", err, user.ErrNotFound)
	got, err := s.ListAPIKeys(ctx(t), a.ID)
	wantOK(t, "ListAPIKeys", err)
	if len(got) != 2 || got[0].ID != live.ID || got[1].ID != later.ID {
		t.Fatalf("ListAPIKeys = %+v, want %s and %s", got, live.ID, later.ID)
	}
}

// testAPIKeyCreateRace: racers creates of one user's keys with a bound
// below racers: exactly the bound succeed, the others are refused.
func testAPIKeyCreateRace(t *testing.T, s *parts) {
	u := mustCreate(t, s, "race@example.com")
	const max = 7
	mustCreateAPIKey(t, s, newAPIKey(u, apiKeyID("p", 0), base)) // one held already
	n := countWinners(t, func(i int) error {
		return s.CreateAPIKey(ctx(t), newAPIKey(u, apiKeyID("r", i), base), max)
	}, user.ErrTooManyAPIKeys)
	if n != max-1 {
		t.Fatalf("racing creates with a bound of %d and one key held: %d succeeded, want %d", max, n, max-1)
	}
	got, err := s.ListAPIKeys(ctx(t), u.ID)
	wantOK(t, "ListAPIKeys", err)
	if len(got) != max {
		t.Fatalf("the user holds %d keys after the race, want %d", len(got), max)
	}
}

// testAPIKeyRevokeRace: racing revokes of one key: exactly one succeeds.
func testAPIKeyRevokeRace(t *testing.T, s *parts) {
	u := mustCreate(t, s, "race@example.com")
	k := newAPIKey(u, apiKeyID("a", 1), base)
	mustCreateAPIKey(t, s, k)
	n := countWinners(t, func(int) error { return s.RevokeAPIKey(ctx(t), u.ID, k.ID) }, user.ErrNotFound)
	if n != 1 {
		t.Fatalf("racing revokes of one key: %d succeeded, want 1", n)
	}
}

// testDeleteUserAPIKeys: once a user is deleted and auth has revoked
// their keys (as it does after every committed deletion), none is left,
// whether the store deleted them with the user or kept them apart.
func testDeleteUserAPIKeys(t *testing.T, s *parts) {
	needRegistration(t, s)
	u := mustCreate(t, s, "ada@example.com")
	other := mustCreate(t, s, "bob@example.com")
	k, ko := newAPIKey(u, apiKeyID("a", 1), base), newAPIKey(other, apiKeyID("b", 1), base)
	mustCreateAPIKey(t, s, k)
	mustCreateAPIKey(t, s, ko)
	wantOK(t, "Delete", s.Delete(ctx(t), u.ID))
	_, err := s.RevokeAPIKeys(ctx(t), u.ID)
	wantOK(t, "RevokeAPIKeys of a deleted user", err)
	_, err = s.APIKeyByID(ctx(t), k.ID)
	wantErr(t, "APIKeyByID of a deleted user's key", err, user.ErrNotFound)
	_, err = s.APIKeyByID(ctx(t), ko.ID)
	wantOK(t, "APIKeyByID of another user's key", err)
}
