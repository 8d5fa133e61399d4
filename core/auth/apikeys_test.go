package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// apiKeyFlow is a flow with API keys on, the scopes read and write.
func apiKeyFlow(t *testing.T, change func(*Config)) *flow {
	return newFlow(t, func(c *Config) {
		c.APIKeys = APIKeysConfig{Enabled: true, Scopes: []string{"read", "write"}}
		if change != nil {
			change(c)
		}
	})
}

// createKey creates a key on b's session.
func (f *flow) createKey(b *browser, in APIKeyInput) (NewAPIKey, error) {
	var k NewAPIKey
	err := f.do(b, func(v *Visit) (err error) {
		k, err = f.s.CreateAPIKey(context.Background(), v, in)
		return err
	})
	return k, err
}

func (f *flow) mustCreateKey(b *browser, in APIKeyInput) NewAPIKey {
	f.t.Helper()
	k, err := f.createKey(b, in)
	if err != nil {
		f.t.Fatalf("CreateAPIKey: %v", err)
	}
	return k
}

// bearer is a request of an API client sending key.
func bearer(key string) *fakeRequest {
	return &fakeRequest{method: http.MethodGet, remote: "198.51.100.4:443", headers: map[string]string{"Authorization": "Bearer " + key}}
}

// wantDenied checks that resp is the error answer of e.
func wantDenied(t *testing.T, what string, resp *Response, e *Error) {
	t.Helper()
	if resp == nil {
		t.Fatalf("%s: allowed, want %d %s", what, e.Status, e.Code)
	}
	var body errorBody
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatalf("%s: body %q: %v", what, resp.Body, err)
	}
	if resp.Status != e.Status || body.Code != e.Code || body.Error != e.Message {
		t.Fatalf("%s: %d %s %q, want %d %s %q", what, resp.Status, body.Code, body.Error, e.Status, e.Code, e.Message)
	}
}

func TestAPIKeyFormat(t *testing.T) {
	id, secret := "AbCdEfGh01234567", strings.Repeat("z", apiKeySecretLen)
	key := formatAPIKey(id, secret)
	// The checksum as a scanner computes it: Python's zlib.crc32 of the
	// text before it, in base62 (0-9A-Za-z), six digits.
	if want := "authkit_AbCdEfGh01234567_" + secret + "1xEfI0"; key != want {
		t.Fatalf("formatAPIKey = %q, want %q", key, want)
	}
	gotID, gotSecret, ok := ParseAPIKey(key)
	if !ok || gotID != id || gotSecret != secret {
		t.Fatalf("ParseAPIKey(%q) = %q, %q, %v", key, gotID, gotSecret, ok)
	}
	typo := []byte(key)
	typo[30] = 'y' // one character of the secret
	for name, bad := range map[string]string{
		"a typo":                string(typo),
		"truncated":             key[:len(key)-1],
		"one character more":    key + "0",
		"another prefix":        "authkix" + key[7:],
		"no separator":          strings.Replace(key, "_", "-", 2),
		"the checksum replaced": key[:len(key)-6] + "000000",
		"a non-base62 id":       formatAPIKey("AbCdEfGh0123456-", secret),
		"empty":                 "",
	} {
		if _, _, ok := ParseAPIKey(bad); ok {
			t.Errorf("ParseAPIKey of %s (%q) = ok", name, bad)
		}
	}
	// Random ids and secrets are base62 of the right length.
	for range 20 {
		s, err := randomBase62(strings.NewReader(strings.Repeat("\xff\xf8\x00\x3d\x3e", 40)), 16)
		if err != nil || len(s) != 16 || !isBase62(s) {
			t.Fatalf("randomBase62 = %q, %v", s, err)
		}
	}
}

