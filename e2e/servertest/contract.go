package servertest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/e2e/openapi"
)

// Need returns the URL of the named test server (AUTHKIT_TEST_POSTGRES,
// ...) from its variable, or at its usual local address when the variable
// is unset (storetest.ServiceURL); it skips the test, or fails it when
// AUTHKIT_REQUIRE_SERVICES=1, when there is none.
func Need(t *testing.T, name string) string {
	t.Helper()
	return storetest.ServiceURL(t, name)
}

// WaitFor polls the server's standard output (where the console mailer
// prints) until re matches, for up to 10 s, and returns the first
// submatch. The server sends mail asynchronously, hence the polling.
func (s *Server) WaitFor(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := re.FindStringSubmatch(s.Stdout()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("%s never appeared on the server's output:\n%s", re, s.Stdout())
	return ""
}

// CheckContract proves the runtime contract of an example server started
// on its defaults (ARCHITECTURE.md "Example servers"): the first log line says
// where it listens and on what; the liveness and readiness probes answer;
// the pages are served; unknown pages answer an HTML 404 page and unknown
// API paths JSON; the app's own GET /api/hello is behind RequireUser; the
// flows run with mail on the console; SIGTERM shuts it down cleanly.
func (s *Server) CheckContract(t *testing.T, framework string) {
	t.Helper()
	for _, want := range []string{"authkit example (" + framework + ") listening on http://127.0.0.1:", "users: sqlite ", "mail: console"} {
		if !strings.Contains(s.FirstLine, want) {
			t.Errorf("first log line %q lacks %q", s.FirstLine, want)
		}
	}
	s.CheckPages(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct{ method, path, body, want string }{
		{"GET", "/healthz", "", "200 {\"status\":\"ok\"}\n"},
		{"GET", "/readyz", "", "200 {\"status\":\"ready\"}\n"},
		{"GET", "/api/hello", "", `401 {"error":"Not authenticated","code":"not_authenticated"}`},
		{"GET", "/api/nope", "", `404 {"error":"Not found","code":"not_found"}`},
		{"POST", "/api/auth/register", `{"email":"ada@example.com","password":"correct horse","name":"Ada"}`,
			`200 {"message":"Registration successful. Check your email to verify your address."}`},
		{"GET", "/api/hello", "", "200 Hello, Ada\n"},
	} {
		status, body := do(tc.method, tc.path, tc.body)
		if got := fmt.Sprintf("%d %s", status, body); got != tc.want {
			t.Fatalf("%s %s: %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
	// The pages' forms work without a script on every framework: a login
	// posted as a form answers 303 with the session cookie, and the
	// dashboard then shows the account.
	pjar, _ := cookiejar.New(nil)
	pc := &http.Client{Jar: pjar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := pc.PostForm(s.URL+"/login", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard" ||
		!strings.Contains(resp.Header.Get("Set-Cookie"), "authkit_session=") {
		t.Fatalf("POST /login (form): %d to %q, Set-Cookie %q", resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Set-Cookie"))
	}
	resp, err = pc.Get(s.URL + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), `<dd id="user-email">ada@example.com</dd>`) {
		t.Fatalf("GET /dashboard after the form login: %d\n%s", resp.StatusCode, page)
	}
	// An unknown page is an HTML page in the layout, linking home; an
	// unknown API path stays JSON (above).
	for _, path := range []string{"/nope", "/settings/nope", "/verify-email/a/b"} {
		resp, err := c.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
			!strings.Contains(string(b), "<title>Page not found · authkit</title>") || !strings.Contains(string(b), `href="/dashboard"`) {
			t.Errorf("GET %s: %d %q\n%s", path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
	tok := s.WaitFor(t, regexp.MustCompile(`http://localhost:8080/verify-email/([A-Za-z0-9_-]+)`))
	if status, body := do("GET", "/api/auth/verify-email/"+tok, ""); status != 200 || body != `{"message":"Email verified"}` {
		t.Fatalf("verify: %d %s", status, body)
	}
	// The OpenAPI document of the routes this server registers, passkeys'
	// included, valid OpenAPI 3.1 (e2e/openapi checks every answer against
	// it).
	status, doc := do("GET", "/api/openapi.json", "")
	if status != 200 || !strings.Contains(doc, `"/api/passkeys/login/begin"`) || !strings.Contains(doc, `"/api/auth/login"`) {
		t.Fatalf("GET /api/openapi.json: %d %.200s", status, doc)
	}
	if _, err := openapi.New([]byte(doc)); err != nil {
		t.Fatalf("GET /api/openapi.json: %v", err)
	}
	if err := s.Stop(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}
