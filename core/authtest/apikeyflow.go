package authtest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/user"
)

// Personal API keys (auth.Config.APIKeys, off by default): the routes
// under /api/auth/api-keys create (201, the key shown once), list and
// revoke a signed-in user's keys; a key sent as Authorization: Bearer
// authenticates the app's own routes (here /api/app/whoami, which calls
// Service.AuthorizeScope as RequireScope does), never authkit's.

const (
	apiKeysPath   = "/api/auth/api-keys"
	appWhoamiPath = "/api/app/whoami"
	msgKeyRevoked = "API key revoked"
)

// apiKeysWhereStored switches API keys on (scopes read and write, three
// keys per user) where the store can hold them.
func apiKeysWhereStored(c *auth.Config) {
	if _, ok := c.Users.(user.APIKeys); ok {
		c.APIKeys = auth.APIKeysConfig{Enabled: true, Scopes: []string{"read", "write"}, MaxPerUser: 3}
	}
}

// whoamiRoute is the app's route behind a key with the scope "read": it
// answers who the request is from and how it authenticated.
func whoamiRoute(svc *auth.Service) []auth.Route {
	return []auth.Route{auth.NewRoute(http.MethodGet, appWhoamiPath, func(ctx context.Context, v *auth.Visit, r auth.Request) (any, error) {
		u, c, deny := svc.AuthorizeScope(r, "read")
		if deny != nil {
			return nil, answerError(deny)
		}
		return map[string]any{"email": u.Email, "kind": string(c.Kind), "id": c.ID}, nil
	}, auth.Operation{ID: "appWhoami", Summary: "the flow suite's app: who a session or an API key with the scope read is",
		OK: map[string]any{"type": "object", "additionalProperties": false, "required": []string{"email", "kind", "id"},
			"properties": map[string]any{"email": map[string]any{"type": "string"}, "kind": map[string]any{"type": "string"}, "id": map[string]any{"type": "string"}}},
		Errors: []*auth.Error{auth.ErrNotAuthenticated, auth.ErrInvalidAPIKey, auth.ErrInsufficientScope}})}
}

// answerError is the *auth.Error of an answer core rendered.
func answerError(resp *auth.Response) error {
	var body struct{ Code string }
	_ = json.Unmarshal(resp.Body, &body)
	for _, e := range auth.Codes() {
		if string(e.Code) == body.Code && e.Status == resp.Status {
			return &e
		}
	}
	return auth.ErrInternal
}

// keyEnv is an env with API keys on and the app's whoami route; it skips
// the test when the harness's user store does not implement user.APIKeys.
func (s suite) keyEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	e := s.envWithRoutes(t, whoamiRoute, append([]option{apiKeysWhereStored}, opts...)...)
	if _, ok := e.users.(user.APIKeys); !ok {
		t.Skipf("authtest: the user store (%T) does not implement user.APIKeys", e.users)
	}
	return e
}

// createKey creates a key on c and returns the key and its id.
func createKey(t *testing.T, c *client, body obj) (key, id string) {
	t.Helper()
	r := c.post(apiKeysPath, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("%s: status %d, want 201", r, r.Status)
	}
	k, _ := r.JSON["apiKey"].(map[string]any)
	id, _ = k["id"].(string)
	return r.str("key"), id
}

// withKey is a request of an API client: no cookies, the key as bearer.
func (e *env) withKey(key, path string) *reply {
	return e.client().get(path, "Authorization", "Bearer "+key)
}

func (s suite) apiKeysOffByDefault(t *testing.T) {
	e := s.env(t)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	for _, r := range []*reply{c.post(apiKeysPath, obj{"name": "ci"}), c.get(apiKeysPath)} {
		mustStatus(t, r, http.StatusNotFound, "Not found")
	}
	if n := len(e.mails(t, "ada@example.com", mail.KindAPIKeyCreated)); n != 0 {
		t.Errorf("%d key notices with API keys off", n)
	}
}

