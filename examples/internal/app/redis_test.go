package app

import (
	"crypto/rand"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore/redistest"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/nethttpauth"
)

// TestParseRedis: each of REDIS_URL, REDIS_CLUSTER_URL and
// REDIS_SENTINEL_URL opens its kind of client, described in the start-up
// log; a malformed one, or two set together, is an error that names the
// variable and never repeats the password.
func TestParseRedis(t *testing.T) {
	for _, tt := range []struct {
		name string
		vars map[string]string
		desc string // "": none set
		kind string // the client's type
	}{
		{"none", map[string]string{}, "", ""},
		{"blank", map[string]string{"REDIS_URL": " "}, "", ""},
		{"one node", map[string]string{"REDIS_URL": "redis://:secret@10.0.0.1:6380/2"},
			"redis 10.0.0.1:6380", "*redis.Client"},
		{"cluster", map[string]string{"REDIS_CLUSTER_URL": "redis://:secret@10.0.0.1:6379?addr=10.0.0.2:6379&addr=10.0.0.3:6379"},
			"redis cluster 10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379", "*redis.ClusterClient"},
		{"cluster, database 0", map[string]string{"REDIS_CLUSTER_URL": "rediss://10.0.0.1:6379/0"},
			"redis cluster 10.0.0.1:6379", "*redis.ClusterClient"},
		{"sentinel", map[string]string{"REDIS_SENTINEL_URL": "redis://:secret@10.0.0.1:26379/1?addr=10.0.0.2:26379&master_name=mymaster&password=secret"},
			"redis sentinel mymaster via 10.0.0.1:26379,10.0.0.2:26379", "*redis.Client"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, err := parseRedis(env(tt.vars))
			if err != nil {
				t.Fatal(err)
			}
			if tt.desc == "" {
				if src != nil {
					t.Fatalf("parseRedis = %q, want none", src.desc)
				}
				return
			}
			if src == nil || src.desc != tt.desc {
				t.Fatalf("parseRedis = %+v, want %q", src, tt.desc)
			}
			c := src.client()
			defer c.Close()
			if got := typeName(c); got != tt.kind {
				t.Errorf("client %s, want %s", got, tt.kind)
			}
		})
	}
	for _, tt := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"REDIS_URL": "http://x"}, "REDIS_URL: invalid URL scheme: http"},
		{map[string]string{"REDIS_URL": "redis://:secret@x:6379/db"}, `REDIS_URL: invalid database number: "db"`},
		{map[string]string{"REDIS_URL": "redis://:secret@x:6379/%zz"}, "REDIS_URL: invalid URL"},
		{map[string]string{"REDIS_CLUSTER_URL": "redis://:secret@x:6379?addr=y:6379&colour=blue"}, "REDIS_CLUSTER_URL: unexpected option: colour"},
		{map[string]string{"REDIS_CLUSTER_URL": "redis://:secret@x:6379/3"}, "REDIS_CLUSTER_URL: a Cluster has one database, 0: drop /3 from the URL"},
		{map[string]string{"REDIS_CLUSTER_URL": "unix:///tmp/redis.sock"}, "REDIS_CLUSTER_URL: invalid URL scheme: unix"},
		{map[string]string{"REDIS_SENTINEL_URL": "redis://:secret@x:26379?addr=y:26379"},
			"REDIS_SENTINEL_URL: no master_name: add ?master_name=<the name the sentinels monitor>"},
		{map[string]string{"REDIS_SENTINEL_URL": "redis://:secret@x:26379?master_name=m&addr=y"}, "REDIS_SENTINEL_URL: unable to parse addr param: y"},
		{map[string]string{"REDIS_SENTINEL_URL": "redis://:secret@x:26379?master_name=m&dial_timeout=soon"}, "REDIS_SENTINEL_URL: invalid dial_timeout duration"},
		{map[string]string{"REDIS_URL": "redis://x:6379", "REDIS_SENTINEL_URL": "redis://y:26379?master_name=m"},
			"REDIS_URL and REDIS_SENTINEL_URL are set together: set one of them (REDIS_URL: one node, REDIS_CLUSTER_URL: a Cluster, REDIS_SENTINEL_URL: its sentinels)"},
	} {
		_, err := parseRedis(env(tt.vars))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("parseRedis(%v) error = %v, want %q (and no password)", tt.vars, err, tt.want)
		}
	}
}

func typeName(c redis.UniversalClient) string {
	switch c.(type) {
	case *redis.Client:
		return "*redis.Client"
	case *redis.ClusterClient:
		return "*redis.ClusterClient"
	}
	return "another"
}

// TestRedisDeployments starts a server on a Redis Cluster and on a
// Sentinel set (started by redistest): it starts with no warning, says
// which Redis it uses, is ready, and a reset link asked for counts the
// address's attempt on that Redis, under REDIS_PREFIX.
func TestRedisDeployments(t *testing.T) {
	for _, tt := range []struct {
		name, variable string
		start          func(t *testing.T) (url, desc string, c redis.UniversalClient)
	}{
		{"cluster", "REDIS_CLUSTER_URL", func(t *testing.T) (string, string, redis.UniversalClient) {
			c := redistest.StartCluster(t)
			return c.URL(), "rate limits: redis cluster " + strings.Join(c.Addrs(), ","), c.Client(t)
		}},
		{"sentinel", "REDIS_SENTINEL_URL", func(t *testing.T) (string, string, redis.UniversalClient) {
			s := redistest.StartSentinel(t)
			return s.URL(), "rate limits: redis sentinel " + redistest.SentinelMasterName + " via " + strings.Join(s.SentinelAddrs(), ","), s.Client(t)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, desc, c := tt.start(t)
			prefix := "authkit:test:" + rand.Text() + ":"
			a, err := Load(production(t, map[string]string{tt.variable: url, "REDIS_PREFIX": prefix}), io.Discard, quiet)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(t.Context())
			if len(a.Warnings) != 0 || !strings.Contains(a.Description, desc+",") {
				t.Fatalf("warnings %q, description %q; want none and %q", a.Warnings, a.Description, desc)
			}
			if status, body, _ := probe(t, a.Health(), "/readyz"); status != 200 {
				t.Fatalf("/readyz: %d %s", status, body)
			}
			// A reset link asked for an unknown address: counted, and no
			// password hashed (a login would hash one: seconds under -race).
			r := httptest.NewRequest("POST", "/api/auth/forgot-password", nil)
			if err := a.Service.ForgotPassword(t.Context(), a.Service.Visit(nethttpauth.Request(r)),
				auth.ForgotPasswordInput{Email: "nobody@example.com"}); err != nil {
				t.Fatal(err)
			}
			if n, err := c.Get(t.Context(), prefix+"reset:email:nobody@example.com").Int(); err != nil || n != 1 {
				t.Fatalf("the attempt on the Redis of %s = %d, %v; want 1", tt.variable, n, err)
			}
		})
	}
}