func TestCreateAPIKey(t *testing.T) {
	f := apiKeyFlow(t, nil)
	b, u := f.register("ada@example.com", goodPW)
	res := f.mustCreateKey(b, APIKeyInput{Name: "  deploy script ", Scopes: []string{"write", "read", "write"}})
	info := res.APIKey
	if info.Name != "deploy script" || !slices.Equal(info.Scopes, []string{"read", "write"}) || info.Prefix != "authkit_"+info.ID ||
		!info.CreatedAt.Equal(f.now.Truncate(time.Millisecond)) || !info.ExpiresAt.Equal(info.CreatedAt.Add(30*24*time.Hour)) || !info.LastUsedAt.IsZero() {
		t.Fatalf("CreateAPIKey returned %+v", info)
	}
	id, secret, ok := ParseAPIKey(res.Key)
	if !ok || id != info.ID {
		t.Fatalf("the key %q does not parse to its id %q", res.Key, info.ID)
	}
	stored, err := f.s.users.apiKeys.APIKeyByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(secret))
	if stored.UserID != u.ID || string(stored.Hash) != string(sum[:]) || strings.Contains(string(stored.Hash), secret) {
		t.Fatalf("stored %+v: want the owner and the SHA-256 of the secret", stored)
	}
	if e, ok := f.event(EventAPIKeyCreated); !ok || e.UserID != u.ID || e.Detail != id {
		t.Fatalf("event %+v, %v", e, ok)
	}
	mails := f.mails(mail.KindAPIKeyCreated)
	if len(mails) != 1 || mails[0].To != "ada@example.com" || !strings.Contains(mails[0].Text, `named "deploy script"`) ||
		!strings.Contains(mails[0].Text, "for 30 days") || strings.Contains(mails[0].Text, secret) {
		t.Fatalf("mails %+v", mails)
	}
	var list []APIKeyInfo
	if err := f.do(b, func(v *Visit) (err error) { list, err = f.s.ListAPIKeys(context.Background(), v); return err }); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != id || !slices.Equal(list[0].Scopes, info.Scopes) {
		t.Fatalf("ListAPIKeys = %+v", list)
	}
	// Without scopes and with a lifetime of its own.
	plain := f.mustCreateKey(b, APIKeyInput{Name: "ci", ExpiresIn: 48 * time.Hour})
	if len(plain.APIKey.Scopes) != 0 || plain.APIKey.Scopes == nil || !plain.APIKey.ExpiresAt.Equal(plain.APIKey.CreatedAt.Add(48*time.Hour)) {
		t.Fatalf("a key without scopes: %+v", plain.APIKey)
	}
	if plain.Key == res.Key || plain.APIKey.ID == info.ID {
		t.Fatal("two keys are the same")
	}
}

