package app

import (
	"errors"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// TestRateLimitsVariable: RATE_LIMITS reaches the service: with
// register=1/1h the second registration from one address is refused.
func TestRateLimitsVariable(t *testing.T) {
	a := loadOrRefuse(t, map[string]string{"AUTHKIT_DATA_DIR": t.TempDir(), "DATABASE_URL": "memory",
		"RATE_LIMITS": "register=1/1h,login:ip=off", "RATE_LIMIT_CAPACITY": "500", "SESSION_IDLE_TIMEOUT": "30m"}, "")
	defer a.Close(t.Context())
	register := func(email string) error {
		r := httptest.NewRequest("POST", "/api/auth/register", nil)
		r.RemoteAddr = "192.0.2.7:4711"
		_, err := a.Service.Register(t.Context(), a.Service.Visit(auth.HTTPRequest(r, nil)),
			auth.RegisterInput{Email: email, Password: "correct horse battery staple", Name: "Ada"})
		return err
	}
	if err := register("ada@example.com"); err != nil {
		t.Fatalf("first registration: %v", err)
	}
	if err := register("bob@example.com"); !errors.Is(err, auth.ErrTooManyRegistrations) {
		t.Fatalf("second registration from the address: %v, want ErrTooManyRegistrations (RATE_LIMITS register=1/1h)", err)
	}
}

// TestRateLimitsParse: the forms RATE_LIMITS, RATE_LIMIT_CAPACITY and
// SESSION_IDLE_TIMEOUT take, and the errors that name the variable.
func TestRateLimitsParse(t *testing.T) {
	l, err := parseLimits("register=50/1h, login:email=off,2fa=10/5m")
	if err != nil || l.Register != (auth.Limit{Max: 50, Window: time.Hour}) || l.LoginEmail != auth.Off ||
		l.TwoFactor != (auth.Limit{Max: 10, Window: 5 * time.Minute}) || l.LoginIP != (auth.Limit{}) {
		t.Fatalf("parseLimits = %+v, %v", l, err)
	}
	for _, bad := range []string{"signup=5/1h", "register=5", "register=0/1h", "register=5/1ms", "register=x/1h", "register=1/1h,register=2/1h"} {
		if _, err := parseLimits(bad); err == nil || !strings.HasPrefix(err.Error(), "RATE_LIMITS: ") {
			t.Errorf("parseLimits(%q) = %v, want an error naming RATE_LIMITS", bad, err)
		}
	}
	for _, bad := range []string{"0", "-5", "many"} {
		if _, err := parseCapacity(bad); err == nil || !strings.HasPrefix(err.Error(), "RATE_LIMIT_CAPACITY: ") {
			t.Errorf("parseCapacity(%q) = %v", bad, err)
		}
	}
	for _, bad := range []string{"30s", "soon", "-1h"} {
		if _, err := parseIdle(bad); err == nil || !strings.HasPrefix(err.Error(), "SESSION_IDLE_TIMEOUT: ") {
			t.Errorf("parseIdle(%q) = %v", bad, err)
		}
	}
	if d, err := parseIdle("off"); err != nil || d != -1 {
		t.Errorf("parseIdle(off) = %v, %v, want -1 (no idle timeout)", d, err)
	}
	if d, err := parseIdle(""); err != nil || d != 0 {
		t.Errorf("parseIdle() = %v, %v, want 0 (the default)", d, err)
	}
	if d, err := parseIdle("8h"); err != nil || d != 8*time.Hour {
		t.Errorf("parseIdle(8h) = %v, %v", d, err)
	}
}

// TestDefaultAddrLoopback: without ADDR the example servers listen on the
// loopback interface only; ADDR still chooses.
func TestDefaultAddrLoopback(t *testing.T) {
	for vars, want := range map[string]string{"": "localhost:8080", ":8080": ":8080", "0.0.0.0:9000": "0.0.0.0:9000"} {
		m := map[string]string{"AUTHKIT_DATA_DIR": t.TempDir(), "DATABASE_URL": "memory"}
		if vars != "" {
			m["ADDR"] = vars
		}
		a := loadOrRefuse(t, m, "")
		a.Close(t.Context())
		if a.Addr != want {
			t.Errorf("ADDR=%q: listen address %q, want %q", vars, a.Addr, want)
		}
	}
}

// TestHealthNosniff: both probes' JSON carries X-Content-Type-Options:
// nosniff, as every authkit answer does.
func TestHealthNosniff(t *testing.T) {
	a := &App{Users: store.NewMemory(store.MemoryConfig{}), logger: quiet}
	for _, path := range HealthPaths {
		if _, _, h := probe(t, a.Health(), path); h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: headers %v, want X-Content-Type-Options: nosniff", path, h)
		}
	}
}

