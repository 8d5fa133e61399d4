package sqlxstore

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the generated SQL in README.md")

// guideMapping is the mapping of README.md's guide, "Adding authkit to an
// existing users table": the app of examples/existingusers.
func guideMapping(layout Layout) UsersTable {
	return UsersTable{Table: "users", IDType: IDInt64, CreatedAtColumn: "created_at", Layout: layout,
		CaseInsensitiveEmails: true, ExistingUsersVerified: true}
}

// guideSQL is the migration of guideMapping(layout) on d, as README.md
// shows it.
func guideSQL(t *testing.T, d Dialect, layout Layout) string {
	t.Helper()
	ms, err := testDB(t, d, DefaultTablePrefix, guideMapping(layout)).migrations()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range ms {
		for _, s := range m.stmts {
			b.WriteString(strings.ReplaceAll(s, "\t", "    ") + ";\n\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TestREADMESQL: the SQL README.md shows for each layout is what the code
// generates (go test -run TestREADMESQL -update-readme rewrites it).
func TestREADMESQL(t *testing.T) {
	src, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(src)
	block := regexp.MustCompile("(?s)<!-- sql:(\\w+):(columns|side) -->\n```sql\n(.*?)```")
	found := 0
	readme = block.ReplaceAllStringFunc(readme, func(m string) string {
		g := block.FindStringSubmatch(m)
		layout := LayoutColumns
		if g[2] == "side" {
			layout = LayoutSideTable
		}
		want := guideSQL(t, Dialect(g[1]), layout)
		found++
		if g[3] != want && !*updateREADME {
			t.Errorf("README.md's SQL for %s, %s differs from the code's:\n%s", g[1], layout, want)
		}
		return "<!-- sql:" + g[1] + ":" + g[2] + " -->\n```sql\n" + want + "```"
	})
	if found != 6 {
		t.Errorf("README.md has %d generated SQL blocks, want 6 (3 dialects × 2 layouts)", found)
	}
	if *updateREADME {
		if err := os.WriteFile("README.md", []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
