package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/mod/module"
)

// TestQuickstart is the quick-start a Go user follows, outside the
// repository: install the CLI with go install, make the secrets with it,
// then for each framework a new module holding the README's program, its
// authkit modules resolved by version through a module proxy made from
// this repository (no replace, no workspace), built and run. The flows are
// then driven over HTTP: the protected route refuses a stranger, register,
// the verification mail (printed by the default console mailer), the
// protected route, logout, login, forgot and reset password.
func TestQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three apps and the CLI: not with -short")
	}
	root, mods, err := load()
	if err != nil {
		t.Fatal(err)
	}
	version, err := releaseVersion(mods)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	if err := buildProxy(root, proxy, version, mods); err != nil {
		t.Fatal(err)
	}
	env, err := goEnv(proxy, filepath.Join(tmp, "modcache"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "bin")
	env = append(env, "GOBIN="+bin)

	// The CLI, with the README's own go install command, from outside any
	// module; the binary must be the release built from this repository.
	cli := quickstartInstall(t, readme, mods)
	goRun(t, tmp, env, "install", cli.Path+"@"+cli.Version)
	info := execute(t, tmp, env, "go", "version", "-m", filepath.Join(bin, "authkit"))
	built := regexp.MustCompile(`(?m)^\s+mod\s+` + regexp.QuoteMeta(cli.Path) + `\s+` + regexp.QuoteMeta(version) + `\s`)
	if !built.Match(info) {
		t.Fatalf("go install %s@%s did not build %s %s:\n%s", cli.Path, cli.Version, cli.Path, version, info)
	}
	secret := strings.TrimSpace(string(execute(t, tmp, nil, filepath.Join(bin, "authkit"), "session-secret")))
	key := strings.TrimSpace(string(execute(t, tmp, nil, filepath.Join(bin, "authkit"), "encryption-key")))
	if len(secret) < 32 || !strings.HasPrefix(key, "ak1_") {
		t.Fatalf("authkit session-secret %q, encryption-key %q: not a secret and a key", secret, key)
	}

	for _, fw := range []struct{ name, module string }{
		{"nethttp", "nethttpauth"},
		{"gin", "ginauth"},
		{"fiber", "fiberauth"},
	} {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel()
			src := quickstartProgram(t, readme, fw.name)
			dir := filepath.Join(tmp, "app-"+fw.name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
				t.Fatal(err)
			}
			goRun(t, dir, env, "mod", "init", "example.com/quickstart/"+fw.name)
			goRun(t, dir, env, "get", repoPath+"/"+fw.module+"@"+version)
			goRun(t, dir, env, "mod", "tidy")
			checkAppGoMod(t, dir, version)
			goRun(t, dir, env, "build", "-o", "app", ".")

			base, out := startApp(t, filepath.Join(dir, "app"), secret, key)
			driveFlows(t, base, out)
		})
	}
}

// checkPages: the program's one line of pages serves the login page, and
// its form posts to the page route, which refuses a wrong password with
// the page again (401), the error beside the field.
func checkPages(t *testing.T, base string) {
	t.Helper()
	resp, err := http.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), `<form id="login-form" method="post" action="/login">`) {
		t.Fatalf("GET /login: %d, want the login page\n%s", resp.StatusCode, page)
	}
	resp, err = http.PostForm(base+"/login", map[string][]string{"email": {"nobody@example.com"}, "password": {"wrong password"}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(page), `<p class="field-error" id="password-error">Invalid credentials</p>`) {
		t.Fatalf("POST /login (form): %d, want 401 and the error beside the password\n%s", resp.StatusCode, page)
	}
}

// quickstartProgram returns the Go program that follows the marker
// "<!-- quickstart:NAME -->" in the README.
func quickstartProgram(t *testing.T, readme []byte, name string) []byte {
	t.Helper()
	re := regexp.MustCompile("(?s)<!-- quickstart:" + regexp.QuoteMeta(name) + " -->\\s*```go\n(.*?)```")
	m := re.FindSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md has no Go program after <!-- quickstart:%s -->", name)
	}
	return m[1]
}

// quickstartInstall returns the package and version of the README's first
// "go install github.com/authkit-go/authkit/...@version" line, which must
// name an installable module of the repository (the version may be a
// query such as "latest", answered by the proxy).
func quickstartInstall(t *testing.T, readme []byte, mods []Module) module.Version {
	t.Helper()
	m := regexp.MustCompile(`(?m)^go install (` + regexp.QuoteMeta(repoPath) + `/\S+)@(\S+)`).FindSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md has no line \"go install %s/...@version\"", repoPath)
	}
	for _, mod := range mods {
		if mod.Installable() && mod.Path == string(m[1]) {
			return module.Version{Path: string(m[1]), Version: string(m[2])}
		}
	}
	t.Fatalf("README.md installs %s, which is not an installable module of the repository (%v)", m[1], installable)
	return module.Version{}
}

