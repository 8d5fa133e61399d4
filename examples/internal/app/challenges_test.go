package app

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/nethttpauth"
	"github.com/authkit-go/authkit/passkeys"
)

// TestPasskeyChallengesShared: two server processes on one database, or
// one Redis, keep the passkey ceremonies where they keep the users or the
// limits, so a sign-in begun on one is found by the other, as behind a
// round-robin load balancer: its finish gets as far as the assertion
// (passkey_invalid for this made-up one), not passkey_challenge_invalid.
// In memory each process has its own. A finish whose ceremony is not found
// does not count against the address's login limit.
func TestPasskeyChallengesShared(t *testing.T) {
	secrets := map[string]string{"SESSION_SECRET": strings.Repeat("s", 32)}
	cases := []struct {
		name   string
		vars   map[string]string
		desc   string
		shared bool
	}{
		{"sqlite", map[string]string{"DATABASE_URL": "sqlite://" + filepath.Join(t.TempDir(), "authkit.db")}, "(challenges: database)", true},
		{"memory", map[string]string{"DATABASE_URL": "memory"}, "(challenges: memory)", false},
		// On the test Redis (storetest.ServiceURL: skipped without one).
		{"redis", map[string]string{"DATABASE_URL": "memory", "REDIS_PREFIX": "authkit:test:" + rand.Text() + ":"}, "(challenges: redis)", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "redis" {
				tc.vars["REDIS_URL"] = storetest.ServiceURL(t, storetest.EnvRedis)
			}
			var apps [2]*App
			for i := range apps {
				vars := map[string]string{"AUTHKIT_DATA_DIR": t.TempDir()}
				for _, m := range []map[string]string{secrets, tc.vars} {
					for k, v := range m {
						vars[k] = v
					}
				}
				a := loadOrRefuse(t, vars, "")
				t.Cleanup(func() { a.Close(t.Context()) })
				if a.Passkeys == nil || !strings.Contains(a.Description, tc.desc) {
					t.Fatalf("description %q, want passkeys on %s", a.Description, tc.desc)
				}
				apps[i] = a
			}
			if tc.name == "redis" {
				t.Cleanup(func() { cleanRedis(t, tc.vars["REDIS_URL"], tc.vars["REDIS_PREFIX"]) })
			}
			visit := func(a *App, cookies []*http.Cookie) *auth.Visit {
				r := httptest.NewRequest("POST", passkeys.Prefix+"/login/finish", nil)
				r.RemoteAddr = "192.0.2.44:1234"
				for _, c := range cookies {
					r.AddCookie(c)
				}
				return a.Service.Visit(nethttpauth.Request(r))
			}
			v := visit(apps[0], nil)
			if _, err := apps[0].Passkeys.BeginLogin(t.Context(), v); err != nil {
				t.Fatalf("BeginLogin on the first: %v", err)
			}
			_, err := apps[1].Passkeys.FinishLogin(t.Context(), visit(apps[1], v.Cookies()), passkeys.LoginInput{Assertion: []byte(`{}`)})
			want := auth.ErrPasskeyChallengeInvalid
			if tc.shared {
				want = auth.ErrPasskeyInvalid
			}
			if !errors.Is(err, want) {
				t.Fatalf("FinishLogin on the second of a ceremony begun on the first: %v, want %v", err, want)
			}

			// Twelve finishes without a ceremony from one address, past the
			// login limit of 10: none counted, so the address's next login
			// attempt is answered for its password, not 429.
			for range 12 {
				if _, err := apps[1].Passkeys.FinishLogin(t.Context(), visit(apps[1], nil), passkeys.LoginInput{}); !errors.Is(err, auth.ErrPasskeyChallengeInvalid) {
					t.Fatalf("FinishLogin without a ceremony: %v", err)
				}
			}
			if _, err := apps[1].Service.Login(t.Context(), visit(apps[1], nil), auth.LoginInput{Email: "nobody@example.com", Password: "wrong password"}); !errors.Is(err, auth.ErrInvalidCredentials) {
				t.Fatalf("a login after the finishes without a ceremony: %v, want invalid credentials (not limited)", err)
			}
		})
	}
}

// cleanRedis deletes the keys under prefix.
func cleanRedis(t *testing.T, url, prefix string) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Error(err)
		return
	}
	c := redis.NewClient(opts)
	defer c.Close()
	ctx := context.Background() // the test's own context is done by now
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err == nil && len(keys) > 0 {
		err = c.Del(ctx, keys...).Err()
	}
	if err != nil {
		t.Error(err)
	}
}
