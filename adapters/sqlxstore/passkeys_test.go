package sqlxstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/user"
)

// passkeyLayouts are the user-store layouts the passkey tests run on:
// authkit's own table, and an app's table (integer ids, which the
// database assigns and may hand out again) in both layouts.
var passkeyLayouts = []struct {
	name string
	open func(t *testing.T, pool *sqlxstore.DB) (db *sqlxstore.DB, usersTable string)
}{
	{"Default", func(t *testing.T, pool *sqlxstore.DB) (*sqlxstore.DB, string) {
		db := freshDB(t, pool, sqlxstore.Config{CleanupInterval: -1})
		return db, db.TablePrefix() + "users"
	}},
	{"ColumnsInt64", func(t *testing.T, pool *sqlxstore.DB) (*sqlxstore.DB, string) {
		return appDB(t, pool, "int64", sqlxstore.UsersTable{IDType: sqlxstore.IDInt64, Layout: sqlxstore.LayoutColumns})
	}},
	{"SideTableInt64", func(t *testing.T, pool *sqlxstore.DB) (*sqlxstore.DB, string) {
		return appDB(t, pool, "int64", sqlxstore.UsersTable{IDType: sqlxstore.IDInt64, Layout: sqlxstore.LayoutSideTable})
	}},
}

// forPasskeyLayouts runs test on every backend and layout.
func forPasskeyLayouts(t *testing.T, test func(t *testing.T, db *sqlxstore.DB, usersTable string)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			pool := openPool(t, b)
			for _, l := range passkeyLayouts {
				t.Run(l.name, func(t *testing.T) {
					db, table := l.open(t, pool)
					test(t, db, table)
				})
			}
		})
	}
}

// passkeyRows counts the rows of user id in the passkey tables.
func passkeyRows(t *testing.T, db *sqlxstore.DB, id string) (creds, handles int) {
	t.Helper()
	x := db.SQLX()
	p := db.TablePrefix()
	if err := x.GetContext(t.Context(), &creds, x.Rebind(`SELECT COUNT(*) FROM `+p+`passkeys WHERE user_id = ?`), id); err != nil {
		t.Fatal(err)
	}
	if err := x.GetContext(t.Context(), &handles, x.Rebind(`SELECT COUNT(*) FROM `+p+`passkey_handles WHERE user_id = ?`), id); err != nil {
		t.Fatal(err)
	}
	return creds, handles
}

func testPasskey(u *user.User, handle []byte, id string) *user.Passkey {
	return &user.Passkey{ID: []byte(id), UserID: u.ID, UserHandle: handle, PublicKey: []byte("key"), CreatedAt: base}
}

// TestPasskeyDeleteRace: a user deleted while their passkeys are being
// added and their handle made. Every call answers nil or ErrNotFound, and
// no row outlives the user: an added credential is either refused or
// deleted with them (an orphan would sign in as a later user given the
// same id).
func TestPasskeyDeleteRace(t *testing.T) {
	forPasskeyLayouts(t, func(t *testing.T, db *sqlxstore.DB, _ string) {
		s := db.Users()
		ctx := t.Context()
		for i := range 10 {
			u, err := s.Create(ctx, &user.User{Email: fmt.Sprintf("race%d@example.com", i), PasswordHash: "h"})
			if err != nil {
				t.Fatal(err)
			}
			h := []byte("handle-" + u.ID) // the racing PasskeyUserHandle makes it
			calls := []func() error{
				func() error { return s.Delete(ctx, u.ID) },
				func() error { return s.AddPasskey(ctx, testPasskey(u, h, u.ID+"-a")) },
				func() error { return s.AddPasskey(ctx, testPasskey(u, h, u.ID+"-b")) },
				func() error { return s.AddPasskey(ctx, testPasskey(u, h, u.ID+"-c")) },
				func() error { _, err := s.PasskeyUserHandle(ctx, u.ID, h); return err },
			}
			errs := make([]error, len(calls))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for j, call := range calls {
				wg.Go(func() { <-start; errs[j] = call() })
			}
			close(start)
			wg.Wait()
			for j, err := range errs {
				if err != nil && !errors.Is(err, user.ErrNotFound) {
					t.Fatalf("user %s, call %d: %v", u.ID, j, err)
				}
			}
			if errs[0] != nil {
				t.Fatalf("Delete: %v", errs[0])
			}
			if creds, handles := passkeyRows(t, db, u.ID); creds != 0 || handles != 0 {
				t.Fatalf("user %s deleted, but %d credentials and %d handles are left", u.ID, creds, handles)
			}
		}
	})
}