// TestCreateAPIKeyRefused: bad input answers its error and stores and
// mails nothing.
func TestCreateAPIKeyRefused(t *testing.T) {
	f := apiKeyFlow(t, func(c *Config) { c.APIKeys.MaxPerUser = 2 })
	b, u := f.register("ada@example.com", goodPW)
	for _, tc := range []struct {
		in   APIKeyInput
		want *Error
	}{
		{APIKeyInput{Name: " "}, ErrNameRequired},
		{APIKeyInput{Name: strings.Repeat("n", MaxAPIKeyName+1)}, ErrNameTooLong},
		{APIKeyInput{Name: "a\u202eb"}, ErrInvalidCharacters},
		{APIKeyInput{Name: "k", Scopes: []string{"read", "admin"}}, ErrUnknownScope},
		{APIKeyInput{Name: "k", Scopes: []string{"READ"}}, ErrUnknownScope},
		{APIKeyInput{Name: "k", ExpiresIn: 366 * 24 * time.Hour}, ErrInvalidExpiry},
		{APIKeyInput{Name: "k", ExpiresIn: -time.Hour}, ErrInvalidExpiry},
		{APIKeyInput{Name: "k", ExpiresIn: time.Second}, ErrInvalidExpiry},
	} {
		if _, err := f.createKey(b, tc.in); !errors.Is(err, tc.want) {
			t.Errorf("CreateAPIKey(%+v) = %v, want %v", tc.in, err, tc.want)
		}
	}
	if keys, _ := f.s.users.apiKeys.ListAPIKeys(context.Background(), u.ID); len(keys) != 0 {
		t.Fatalf("%d keys stored by refused creates", len(keys))
	}
	f.mustCreateKey(b, APIKeyInput{Name: "one", ExpiresIn: 365 * 24 * time.Hour})
	f.mustCreateKey(b, APIKeyInput{Name: "two"})
	if _, err := f.createKey(b, APIKeyInput{Name: "three"}); !errors.Is(err, ErrTooManyAPIKeys) {
		t.Fatalf("a third key with MaxPerUser 2: %v, want ErrTooManyAPIKeys", err)
	}
	if n := len(f.mails(mail.KindAPIKeyCreated)); n != 2 {
		t.Fatalf("%d notices, want 2", n)
	}
	// An old session must re-authenticate first; a signed-out visit is
	// not authenticated.
	f.now = f.now.Add(DefaultReauthWindow + time.Second)
	if _, err := f.createKey(b, APIKeyInput{Name: "late"}); !errors.Is(err, ErrReauthenticationRequired) {
		t.Fatalf("an old session: %v, want ErrReauthenticationRequired", err)
	}
	if _, err := f.createKey(newBrowser(), APIKeyInput{Name: "anon"}); !errors.Is(err, ErrNotAuthenticated) {
		t.Fatalf("no session: %v, want ErrNotAuthenticated", err)
	}
}

func TestAuthenticateAPIKey(t *testing.T) {
	f := apiKeyFlow(t, nil)
	b, u := f.register("ada@example.com", goodPW)
	k := f.mustCreateKey(b, APIKeyInput{Name: "reader", Scopes: []string{"read"}})

	got, c, resp := f.s.AuthenticateCredential(bearer(k.Key), false)
	if resp != nil || got.ID != u.ID || c.Kind != CredentialAPIKey || c.ID != k.APIKey.ID || !slices.Equal(c.Scopes, []string{"read"}) || c.All {
		t.Fatalf("AuthenticateCredential = %v, %+v, %v", got, c, resp)
	}
	if got, resp := f.s.Authenticate(bearer(k.Key)); resp != nil || got.ID != u.ID {
		t.Fatalf("Authenticate with the key: %v, %v", got, resp)
	}
	// The scheme is case-insensitive (RFC 9110).
	r := bearer(k.Key)
	r.headers["Authorization"] = "bearer " + k.Key
	if _, resp := f.s.Authenticate(r); resp != nil {
		t.Fatalf("a lowercase scheme: %d %s", resp.Status, resp.Body)
	}
	stored, _ := f.s.users.apiKeys.APIKeyByID(context.Background(), k.APIKey.ID)
	if !stored.LastUsedAt.Equal(f.now.Truncate(time.Millisecond)) {
		t.Fatalf("LastUsedAt = %v, want %v", stored.LastUsedAt, f.now)
	}
	// Within the minute the use is not written again; after it, it is.
	first := stored.LastUsedAt
	f.now = f.now.Add(30 * time.Second)
	f.s.Authenticate(bearer(k.Key))
	if stored, _ = f.s.users.apiKeys.APIKeyByID(context.Background(), k.APIKey.ID); !stored.LastUsedAt.Equal(first) {
		t.Fatalf("LastUsedAt written again within a minute: %v", stored.LastUsedAt)
	}
	f.now = f.now.Add(31 * time.Second)
	f.s.Authenticate(bearer(k.Key))
	if stored, _ = f.s.users.apiKeys.APIKeyByID(context.Background(), k.APIKey.ID); !stored.LastUsedAt.After(first) {
		t.Fatal("LastUsedAt not written after a minute")
	}

	// Keys that do not check out: 401 invalid_api_key, whatever the cause.
	id, secret, _ := ParseAPIKey(k.Key)
	typo := []byte(k.Key)
	typo[40] ^= 1
	other := strings.Repeat("A", apiKeySecretLen)
	if other == secret {
		other = strings.Repeat("B", apiKeySecretLen)
	}
	for name, key := range map[string]string{
		"a typo (checksum)":             string(typo),
		"a wrong secret, good checksum": formatAPIKey(id, other),
		"an unknown id":                 formatAPIKey("0000000000000000", secret),
		"the prefix alone":              "authkit_",
	} {
		_, resp := f.s.Authenticate(bearer(key))
		wantDenied(t, name, resp, ErrInvalidAPIKey)
	}
	// A key is not a session: authkit's own routes do not accept it.
	if _, err := f.s.CurrentUser(context.Background(), f.s.Visit(bearer(k.Key))); !errors.Is(err, ErrNotAuthenticated) {
		t.Fatalf("CurrentUser with an API key: %v, want ErrNotAuthenticated", err)
	}
	if _, err := f.s.CreateAPIKey(context.Background(), f.s.Visit(bearer(k.Key)), APIKeyInput{Name: "more"}); !errors.Is(err, ErrNotAuthenticated) {
		t.Fatalf("CreateAPIKey with an API key: %v, want ErrNotAuthenticated", err)
	}

	// Revoked, then expired.
	if err := f.do(b, func(v *Visit) error { return f.s.RevokeAPIKey(context.Background(), v, id) }); err != nil {
		t.Fatal(err)
	}
	_, resp = f.s.Authenticate(bearer(k.Key))
	wantDenied(t, "a revoked key", resp, ErrInvalidAPIKey)
	short := f.mustCreateKey(b, APIKeyInput{Name: "short", ExpiresIn: time.Hour})
	if _, resp := f.s.Authenticate(bearer(short.Key)); resp != nil {
		t.Fatalf("a fresh key: %s", resp.Body)
	}
	f.now = f.now.Add(time.Hour)
	_, resp = f.s.Authenticate(bearer(short.Key))
	wantDenied(t, "an expired key", resp, ErrInvalidAPIKey)
}