// checkAppGoMod: the app requires authkit by version, and nothing stands
// in for a published module.
func checkAppGoMod(t *testing.T, dir, version string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if strings.Contains(s, "replace") {
		t.Fatalf("the app's go.mod has a replace directive:\n%s", s)
	}
	if !strings.Contains(s, repoPath+"/core "+version) {
		t.Fatalf("the app's go.mod does not require %s/core %s:\n%s", repoPath, version, s)
	}
}

func goRun(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	execute(t, dir, env, "go", args...)
}

func execute(t *testing.T, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

// output is a process's standard output and error, safe to read while
// the process writes.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// startApp runs the app on a free loopback port and returns its base URL
// once it answers; the app is stopped with SIGTERM when t ends.
func startApp(t *testing.T, bin, secret, key string) (string, *output) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	out := &output{}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "ADDR="+addr, "SESSION_SECRET="+secret, "ENCRYPTION_KEY="+key)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("app output:\n%s", out)
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return base, out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the app did not listen on %s: %v\n%s", addr, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// client plays a browser against one app: it keeps the cookies the app
// sets (Secure ones too: the app is on loopback, as a browser allows).
type client struct {
	t       *testing.T
	base    string
	cookies map[string]string
}

type reply struct {
	status int
	body   string
}

func (c *client) do(method, path string, body any) reply {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, value := range c.cookies {
		req.AddCookie(&http.Cookie{Name: name, Value: value})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, ck := range resp.Cookies() {
		if ck.MaxAge < 0 || ck.Value == "" {
			delete(c.cookies, ck.Name)
		} else {
			c.cookies[ck.Name] = ck.Value
		}
	}
	return reply{resp.StatusCode, string(b)}
}

func (c *client) want(method, path string, body any, status int, text string) {
	c.t.Helper()
	r := c.do(method, path, body)
	if r.status != status || strings.TrimSpace(r.body) != text {
		c.t.Fatalf("%s %s: %d %s, want %d %s", method, path, r.status, r.body, status, text)
	}
}

// driveFlows runs the flows a quick-start user tries first.
func driveFlows(t *testing.T, base string, out *output) {
	c := &client{t: t, base: base, cookies: map[string]string{}}
	const (
		email = "ada@example.com"
		pass  = "correct horse battery staple"
		pass2 = "another horse battery staple"
	)
	unauth := `{"error":"Not authenticated","code":"not_authenticated"}`

	c.want("GET", "/dashboard", nil, 401, unauth)
	checkPages(t, base)
	c.want("POST", "/api/auth/register", map[string]string{"email": email, "password": pass, "name": "Ada"}, 200,
		`{"message":"Registration successful. Check your email to verify your address."}`)
	c.want("GET", "/dashboard", nil, 200, "hello "+email)

	link := waitForLink(t, out, "/verify-email/", 1)
	c.want("GET", "/api/auth/verify-email/"+link, nil, 200, `{"message":"Email verified"}`)
	me := c.do("GET", "/api/auth/me", nil)
	var u struct {
		Email         string `json:"email"`
		EmailVerified bool   `json:"emailVerified"`
	}
	if err := json.Unmarshal([]byte(me.body), &u); me.status != 200 || err != nil || u.Email != email || !u.EmailVerified {
		t.Fatalf("GET /api/auth/me after verifying: %d %s", me.status, me.body)
	}

	if r := c.do("POST", "/api/auth/logout", nil); r.status != 200 {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	c.want("GET", "/dashboard", nil, 401, unauth)
	c.want("POST", "/api/login", map[string]string{"email": email, "password": "wrong password"}, 401, `{"error":"Invalid credentials","code":"invalid_credentials"}`)
	if r := c.do("POST", "/api/login", map[string]string{"email": email, "password": pass}); r.status != 200 {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	c.want("GET", "/dashboard", nil, 200, "hello "+email)

	if r := c.do("POST", "/api/auth/forgot-password", map[string]string{"email": email}); r.status != 200 {
		t.Fatalf("forgot-password: %d %s", r.status, r.body)
	}
	reset := waitForLink(t, out, "/reset-password/", 1)
	if r := c.do("POST", "/api/auth/reset-password/"+reset, map[string]string{"password": pass2, "confirmPassword": pass2}); r.status != 200 {
		t.Fatalf("reset-password: %d %s", r.status, r.body)
	}
	c.want("POST", "/api/login", map[string]string{"email": email, "password": pass}, 401, `{"error":"Invalid credentials","code":"invalid_credentials"}`)
	if r := c.do("POST", "/api/login", map[string]string{"email": email, "password": pass2}); r.status != 200 {
		t.Fatalf("login with the new password: %d %s", r.status, r.body)
	}
	c.want("GET", "/dashboard", nil, 200, "hello "+email)
}

// waitForLink waits for the n-th mailed link to path in the app's output
// (the default mailer prints every mail there) and returns its token.
func waitForLink(t *testing.T, out *output, path string, n int) string {
	t.Helper()
	re := regexp.MustCompile(regexp.QuoteMeta(path) + `([A-Za-z0-9_.~-]+)`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := re.FindAllStringSubmatch(out.String(), -1); len(m) >= n {
			return m[n-1][1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mail with a link to %s in the app's output:\n%s", path, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
