package storetest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// emailCodeTests are the tests of user.EmailCodes.
var emailCodeTests = []test{
	{"PutAndRead", testEmailCodePutRead},
	{"PutReplaces", testEmailCodeReplace},
	{"TakeIsSingleUse", testEmailCodeSingleUse},
	{"TakeAfterExpiry", testEmailCodeExpiry},
	{"TakeIsBound", testEmailCodeBinding},
	{"TakeRace", testEmailCodeRace},
	{"KeysThatAreNoUserID", testEmailCodeOpaqueKey},
}

func newEmailCode(u *user.User, hash string) user.EmailCode {
	return user.EmailCode{UserID: u.ID, Hash: []byte(hash), CreatedAt: base, ExpiresAt: base.Add(10 * time.Minute)}
}

func putCode(t *testing.T, s *parts, c user.EmailCode) {
	t.Helper()
	wantOK(t, "PutEmailCode", s.PutEmailCode(ctx(t), c))
}

// wantCode fails unless the user's stored code is want.
func wantCode(t *testing.T, s *parts, want user.EmailCode) {
	t.Helper()
	got, err := s.EmailCode(ctx(t), want.UserID)
	wantOK(t, "EmailCode", err)
	switch {
	case got.UserID != want.UserID, !bytes.Equal(got.Hash, want.Hash):
		t.Fatalf("EmailCode: got user %q hash %q, want %q %q", got.UserID, got.Hash, want.UserID, want.Hash)
	case !got.CreatedAt.Equal(ms(want.CreatedAt)), !got.ExpiresAt.Equal(ms(want.ExpiresAt)):
		t.Fatalf("EmailCode: times %v / %v, want %v / %v (millisecond precision)", got.CreatedAt, got.ExpiresAt, ms(want.CreatedAt), ms(want.ExpiresAt))
	}
}

func wantNoCode(t *testing.T, s *parts, userID string) {
	t.Helper()
	_, err := s.EmailCode(ctx(t), userID)
	wantErr(t, "EmailCode of a user without one", err, user.ErrNotFound)
}

func testEmailCodePutRead(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	wantNoCode(t, s, u.ID)
	c := newEmailCode(u, "hash-one")
	putCode(t, s, c)
	wantCode(t, s, c)
	// The record is the caller's: changing it changes nothing stored.
	got, _ := s.EmailCode(ctx(t), u.ID)
	got.Hash[0] = 'X'
	c.Hash[1] = 'Y'
	wantCode(t, s, newEmailCode(u, "hash-one"))
	other := mustCreate(t, s, "bob@example.com")
	wantNoCode(t, s, other.ID)
}

// testEmailCodeOpaqueKey: the codes of sign-in by email are kept under a
// key that is no user id ("email-sign-in:" and 64 hex digits): the store
// holds, replaces and spends them like any other, beside a user's own.
func testEmailCodeOpaqueKey(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	key := "email-sign-in:" + strings.Repeat("0123456789abcdef", 4)
	c := user.EmailCode{UserID: key, Hash: bytes.Repeat([]byte{0xAB}, 32), CreatedAt: base, ExpiresAt: base.Add(10 * time.Minute)}
	putCode(t, s, c)
	mine := newEmailCode(u, "users-own")
	putCode(t, s, mine)
	wantCode(t, s, c)
	wantCode(t, s, mine)
	wantOK(t, "TakeEmailCode under an opaque key", s.TakeEmailCode(ctx(t), key, c.Hash, base))
	wantNoCode(t, s, key)
	wantCode(t, s, mine)
}

func testEmailCodeReplace(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	putCode(t, s, newEmailCode(u, "old"))
	c := newEmailCode(u, "new")
	c.CreatedAt, c.ExpiresAt = base.Add(time.Minute), base.Add(11*time.Minute)
	putCode(t, s, c)
	wantCode(t, s, c)
	wantErr(t, "TakeEmailCode of the replaced code", s.TakeEmailCode(ctx(t), u.ID, []byte("old"), base), user.ErrConflict)
	wantOK(t, "TakeEmailCode of the new code", s.TakeEmailCode(ctx(t), u.ID, []byte("new"), base))
}

func testEmailCodeSingleUse(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	putCode(t, s, newEmailCode(u, "code"))
	wantOK(t, "TakeEmailCode", s.TakeEmailCode(ctx(t), u.ID, []byte("code"), base))
	wantNoCode(t, s, u.ID)
	wantErr(t, "TakeEmailCode again", s.TakeEmailCode(ctx(t), u.ID, []byte("code"), base), user.ErrConflict)
	// A spent code can be replaced by a new one.
	putCode(t, s, newEmailCode(u, "code"))
	wantOK(t, "TakeEmailCode of a new code", s.TakeEmailCode(ctx(t), u.ID, []byte("code"), base))
}