func TestAPIKeyVerifiedAndScope(t *testing.T) {
	f := apiKeyFlow(t, nil)
	b, _ := f.register("ada@example.com", goodPW)
	k := f.mustCreateKey(b, APIKeyInput{Name: "reader", Scopes: []string{"read"}})
	_, resp := f.s.AuthenticateVerified(bearer(k.Key))
	wantDenied(t, "AuthenticateVerified of an unverified owner", resp, ErrEmailNotVerified)

	if _, c, resp := f.s.AuthorizeScope(bearer(k.Key), "read"); resp != nil || c.ID != k.APIKey.ID {
		t.Fatalf("AuthorizeScope(read) with a read key: %+v, %v", c, resp)
	}
	_, _, resp = f.s.AuthorizeScope(bearer(k.Key), "write")
	wantDenied(t, "AuthorizeScope(write) with a read key", resp, ErrInsufficientScope)
	// What RequireUser put on the context is used as it is.
	u, c, _ := f.s.AuthenticateCredential(bearer(k.Key), false)
	r := bearer("not a key")
	r.ctx = ContextWithCredential(ContextWithUser(context.Background(), u), c)
	_, _, resp = f.s.AuthorizeScope(r, "write")
	wantDenied(t, "AuthorizeScope(write) after RequireUser", resp, ErrInsufficientScope)
	// A session has every scope.
	sess := &fakeRequest{method: http.MethodGet, cookies: b.cookies}
	if _, c, resp := f.s.AuthorizeScope(sess, "write"); resp != nil || c.Kind != CredentialSession || !c.All {
		t.Fatalf("AuthorizeScope with a session: %+v, %v", c, resp)
	}
	_, _, resp = f.s.AuthorizeScope(&fakeRequest{method: http.MethodGet}, "read")
	wantDenied(t, "AuthorizeScope without a credential", resp, ErrNotAuthenticated)
}

