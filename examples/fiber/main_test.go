package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/examples/internal/servertest"
)

// TestServer runs the real binary: it starts on its defaults, says where it
// listens and on what, serves the flows with mail on the console, protects
// the app's own route, answers unknown paths in JSON, and shuts down
// cleanly on SIGTERM.
func TestServer(t *testing.T) {
	s := servertest.Start(t, ".")
	s.CheckPages(t)
	for _, want := range []string{"authkit example (fiber) listening on http://127.0.0.1:", "users: sqlite ", "mail: console"} {
		if !strings.Contains(s.FirstLine, want) {
			t.Errorf("first log line %q lacks %q", s.FirstLine, want)
		}
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	post := func(path, body string) *http.Response {
		resp, err := c.Post(s.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	get := func(path string) (*http.Response, string) {
		resp, err := c.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(body)
	}
	if resp, body := get("/api/hello"); resp.StatusCode != 401 || body != `{"error":"Not authenticated"}` {
		t.Fatalf("/api/hello without a session: %d %s", resp.StatusCode, body)
	}
	if resp, body := get("/nope"); resp.StatusCode != 404 || body != `{"error":"Not found"}` {
		t.Errorf("unknown path: %d %s, want 404 JSON", resp.StatusCode, body)
	}
	if r := post("/api/auth/register", `{"email":"ada@example.com","password":"correct horse","name":"Ada"}`); r.StatusCode != 200 {
		t.Fatalf("register: %d", r.StatusCode)
	}
	if resp, body := get("/api/hello"); resp.StatusCode != 200 || body != "Hello, Ada\n" {
		t.Errorf("/api/hello after register: %d %q, want 200 %q", resp.StatusCode, body, "Hello, Ada\n")
	}

	// The console mailer printed the verification link; follow it.
	link := regexp.MustCompile(`http://localhost:8080/verify-email/([A-Za-z0-9_-]+)`)
	var tok string
	for range 100 {
		if m := link.FindStringSubmatch(s.Stdout()); m != nil {
			tok = m[1]
			break
		}
		time.Sleep(50 * time.Millisecond) // the server process mails asynchronously
	}
	if tok == "" {
		t.Fatalf("no verification link on stdout:\n%s", s.Stdout())
	}
	if resp, body := get("/api/auth/verify-email/" + tok); resp.StatusCode != 200 {
		t.Fatalf("verify: %d %s", resp.StatusCode, body)
	}
	if err := s.Stop(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}
