package sqlxstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/user"
)

// legacyPassword is the password of the users the app had before authkit.
const legacyPassword = "correct horse battery staple"

// Bcrypt costs of the test: the app's legacy hashes are at legacyCost, the
// Service's hasher at serviceCost. A login rehashes a hash below the
// hasher's cost whatever the two costs are (production: 10 and 12); the
// lowest bcrypt allows keep the race detector's run short.
const (
	legacyCost  = 4
	serviceCost = 5
)

// newLegacyHash returns what the app stored before authkit: bcrypt, cost
// legacyCost, of legacyPassword.
func newLegacyHash(t *testing.T) string {
	t.Helper()
	h, err := password.New(password.Config{BcryptCost: legacyCost, AllowLowCost: true})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := h.Hash(t.Context(), legacyPassword)
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

// TestExistingUsers: rows the app had before authkit work as they are, in
// both layouts on every database: found by the lowercase form of their
// mixed-case address, verified as of the migration (ExistingUsersVerified),
// logged in with their legacy bcrypt hash, which the login replaces in the
// app's own column.
func TestExistingUsers(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			pool := openPool(t, b)
			for _, layout := range []sqlxstore.Layout{sqlxstore.LayoutColumns, sqlxstore.LayoutSideTable} {
				t.Run(string(layout), func(t *testing.T) { testExistingUsers(t, pool, layout) })
			}
		})
	}
}

func testExistingUsers(t *testing.T, pool *sqlxstore.DB, layout sqlxstore.Layout) {
	ctx := t.Context()
	x := pool.SQLX()
	prefix, table := appTable(t, pool, "legacy")
	legacyHash := newLegacyHash(t)
	insert := x.Rebind(`INSERT INTO ` + table + ` (email, password_hash) VALUES (?, ?)`)
	if _, err := x.ExecContext(ctx, insert, "Alice@Example.COM", legacyHash); err != nil {
		t.Fatal(err)
	}
	db := mappedDB(t, pool, prefix, table, sqlxstore.UsersTable{
		IDType: sqlxstore.IDInt64, CreatedAtColumn: "created_at", Layout: layout,
		CaseInsensitiveEmails: true, ExistingUsersVerified: true,
	})
	before := time.Now().Add(-time.Second) // the database's clock may be a little behind
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	after := time.Now().Add(time.Second)
	s := db.Users()

	alice, err := s.ByEmail(ctx, "alice@example.com")
	if err != nil {
		t.Fatalf("ByEmail(lowercase form of a mixed-case row): %v", err)
	}
	if alice.Email != "alice@example.com" || alice.PasswordHash != legacyHash || alice.TwoFactorEnabled ||
		alice.SessionVersion != 0 || alice.CreatedAt.IsZero() {
		t.Fatalf("legacy user = %+v", alice)
	}
	if v := alice.EmailVerifiedAt; v.Before(before) || v.After(after) {
		t.Fatalf("legacy user verified at %v, want the migration's time (between %v and %v)", v, before, after)
	}
	if _, err := s.ByEmail(ctx, "Alice@Example.COM"); !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("ByEmail(the stored mixed case) = %v, want ErrNotFound: flows pass addresses lowercased", err)
	}
	if _, err := s.Create(ctx, &user.User{Email: "alice@example.com", PasswordHash: "h"}); !errors.Is(err, user.ErrEmailTaken) {
		t.Fatalf("Create(alice@example.com) = %v, want ErrEmailTaken", err)
	}

	// A row the app inserts after the migration: not verified in the
	// columns layout; the side-table layout cannot tell it from a legacy row.
	if _, err := x.ExecContext(ctx, insert, "Bob@Example.COM", legacyHash); err != nil {
		t.Fatal(err)
	}
	bob, err := s.ByEmail(ctx, "bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := bob.EmailVerified(), layout == sqlxstore.LayoutSideTable; got != want {
		t.Fatalf("row inserted by the app after the migration: verified %v, want %v", got, want)
	}

	// The first state change writes the legacy user's state down; it stays
	// verified at the same time.
	if v, err := s.BumpSessionVersion(ctx, alice.ID); err != nil || v != 1 {
		t.Fatalf("BumpSessionVersion = %d, %v", v, err)
	}
	again, err := s.ByID(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !again.EmailVerifiedAt.Equal(alice.EmailVerifiedAt) || again.SessionVersion != 1 {
		t.Fatalf("after the first state change: verified %v (was %v), version %d", again.EmailVerifiedAt, alice.EmailVerifiedAt, again.SessionVersion)
	}

	// Login with the address typed in any case; the legacy hash verifies
	// and is replaced by one at the hasher's cost, in the app's column.
	svc := newService(t, s)
	v := svc.Visit(auth.HTTPRequest(httptest.NewRequest("POST", "/api/auth/login", nil), nil))
	res, err := svc.Login(ctx, v, auth.LoginInput{Email: "ALICE@example.com", Password: legacyPassword})
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	if res.User.ID != alice.ID || res.RequiresTwoFactor {
		t.Fatalf("Login = %+v", res)
	}
	var stored, email string
	if err := x.QueryRowxContext(ctx, x.Rebind(`SELECT password_hash, email FROM `+table+` WHERE id = ?`), alice.ID).Scan(&stored, &email); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("$2a$%02d$", serviceCost); stored == legacyHash || !strings.HasPrefix(stored, want) {
		t.Fatalf("hash in the app's column after login = %q, want a new bcrypt hash beginning %s", stored, want)
	}
	h, err := password.New(password.Config{BcryptCost: serviceCost, AllowLowCost: true})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := h.Verify(ctx, legacyPassword, stored); err != nil || !ok {
		t.Fatalf("the new hash does not verify the password: %v, %v", ok, err)
	}
	if email != "Alice@Example.COM" {
		t.Fatalf("login rewrote the app's address to %q", email)
	}
}

// newService is the flows over users with default settings but the
// hasher: bcrypt at serviceCost.
func newService(t *testing.T, users user.Store) *auth.Service {
	t.Helper()
	hasher, err := password.New(password.Config{BcryptCost: serviceCost, AllowLowCost: true})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secretbox.NewKeyring(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := auth.New(auth.Config{
		Users: users, Hasher: hasher, Keys: keys, Secrets: []string{strings.Repeat("s", 32)}, AppURL: "http://localhost",
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	return svc
}
