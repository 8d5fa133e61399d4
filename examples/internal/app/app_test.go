package app

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/pages"
	"github.com/authkit-go/authkit/passkeys"
)

// env is the environment of m. Unless m sets BCRYPT_COST (empty for the
// default, 12), passwords are hashed at the least cost Load accepts, 4 in
// development and 10 in production: every Load makes a hash (auth.New's
// dummy hash), seconds at cost 12 under the race detector.
func env(m map[string]string) Env {
	return func(k string) (string, bool) {
		v, ok := m[k]
		if !ok && k == "BCRYPT_COST" {
			if m["APP_ENV"] == "production" {
				return "10", true
			}
			return "4", true
		}
		return v, ok
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestProductionRefusesWithoutSecrets(t *testing.T) {
	tests := []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"APP_ENV": "production"}, "APP_ENV=production requires SESSION_SECRET, ENCRYPTION_KEY, SMTP_URL, APP_URL"},
		{map[string]string{"APP_ENV": "production", "SESSION_SECRET": strings.Repeat("s", 32)}, "requires ENCRYPTION_KEY, SMTP_URL, APP_URL"},
		{map[string]string{"APP_ENV": "production", "SESSION_SECRET": strings.Repeat("s", 32), "ENCRYPTION_KEY": "x"}, "requires SMTP_URL, APP_URL"},
		// Without APP_URL the mailed links would point at http://localhost:8080.
		{map[string]string{"APP_ENV": "production", "SESSION_SECRET": strings.Repeat("s", 32), "ENCRYPTION_KEY": "x",
			"SMTP_URL": "smtp://mail.example.com:587"}, "APP_ENV=production requires APP_URL"},
		{map[string]string{"APP_ENV": "staging"}, `APP_ENV must be development or production, not "staging"`},
	}
	for _, tt := range tests {
		_, err := Load(env(tt.vars), io.Discard, quiet)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%v) error = %v, want it to say %q", tt.vars, err, tt.want)
		}
	}
}

func TestProductionStarts(t *testing.T) {
	key, _ := secretbox.GenerateKey()
	a := loadOrRefuse(t, map[string]string{
		"APP_ENV": "production", "SESSION_SECRET": strings.Repeat("s", 32), "ENCRYPTION_KEY": key,
		"SMTP_URL": "smtp://mail.example.com:587", "AUTHKIT_DATA_DIR": t.TempDir(), "APP_URL": "https://app.example.com",
	}, "")
	defer a.Close(t.Context())
	// The one warning: in-memory rate limits (no REDIS_URL).
	if !a.Production || len(a.Warnings) != 1 || !strings.HasPrefix(a.Warnings[0], "REDIS_URL is unset: rate limits are kept in this process's memory") ||
		!strings.Contains(a.Warnings[0], "production with more than one process, or under attack, wants REDIS_URL") {
		t.Fatalf("production app: production=%v warnings=%q", a.Production, a.Warnings)
	}
	if !strings.Contains(a.Description, "mail: smtp smtp://mail.example.com:587") || !strings.Contains(a.Description, "env: production") {
		t.Fatalf("description %q", a.Description)
	}
	t.Run("on Redis: no warning", func(t *testing.T) {
		redisURL := storetest.ServiceURL(t, storetest.EnvRedis)
		b := loadOrRefuse(t, map[string]string{
			"APP_ENV": "production", "SESSION_SECRET": strings.Repeat("s", 32), "ENCRYPTION_KEY": key,
			"SMTP_URL": "smtp://mail.example.com:587", "AUTHKIT_DATA_DIR": t.TempDir(), "REDIS_URL": redisURL,
			"APP_URL": "https://app.example.com",
		}, "")
		defer b.Close(t.Context())
		if len(b.Warnings) != 0 {
			t.Fatalf("production app on Redis: warnings %q, want none", b.Warnings)
		}
	})
}

