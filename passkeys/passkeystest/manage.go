package passkeystest

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
)

// testList: the signed-in user's passkeys, oldest first, with the fields
// the list shows (last used null until used); none without a session.
func testList(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	wantError(t, "list without a session", e.browser().do(t, http.MethodGet, passkeys.Prefix, nil), auth.ErrNotAuthenticated)
	b, _ := e.signUp(t, "ada@example.com")
	r := b.do(t, http.MethodGet, passkeys.Prefix, nil)
	if r.Status != http.StatusOK || r.Body != `{"passkeys":[]}` {
		t.Fatalf("list with none: %s, want 200 {\"passkeys\":[]}", r)
	}
	a := NewAuthenticator(t)
	first, _ := e.addPasskey(t, b, a, "Laptop")
	created := e.clock.Now()
	e.clock.Advance(time.Minute)
	e.addPasskey(t, b, a, "Phone")
	e.clock.Advance(time.Minute)
	wantSuccess(t, "sign in with the first", e.passwordless(t, e.browser(), a, first, Origin))

	r = b.do(t, http.MethodGet, passkeys.Prefix, nil)
	wantOK(t, "list", r)
	list, _ := r.JSON["passkeys"].([]any)
	if len(r.JSON) != 1 || len(list) != 2 {
		t.Fatalf("list: %s, want two passkeys", r)
	}
	p0, _ := list[0].(map[string]any)
	p1, _ := list[1].(map[string]any)
	if p0["name"] != "Laptop" || p0["id"] != b64(first.ID) || p0["createdAt"] != created.Format(time.RFC3339Nano) ||
		!sameJSONTime(p0["lastUsedAt"], e.clock.Now()) || p0["backupEligible"] != true || p0["backedUp"] != true {
		t.Errorf("first listed %v: want Laptop, created %v, last used %v", p0, created, e.clock.Now())
	}
	if p1["name"] != "Phone" || p1["lastUsedAt"] != nil {
		t.Errorf("second listed %v: want Phone, never used", p1)
	}
}

// sameJSONTime reports whether v is a JSON time at at, to the millisecond.
func sameJSONTime(v any, at time.Time) bool {
	s, _ := v.(string)
	got, err := time.Parse(time.RFC3339Nano, s)
	return err == nil && sameTime(got, at)
}

// testRename: a session is enough (no recent authentication); the name is
// trimmed and checked, and stored.
func testRename(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b, u := e.signUp(t, "ada@example.com")
	c, _ := e.addPasskey(t, b, NewAuthenticator(t), "Laptop")
	e.clock.Advance(auth.DefaultReauthWindow + time.Minute)
	id := b64(c.ID)
	r := b.post(t, passkeys.Prefix+"/rename", map[string]string{"id": id, "name": "  Work laptop "})
	wantOK(t, "rename", r)
	if r.JSON["id"] != id || r.JSON["name"] != "Work laptop" {
		t.Errorf("rename: %s, want the passkey named Work laptop", r)
	}
	wantError(t, "empty name", b.post(t, passkeys.Prefix+"/rename", map[string]string{"id": id, "name": " "}), auth.ErrNameRequired)
	wantError(t, "long name", b.post(t, passkeys.Prefix+"/rename", map[string]string{"id": id, "name": strings.Repeat("x", auth.MaxPasskeyName+1)}), auth.ErrNameTooLong)
	wantError(t, "unknown id", b.post(t, passkeys.Prefix+"/rename", map[string]string{"id": "AAAA", "name": "x"}), auth.ErrPasskeyNotFound)
	wantError(t, "without a session", e.browser().post(t, passkeys.Prefix+"/rename", map[string]string{"id": id, "name": "x"}), auth.ErrNotAuthenticated)
	if p := e.stored(t, u.ID)[0]; p.Name != "Work laptop" {
		t.Errorf("stored name %q, want Work laptop", p.Name)
	}
}

// testDelete: deleting needs a recent authentication (403 and nothing
// deleted otherwise); a deletion audits and mails the notice; the
// deleted passkey no longer signs in.
func testDelete(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	b, u, a, c := e.signUpWithPasskey(t)
	id := b64(c.ID)
	e.clock.Advance(auth.DefaultReauthWindow)
	wantError(t, "delete, stale", b.post(t, passkeys.Prefix+"/delete", map[string]string{"id": id}), auth.ErrReauthenticationRequired)
	if n := len(e.stored(t, u.ID)); n != 1 {
		t.Fatalf("a refused delete left %d passkeys, want 1", n)
	}
	e.mustMail(t, mail.KindPasskeyDeleted, "ada@example.com", "Laptop", 0)
	wantOK(t, "confirm-password", b.post(t, "/api/auth/confirm-password", map[string]string{"password": password}))
	wantSuccess(t, "delete", b.post(t, passkeys.Prefix+"/delete", map[string]string{"id": id}))
	if _, err := e.keys.PasskeyByID(context.Background(), c.ID); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("after delete, PasskeyByID: %v, want ErrNotFound", err)
	}
	e.mustEvent(t, auth.EventPasskeyDeleted, u.ID, "Laptop")
	e.mustMail(t, mail.KindPasskeyDeleted, "ada@example.com", "Laptop", 1)
	wantError(t, "delete again", b.post(t, passkeys.Prefix+"/delete", map[string]string{"id": id}), auth.ErrPasskeyNotFound)
	wantError(t, "sign in with the deleted passkey", e.passwordless(t, e.browser(), a, c, Origin), auth.ErrPasskeyInvalid)
}

// testOtherUsersPasskey: another user's passkey is not found, for rename
// and delete alike, and stays as it was.
func testOtherUsersPasskey(t *testing.T, h Harness) {
	e := newEnv(t, h, nil, nil)
	ada, _ := e.signUp(t, "ada@example.com")
	bob, bu := e.signUp(t, "bob@example.com")
	c, _ := e.addPasskey(t, bob, NewAuthenticator(t), "Bob's")
	id := b64(c.ID)
	wantError(t, "rename another user's", ada.post(t, passkeys.Prefix+"/rename", map[string]string{"id": id, "name": "Mine"}), auth.ErrPasskeyNotFound)
	wantError(t, "delete another user's", ada.post(t, passkeys.Prefix+"/delete", map[string]string{"id": id}), auth.ErrPasskeyNotFound)
	ps := e.stored(t, bu.ID)
	if len(ps) != 1 || ps[0].Name != "Bob's" || base64.RawURLEncoding.EncodeToString(ps[0].ID) != id {
		t.Fatalf("bob's passkeys %+v, want his one, unchanged", ps)
	}
	if n := len(e.mails(t, mail.KindPasskeyDeleted)); n != 0 {
		t.Errorf("%d passkey_deleted mails", n)
	}
}
