package main

import (
	"strings"
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
)

// TestUserRecordedMapping: once the app has migrated its own users table,
// `authkit user` and `authkit migrate` need no --users-* flag (they read the
// mapping the database records), and flags that describe another mapping
// are refused with the recorded one named, never a raw SQL error.
func TestUserRecordedMapping(t *testing.T) {
	eachServer(t, func(t *testing.T, url, prefix string, d sqlxstore.Dialect) {
		_, table := newAppUsers(t, url, prefix, d)
		mapping := sqlxstore.UsersTable{Table: table, IDColumn: "uid", EmailColumn: "mail", PasswordHashColumn: "pw",
			IDType: sqlxstore.IDInt64, Layout: sqlxstore.LayoutSideTable}
		flags := []string{"--users-table", table, "--users-columns", "id=uid,email=mail,password=pw", "--users-id", "int64", "--users-layout", "side-table"}
		sd := newMappedSupportDB(t, url, prefix, mapping, flags) // migrated with the flags
		sd.args = sd.args[:4]                                    // --database-url and --table-prefix alone
		sd.give()

		code, stdout, stderr := sd.run("", "find", "ada@example.com")
		if code != 0 || !strings.Contains(stdout, "id:                "+sd.ada.ID+"\n") || !strings.Contains(stdout, "passkeys:          1\n") {
			t.Fatalf("find without --users-* flags: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
		}
		code, stdout, stderr = sd.run("", "verify-email", "ada@example.com", "--yes")
		if code != 0 || sd.reload().EmailVerifiedAt.IsZero() {
			t.Fatalf("verify-email without --users-* flags: exit %d, stdout %q, stderr %q, the address still unverified", code, stdout, stderr)
		}
		if code, stdout, stderr := runCLI(append([]string{"migrate"}, sd.args...)...); code != 0 || stdout != "authkit migrate: "+string(d)+" is up to date\n" {
			t.Fatalf("migrate without --users-* flags: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}

		// One flag missing (the layout): the recorded mapping is named.
		partial := append(append([]string(nil), sd.args...), flags[:6]...)
		for _, args := range [][]string{
			append([]string{"user", "find", "ada@example.com"}, partial...),
			append([]string{"migrate"}, partial...),
		} {
			code, stdout, stderr := runCLI(args...)
			if code != 1 || stdout != "" || !strings.Contains(stderr, "was migrated for Users: sqlxstore.UsersTable{Table: \""+table+"\"") ||
				!strings.Contains(stderr, "Layout: sqlxstore.LayoutSideTable") {
				t.Fatalf("%s with the layout flag missing: exit %d, stdout %q, stderr %q; want 1 and the recorded mapping", args[0], code, stdout, stderr)
			}
		}
	})
}
