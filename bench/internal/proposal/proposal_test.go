package proposal_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/bench/internal/proposal"
	"github.com/authkit-go/authkit/bench/internal/redisinfo"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/store/storetest"
)

// The prototypes must pass the conformance suite every authkit rate-limit
// store passes, or their figures would not be comparable.

func TestRedisStoreConformance(t *testing.T) {
	url := os.Getenv("AUTHKIT_TEST_REDIS")
	if url == "" {
		if os.Getenv("AUTHKIT_REQUIRE_SERVICES") == "1" {
			t.Fatal("AUTHKIT_TEST_REDIS is not set and AUTHKIT_REQUIRE_SERVICES=1")
		}
		t.Skip("AUTHKIT_TEST_REDIS is not set (e.g. redis://127.0.0.1:6379/0)")
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opts.PoolSize = 4
	storetest.RunLimitStore(t, func(t *testing.T, _ *storetest.Clock) ratelimit.Store {
		c := redis.NewClient(opts)
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		prefix := "authkit:test:proposal:" + hex.EncodeToString(b) + ":"
		t.Cleanup(func() {
			// t's context is done before cleanups run.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := redisinfo.Unlink(ctx, c, prefix+"*"); err != nil {
				t.Error(err)
			}
			_ = c.Close()
		})
		return proposal.NewRedisStore(c, prefix)
	}, storetest.LimitOptions{RealTime: true})
}

// CookieValue must find exactly what http.Request.Cookie finds.
func FuzzCookieValue(f *testing.F) {
	for _, line := range []string{
		"authkit_session=abc",
		"a=1; authkit_session=abc; b=2",
		" authkit_session = abc ",
		`authkit_session="abc"`,
		`authkit_session="abc`,
		"authkit_session=a\\b; authkit_session=second",
		"authkit_session",
		"authkit_session=a b,c",
		"x=1;;authkit_session=\x7f; authkit_session=ok",
		"Authkit_session=no",
		"\tauthkit_session=tab\r",
		strings.Repeat("a=1;", 3000) + "authkit_session=over-the-limit",
	} {
		f.Add(line, "")
	}
	f.Add("authkit_session=one", "authkit_session=two")
	f.Fuzz(func(t *testing.T, line1, line2 string) {
		lines := []string{line1}
		if line2 != "" {
			lines = append(lines, line2)
		}
		r := &http.Request{Header: http.Header{"Cookie": lines}}
		want, err := r.Cookie("authkit_session")
		got, ok := proposal.CookieValue(lines, "authkit_session")
		if (err == nil) != ok || err == nil && want.Value != got {
			t.Fatalf("CookieValue(%q) = %q, %v; net/http: %v, %v", lines, got, ok, want, err)
		}
	})
}
