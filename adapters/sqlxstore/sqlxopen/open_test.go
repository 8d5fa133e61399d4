package sqlxopen_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/user"
)

func TestOpenUnreachable(t *testing.T) {
	// A port nothing listens on: the listener is closed before Open dials.
	for _, scheme := range []string{"postgres", "mysql"} {
		addr := storetest.ClosedAddr(t)
		_, err := sqlxopen.Open(t.Context(), scheme+"://u:secret-pw@"+addr+"/db", sqlxstore.Config{})
		if !errors.Is(err, user.ErrUnavailable) {
			t.Errorf("Open(%s) on a closed port: %v, want ErrUnavailable", scheme, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret-pw") {
			t.Errorf("Open(%s) error leaks the password: %v", scheme, err)
		}
	}
}

// TestCloseClosesThePool: the pool Open made is the DB's, so Close closes
// it; a pool passed to New stays open (sqlxstore's tests check that).
func TestCloseClosesThePool(t *testing.T) {
	db, err := sqlxopen.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "a.db"), sqlxstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if db.Dialect() != sqlxstore.SQLite {
		t.Errorf("Dialect() = %q, want sqlite", db.Dialect())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.SQLX().PingContext(t.Context()); err == nil || !strings.Contains(err.Error(), "database is closed") {
		t.Fatalf("the pool after Close: Ping = %v, want sql: database is closed", err)
	}
}

func TestOpenRejects(t *testing.T) {
	sqliteURL := "sqlite://" + filepath.Join(t.TempDir(), "a.db")
	for name, tc := range map[string]struct {
		url string
		cfg sqlxstore.Config
	}{
		"Config.Dialect not the URL's": {sqliteURL, sqlxstore.Config{Dialect: sqlxstore.Postgres}},
		"bad table prefix":             {sqliteURL, sqlxstore.Config{TablePrefix: "Bad-"}},
		"unknown scheme":               {"oracle://scott:tiger@db/x", sqlxstore.Config{}},
	} {
		if _, err := sqlxopen.Open(t.Context(), tc.url, tc.cfg); !errors.Is(err, sqlxstore.ErrInvalidConfig) {
			t.Errorf("%s: Open = %v, want ErrInvalidConfig", name, err)
		}
	}
	if _, err := sqlxopen.Open(t.Context(), sqliteURL, sqlxstore.Config{Dialect: sqlxstore.SQLite}); err != nil {
		t.Errorf("Config.Dialect equal to the URL's: %v", err)
	}
}

func TestDialect(t *testing.T) {
	for url, want := range map[string]sqlxstore.Dialect{
		"postgres://u:p@db/app":   sqlxstore.Postgres,
		"postgresql://db/app":     sqlxstore.Postgres,
		"mysql://root@db:3306/x":  sqlxstore.MySQL,
		"sqlite://data/app.db":    sqlxstore.SQLite,
		"sqlite::memory:":         sqlxstore.SQLite,
		"SQLITE:///var/lib/a.db":  sqlxstore.SQLite,
		"POSTGRES://db/app?x=1&y": sqlxstore.Postgres,
	} {
		if got, err := sqlxopen.Dialect(url); err != nil || got != want {
			t.Errorf("Dialect(%q) = %q, %v; want %q", url, got, err, want)
		}
	}
	for _, url := range []string{"", "memory", "oracle://x", "mysql://root:secret-pw@/x"} {
		if _, err := sqlxopen.Dialect(url); !errors.Is(err, sqlxstore.ErrInvalidConfig) || strings.Contains(err.Error(), "secret-pw") {
			t.Errorf("Dialect(%q) = %v, want ErrInvalidConfig without the password", url, err)
		}
	}
}
