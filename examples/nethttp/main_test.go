package main

import (
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
// the app's own route, and shuts down cleanly on SIGTERM.
func TestServer(t *testing.T) {
	s := servertest.Start(t, ".")
	s.CheckPages(t)
	for _, want := range []string{"authkit example (net/http) listening on http://127.0.0.1:", "users: sqlite ", "mail: console"} {
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
	if resp, _ := c.Get(s.URL + "/api/hello"); resp.StatusCode != 401 {
		t.Fatalf("/api/hello without a session: %d", resp.StatusCode)
	}
	if r := post("/api/auth/register", `{"email":"ada@example.com","password":"correct horse","name":"Ada"}`); r.StatusCode != 200 {
		t.Fatalf("register: %d", r.StatusCode)
	}
	resp, err := c.Get(s.URL + "/api/hello")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/api/hello after register: %v %v", resp, err)
	}
	resp.Body.Close()

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
	resp, err = c.Get(s.URL + "/api/auth/verify-email/" + tok)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("verify: %v %v", resp, err)
	}
	if err := s.Stop(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}
