// Package matrix runs the HTTP flow suite (core/authtest) over every SQL
// store, and over Redis rate limits and session records: the store side
// of ARCHITECTURE.md "Tests". Each framework module runs the suite on the
// memory store itself, so the frameworks are proven alike there; here each
// store runs the suite on one framework, chosen so that every framework
// meets an SQL store (see TestMatrix). AUTHKIT_FULL_MATRIX=1 runs every
// store on every framework, the whole cross product (about three times
// as long).
package matrix

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/e2e/servertest"
	"github.com/authkit-go/authkit/fiberauth"
	"github.com/authkit-go/authkit/ginauth"
	"github.com/authkit-go/authkit/nethttpauth"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

func randomPrefix() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "m" + hex.EncodeToString(b[:]) + "_"
}

// frameworks serve a Service on 127.0.0.1:0 and return the base URL.
var frameworks = map[string]func(t *testing.T, svc *auth.Service) string{
	"nethttp": func(t *testing.T, svc *auth.Service) string { return serveHTTP(t, nethttpauth.Handler(svc)) },
	"gin":     func(t *testing.T, svc *auth.Service) string { return serveHTTP(t, ginauth.New(svc)) },
	"fiber": func(t *testing.T, svc *auth.Service) string {
		app := fiber.New(fiberauth.ApplyConfig(svc, fiber.Config{DisableStartupMessage: true}))
		fiberauth.Register(app, svc)
		ln := listen(t)
		done := make(chan error, 1)
		go func() { done <- app.Listener(ln) }()
		t.Cleanup(func() {
			_ = app.ShutdownWithTimeout(5 * time.Second)
			_ = ln.Close()
			<-done
		})
		return "http://" + ln.Addr().String()
	},
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func serveHTTP(t *testing.T, h http.Handler) string {
	ln := listen(t)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String()
}

// sqlStores opens one pool per database for the whole test and gives each
// subtest its own tables (a random prefix), dropped when it ends.
type sqlStore struct {
	url  string
	once sync.Once
	db   *sqlxstore.DB
	err  error

	mu     sync.Mutex
	tables map[*testing.T]*sqlxstore.DB // each subtest's tables
	asked  map[*testing.T]bool          // the subtest has its sessions table already
}

func (s *sqlStore) newUsers(t *testing.T) user.Store {
	t.Helper()
	return s.forTest(t).Users()
}

// newRecords returns a session-record store on the subtest's tables: the
// first call of a subtest its sessions table, the next its
// trusted_devices table (the suite asks for sessions first).
func (s *sqlStore) newRecords(t *testing.T, _ func() time.Time) session.Store {
	db := s.forTest(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.asked[t] {
		s.asked[t] = true
		return db.Sessions()
	}
	return db.TrustedDevices()
}

// forTest returns the subtest's migrated tables, made on its first call.
func (s *sqlStore) forTest(t *testing.T) *sqlxstore.DB {
	t.Helper()
	s.mu.Lock()
	if db, ok := s.tables[t]; ok {
		s.mu.Unlock()
		return db
	}
	s.mu.Unlock()
	s.once.Do(func() {
		s.db, s.err = sqlxopen.Open(context.Background(), s.url, sqlxstore.Config{CleanupInterval: -1})
	})
	if s.err != nil {
		t.Fatalf("open %s: %v", s.url, s.err)
	}
	prefix := randomPrefix()
	db, err := sqlxstore.New(s.db.SQLX(), sqlxstore.Config{TablePrefix: prefix, CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	t.Cleanup(func() {
		for _, table := range []string{"challenges", "passkeys", "passkey_handles", "sessions", "trusted_devices", "users", "rate_limits", "schema_migrations"} {
			if _, err := s.db.SQLX().ExecContext(context.Background(), "DROP TABLE IF EXISTS "+prefix+table); err != nil {
				t.Errorf("drop %s%s: %v", prefix, table, err)
			}
		}
	})
	s.mu.Lock()
	if s.tables == nil {
		s.tables, s.asked = map[*testing.T]*sqlxstore.DB{}, map[*testing.T]bool{}
	}
	s.tables[t] = db
	s.mu.Unlock()
	return db
}

func (s *sqlStore) close() {
	if s.db != nil {
		s.db.Close()
	}
}

func TestMatrix(t *testing.T) {
	// A store's code runs behind the Service, the same whatever framework
	// serves it; a framework's code is the same whatever store is behind
	// it, and runs the whole suite on memory in its own module. So each
	// store runs the suite once, on the framework named here (fiber, the
	// one not on net/http, twice: MariaDB and Redis), unless
	// AUTHKIT_FULL_MATRIX=1 asks for all three.
	stores := []struct {
		name  string
		url   func(t *testing.T) string
		redis bool   // rate limits and session records on Redis
		fw    string // the framework the suite runs on
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "matrix.db") }, false, "gin"},
		{"postgres", func(t *testing.T) string { return servertest.Need(t, "AUTHKIT_TEST_POSTGRES") }, false, "nethttp"},
		{"mysql", func(t *testing.T) string { return servertest.Need(t, "AUTHKIT_TEST_MYSQL") }, false, "fiber"},
		{"postgres+redis", func(t *testing.T) string { return servertest.Need(t, "AUTHKIT_TEST_POSTGRES") }, true, "fiber"},
	}
	full := os.Getenv("AUTHKIT_FULL_MATRIX") == "1"
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			s := &sqlStore{url: st.url(t)}
			t.Cleanup(s.close)
			var newLimits func(t *testing.T, clock func() time.Time, name string) ratelimit.Store
			newSessions := s.newRecords // session records in the same database
			if st.redis {
				newLimits = redisLimits(t)
				newSessions = redisSessions(t)
			}
			fws := []string{st.fw}
			if full {
				fws = []string{"nethttp", "gin", "fiber"}
			}
			for _, fw := range fws {
				t.Run(fw, func(t *testing.T) {
					authtest.Run(t, authtest.Harness{
						Start:          frameworks[fw],
						NewUsers:       s.newUsers,
						NewLimitStore:  newLimits,
						NewSessions:    newSessions,
						RealTimeLimits: st.redis,
					})
				})
			}
		})
	}
}