func testEmailCodeExpiry(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	c := newEmailCode(u, "code")
	putCode(t, s, c)
	wantErr(t, "TakeEmailCode at ExpiresAt", s.TakeEmailCode(ctx(t), u.ID, []byte("code"), ms(c.ExpiresAt)), user.ErrConflict)
	wantErr(t, "TakeEmailCode after ExpiresAt", s.TakeEmailCode(ctx(t), u.ID, []byte("code"), c.ExpiresAt.Add(time.Hour)), user.ErrConflict)
	wantCode(t, s, c) // an expired code is still returned; the caller checks ExpiresAt
	wantOK(t, "TakeEmailCode a millisecond before ExpiresAt", s.TakeEmailCode(ctx(t), u.ID, []byte("code"), ms(c.ExpiresAt).Add(-time.Millisecond)))
}

func testEmailCodeBinding(t *testing.T, s *parts) {
	ada := mustCreate(t, s, "ada@example.com")
	bob := mustCreate(t, s, "bob@example.com")
	putCode(t, s, newEmailCode(ada, "ada-code"))
	putCode(t, s, newEmailCode(bob, "bob-code"))
	wantErr(t, "TakeEmailCode of another user's code", s.TakeEmailCode(ctx(t), bob.ID, []byte("ada-code"), base), user.ErrConflict)
	wantErr(t, "TakeEmailCode with a prefix of the hash", s.TakeEmailCode(ctx(t), ada.ID, []byte("ada-"), base), user.ErrConflict)
	wantErr(t, "TakeEmailCode with no hash", s.TakeEmailCode(ctx(t), ada.ID, nil, base), user.ErrConflict)
	wantCode(t, s, newEmailCode(ada, "ada-code"))
	wantCode(t, s, newEmailCode(bob, "bob-code"))
	wantOK(t, "TakeEmailCode of bob's own", s.TakeEmailCode(ctx(t), bob.ID, []byte("bob-code"), base))
	wantCode(t, s, newEmailCode(ada, "ada-code"))
}

func testEmailCodeRace(t *testing.T, s *parts) {
	u := mustCreate(t, s, "ada@example.com")
	putCode(t, s, newEmailCode(u, "code"))
	c := ctx(t)
	if n := countWinners(t, func(int) error { return s.TakeEmailCode(c, u.ID, []byte("code"), base) }, user.ErrConflict); n != 1 {
		t.Fatalf("%d racing takes of one code succeeded, want exactly 1", n)
	}
	wantNoCode(t, s, u.ID)
}

// emailCodeEraserTests are the tests of user.EmailCodeEraser (with
// user.EmailCodes, to put the codes it deletes).
var emailCodeEraserTests = []test{
	{"DeleteEmailCode", testDeleteEmailCode},
	{"DeleteEmailCodeOfDeletedUser", testDeleteEmailCodeDeletedUser},
}

func testDeleteEmailCode(t *testing.T, s *parts) {
	ada := mustCreate(t, s, "ada@example.com")
	bob := mustCreate(t, s, "bob@example.com")
	putCode(t, s, newEmailCode(ada, "ada-code"))
	putCode(t, s, newEmailCode(bob, "bob-code"))
	wantOK(t, "DeleteEmailCode", s.DeleteEmailCode(ctx(t), ada.ID))
	wantNoCode(t, s, ada.ID)
	wantCode(t, s, newEmailCode(bob, "bob-code")) // another user's code stays
	wantOK(t, "DeleteEmailCode again (idempotent)", s.DeleteEmailCode(ctx(t), ada.ID))
	wantOK(t, "DeleteEmailCode of an unknown id", s.DeleteEmailCode(ctx(t), "no-such-user"))
}

// The case it exists for: an account deleted with its code left behind.
func testDeleteEmailCodeDeletedUser(t *testing.T, s *parts) {
	needRegistration(t, s)
	if s.Registration == nil {
		t.Skip("the store does not implement user.Registration")
	}
	u := mustCreate(t, s, "ada@example.com")
	putCode(t, s, newEmailCode(u, "code"))
	wantOK(t, "Delete", s.Delete(ctx(t), u.ID))
	wantOK(t, "DeleteEmailCode", s.DeleteEmailCode(ctx(t), u.ID))
	wantNoCode(t, s, u.ID)
}
