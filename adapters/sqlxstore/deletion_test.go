package sqlxstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/user"
)

// TestDeleteReferenced: a row of the app's that still points at the user
// by a foreign key fails Delete and DeleteWith with a *user.ReferencedError
// naming the table and the constraint (PostgreSQL, MySQL), never the
// driver's error alone, and deletes nothing; DeleteWith whose callback
// deletes that row through TxFrom deletes both in one transaction, and a
// callback that fails after its own delete leaves the row in place.
func TestDeleteReferenced(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			url := backendURL(t, b)
			if b.env == "" {
				url = "sqlite://" + filepath.Join(t.TempDir(), "fk.db") + "?_pragma=foreign_keys(1)"
			}
			pool, err := sqlxopen.Open(t.Context(), url, sqlxstore.Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = pool.Close() })
			prefix := randomPrefix()
			db, err := sqlxstore.New(pool.SQLX(), sqlxstore.Config{TablePrefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := db.DropTables(context.Background()); err != nil {
					t.Errorf("drop tables: %v", err)
				}
			})
			idType := map[string]string{"SQLite": "TEXT", "PostgreSQL": `TEXT COLLATE "C"`, "MySQL": "VARBINARY(255)"}[b.name]
			orders, fk := prefix+"orders", prefix+"orders_user_fk"
			x := pool.SQLX()
			if _, err := x.Exec(`CREATE TABLE ` + orders + ` (id INTEGER PRIMARY KEY, user_id ` + idType + ` NOT NULL, CONSTRAINT ` + fk +
				` FOREIGN KEY (user_id) REFERENCES ` + prefix + `users (id))`); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = x.Exec(`DROP TABLE ` + orders) })
			users := db.Users()
			u, err := users.Create(t.Context(), &user.User{Email: "ada@example.com", Name: "Ada", PasswordHash: "h"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := x.Exec(x.Rebind(`INSERT INTO `+orders+` (id, user_id) VALUES (1, ?)`), u.ID); err != nil {
				t.Fatal(err)
			}
			wantReferenced := func(what string, err error) {
				t.Helper()
				var ref *user.ReferencedError
				if !errors.Is(err, user.ErrReferenced) || !errors.As(err, &ref) {
					t.Fatalf("%s = %v, want a *user.ReferencedError", what, err)
				}
				if b.name != "SQLite" && (ref.Table != orders || ref.Constraint != fk) {
					t.Errorf("%s: table %q, constraint %q; want %q, %q (%v)", what, ref.Table, ref.Constraint, orders, fk, err)
				}
				if _, err := users.ByID(t.Context(), u.ID); err != nil {
					t.Errorf("%s deleted the user: %v", what, err)
				}
			}
			wantReferenced("Delete", users.Delete(t.Context(), u.ID))
			wantReferenced("DeleteWith without a callback", users.DeleteWith(t.Context(), u.ID, nil))
			// A callback that deletes the row, then fails: rolled back.
			boom := errors.New("boom")
			err = users.DeleteWith(t.Context(), u.ID, func(ctx context.Context) error {
				tx, ok := sqlxstore.TxFrom(ctx)
				if !ok {
					t.Fatal("TxFrom: no transaction in the callback's context")
				}
				if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM `+orders+` WHERE user_id = ?`), u.ID); err != nil {
					return err
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("DeleteWith with a failing callback = %v, want boom", err)
			}
			var n int
			if err := x.Get(&n, `SELECT COUNT(*) FROM `+orders); err != nil || n != 1 {
				t.Fatalf("orders after a rolled-back callback: %d, %v; want 1", n, err)
			}
			// The callback deletes the row: both go.
			err = users.DeleteWith(t.Context(), u.ID, func(ctx context.Context) error {
				tx, _ := sqlxstore.TxFrom(ctx)
				_, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM `+orders+` WHERE user_id = ?`), u.ID)
				return err
			})
			if err != nil {
				t.Fatalf("DeleteWith: %v", err)
			}
			if _, err := users.ByID(t.Context(), u.ID); !errors.Is(err, user.ErrNotFound) {
				t.Errorf("ByID after DeleteWith = %v, want ErrNotFound", err)
			}
			if err := x.Get(&n, `SELECT COUNT(*) FROM `+orders); err != nil || n != 0 {
				t.Errorf("orders after DeleteWith: %d, %v; want 0", n, err)
			}
			if _, ok := sqlxstore.TxFrom(t.Context()); ok {
				t.Error("TxFrom outside a callback: found a transaction")
			}
		})
	}
}
