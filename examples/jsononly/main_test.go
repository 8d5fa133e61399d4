package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
)

// TestMailedLinksPointAtTheFrontEnd: a registration's and a forgotten
// password's mails link to the front end's own URLs, which serve its page,
// and the tokens in them work against the JSON API.
func TestMailedLinksPointAtTheFrontEnd(t *testing.T) {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	mails := &mail.Capture{}
	svc, err := newService(auth.Config{Users: store.NewMemory(store.MemoryConfig{}), Keys: keys,
		Secrets: []string{strings.Repeat("s", 32)}, AppURL: "https://spa.example.com", Mailer: mails,
		Hasher: password.ForTesting(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	h, err := handler(svc, frontEnd{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	post := func(path, body string) (int, string) {
		t.Helper()
		res, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := post("/api/auth/register", `{"email":"ada@example.com","password":"correct horse","name":"Ada"}`); status != 200 {
		t.Fatalf("register: %d %s", status, body)
	}
	if status, body := post("/api/auth/forgot-password", `{"email":"ada@example.com"}`); status != 200 {
		t.Fatalf("forgot: %d %s", status, body)
	}
	if err := svc.FlushMail(context.Background()); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{}
	for _, m := range mails.Messages() {
		if l := regexp.MustCompile(`https://spa\.example\.com(/\S*/)([A-Za-z0-9_-]+)`).FindStringSubmatch(m.Text); l != nil {
			links[l[1]] = l[2]
		}
	}
	verify, reset := links["/app/verify-email/"], links["/app/reset-password/"]
	if verify == "" || reset == "" || len(links) != 2 {
		t.Fatalf("mailed links %v, want one to /app/verify-email/ and one to /app/reset-password/", links)
	}

	// The front end's page answers the link's path; no page of authkit's does.
	for path, want := range map[string]int{"/app/verify-email/" + verify: 200, "/app/reset-password/" + reset: 200, "/verify-email/" + verify: 404} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != want || (want == 200 && !strings.Contains(string(b), `<script src="/app/assets/app.js" defer></script>`)) {
			t.Errorf("GET %s: %d, want %d\n%s", path, res.StatusCode, want, b)
		}
	}
	// What the front end's script does with them.
	res, err := http.Get(srv.URL + "/api/auth/verify-email/" + verify)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(b) != `{"message":"Email verified"}` {
		t.Errorf("verify: %d %s", res.StatusCode, b)
	}
	if status, body := post("/api/auth/reset-password/"+reset, `{"password":"new password 1","confirmPassword":"new password 1"}`); status != 200 ||
		body != `{"message":"Password has been reset. You can now log in."}` {
		t.Errorf("reset: %d %s", status, body)
	}
	res, err = http.Get(srv.URL + "/app/assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("GET /app/assets/app.js: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

// TestFrontEndOnAnotherOrigin: with FRONTEND_ORIGINS the API answers CORS
// with credentials to exactly those origins (a preflight and the request
// itself), never to another, and trusts their posts; with API_URL the
// page names the API and may connect to it.
func TestFrontEndOnAnotherOrigin(t *testing.T) {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	const front = "https://app.example.com"
	svc, err := newService(auth.Config{Users: store.NewMemory(store.MemoryConfig{}), Keys: keys,
		Secrets: []string{strings.Repeat("s", 32)}, AppURL: front, Mailer: &mail.Capture{}, TrustedOrigins: []string{front},
		Hasher: password.ForTesting(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	h, err := handler(svc, frontEnd{apiURL: "https://api.example.com", origins: []string{front}})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, origin string, header ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(`{"email":"ada@example.com","password":"correct horse","name":"Ada"}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Origin", origin)
		r.Header.Set("Sec-Fetch-Site", "same-site")
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	pre := do(http.MethodOptions, "/api/auth/register", front, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	if pre.Code != http.StatusNoContent || pre.Header().Get("Access-Control-Allow-Origin") != front ||
		pre.Header().Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(strings.ToLower(pre.Header().Get("Access-Control-Allow-Headers")), "content-type") {
		t.Errorf("preflight from the front end: %d %v", pre.Code, pre.Header())
	}
	if got := do(http.MethodPost, "/api/auth/register", front); got.Code != http.StatusOK || got.Header().Get("Access-Control-Allow-Origin") != front ||
		got.Header().Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(got.Header().Get("Vary"), "Origin") {
		t.Errorf("register from the front end: %d %s %v", got.Code, got.Body, got.Header())
	}
	const evil = "https://evil.example.com"
	if pre := do(http.MethodOptions, "/api/auth/register", evil, "Access-Control-Request-Method", "POST"); pre.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from another origin allowed: %v", pre.Header())
	}
	if got := do(http.MethodPost, "/api/auth/register", evil); got.Code != http.StatusForbidden || !strings.Contains(got.Body.String(), `"code":"cross_origin_blocked"`) ||
		got.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("register from another origin: %d %s, want 403 cross_origin_blocked and no CORS answer", got.Code, got.Body)
	}
	page := do(http.MethodGet, "/app/", front)
	if !strings.Contains(page.Body.String(), `<meta name="authkit-api" content="https://api.example.com">`) ||
		!strings.Contains(page.Header().Get("Content-Security-Policy"), "connect-src 'self' https://api.example.com;") {
		t.Errorf("the page does not name the API or may not connect to it: %v\n%s", page.Header(), page.Body)
	}
}