// TestDevelopmentSecretsPersist: development secrets are generated once,
// kept private in the data folder, and reused on the next start.
func TestDevelopmentSecretsPersist(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"AUTHKIT_DATA_DIR": dir}
	a := loadOrRefuse(t, vars, "")
	a.Close(t.Context())
	path := filepath.Join(dir, "dev-secrets")
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("dev-secrets mode %v, want 0600", fi.Mode().Perm())
	}
	if !strings.Contains(string(first), "SESSION_SECRET=") || !strings.Contains(string(first), "ENCRYPTION_KEY=ak1_") {
		t.Fatalf("dev-secrets content: %s", first)
	}
	b := loadOrRefuse(t, vars, "")
	b.Close(t.Context())
	second, _ := os.ReadFile(path)
	if string(first) != string(second) {
		t.Fatal("second start generated new secrets")
	}
	if len(b.Warnings) != 2 {
		t.Fatalf("warnings %v: want the dev-secrets and console-mail warnings", b.Warnings)
	}
}

func TestBadSettings(t *testing.T) {
	for _, tt := range []struct{ k, v, want string }{
		{"TRUST_PROXY", "10.0.0.0/33", "TRUST_PROXY"},
		{"ENCRYPTION_KEY", "not-a-key", "ENCRYPTION_KEY"},
		{"DATABASE_URL", "oracle://x", `DATABASE_URL: sqlxstore: invalid config: database URL scheme "oracle"`},
		{"REDIS_URL", "redis://127.0.0.1:1/0", "REDIS_URL: 127.0.0.1:1 does not answer"},
		{"REDIS_URL", "http://x", "REDIS_URL: invalid URL"},
		{"REDIS_CLUSTER_URL", "redis://127.0.0.1:1", "REDIS_CLUSTER_URL: cluster 127.0.0.1:1 does not answer"},
		{"REDIS_SENTINEL_URL", "redis://127.0.0.1:1?master_name=m", "REDIS_SENTINEL_URL: sentinel m via 127.0.0.1:1 does not answer"},
		{"SMTP_URL", "http://x", "SMTP_URL"},
		{"PWNED_PASSWORDS", "yes", "PWNED_PASSWORDS must be true, false or a range API URL"},
		{"PWNED_PASSWORDS", "https:///range/", "PWNED_PASSWORDS: password: invalid pwned config"},
	} {
		_, err := Load(env(map[string]string{tt.k: tt.v, "AUTHKIT_DATA_DIR": t.TempDir()}), io.Discard, quiet)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s=%s: error %v, want it to name %q", tt.k, tt.v, err, tt.want)
		}
	}
}