// redisLimits gives each suite subtest its own key prefix on the test
// Redis, deleted when the subtest ends.
func redisLimits(t *testing.T) func(t *testing.T, clock func() time.Time, name string) ratelimit.Store {
	client := redisClient(t)
	var mu sync.Mutex
	stores := map[*testing.T]ratelimit.Store{}
	return func(t *testing.T, _ func() time.Time, _ string) ratelimit.Store {
		mu.Lock()
		defer mu.Unlock()
		if s, ok := stores[t]; ok {
			return s
		}
		s := redisstore.New(client, redisstore.Config{Prefix: redisPrefix(t, client, "authkit:test:matrix:")})
		stores[t] = s
		return s
	}
}

// redisSessions gives each suite subtest a session-record store of its own
// key prefix on the test Redis, deleted when the subtest ends.
func redisSessions(t *testing.T) func(t *testing.T, now func() time.Time) session.Store {
	client := redisClient(t)
	return func(t *testing.T, _ func() time.Time) session.Store {
		return redisstore.NewSessions(client, redisstore.SessionsConfig{Prefix: redisPrefix(t, client, "authkit:test:matrix:sess:")})
	}
}

// redisClient connects to the test Redis for the test's lifetime.
func redisClient(t *testing.T) *redis.Client {
	opts, err := redis.ParseURL(servertest.Need(t, "AUTHKIT_TEST_REDIS"))
	if err != nil {
		t.Fatal(err)
	}
	opts.PoolSize = 8
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	return client
}

// redisPrefix returns a new random key prefix under base whose keys are
// deleted when t ends.
func redisPrefix(t *testing.T, client *redis.Client, base string) string {
	prefix := base + randomPrefix()
	t.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, prefix+"*", 200).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
	})
	return prefix
}
