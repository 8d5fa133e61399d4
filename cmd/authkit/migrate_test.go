package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/user"
)

func TestMigrate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	for range 2 { // a second run is a no-op
		var out, errOut bytes.Buffer
		if code := run([]string{"migrate", "--database-url", "sqlite://" + path}, &out, &errOut); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, errOut.String())
		}
		if out.String() != "authkit migrate: sqlite is up to date\n" {
			t.Fatalf("stdout %q", out.String())
		}
	}
	db, err := sqlxstore.Open(t.Context(), "sqlite://"+path, sqlxstore.Config{CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Users().Create(t.Context(), &user.User{Email: "a@example.com", PasswordHash: "h"}); err != nil {
		t.Fatalf("the migrated tables do not take a user: %v", err)
	}
}

func TestMigrateReadsDATABASE_URL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "env.db")
	t.Setenv("DATABASE_URL", "sqlite://"+path)
	var out, errOut bytes.Buffer
	if code := run([]string{"migrate", "--table-prefix", "app_auth_"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	db, err := sqlxstore.Open(t.Context(), "sqlite://"+path, sqlxstore.Config{TablePrefix: "app_auth_", CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Users().ByEmail(t.Context(), "nobody@example.com"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("prefixed tables missing: %v", err)
	}
}

func TestMigrateErrors(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"migrate"}, 2, "no database: pass --database-url or set DATABASE_URL"},
		{[]string{"migrate", "--database-url", "oracle://x"}, 2, `scheme "oracle" is not supported`},
		{[]string{"migrate", "--database-url", "postgres://u:secret@127.0.0.1:1/x?connect_timeout=2"}, 1, "127.0.0.1:1"},
		{[]string{"migrate", "extra"}, 2, `unexpected argument "extra"`},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, errOut.String(), tc.code, tc.want)
		}
		if strings.Contains(errOut.String(), "secret") {
			t.Errorf("%v: stderr shows the password: %q", tc.args, errOut.String())
		}
	}
}
