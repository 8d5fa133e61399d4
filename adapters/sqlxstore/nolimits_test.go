package sqlxstore_test

import (
	"strings"
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
)

// TestNoLimitsTable: with Config.NoLimitsTable (limits in Redis) Migrate
// makes no rate-limit table and Migrations leaves it out; a later Migrate
// without it creates the table, on every database.
func TestNoLimitsTable(t *testing.T) {
	ms, err := sqlxstore.Migrations(sqlxstore.Postgres, sqlxstore.Config{NoLimitsTable: true})
	if err != nil || strings.Contains(ms[0].SQL, "rate_limits") || !strings.Contains(ms[0].SQL, "authkit_users") {
		t.Fatalf("Migrations with NoLimitsTable: %v\n%s", err, ms[0].SQL)
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			pool := openPool(t, b)
			prefix := randomPrefix()
			redisApp := openAs(t, pool, prefix, sqlxstore.UsersTable{})
			noLimits, err := sqlxstore.New(pool.SQLX(), sqlxstore.Config{TablePrefix: prefix, NoLimitsTable: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := noLimits.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if ok, err := noLimits.HasLimitsTable(ctx); err != nil || ok {
				t.Fatalf("after Migrate with NoLimitsTable: HasLimitsTable = %v, %v; want false", ok, err)
			}
			if _, err := noLimits.Users().ByEmail(ctx, "nobody@example.com"); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Fatalf("the user store after Migrate with NoLimitsTable: %v, want not found", err)
			}
			if err := redisApp.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if ok, err := redisApp.HasLimitsTable(ctx); err != nil || !ok {
				t.Fatalf("after a Migrate without NoLimitsTable: HasLimitsTable = %v, %v; want true", ok, err)
			}
			if n, _, err := redisApp.Limits().Increment(ctx, "register:ip:192.0.2.1", 60e9); err != nil || n != 1 {
				t.Fatalf("Increment on the table made later: %d, %v", n, err)
			}
		})
	}
}