func TestAPIKeyLimit(t *testing.T) {
	f := apiKeyFlow(t, func(c *Config) { c.Limits.APIKey = Limit{Max: 2, Window: time.Minute} })
	b, _ := f.register("ada@example.com", goodPW)
	k := f.mustCreateKey(b, APIKeyInput{Name: "busy"})
	other := f.mustCreateKey(b, APIKeyInput{Name: "quiet"})
	// Keys that do not check out count nothing against the key's limit.
	id, _, _ := ParseAPIKey(k.Key)
	for range 3 {
		f.s.Authenticate(bearer(formatAPIKey(id, strings.Repeat("x", apiKeySecretLen))))
	}
	for i := range 2 {
		if _, resp := f.s.Authenticate(bearer(k.Key)); resp != nil {
			t.Fatalf("request %d: %d %s", i+1, resp.Status, resp.Body)
		}
	}
	_, resp := f.s.Authenticate(bearer(k.Key))
	wantDenied(t, "the third request in the window", resp, ErrTooManyAPIKeyRequests)
	if resp.Header.Get("Retry-After") == "" || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("the 429's headers: %v", resp.Header)
	}
	if _, resp := f.s.Authenticate(bearer(other.Key)); resp != nil {
		t.Fatalf("another key of the account is limited: %s", resp.Body)
	}
	f.now = f.now.Add(time.Minute)
	if _, resp := f.s.Authenticate(bearer(k.Key)); resp != nil {
		t.Fatalf("after the window: %s", resp.Body)
	}
}

