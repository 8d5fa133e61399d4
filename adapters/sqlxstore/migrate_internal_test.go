package sqlxstore

import (
	"slices"
	"strings"
	"testing"
)

func TestEmbeddedMigrations(t *testing.T) {
	for d, want := range map[Dialect][]string{
		Postgres: {"CREATE TABLE IF NOT EXISTS app_users", "CREATE TABLE IF NOT EXISTS app_rate_limits", "CREATE INDEX IF NOT EXISTS app_rate_limits_reset_at_idx"},
		MySQL:    {"CREATE TABLE IF NOT EXISTS app_users", "CREATE TABLE IF NOT EXISTS app_rate_limits"},
		SQLite:   {"CREATE TABLE IF NOT EXISTS app_users", "CREATE TABLE IF NOT EXISTS app_rate_limits", "CREATE INDEX IF NOT EXISTS app_rate_limits_reset_at_idx"},
	} {
		db := &DB{dialect: d, t: newTables("app_")}
		ms, err := db.migrations()
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if ms[0].version != 1 || !slices.IsSortedFunc(ms, func(a, b migration) int { return int(a.version - b.version) }) {
			t.Errorf("%s: versions out of order or not starting at 1", d)
		}
		stmts := ms[0].stmts
		if len(stmts) != len(want) {
			t.Fatalf("%s: %d statements, want %d: %q", d, len(stmts), len(want), stmts)
		}
		for i, s := range stmts {
			if !strings.HasPrefix(s, want[i]) || strings.Contains(s, "{{") || strings.HasSuffix(s, ";") || strings.Contains(s, "--") {
				t.Errorf("%s statement %d = %q, want it to start with %q, prefix filled in, no ';' or comment", d, i, s, want[i])
			}
		}
	}
}

func TestSplitStatements(t *testing.T) {
	src := "-- header; with a semicolon\nCREATE TABLE a (\n\tx INT -- trailing\n);\n\n-- between\nCREATE INDEX b ON a (x);\nSELECT 1"
	got := splitStatements(src)
	want := []string{"CREATE TABLE a (\n\tx INT -- trailing\n)", "CREATE INDEX b ON a (x)", "SELECT 1"}
	if !slices.Equal(got, want) {
		t.Fatalf("splitStatements = %q, want %q", got, want)
	}
}
