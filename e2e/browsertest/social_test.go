package browsertest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/e2e/servertest"
)

// TestSocialSignIn: a person on the net/http example server's login page
// presses "Continue with Test Provider", signs in at a real OpenID
// provider (zitadel/oidc's op package, social/testdata/oidcprovider, run
// as a process) on its own login form, and comes back signed in: a new
// account for the provider's verified address, shown on the dashboard;
// signing out and in again this way reaches the same account. With
// JavaScript on and off, since every step is a link, a form post or a
// redirect.
func TestSocialSignIn(t *testing.T) {
	Chromium(t)
	for _, js := range []bool{true, false} {
		name := map[bool]string{true: "js", false: "nojs"}[js]
		t.Run(name, func(t *testing.T) {
			app := "http://" + freeAddr(t)
			issuer := startProvider(t, app+"/api/auth/oauth/test/callback")
			s := servertest.Start(t, "nethttp", "ADDR="+strings.TrimPrefix(app, "http://"), "APP_URL="+app,
				"DATABASE_URL=memory", "OAUTH_PROVIDERS=test", "OAUTH_TEST_CLIENT_ID=web", "OAUTH_TEST_CLIENT_SECRET=secret",
				"OAUTH_TEST_ISSUER="+issuer, "OAUTH_TEST_AUTHORITATIVE=example.com", "OAUTH_TEST_LABEL=Test Provider")
			if !strings.Contains(s.FirstLine, "social sign-in: test") {
				t.Fatalf("first log line %q: want social sign-in: test", s.FirstLine)
			}
			b := New(t, "social-"+name)
			b.DisableScripts(!js)
			for round := range 2 {
				b.Open(app + "/login")
				b.WaitPage("login", "/login")
				b.WaitFor("the provider's button", `[...document.querySelectorAll(".social a")].some(a => a.textContent.trim() === "Continue with Test Provider")`)
				if round == 0 {
					b.Shot("login")
					if js {
						b.AuditThemes("login with a provider's button")
					}
				}
				Eval[bool](b, `(() => { [...document.querySelectorAll(".social a")].find(a => a.textContent.trim() === "Continue with Test Provider").click(); return true })()`)
				b.WaitFor("the provider's login form", `location.href.startsWith(`+jsString(issuer)+`) && !!document.getElementById("username")`)
				b.Fill("username", "alice")
				b.Fill("password", "alice-pw")
				if round == 0 {
					b.Shot("provider")
				}
				Eval[bool](b, `(() => { document.querySelector("form button[type=submit]").click(); return true })()`)
				b.WaitPage("dashboard", "/dashboard")
				b.WaitText("user-email", "alice@example.com")
				b.Shot("dashboard")
				if round == 0 && js {
					b.AuditThemes("dashboard after a social sign-in")
				}
				b.Click("logout")
				b.WaitPage("login", "/login")
			}
		})
	}
}

// startProvider builds and runs the OpenID provider of the social
// module's tests for the client web:secret whose redirect URI is redirect,
// with one account, alice (alice@example.com, verified), and returns its
// issuer. It stops with the test.
func startProvider(t *testing.T, redirect string) string {
	t.Helper()
	bin := buildProvider(t)
	users := map[string]any{"sub-alice": map[string]any{"ID": "sub-alice", "Username": "alice", "Password": "alice-pw",
		"FirstName": "Alice", "LastName": "Liddell", "Email": "alice@example.com", "EmailVerified": true}}
	file := filepath.Join(t.TempDir(), "users.json")
	data, _ := json.Marshal(users)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-users", file, "-client", "web:secret", "-redirect", redirect)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the provider printed no issuer: %v", err)
	}
	return strings.TrimSpace(line)
}

var provider struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// buildProvider builds social/testdata/oidcprovider (a tool module outside
// go.work) once per test process.
func buildProvider(t *testing.T) string {
	t.Helper()
	provider.once.Do(func() {
		dir, err := os.MkdirTemp("", "oidcprovider")
		if err != nil {
			provider.err = err
			return
		}
		provider.bin = filepath.Join(dir, "oidcprovider")
		src := filepath.Join(filepath.Dir(servertest.ExampleDir(t, "nethttp")), "..", "social", "testdata", "oidcprovider")
		build := exec.Command("go", "build", "-o", provider.bin, ".")
		build.Dir = src
		build.Env = append(os.Environ(), "GOWORK=off")
		provider.out, provider.err = build.CombinedOutput()
	})
	if provider.err != nil {
		t.Fatalf("build the OpenID provider: %v\n%s", provider.err, provider.out)
	}
	return provider.bin
}