// TestAPIKeysEndWithTheAccountsWaysIn: a password reset, logout
// everywhere and the deletion of the account end every key.
func TestAPIKeysEndWithTheAccountsWaysIn(t *testing.T) {
	ctx := context.Background()
	keysOf := func(f *flow, u *user.User) int {
		t.Helper()
		ks, err := f.s.users.apiKeys.ListAPIKeys(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(ks)
	}
	t.Run("reset", func(t *testing.T) {
		f := apiKeyFlow(t, nil)
		b, u := f.register("ada@example.com", goodPW)
		k := f.mustCreateKey(b, APIKeyInput{Name: "a"})
		f.mustCreateKey(b, APIKeyInput{Name: "b"})
		tok, err := f.s.reset.CreateWith(u.ID, f.s.reset.Bind(u.Email, u.PasswordHash))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.do(newBrowser(), func(v *Visit) error {
			return f.s.ResetPassword(ctx, v, ResetPasswordInput{Token: tok, Password: "an uncommon new passphrase", ConfirmPassword: "an uncommon new passphrase"})
		}); err != nil {
			t.Fatal(err)
		}
		if n := keysOf(f, u); n != 0 {
			t.Fatalf("%d keys after the reset", n)
		}
		_, resp := f.s.Authenticate(bearer(k.Key))
		wantDenied(t, "a key after the reset", resp, ErrInvalidAPIKey)
		if e, ok := f.event(EventAPIKeyRevoked); !ok || e.Detail != "all:2" {
			t.Fatalf("event %+v, %v", e, ok)
		}
	})
	t.Run("logout everywhere", func(t *testing.T) {
		f := apiKeyFlow(t, nil)
		b, u := f.register("ada@example.com", goodPW)
		f.mustCreateKey(b, APIKeyInput{Name: "a"})
		if err := f.do(b, func(v *Visit) error { return f.s.LogoutEverywhere(ctx, v) }); err != nil {
			t.Fatal(err)
		}
		if n := keysOf(f, u); n != 0 {
			t.Fatalf("%d keys after logout everywhere", n)
		}
	})
	t.Run("deletion", func(t *testing.T) {
		f := apiKeyFlow(t, nil)
		b, u := f.register("ada@example.com", goodPW)
		k := f.mustCreateKey(b, APIKeyInput{Name: "a"})
		if err := f.do(b, func(v *Visit) error { return f.s.DeleteAccount(ctx, v, DeleteAccountInput{}) }); err != nil {
			t.Fatal(err)
		}
		if n := keysOf(f, u); n != 0 {
			t.Fatalf("%d keys after the deletion", n)
		}
		_, resp := f.s.Authenticate(bearer(k.Key))
		wantDenied(t, "a key of a deleted account", resp, ErrInvalidAPIKey)
	})
}

func TestRevokeAPIKey(t *testing.T) {
	f := apiKeyFlow(t, nil)
	ctx := context.Background()
	ada, _ := f.register("ada@example.com", goodPW)
	bob, _ := f.register("bob@example.com", goodPW)
	ka := f.mustCreateKey(ada, APIKeyInput{Name: "a"})
	for name, id := range map[string]string{"another user's key": ka.APIKey.ID, "no id": "", "a malformed id": "../x", "an unknown id": "0000000000000000"} {
		if err := f.do(bob, func(v *Visit) error { return f.s.RevokeAPIKey(ctx, v, id) }); !errors.Is(err, ErrAPIKeyNotFound) {
			t.Errorf("RevokeAPIKey of %s: %v, want ErrAPIKeyNotFound", name, err)
		}
	}
	if _, resp := f.s.Authenticate(bearer(ka.Key)); resp != nil {
		t.Fatal("another user's revoke ended the key")
	}
	// Racing revokes of one key: exactly one succeeds.
	const racers = 50
	errs := make([]error, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		v := f.visit(ada)
		wg.Go(func() {
			<-start
			errs[i] = f.s.RevokeAPIKey(ctx, v, ka.APIKey.ID)
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrAPIKeyNotFound):
			t.Fatalf("a racing revoke: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d racing revokes succeeded, want 1", won)
	}
	// Revoke all.
	f.mustCreateKey(ada, APIKeyInput{Name: "b"})
	f.mustCreateKey(ada, APIKeyInput{Name: "c"})
	var n int
	if err := f.do(ada, func(v *Visit) (err error) { n, err = f.s.RevokeAllAPIKeys(ctx, v); return err }); err != nil || n != 2 {
		t.Fatalf("RevokeAllAPIKeys = %d, %v; want 2", n, err)
	}
}

func TestAPIKeysOff(t *testing.T) {
	on := apiKeyFlow(t, nil)
	b, _ := on.register("ada@example.com", goodPW)
	k := on.mustCreateKey(b, APIKeyInput{Name: "a"})

	f := newFlow(t, func(c *Config) { c.Users = on.s.cfg.Users }) // the same store, keys off
	ctx := context.Background()
	v := f.s.Visit(jsonReq(`{}`))
	_, e1 := f.s.CreateAPIKey(ctx, v, APIKeyInput{Name: "x"})
	_, e2 := f.s.ListAPIKeys(ctx, v)
	e3 := f.s.RevokeAPIKey(ctx, v, "x")
	_, e4 := f.s.RevokeAllAPIKeys(ctx, v)
	for i, err := range []error{e1, e2, e3, e4} {
		if !errors.Is(err, ErrFeatureDisabled) {
			t.Errorf("method %d: %v, want ErrFeatureDisabled", i+1, err)
		}
	}
	_, resp := f.s.Authenticate(bearer(k.Key))
	wantDenied(t, "a key with API keys off", resp, ErrInvalidAPIKey)
	if f.s.HasAPIKeys() || !on.s.HasAPIKeys() {
		t.Fatal("HasAPIKeys does not follow Config.APIKeys.Enabled")
	}
	// A store without the part cannot turn them on.
	m := on.s.cfg.Users.(user.Store)
	_, err := newWith(t, func(c *Config) {
		c.Users = noTwoFactor{required{m, m, m}, m, m, m, m, m}
		c.Disable = []Feature{FeatureTwoFactor}
		c.APIKeys.Enabled = true
	})
	if err == nil || !strings.Contains(err.Error(), "user.APIKeys") {
		t.Fatalf("New with a store without user.APIKeys: %v", err)
	}
	// Scopes no client could send are refused at New.
	if _, err := newWith(t, func(c *Config) { c.APIKeys = APIKeysConfig{Enabled: true, Scopes: []string{"read all"}} }); err == nil {
		t.Fatal("New accepted a scope with a space")
	}
}

// TestAPIKeyRoutes: the JSON routes create (201 with the key once), list
// and revoke; bad input is a 400 with its code.
func TestAPIKeyRoutes(t *testing.T) {
	f := apiKeyFlow(t, nil)
	b, _ := f.register("ada@example.com", goodPW)
	route := func(method, pattern string) Route {
		for _, rt := range f.s.Modules().Routes() {
			if rt.Method == method && rt.Pattern == pattern {
				return rt
			}
		}
		t.Fatalf("no route %s %s", method, pattern)
		return Route{}
	}
	call := func(rt Route, body, id string) Response {
		r := &fakeRequest{method: rt.Method, remote: "192.0.2.7:4711", headers: map[string]string{"Content-Type": "application/json"},
			cookies: b.cookies, body: []byte(body), params: map[string]string{"id": id}}
		return f.s.Modules().Handle(rt, r)
	}
	create, list, del := route("POST", "/api/auth/api-keys"), route("GET", "/api/auth/api-keys"), route("DELETE", "/api/auth/api-keys/{id}")
	resp := call(create, `{"name":"ci","scopes":["read"],"expiresInDays":7}`, "")
	var created struct {
		APIKey map[string]any `json:"apiKey"`
		Key    string         `json:"key"`
	}
	if err := json.Unmarshal(resp.Body, &created); err != nil || resp.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.Status, resp.Body)
	}
	id, _ := created.APIKey["id"].(string)
	want := map[string]any{"id": id, "name": "ci", "prefix": "authkit_" + id, "scopes": []any{"read"},
		"createdAt": isoTime(f.now), "expiresAt": isoTime(f.now.Add(7 * 24 * time.Hour)), "lastUsedAt": nil}
	if len(created.APIKey) != len(want) {
		t.Fatalf("create: apiKey %v, want %v", created.APIKey, want)
	}
	for k, w := range want {
		if g := created.APIKey[k]; !jsonEqual(g, w) {
			t.Errorf("create: apiKey.%s = %v, want %v", k, g, w)
		}
	}
	if kid, _, ok := ParseAPIKey(created.Key); !ok || kid != id {
		t.Fatalf("create: key %q", created.Key)
	}
	for body, e := range map[string]*Error{
		`{"name":"x","scopes":["admin"]}`:     ErrUnknownScope,
		`{"name":"x","expiresInDays":0}`:      ErrInvalidExpiry,
		`{"name":"x","expiresInDays":366}`:    ErrInvalidExpiry,
		`{"name":"x","expiresInDays":"7"}`:    ErrWrongFieldType,
		`{"name":"x","expiresInDays":1.5}`:    ErrWrongFieldType,
		`{"name":"x","scopes":"read"}`:        ErrWrongFieldType,
		`{"scopes":["read"]}`:                 ErrNameRequired,
		`{"name":"x","expiresInDays":1e400}`:  ErrWrongFieldType,
		`{"name":"x","scopes":["read",null]}`: ErrWrongFieldType,
	} {
		resp := call(create, body, "")
		if resp.Status != e.Status || !strings.Contains(string(resp.Body), `"code":"`+string(e.Code)+`"`) {
			t.Errorf("create %s: %d %s, want %d %s", body, resp.Status, resp.Body, e.Status, e.Code)
		}
	}
	resp = call(list, "", "")
	var listed struct {
		APIKeys []map[string]any `json:"apiKeys"`
	}
	if err := json.Unmarshal(resp.Body, &listed); err != nil || resp.Status != 200 || len(listed.APIKeys) != 1 || listed.APIKeys[0]["id"] != id {
		t.Fatalf("list: %d %s", resp.Status, resp.Body)
	}
	if strings.Contains(string(resp.Body), created.Key[len(APIKeyPrefix)+apiKeyIDLen+1:]) {
		t.Fatal("the list shows the secret")
	}
	resp = call(del, "", id)
	if resp.Status != 200 || string(resp.Body) != `{"message":"API key revoked"}` {
		t.Fatalf("delete: %d %q", resp.Status, resp.Body)
	}
	resp = call(del, "", id)
	if resp.Status != 404 || !strings.Contains(string(resp.Body), `"code":"api_key_not_found"`) {
		t.Fatalf("delete again: %d %s", resp.Status, resp.Body)
	}
}

