package sqlxstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
)

// TestUserStoreProvides: the user store offers the DB's session records
// and one-time values (session.Provider, onetime.Provider), so that
// auth.New keeps sessions and pending 2FA logins in the same database by
// default; the stores it hands out write the DB's tables (their
// conformance suites run on DB.Sessions and DB.OneTime).
func TestUserStoreProvides(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			pool := openPool(t, b)
			db := freshDB(t, pool, sqlxstore.Config{})
			var users user.Accounts = db.Users()
			sp, ok := users.(session.Provider)
			if !ok {
				t.Fatal("the user store is no session.Provider")
			}
			op, ok := users.(onetime.Provider)
			if !ok {
				t.Fatal("the user store is no onetime.Provider")
			}
			if op.OneTimeStore() != onetime.Store(db.OneTime()) {
				t.Error("OneTimeStore is not the DB's one-time store")
			}
			ctx := context.Background()
			now := time.Now().Truncate(time.Millisecond)
			r := session.Record{ID: "0123456789abcdef0123456789abcdef", UserID: "u1", CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Hour)}
			if err := sp.SessionStore().Create(ctx, r); err != nil {
				t.Fatal(err)
			}
			// The provided store writes the DB's sessions table.
			if got, err := db.Sessions().Get(ctx, r.ID); err != nil || got.UserID != "u1" {
				t.Errorf("the record through DB.Sessions: %+v, %v", got, err)
			}
			if err := op.OneTimeStore().Put(ctx, "k", []byte("v"), now.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if v, err := db.OneTime().Take(ctx, "k", now); err != nil || string(v) != "v" {
				t.Errorf("the value through DB.OneTime: %q, %v", v, err)
			}
		})
	}
}