func (s suite) apiKeyLifecycle(t *testing.T) {
	e := s.keyEnv(t)
	c := e.client()
	u := e.signup(t, c, "ada@example.com")
	r := c.post(apiKeysPath, obj{"name": "ci", "scopes": []string{"read"}, "expiresInDays": 7})
	if r.Status != http.StatusCreated || len(r.JSON) != 2 {
		t.Fatalf("%s: want 201 {apiKey, key}", r)
	}
	key := r.str("key")
	id, secret, ok := auth.ParseAPIKey(key)
	if !ok {
		t.Fatalf("%s: the key does not parse", r)
	}
	now := e.clock.Now()
	want := map[string]any{"id": id, "name": "ci", "prefix": "authkit_" + id, "scopes": []any{"read"},
		"createdAt": iso(now), "expiresAt": iso(now.Add(7 * 24 * time.Hour)), "lastUsedAt": nil}
	got, _ := json.Marshal(r.JSON["apiKey"])
	if w, _ := json.Marshal(want); string(got) != string(w) {
		t.Errorf("%s: apiKey %s, want %s", r, got, w)
	}
	if m := e.lastMail(t, "ada@example.com", mail.KindAPIKeyCreated); strings.Contains(m.Text, secret) || !strings.Contains(m.Text, `"ci"`) {
		t.Errorf("the notice %q shows the secret or lacks the key's name", m.Text)
	}

	// The key authenticates the app's route, with its credential.
	mustBody(t, e.withKey(key, appWhoamiPath), obj{"email": "ada@example.com", "kind": "api_key", "id": id})
	mustBody(t, c.get(appWhoamiPath), obj{"email": "ada@example.com", "kind": "session", "id": ""})
	mustStatus(t, e.client().get(appWhoamiPath), http.StatusUnauthorized, errNotAuthenticated)
	// Never authkit's own routes: no account, no more keys.
	mustStatus(t, e.withKey(key, "/api/auth/me"), http.StatusUnauthorized, errNotAuthenticated)
	keyOnly := e.client()
	mustStatus(t, keyOnly.post(apiKeysPath, obj{"name": "more"}, "Authorization", "Bearer "+key), http.StatusUnauthorized, errNotAuthenticated)
	// A key with one character changed, and a key of another scope.
	typo := []byte(key)
	typo[len(typo)-8] ^= 1
	mustStatus(t, e.withKey(string(typo), appWhoamiPath), http.StatusUnauthorized, auth.ErrInvalidAPIKey.Message)
	writer, _ := createKey(t, c, obj{"name": "writer", "scopes": []string{"write"}})
	mustStatus(t, e.withKey(writer, appWhoamiPath), http.StatusForbidden, auth.ErrInsufficientScope.Message)

	list := c.get(apiKeysPath)
	keys, _ := list.JSON["apiKeys"].([]any)
	if list.Status != http.StatusOK || len(keys) != 2 || strings.Contains(list.Body, secret) {
		t.Fatalf("%s: want the two keys, never a secret", list)
	}
	if k, _ := keys[0].(map[string]any); k["lastUsedAt"] != iso(now) {
		t.Errorf("%s: the used key's lastUsedAt is %v, want %s", list, k["lastUsedAt"], iso(now))
	}
	mustMessage(t, c.do(http.MethodDelete, apiKeysPath+"/"+id, "", nil), msgKeyRevoked)
	mustStatus(t, e.withKey(key, appWhoamiPath), http.StatusUnauthorized, auth.ErrInvalidAPIKey.Message)
	mustStatus(t, c.do(http.MethodDelete, apiKeysPath+"/"+id, "", nil), http.StatusNotFound, auth.ErrAPIKeyNotFound.Message)
	// Another user cannot see or revoke ada's keys.
	bob := e.client()
	e.signup(t, bob, "bob@example.com")
	_, writerID, _ := auth.ParseAPIKey(writer)
	mustStatus(t, bob.do(http.MethodDelete, apiKeysPath+"/"+writerID, "", nil), http.StatusNotFound, auth.ErrAPIKeyNotFound.Message)
	mustBody(t, bob.get(apiKeysPath), obj{"apiKeys": []any{}})
	if n := e.audit.Count(auth.EventAPIKeyCreated, u.ID); n != 2 {
		t.Errorf("%d api_key_created events, want 2", n)
	}
	mustStatus(t, e.client().get(apiKeysPath), http.StatusUnauthorized, errNotAuthenticated)
}