// jsonEqual compares a decoded JSON value with a wanted one.
func jsonEqual(got, want any) bool {
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	return string(g) == string(w)
}

// FuzzParseAPIKey checks the parser of the Authorization header's keys,
// which runs before any store read: it never panics, accepts only the
// exact shape (74 characters, the prefix, base62 id and secret, a matching
// checksum), and what it accepts formats back to the same key.
func FuzzParseAPIKey(f *testing.F) {
	good := formatAPIKey("AbCdEfGh01234567", strings.Repeat("z", apiKeySecretLen))
	for _, s := range []string{good, good[:len(good)-1], good + "0", "", APIKeyPrefix, "authkit__", strings.Repeat("authkit_", 10),
		"akat_" + good[8:], strings.ToUpper(good), good[:30] + "\x00" + good[31:], good[:30] + "é" + good[32:]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		id, secret, ok := ParseAPIKey(key)
		if !ok {
			if id != "" || secret != "" {
				t.Fatalf("a refused key gave %q, %q", id, secret)
			}
			return
		}
		if len(key) != 74 || !isAPIKeyID(id) || len(secret) != apiKeySecretLen || !isBase62(secret) || formatAPIKey(id, secret) != key {
			t.Fatalf("ParseAPIKey(%q) accepted %q, %q", key, id, secret)
		}
	})
}

