package authtest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
)

// APIKeys is an option of NewService that turns personal API keys on
// (auth.Config.APIKeys) with the scopes "read" and "write", for
// CheckAPIKeys.
func APIKeys(cfg *auth.Config) {
	cfg.APIKeys = auth.APIKeysConfig{Enabled: true, Scopes: []string{"read", "write"}}
}

// Credential describes what a framework module's middleware put on ctx,
// for the handlers of CheckAPIKeys to answer: the user's email, the
// credential's kind and its scopes ("*" for every scope), separated by
// spaces; "none" when either is missing.
func Credential(ctx context.Context) string {
	u, okU := auth.UserFromContext(ctx)
	c, okC := auth.CredentialFromContext(ctx)
	if !okU || !okC {
		return "none"
	}
	scopes := strings.Join(c.Scopes, ",")
	if c.All {
		scopes = "*"
	}
	return u.Email + " " + string(c.Kind) + " " + scopes
}

// CheckAPIKeys checks a framework module's RequireUser and RequireScope
// with personal API keys. base serves the module's authkit routes of a
// Service made with the APIKeys option; at base+userPath a GET handler
// behind RequireUser, and at base+writePath one behind RequireScope(svc,
// "write"), each answering Credential of its request's context.
//
// ada@example.com registers and creates a key with the scope "read". A
// client without cookies sending it as Authorization: Bearer gets 200
// "ada@example.com api_key read" at userPath, and 403 insufficient_scope
// at writePath; the key with one character changed, and the key once
// revoked, get 401 invalid_api_key at both; no key at all 401
// not_authenticated. The signed-in browser (a session has every scope)
// gets 200 "ada@example.com session *" at writePath.
func CheckAPIKeys(t testing.TB, base, userPath, writePath string) {
	t.Helper()
	b := Browser(t)
	if r := Send(t, b, http.MethodPost, base+"/api/auth/register", unitRegister); r.Status != http.StatusOK {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	r := Send(t, b, http.MethodPost, base+"/api/auth/api-keys", `{"name":"script","scopes":["read"]}`)
	var created struct {
		APIKey struct{ ID string } `json:"apiKey"`
		Key    string              `json:"key"`
	}
	if r.Status != http.StatusCreated || json.Unmarshal([]byte(r.Body), &created) != nil || !strings.HasPrefix(created.Key, auth.APIKeyPrefix) {
		t.Fatalf("create a key: %s", r)
	}
	api := &http.Client{} // no cookies: the key alone
	withKey := func(key, path string) Reply {
		return Send(t, api, http.MethodGet, base+path, "", "Authorization", "Bearer "+key)
	}
	if r, want := withKey(created.Key, userPath), unitEmail+" api_key read"; r.Status != http.StatusOK || r.Body != want {
		t.Errorf("RequireUser with a key: got %s, want 200 %q", r, want)
	}
	wantAPIError(t, "RequireScope(write) with a read key", withKey(created.Key, writePath), auth.ErrInsufficientScope)
	typo := []byte(created.Key)
	typo[len(typo)-10] ^= 1
	for _, p := range []string{userPath, writePath} {
		wantAPIError(t, "a mistyped key at "+p, withKey(string(typo), p), auth.ErrInvalidAPIKey)
		wantAPIError(t, "no key at "+p, Send(t, api, http.MethodGet, base+p, ""), auth.ErrNotAuthenticated)
	}
	if r, want := Send(t, b, http.MethodGet, base+writePath, ""), unitEmail+" session *"; r.Status != http.StatusOK || r.Body != want {
		t.Errorf("RequireScope(write) with a session: got %s, want 200 %q", r, want)
	}
	if r := Send(t, b, http.MethodDelete, base+"/api/auth/api-keys/"+created.APIKey.ID, ""); r.Status != http.StatusOK {
		t.Fatalf("revoke: %s", r)
	}
	wantAPIError(t, "a revoked key", withKey(created.Key, userPath), auth.ErrInvalidAPIKey)
}

// wantAPIError checks that r is e's answer: its status, text and code.
func wantAPIError(t testing.TB, what string, r Reply, e *auth.Error) {
	t.Helper()
	var body struct{ Error, Code string }
	if r.Status != e.Status || json.Unmarshal([]byte(r.Body), &body) != nil || body.Code != string(e.Code) || body.Error != e.Message {
		t.Errorf("%s: got %s, want %d %s %q", what, r, e.Status, e.Code, e.Message)
	}
}