// apiKeyBadInput: every refused create answers its code and stores and
// mails nothing; the bound is per user.
func (s suite) apiKeyBadInput(t *testing.T) {
	e := s.keyEnv(t)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	for _, tc := range []struct {
		body obj
		e    *auth.Error
	}{
		{obj{"name": " "}, auth.ErrNameRequired},
		{obj{"name": strings.Repeat("n", auth.MaxAPIKeyName+1)}, auth.ErrNameTooLong},
		{obj{"name": "ci", "scopes": []string{"admin"}}, auth.ErrUnknownScope},
		{obj{"name": "ci", "expiresInDays": 0}, auth.ErrInvalidExpiry},
		{obj{"name": "ci", "expiresInDays": 366}, auth.ErrInvalidExpiry},
	} {
		mustStatus(t, c.post(apiKeysPath, tc.body), tc.e.Status, tc.e.Message)
	}
	r := c.post(apiKeysPath, obj{"name": "ci", "expiresInDays": "7"})
	if r.Status != http.StatusBadRequest || r.str("code") != string(auth.ErrWrongFieldType.Code) {
		t.Errorf("%s: want 400 wrong_field_type", r)
	}
	mustBody(t, c.get(apiKeysPath), obj{"apiKeys": []any{}})
	if n := len(e.mails(t, "ada@example.com", mail.KindAPIKeyCreated)); n != 0 {
		t.Errorf("%d notices after refused creates", n)
	}
	for i := range 3 {
		createKey(t, c, obj{"name": "k" + string(rune('a'+i))})
	}
	mustStatus(t, c.post(apiKeysPath, obj{"name": "fourth"}), http.StatusBadRequest, auth.ErrTooManyAPIKeys.Message)
	// An old sign-in re-authenticates first.
	e.clock.Advance(auth.DefaultReauthWindow + time.Second)
	mustStatus(t, c.post(apiKeysPath, obj{"name": "late"}), http.StatusForbidden, "Please confirm your password to continue")
}

// apiKeysEndWithReset: a password reset ends every key of the account.
func (s suite) apiKeysEndWithReset(t *testing.T) {
	e := s.keyEnv(t, relaxed)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	key, _ := createKey(t, c, obj{"name": "ci", "scopes": []string{"read"}})
	mustBody(t, e.withKey(key, appWhoamiPath), obj{"email": "ada@example.com", "kind": "api_key", "id": key[8:24]})
	tok := e.resetToken(t, "ada@example.com")
	mustMessage(t, e.client().post(resetPath(tok), resetBody("a brand new passphrase")), msgPasswordReset)
	mustStatus(t, e.withKey(key, appWhoamiPath), http.StatusUnauthorized, auth.ErrInvalidAPIKey.Message)
	if ks, err := e.users.(user.APIKeys).ListAPIKeys(e.ctx(), e.user(t, "ada@example.com").ID); err != nil || len(ks) != 0 {
		t.Errorf("store: %d keys after the reset (%v), want none", len(ks), err)
	}
}

// raceAPIKeys: 50 creates at the bound, exactly the bound succeed; 50
// revokes of one key, exactly one succeeds.
func (s suite) raceAPIKeys(t *testing.T) {
	e := s.keyEnv(t)
	c := e.client()
	e.signup(t, c, "ada@example.com")
	session := c.cookie(sessionCookie).Value
	bs := e.cookieCopies(stormSize, sessionCookie, session)
	rs := storm(t, stormSize, func(i int) (*reply, error) { return bs[i].send(apiKeysPath, obj{"name": "racer"}) })
	if created := countWins(t, rs, http.StatusCreated, http.StatusBadRequest, auth.ErrTooManyAPIKeys.Message); created != 3 {
		t.Fatalf("%d of %d racing creates succeeded, want 3 (MaxPerUser)", created, stormSize)
	}
	list := c.get(apiKeysPath)
	keys, _ := list.JSON["apiKeys"].([]any)
	k, _ := keys[0].(map[string]any)
	id, _ := k["id"].(string)
	rs = storm(t, stormSize, func(i int) (*reply, error) {
		return bs[i].try(http.MethodDelete, apiKeysPath+"/"+id, "", nil)
	})
	if revoked := countWins(t, rs, http.StatusOK, http.StatusNotFound, auth.ErrAPIKeyNotFound.Message); revoked != 1 {
		t.Errorf("%d of %d racing revokes of one key succeeded, want 1", revoked, stormSize)
	}
}

// iso is a time as the routes write it.
func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
