package storetest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"
)

// The variables that name the test servers of a store's tests, read by
// [ServiceURL]. authkit's own tests use them; a custom store's tests may too.
const (
	EnvPostgres = "AUTHKIT_TEST_POSTGRES" // a PostgreSQL URL
	EnvMySQL    = "AUTHKIT_TEST_MYSQL"    // a MySQL or MariaDB URL
	EnvRedis    = "AUTHKIT_TEST_REDIS"    // a Redis URL
)

// EnvRequireServices set to "1" turns every skip of [ServiceURL] and
// [SkipMissing] into a failure: CI sets it, so that a test never passes
// by not running.
const EnvRequireServices = "AUTHKIT_REQUIRE_SERVICES"

// EnvSkipped names a file to which [SkipMissing] appends one line per
// skip (the service, the test's folder and the test's name, separated by
// tabs), so that a run over many packages can
// say at its end what it left out (authkit's make test does).
const EnvSkipped = "AUTHKIT_SKIPPED"

// localURLs are the servers [ServiceURL] looks for when their variable is
// unset: the usual local addresses, with the users and database of a
// development machine.
var localURLs = map[string]string{
	EnvPostgres: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
	EnvMySQL:    "mysql://root@127.0.0.1:3306/test",
	EnvRedis:    "redis://127.0.0.1:6379/0",
}

// local remembers, per variable, whether a server answered at its local
// address: one dial per test process.
var local sync.Map // env -> func() bool

// ServiceURL returns the URL of the test server that the variable env
// (EnvPostgres, EnvMySQL, EnvRedis) names. When env is unset, and
// something accepts connections at the variable's usual local address
// (PostgreSQL at 127.0.0.1:5432 as user postgres, database
// test; MariaDB at 127.0.0.1:3306 as root, database test; Redis at
// 127.0.0.1:6379), that server is used. When env is "off", or unset with
// nothing answering locally, tb is skipped through [SkipMissing] (failed
// under AUTHKIT_REQUIRE_SERVICES=1).
//
// Tests that share a server must keep to their own schema, table prefix or
// key prefix and remove it when they end.
func ServiceURL(tb testing.TB, env string) string {
	tb.Helper()
	switch v := os.Getenv(env); v {
	case "off":
		SkipMissing(tb, env, env+"=off")
	case "":
	default:
		return v
	}
	u, ok := localURLs[env]
	if !ok {
		SkipMissing(tb, env, env+" is unset")
	}
	probe, _ := local.LoadOrStore(env, sync.OnceValue(func() bool { return answers(u) }))
	if !probe.(func() bool)() {
		host := u
		if p, err := url.Parse(u); err == nil {
			host = p.Host
		}
		SkipMissing(tb, env, fmt.Sprintf("%s is unset and nothing answers at %s", env, host))
	}
	return u
}

// answers reports whether the host of rawURL accepts a TCP connection
// within a second.
func answers(rawURL string) bool {
	p, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	c, err := net.DialTimeout("tcp", p.Host, time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// SkipMissing skips tb because service, a test server or a program it
// needs (EnvPostgres, "redis-server", "chromium"), is missing; why says so
// and how to provide it. Under AUTHKIT_REQUIRE_SERVICES=1 it fails tb
// instead. When AUTHKIT_SKIPPED names a file, the skip is appended to it.
func SkipMissing(tb testing.TB, service, why string) {
	tb.Helper()
	if os.Getenv(EnvRequireServices) == "1" {
		tb.Fatalf("%s (%s=1 requires %s)", why, EnvRequireServices, service)
	}
	if name := os.Getenv(EnvSkipped); name != "" {
		// One short write with O_APPEND: lines from parallel test
		// processes do not interleave.
		if f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			dir, _ := os.Getwd() // go test runs a test in its package's folder
			_, _ = fmt.Fprintf(f, "%s\t%s\t%s\n", service, dir, tb.Name())
			_ = f.Close()
		}
	}
	tb.Skip(why)
}
