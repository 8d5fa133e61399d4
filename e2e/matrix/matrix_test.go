// Package matrix runs the HTTP flow suite (core/authtest) over every SQL
// store, and over Redis rate limits and session records: the store side
// of ARCHITECTURE.md "Tests". Each framework module runs the suite on the
// memory store itself, so the frameworks are proven alike there; here each
// store runs the suite on one framework, chosen so that every framework
// meets an SQL store (see TestMatrix). AUTHKIT_FULL_MATRIX=1 runs every
// store on every framework, the whole cross product (about three times
// as long). Built with -race, it runs only the suite's Races topic unless
// -run says otherwise (TestMain).
package matrix

import (
	"context"
	"flag"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/e2e/internal/frameworks"
	"github.com/authkit-go/authkit/e2e/internal/sqltest"
	"github.com/authkit-go/authkit/e2e/servertest"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	flag.Parse()
	// The suite's tests spend most of their time waiting on the databases
	// (each write a commit), so -parallel at its default, GOMAXPROCS (2 on
	// CI), leaves the CPUs idle. Unless the run sets -parallel itself, let
	// more of them wait at once: each subtest has tables (on SQLite a file)
	// of its own, so they never meet.
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(max(8, runtime.GOMAXPROCS(0))))
	}
	// Under the race detector (seven times the CPU here) the matrix runs the
	// suite's Races topic only, unless the run sets -run itself: the rest of
	// the suite is behaviour its assertions check, the same with or without
	// the detector, and every line of code it runs ran under -race in make
	// test (the flow suite on memory on each framework, each store's
	// conformance suite with its concurrent cases). make test-e2e runs the
	// whole matrix without -race and this topic with it.
	if raceDetector && flag.Lookup("test.run").Value.String() == "" {
		_ = flag.Set("test.run", racesOnly)
	}
	os.Exit(m.Run())
}

// racesOnly is the -run pattern of the flow suite's Races topic on every
// store of TestMatrix.
const racesOnly = "^TestMatrix$///^Races$"

func TestMatrix(t *testing.T) {
	// A store's code runs behind the Service, the same whatever framework
	// serves it; a framework's code is the same whatever store is behind
	// it, and runs the whole suite on memory in its own module. So each
	// store runs the suite once, on the framework named here (fiber, the
	// one not on net/http, twice: MariaDB and Redis), unless
	// AUTHKIT_FULL_MATRIX=1 asks for all three.
	stores := []struct {
		db    sqltest.Database
		redis bool   // rate limits and session records on Redis
		fw    string // the framework the suite runs on
	}{
		{sqltest.Databases[0], false, "gin"},
		{sqltest.Databases[1], false, "nethttp"},
		{sqltest.Databases[2], false, "fiber"},
		{sqltest.Databases[1], true, "fiber"},
	}
	full := os.Getenv("AUTHKIT_FULL_MATRIX") == "1"
	for _, st := range stores {
		name := st.db.Name
		if st.redis {
			name += "+redis"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store on its own database, tables or key prefix
			s := sqltest.Open(t, st.db.URL(t))
			var newLimits func(t *testing.T, clock func() time.Time, name string) ratelimit.Store
			newSessions := s.Records // session records in the same database
			if st.redis {
				newLimits = redisLimits(t)
				newSessions = redisSessions(t)
			}
			fws := []string{st.fw}
			if full {
				fws = frameworks.Names
			}
			for _, fw := range fws {
				t.Run(fw, func(t *testing.T) {
					authtest.Run(t, authtest.Harness{
						Start:          func(t *testing.T, svc *auth.Service) string { return frameworks.Serve(t, fw, svc, nil, "") },
						NewUsers:       s.Users,
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
	prefix := base + sqltest.RandomPrefix()
	t.Cleanup(func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, prefix+"*", 200).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
	})
	return prefix
}