// TestDefaultIsSQLite: with no DATABASE_URL, users go to an SQLite file in
// the data folder and survive a restart.
func TestDefaultIsSQLite(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"AUTHKIT_DATA_DIR": dir}
	a := loadOrRefuse(t, vars, "")
	if !strings.Contains(a.Description, "users: sqlite "+filepath.Join(dir, "authkit.db")) || !strings.Contains(a.Description, "rate limits: memory") {
		t.Fatalf("description %q", a.Description)
	}
	if _, err := a.Users.Create(t.Context(), &user.User{Email: "kept@example.com", PasswordHash: "h"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	b := loadOrRefuse(t, vars, "")
	defer b.Close(t.Context())
	if _, err := b.Users.ByEmail(t.Context(), "kept@example.com"); err != nil {
		t.Fatalf("user lost across a restart: %v", err)
	}
}

// production is the environment of a production server that starts
// without warnings; tests add or replace variables.
func production(t *testing.T, extra map[string]string) Env {
	key, _ := secretbox.GenerateKey()
	m := map[string]string{
		"APP_ENV": "production", "SESSION_SECRET": strings.Repeat("s", 32), "ENCRYPTION_KEY": key,
		"SMTP_URL": "smtp://mail.example.com:587", "AUTHKIT_DATA_DIR": t.TempDir(), "APP_URL": "https://app.example.com",
		"DATABASE_URL": "memory",
	}
	maps.Copy(m, extra)
	return env(m)
}

// TestStartupWarnings: settings that work but are unsafe start the server
// with a warning that says what is wrong and what to do; safe ones start
// it with none.
func TestStartupWarnings(t *testing.T) {
	for _, tt := range []struct {
		name string
		vars map[string]string
		want []string // each must appear in the one warning; nil: no warning
	}{
		{"safe", map[string]string{"TRUST_PROXY": "10.0.0.0/8"}, nil},
		{"http APP_URL", map[string]string{"APP_URL": "http://app.example.com"},
			[]string{"APP_URL=http://app.example.com is not an https:// URL"}},
		{"TRUST_PROXY=true", map[string]string{"TRUST_PROXY": "true"},
			[]string{"TRUST_PROXY=true believes the leftmost X-Forwarded-For entry", "every client chooses its own rate-limit key",
				"TRUST_PROXY=10.0.0.0/8"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := Load(production(t, tt.vars), io.Discard, quiet)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(context.Background())
			// The in-memory limits warning (no REDIS_URL here) has its own
			// test, TestProductionStarts.
			a.Warnings = slices.DeleteFunc(a.Warnings, func(w string) bool { return strings.HasPrefix(w, "REDIS_URL is unset") })
			if tt.want == nil && len(a.Warnings) != 0 {
				t.Fatalf("warnings %q, want none", a.Warnings)
			}
			if tt.want != nil && len(a.Warnings) != 1 {
				t.Fatalf("warnings %q, want one", a.Warnings)
			}
			for _, w := range tt.want {
				if !strings.Contains(a.Warnings[0], w) {
					t.Errorf("warning %q lacks %q", a.Warnings[0], w)
				}
			}
		})
	}
}

// TestAppURLWarning: only an https:// APP_URL, or plain HTTP on this
// machine (development), is taken without a warning.
func TestAppURLWarning(t *testing.T) {
	for url, warn := range map[string]bool{
		"https://app.example.com": false, "https://app.example.com:8443/base": false,
		"http://localhost:8080": false, "http://127.0.0.1:8080": false, "http://[::1]:8080": false, "http://app.localhost": false,
		"http://app.example.com": true, "app.example.com": true, "http://10.0.0.5": true, "https://": true, "ftp://app.example.com": true,
	} {
		got := appURLWarning(url)
		if (got != "") != warn || warn && !strings.HasPrefix(got, "APP_URL="+url+" is not an https:// URL") {
			t.Errorf("APP_URL=%s: warning %q, want one: %v", url, got, warn)
		}
	}
}

// TestPwnedPasswords: PWNED_PASSWORDS turns the range API client on (the
// public API, or a mirror by URL) and is off by default.
func TestPwnedPasswords(t *testing.T) {
	for setting, want := range map[string]string{
		"":                              "off",
		"false":                         "off",
		"true":                          "range API https://api.pwnedpasswords.com/range/",
		"https://mirror.example/range/": "range API https://mirror.example/range/",
	} {
		c, desc, err := pwnedChecker(setting)
		if err != nil || desc != want || (c == nil) != (want == "off") {
			t.Errorf("PWNED_PASSWORDS=%q: %v, %q, %v; want %q", setting, c, desc, err, want)
		}
	}
}

// TestPasskeys: PASSKEYS unset mounts the passkeys module when the user
// store can hold passkeys, with APP_URL's host as the relying party and
// its origin as the one origin; false turns it off; true on a store that
// cannot hold them refuses to start.
func TestPasskeys(t *testing.T) {
	for _, tt := range []struct {
		vars    map[string]string
		on      bool
		desc    string // in the start-up line
		wantErr string
	}{
		{vars: map[string]string{"DATABASE_URL": "memory"}, on: true, desc: "passkeys: on for http://localhost:8080"},
		{vars: map[string]string{"DATABASE_URL": "memory", "APP_URL": "https://app.example.com:8443/base"}, on: true,
			desc: "passkeys: on for https://app.example.com:8443"},
		{vars: map[string]string{"DATABASE_URL": "memory", "PASSKEYS": "false"}, desc: "passkeys: off,"},
		{vars: map[string]string{"DATABASE_URL": "memory", "PASSKEYS": "yes"}, wantErr: `PASSKEYS must be true or false, not "yes"`},
	} {
		tt.vars["AUTHKIT_DATA_DIR"] = t.TempDir()
		a := loadOrRefuse(t, tt.vars, tt.wantErr)
		if a == nil {
			continue
		}
		if (a.Passkeys != nil) != tt.on || !strings.Contains(a.Description, tt.desc) {
			t.Errorf("%v: passkeys mounted %v, description %q; want %v and %q", tt.vars, a.Passkeys != nil, a.Description, tt.on, tt.desc)
		}
		a.Close(t.Context())
	}
	// A store without user.Passkeys: off unless asked for, then refused.
	a := loadOrRefuse(t, map[string]string{"AUTHKIT_DATA_DIR": t.TempDir()}, "")
	defer a.Close(t.Context())
	if _, holds := a.Users.(user.Passkeys); !holds {
		if a.Passkeys != nil || !strings.Contains(a.Description, "passkeys: off (the user store cannot hold them)") {
			t.Errorf("SQLite without passkeys: mounted %v, description %q", a.Passkeys != nil, a.Description)
		}
		_, err := Load(env(map[string]string{"AUTHKIT_DATA_DIR": t.TempDir(), "PASSKEYS": "true"}), io.Discard, quiet)
		if err == nil || !strings.Contains(err.Error(), "PASSKEYS=true: the user store (DATABASE_URL) cannot hold passkeys") {
			t.Errorf("PASSKEYS=true on SQLite without passkeys: %v", err)
		}
	} else if a.Passkeys == nil {
		t.Errorf("SQLite holds passkeys, but they are off: %q", a.Description)
	}
}

// TestPasskeysPath: the pages look for the passkeys module where it is.
func TestPasskeysPath(t *testing.T) {
	if pages.PasskeysPath != passkeys.Prefix {
		t.Errorf("pages.PasskeysPath %q, passkeys.Prefix %q", pages.PasskeysPath, passkeys.Prefix)
	}
}

// TestSwitches: EMAIL_CODE and EMAIL_SIGN_IN are off unless "true", which
// turns the mailed code of the 2FA step, or sign-in by a mailed code or
// link, on (on the default SQLite store and in memory); anything else
// refuses to start.
func TestSwitches(t *testing.T) {
	for _, sw := range []struct {
		name, desc string
		on         func(*auth.Service) bool
	}{
		{"EMAIL_CODE", "email codes", (*auth.Service).HasEmailCodes},
		{"EMAIL_SIGN_IN", "email sign-in", (*auth.Service).HasEmailSignIn},
		{"TOKEN_MODE", "token mode", (*auth.Service).HasTokenMode},
	} {
		for _, tt := range []struct {
			vars    map[string]string
			on      bool
			wantErr string
		}{
			{vars: map[string]string{}},
			{vars: map[string]string{sw.name: "false"}},
			{vars: map[string]string{sw.name: "true"}, on: true},
			{vars: map[string]string{sw.name: "true", "DATABASE_URL": "memory"}, on: true},
			{vars: map[string]string{sw.name: "yes"}, wantErr: sw.name + ` must be true or false, not "yes"`},
		} {
			tt.vars["AUTHKIT_DATA_DIR"] = t.TempDir()
			a := loadOrRefuse(t, tt.vars, tt.wantErr)
			if a == nil {
				continue
			}
			desc := sw.desc + ": " + onOff(tt.on) + ","
			if sw.on(a.Service) != tt.on || !strings.Contains(a.Description, desc) {
				t.Errorf("%v: %s %v, description %q; want %v and %q", tt.vars, sw.desc, sw.on(a.Service), a.Description, tt.on, desc)
			}
			a.Close(t.Context())
		}
	}
}

// loadOrRefuse loads the App of vars. With wantErr it checks that Load
// refuses with an error that says wantErr and returns nil; without, Load
// must succeed.
func loadOrRefuse(t *testing.T, vars map[string]string, wantErr string) *App {
	t.Helper()
	a, err := Load(env(vars), io.Discard, quiet)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%v: error %v, want %q", vars, err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("%v: %v", vars, err)
	}
	return a
}
