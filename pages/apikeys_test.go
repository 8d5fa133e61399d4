package pages

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
)

func withAPIKeys(a *auth.Config, _ *Config) {
	a.APIKeys = auth.APIKeysConfig{Enabled: true, Scopes: []string{"read", "write"}}
}

// TestAPIKeysSection: with API keys on, the security page lists the
// user's keys, creates one (shown once, on the answer to the post), and
// revokes one, all without script; bad input is shown beside its field.
func TestAPIKeysSection(t *testing.T) {
	e := setup(t, withAPIKeys)
	b := e.registered()
	p := b.get("/settings/security")
	p.wantPage(t, http.StatusOK, "security")
	for _, want := range []string{`<section id="apikeys"`, `id="no-api-keys"`, `<input type="checkbox" name="scope" value="read">`,
		`<option value="30" selected>30 days</option>`, `<option value="365">365 days</option>`} {
		if !strings.Contains(p.Body, want) {
			t.Fatalf("the security page lacks %s\n%s", want, p.Body)
		}
	}

	// A name is required; nothing is created.
	p = b.post("/settings/api-keys/create", form("name", " ", "expiresInDays", "30"))
	p.wantPage(t, http.StatusBadRequest, "security")
	p.wantFieldError(t, "api-key-name", "Name is required")
	p = b.post("/settings/api-keys/create", url.Values{"name": {"deploy"}, "scope": {"admin"}})
	p.wantPage(t, http.StatusBadRequest, "security")
	p.wantSummary(t, "Unknown scope")
	if strings.Contains(p.Body, `id="api-key-list"`) {
		t.Fatal("a refused create listed a key")
	}

	p = b.post("/settings/api-keys/create", url.Values{"name": {"deploy"}, "scope": {"write", "read"}, "expiresInDays": {"7"}})
	p.wantPage(t, http.StatusOK, "security")
	key := p.text(t, "new-api-key-value")
	if _, _, ok := auth.ParseAPIKey(key); !ok {
		t.Fatalf("the page shows %q, not a key", key)
	}
	if _, resp := e.svc.Authenticate(bearerRequest(key)); resp != nil {
		t.Fatalf("the shown key does not authenticate: %s", resp.Body)
	}
	if !strings.Contains(p.Body, "<strong id=\"api-key-0\">deploy</strong>") || !strings.Contains(p.Body, "scopes: read, write") {
		t.Fatalf("the new key is not listed\n%s", p.Body)
	}
	e.flushMail()
	if m, ok := e.mail.Last(); !ok || m.Kind != mail.KindAPIKeyCreated || strings.Contains(m.Text, key) {
		t.Fatalf("the last mail is %+v, want the notice without the key", m)
	}
	// Shown once: the page's next view has the key's prefix, not the key.
	p = b.get("/settings/security")
	if strings.Contains(p.Body, key) || strings.Contains(p.Body, `id="new-api-key"`) {
		t.Fatal("the key is shown again")
	}
	id := regexp.MustCompile(`name="key" value="([^"]+)"`).FindStringSubmatch(p.Body)
	if id == nil || !strings.Contains(p.Body, "authkit_"+id[1]) {
		t.Fatalf("no revoke button\n%s", p.Body)
	}

	// After an old sign-in, creating asks for the password first.
	e.clock.Advance(16 * time.Minute)
	b.post("/settings/api-keys/create", form("name", "late")).wantRedirect(t, "/settings/confirm-password?next=api-keys")

	b.post("/settings/api-keys/revoke", form("key", id[1])).wantRedirect(t, "/settings/security?done=api-key-revoked#apikeys")
	if _, resp := e.svc.Authenticate(bearerRequest(key)); resp == nil {
		t.Fatal("a revoked key authenticates")
	}
	p = b.get("/settings/security?done=api-key-revoked")
	if !strings.Contains(p.Body, `id="no-api-keys"`) || !strings.Contains(p.Body, "The API key is revoked.") {
		t.Fatalf("after the revoke\n%s", p.Body)
	}
	p = b.post("/settings/api-keys/revoke", form("key", id[1]))
	p.wantPage(t, http.StatusNotFound, "security")
	p.wantSummary(t, "API key not found")
}

// TestAPIKeysOffNoSection: without API keys the section and its routes
// are not there.
func TestAPIKeysOffNoSection(t *testing.T) {
	e := setup(t, nil)
	b := e.registered()
	if p := b.get("/settings/security"); strings.Contains(p.Body, `id="apikeys"`) {
		t.Error("the security page has an API-key section with API keys off")
	}
	b.post("/settings/api-keys/create", form("name", "x")).wantPage(t, http.StatusNotFound, "notfound")
}

// bearerRequest is a request of an API client sending key.
func bearerRequest(key string) auth.Request {
	r := httptest.NewRequest(http.MethodGet, "/api", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	return auth.HTTPRequest(r, nil)
}