// TestPasskeyLeftoversCleared: rows left under an id by a user that the
// app deleted itself, not through the store, never reach the next user
// Create gives that id.
func TestPasskeyLeftoversCleared(t *testing.T) {
	forPasskeyLayouts(t, func(t *testing.T, db *sqlxstore.DB, usersTable string) {
		s := db.Users()
		ctx := t.Context()
		old, err := s.Create(ctx, &user.User{Email: "old@example.com", PasswordHash: "h"})
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.PasskeyUserHandle(ctx, old.ID, []byte("old-handle"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddPasskey(ctx, testPasskey(old, h, "old-cred")); err != nil {
			t.Fatal(err)
		}
		// The app's own DELETE, which knows nothing of the passkey tables.
		x := db.SQLX()
		if _, err := x.ExecContext(ctx, x.Rebind(`DELETE FROM `+usersTable+` WHERE id = ?`), old.ID); err != nil {
			t.Fatal(err)
		}
		if creds, handles := passkeyRows(t, db, old.ID); creds != 1 || handles != 1 {
			t.Fatalf("the app's DELETE left %d credentials and %d handles, want 1 and 1 (no foreign key)", creds, handles)
		}
		// The id comes back: SQLite reuses the highest integer id, and an
		// app may insert ids of its own.
		nu, err := s.Create(ctx, &user.User{ID: old.ID, Email: "new@example.com", PasswordHash: "h"})
		if err != nil || nu.ID != old.ID {
			t.Fatalf("Create with the deleted user's id %s: %+v, %v", old.ID, nu, err)
		}
		if list, err := s.ListPasskeys(ctx, nu.ID); err != nil || len(list) != 0 {
			t.Fatalf("ListPasskeys of the new user: %d credentials, %v; want none", len(list), err)
		}
		if _, err := s.PasskeyByID(ctx, []byte("old-cred")); !errors.Is(err, user.ErrNotFound) {
			t.Fatalf("PasskeyByID(the deleted user's credential): %v, want ErrNotFound", err)
		}
		if _, err := s.ByPasskeyUserHandle(ctx, h); !errors.Is(err, user.ErrNotFound) {
			t.Fatalf("ByPasskeyUserHandle(the deleted user's handle): %v, want ErrNotFound", err)
		}
		if got, err := s.PasskeyUserHandle(ctx, nu.ID, []byte("new-handle")); err != nil || string(got) != "new-handle" {
			t.Fatalf("PasskeyUserHandle of the new user: %q, %v; want the new candidate", got, err)
		}
	})
}

// TestPasskeyLimits: credential ids of 1 to 1023 bytes and handles of 1
// to 64 are stored; longer or empty ones are refused before the database,
// nothing stored. Ids that differ only in case or trailing spaces are
// different credentials on every database.
func TestPasskeyLimits(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := freshDB(t, openPool(t, b), sqlxstore.Config{CleanupInterval: -1})
			s := db.Users()
			ctx := t.Context()
			u, err := s.Create(ctx, &user.User{Email: "limits@example.com", PasswordHash: "h"})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range [][]byte{nil, bytes.Repeat([]byte{'h'}, 65)} {
				if _, err := s.PasskeyUserHandle(ctx, u.ID, c); err == nil || errors.Is(err, user.ErrConflict) || errors.Is(err, user.ErrNotFound) {
					t.Errorf("PasskeyUserHandle(candidate of %d bytes): %v, want a plain error", len(c), err)
				}
			}
			long := bytes.Repeat([]byte{0xFF}, 64)
			h, err := s.PasskeyUserHandle(ctx, u.ID, long)
			if err != nil || !bytes.Equal(h, long) {
				t.Fatalf("PasskeyUserHandle(64 bytes): %x, %v", h, err)
			}
			for _, id := range [][]byte{nil, bytes.Repeat([]byte{'c'}, 1024)} {
				p := testPasskey(u, h, "")
				p.ID = id
				if err := s.AddPasskey(ctx, p); err == nil || errors.Is(err, user.ErrConflict) || errors.Is(err, user.ErrNotFound) {
					t.Errorf("AddPasskey(id of %d bytes): %v, want a plain error", len(id), err)
				}
			}
			ids := []string{strings.Repeat("\xFE", 1023), "a", "a ", "A", "a\x00"}
			for _, id := range ids {
				if err := s.AddPasskey(ctx, testPasskey(u, h, id)); err != nil {
					t.Fatalf("AddPasskey(%q): %v", id, err)
				}
			}
			list, err := s.ListPasskeys(ctx, u.ID)
			if err != nil || len(list) != len(ids) {
				t.Fatalf("ListPasskeys: %d, %v; want %d", len(list), err, len(ids))
			}
			want := []string{"A", "a", "a\x00", "a ", strings.Repeat("\xFE", 1023)} // byte order
			for i, p := range list {
				if string(p.ID) != want[i] {
					t.Fatalf("ListPasskeys[%d] = %q, want %q (same CreatedAt: by id, byte for byte)", i, p.ID, want[i])
				}
			}
			if err := s.RenamePasskey(ctx, u.ID, []byte("a "), "spaced"); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				p, err := s.PasskeyByID(ctx, []byte(id))
				if wantName := map[bool]string{true: "spaced", false: ""}[id == "a "]; err != nil || string(p.ID) != id || p.Name != wantName {
					t.Fatalf("PasskeyByID(%q) = %+v, %v; want name %q", id, p, err, wantName)
				}
			}
		})
	}
}