// TestRedisLimitsNoTable: with the limits in Redis (AUTHKIT_TEST_REDIS) the
// SQL database gets no rate-limit table; without, it does.
func TestRedisLimitsNoTable(t *testing.T) {
	redisURL := storetest.ServiceURL(t, storetest.EnvRedis)
	for redis, want := range map[string]bool{redisURL: false, "": true} {
		dir := t.TempDir()
		dbURL := "sqlite://" + filepath.Join(dir, "app.db")
		m := map[string]string{"AUTHKIT_DATA_DIR": dir, "DATABASE_URL": dbURL}
		if redis != "" {
			m["REDIS_URL"] = redis
		}
		a := loadOrRefuse(t, m, "")
		a.Close(t.Context())
		db, err := sqlxopen.Open(t.Context(), dbURL, sqlxstore.Config{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.HasLimitsTable(t.Context())
		db.Close()
		if err != nil || got != want {
			t.Errorf("REDIS_URL=%q: rate-limit table %v, %v; want %v", redis, got, err, want)
		}
	}
}

// TestBcryptCost: BCRYPT_COST unset leaves the Service's default (cost
// 12); set, it hashes at that cost, from 10 in production and from 4 in
// development, and anything else is refused, naming the range.
func TestBcryptCost(t *testing.T) {
	for _, tt := range []struct {
		setting    string
		production bool
		want       string // the hash's prefix; "" for the default (nil)
		err        string
	}{
		{"", true, "", ""},
		{"", false, "", ""},
		{"10", true, "$2a$10$", ""},
		{"4", false, "$2a$04$", ""},
		{"9", true, "", "BCRYPT_COST must be a whole number from 10 to 18, not \"9\""},
		{"4", true, "", "BCRYPT_COST must be a whole number from 10 to 18, not \"4\""},
		{"3", false, "", "BCRYPT_COST must be a whole number from 4 to 18, not \"3\""},
		{"19", false, "", "BCRYPT_COST must be a whole number from 4 to 18, not \"19\""},
		{"twelve", false, "", "BCRYPT_COST must be a whole number from 4 to 18, not \"twelve\""},
	} {
		h, err := bcryptHasher(tt.setting, tt.production)
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("bcryptHasher(%q, production %v): %v, want %q", tt.setting, tt.production, err, tt.err)
			}
		case tt.want == "":
			if err != nil || h != nil {
				t.Errorf("bcryptHasher(%q, production %v) = %v, %v; want nil: the Service's default", tt.setting, tt.production, h, err)
			}
		default:
			if err != nil {
				t.Fatalf("bcryptHasher(%q, production %v): %v", tt.setting, tt.production, err)
			}
			got, err := h.Hash(t.Context(), "correct horse battery")
			if err != nil || !strings.HasPrefix(got, tt.want) {
				t.Errorf("bcryptHasher(%q, production %v) hashes to %q (%v), want the prefix %s", tt.setting, tt.production, got, err, tt.want)
			}
		}
	}
	// Load passes the setting on: a wrong one stops the start.
	if _, err := Load(env(map[string]string{"AUTHKIT_DATA_DIR": t.TempDir(), "DATABASE_URL": "memory", "BCRYPT_COST": "2"}), io.Discard, quiet); err == nil ||
		!strings.Contains(err.Error(), "BCRYPT_COST must be") {
		t.Errorf("Load with BCRYPT_COST=2: %v, want it refused", err)
	}
}

// TestLanguagesVariable: by default a visitor asking for German gets the
// answers and the pages in German, one asking for English or for nothing
// English; LANGUAGES=en keeps every visitor in English; a language authkit
// does not ship refuses to start, naming the variable.
func TestLanguagesVariable(t *testing.T) {
	login := func(a *App, accept string) (status int, text string) {
		r := httptest.NewRequest("POST", "/api/login", nil)
		if accept != "" {
			r.Header.Set("Accept-Language", accept)
		}
		v := a.Service.Visit(auth.HTTPRequest(r, nil))
		_, err := a.Service.Login(t.Context(), v, auth.LoginInput{Email: "nobody@example.com", Password: "wrong password"})
		e := auth.AsError(err)
		return e.Status, a.Service.Modules().Text(v, err)
	}
	for _, tt := range []struct {
		languages, accept, want string
	}{
		{"", "de-DE,de;q=0.9", "E-Mail-Adresse oder Passwort ist falsch"},
		{"", "en", "Invalid credentials"},
		{"", "", "Invalid credentials"},
		{"en", "de", "Invalid credentials"},
		{"de,en,de", "de", "E-Mail-Adresse oder Passwort ist falsch"},
	} {
		a := loadOrRefuse(t, map[string]string{"AUTHKIT_DATA_DIR": t.TempDir(), "DATABASE_URL": "memory", "LANGUAGES": tt.languages}, "")
		if status, text := login(a, tt.accept); status != 401 || text != tt.want {
			t.Errorf("LANGUAGES=%q, Accept-Language %q: %d %q, want 401 %q", tt.languages, tt.accept, status, text, tt.want)
		}
		if tt.languages == "" && tt.accept == "de-DE,de;q=0.9" {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/login", nil)
			req.Header.Set("Accept-Language", tt.accept)
			a.Pages.ServeHTTP(rec, req)
			if rec.Code != 200 || rec.Header().Get("Content-Language") != "de" || !strings.Contains(rec.Body.String(), `<html lang="de">`) {
				t.Errorf("the login page for German: %d, Content-Language %q", rec.Code, rec.Header().Get("Content-Language"))
			}
		}
		a.Close(t.Context())
	}
	loadOrRefuse(t, map[string]string{"AUTHKIT_DATA_DIR": t.TempDir(), "DATABASE_URL": "memory", "LANGUAGES": "de,fr"},
		`LANGUAGES: "fr" is not a language authkit ships (en, de)`)
}