// TestAPIKeysObserved: the store's API-key calls are reported to the
// Observer inside their flow, as every other part's.
func TestAPIKeysObserved(t *testing.T) {
	f, rec := observedFlow(t, nil)
	b, _ := f.register("ada@example.com", goodPW)
	rec.log = nil
	k := f.mustCreateKey(b, APIKeyInput{Name: "ci"})
	if !slices.Contains(rec.log, "store APIKeys.CreateAPIKey in api-keys/create: ok") {
		t.Fatalf("observed %q, want the create inside its flow", rec.log)
	}
	rec.log = nil
	f.s.Authenticate(bearer(k.Key))
	if !slices.ContainsFunc(rec.log, func(l string) bool { return strings.HasPrefix(l, "store APIKeys.APIKeyByID in ") }) {
		t.Fatalf("observed %q, want the key's lookup", rec.log)
	}
}

// The export lists a user's keys by name, scopes and times: never the
// key, its hash or its id.
func TestExportListsAPIKeys(t *testing.T) {
	f := apiKeyFlow(t, nil)
	b, _ := f.register("ada@example.com", goodPW)
	res := f.mustCreateKey(b, APIKeyInput{Name: "deploy script", Scopes: []string{"read"}})
	var ex AccountExport
	if err := f.do(b, func(v *Visit) (err error) { ex, err = f.s.ExportAccount(context.Background(), v); return err }); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	want := `"apiKeys":[{"name":"deploy script","scopes":["read"],"createdAt":"` + isoTime(res.APIKey.CreatedAt) + `","expiresAt":"` + isoTime(res.APIKey.ExpiresAt) + `","lastUsedAt":""}]`
	if !strings.Contains(string(js), want) {
		t.Errorf("export %s\nwant it to hold %s", js, want)
	}
	_, secret, _ := ParseAPIKey(res.Key)
	if strings.Contains(string(js), res.APIKey.ID) || strings.Contains(string(js), secret) {
		t.Errorf("the export holds the key's id or secret: %s", js)
	}
}
