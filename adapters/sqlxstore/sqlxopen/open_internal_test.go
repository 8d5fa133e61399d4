package sqlxopen

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		url     string
		dialect sqlxstore.Dialect
		driver  string
		dsn     string
		memory  bool
	}{
		{"postgres://u:p@db:5432/app?sslmode=disable", sqlxstore.Postgres, "pgx",
			"postgres://u:p@db:5432/app?sslmode=disable&connect_timeout=10", false},
		{"postgresql://db/app", sqlxstore.Postgres, "pgx", "postgresql://db/app?connect_timeout=10", false},
		{"postgres://db/app?connect_timeout=3", sqlxstore.Postgres, "pgx", "postgres://db/app?connect_timeout=3", false},
		{"sqlite:///var/lib/app.db", sqlxstore.SQLite, "sqlite",
			"/var/lib/app.db?_pragma=busy_timeout%285000%29&_pragma=journal_mode%28WAL%29&_txlock=immediate", false},
		{"sqlite://data/app%20one.db", sqlxstore.SQLite, "sqlite",
			"data/app one.db?_pragma=busy_timeout%285000%29&_pragma=journal_mode%28WAL%29&_txlock=immediate", false},
		{"sqlite://app.db?_pragma=busy_timeout(100)&_pragma=journal_mode(DELETE)&_txlock=exclusive", sqlxstore.SQLite, "sqlite",
			"app.db?_pragma=busy_timeout%28100%29&_pragma=journal_mode%28DELETE%29&_txlock=exclusive", false},
		{"sqlite::memory:", sqlxstore.SQLite, "sqlite", ":memory:?_pragma=busy_timeout%285000%29&_txlock=immediate", true},
		{"sqlite://:memory:", sqlxstore.SQLite, "sqlite", ":memory:?_pragma=busy_timeout%285000%29&_txlock=immediate", true},
	}
	for _, tt := range tests {
		d, driver, dsn, memory, err := parseURL(tt.url)
		if err != nil {
			t.Errorf("parseURL(%q): %v", tt.url, err)
			continue
		}
		if d != tt.dialect || driver != tt.driver || dsn != tt.dsn || memory != tt.memory {
			t.Errorf("parseURL(%q) = %s, %s, %q, %v; want %s, %s, %q, %v", tt.url, d, driver, dsn, memory,
				tt.dialect, tt.driver, tt.dsn, tt.memory)
		}
	}
}

func TestParseMySQLURL(t *testing.T) {
	_, _, dsn, _, err := parseURL("mysql://app:p%40ss%2Fw:rd@db.internal/authkit?tls=preferred&timeout=3s")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("ParseDSN(%q): %v", dsn, err)
	}
	if cfg.User != "app" || cfg.Passwd != "p@ss/w:rd" || cfg.Net != "tcp" || cfg.Addr != "db.internal:3306" ||
		cfg.DBName != "authkit" {
		t.Errorf("connection = %s %s@%s(%s)/%s", cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName)
	}
	if !cfg.ParseTime || !cfg.ClientFoundRows || cfg.MultiStatements || cfg.Collation != "utf8mb4_bin" {
		t.Errorf("parseTime=%v clientFoundRows=%v multiStatements=%v collation=%q", cfg.ParseTime, cfg.ClientFoundRows,
			cfg.MultiStatements, cfg.Collation)
	}
	if cfg.TLSConfig != "preferred" || cfg.Timeout.String() != "3s" {
		t.Errorf("the URL's own parameters were lost: tls=%q timeout=%v", cfg.TLSConfig, cfg.Timeout)
	}

	// The URL cannot switch off what the stores rely on.
	_, _, dsn, _, err = parseURL("mysql://root@127.0.0.1:3307/x?clientFoundRows=false&multiStatements=true&collation=utf8mb4_general_ci")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ = mysql.ParseDSN(dsn)
	if !cfg.ClientFoundRows || cfg.MultiStatements || cfg.Addr != "127.0.0.1:3307" || cfg.Timeout.String() != "10s" {
		t.Errorf("forced settings: clientFoundRows=%v multiStatements=%v addr=%s timeout=%v", cfg.ClientFoundRows,
			cfg.MultiStatements, cfg.Addr, cfg.Timeout)
	}
	if cfg.Collation != "utf8mb4_general_ci" {
		t.Errorf("collation %q: the URL's own choice must win", cfg.Collation)
	}
}

func TestParseURLErrors(t *testing.T) {
	for _, u := range []string{
		"",
		"memory",
		"oracle://scott:tiger@db/x",
		"mysql://root:secret-pw@/x",
		"mysql://root:secret-pw@db",
		"mysql://root:secret-pw@db/a/b",
		"mysql://root:secret-pw@db/x?%zz",
		"sqlite:app.db",
		"sqlite://",
		"sqlite://a%3Fb.db",
		"sqlite://%zz",
		"postgres://u:secret-pw@db/x?%zz",
	} {
		_, _, _, _, err := parseURL(u)
		if !errors.Is(err, sqlxstore.ErrInvalidConfig) {
			t.Errorf("parseURL(%q) = %v, want sqlxstore.ErrInvalidConfig", u, err)
			continue
		}
		if strings.Contains(err.Error(), "secret-pw") {
			t.Errorf("parseURL(%q) error leaks the password: %v", u, err)
		}
	}
}
