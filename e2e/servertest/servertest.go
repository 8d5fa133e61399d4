// Package servertest builds an example server of the examples module
// (examples/nethttp, ...), runs it as a real process and talks to it, so
// the tests prove what `make run` does.
package servertest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is a running example server process.
type Server struct {
	URL       string // http://127.0.0.1:PORT
	FirstLine string // the first line it logged

	cmd    *exec.Cmd
	mu     sync.Mutex
	stdout bytes.Buffer // the console mailer writes here
	stderr bytes.Buffer // the log, from its second line on
	done   chan error
}

var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

// Start builds the example server examples/<name> ("nethttp", "gin",
// "fiber", "customstore", "jsononly", ...), once per test process (Build), and runs it on 127.0.0.1:0 with env added to a
// minimal environment. It waits for the first log line and stops the
// server at the end of the test.
//
// Passwords are hashed at the least bcrypt cost the server accepts (4 in
// development, 10 with APP_ENV=production) unless env sets BCRYPT_COST
// ("BCRYPT_COST=" asks for the server's default, 12): the tests sign up and
// in hundreds of times, and at cost 12 those hashes were most of their CPU.
// What a hash costs is measured where it matters, by the timing benchmarks.
func Start(t *testing.T, name string, env ...string) *Server {
	t.Helper()
	bin := Build(t, name)
	s := &Server{done: make(chan error, 1)}
	s.cmd = exec.Command(bin)
	s.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"ADDR=127.0.0.1:0", "AUTHKIT_DATA_DIR=" + t.TempDir(), "BCRYPT_COST=" + leastBcryptCost(env)}, env...)
	s.cmd.Stdout = writerFunc(func(p []byte) (int, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.stdout.Write(p)
	})
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
				continue
			}
			s.mu.Lock()
			s.stderr.Write(sc.Bytes())
			s.stderr.WriteByte('\n')
			s.mu.Unlock()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatalf("server exited before logging: %v", <-s.done)
		}
		s.FirstLine = line
	case <-time.After(30 * time.Second):
		t.Fatal("server did not log its first line within 30s")
	}
	m := listening.FindStringSubmatch(s.FirstLine)
	if m == nil {
		t.Fatalf("first log line %q does not say where it listens", s.FirstLine)
	}
	s.URL = m[1]
	return s
}

// builds holds each example's build of this test process, by folder: one
// go build per example and process, however many servers a test starts.
var builds sync.Map // dir -> *build

type build struct {
	once sync.Once
	bin  string
	err  error
}

// Build builds the example server examples/<name> once per test process
// and returns its executable. The executable is kept at a path of its own
// per example folder in the temporary folder (authkit-servertest/), so
// that go build, finding it up to date, links it again only when its code
// changed: a link of an example costs seconds of CPU, and the e2e tests
// start dozens of servers from several test processes. The temporary
// folder is where go build links, so it moves the new executable into
// place with one rename: a process starting the old one never meets half
// a file. Where that folder cannot be made, a folder of this process's own.
func Build(t testing.TB, name string) string {
	t.Helper()
	dir := ExampleDir(t, name)
	v, _ := builds.LoadOrStore(dir, &build{})
	b := v.(*build)
	b.once.Do(func() {
		sum := sha256.Sum256([]byte(dir))
		out := filepath.Join(os.TempDir(), "authkit-servertest", name+"-"+hex.EncodeToString(sum[:6]))
		if err := os.MkdirAll(out, 0o700); err != nil {
			if out, err = os.MkdirTemp("", "authkit-servertest-"); err != nil {
				b.err = err
				return
			}
		}
		b.bin = filepath.Join(out, "server")
		cmd := exec.Command("go", "build", "-o", b.bin, ".")
		cmd.Dir = dir
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %w\n%s", dir, err, msg)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// ExampleDir returns the folder of the example server examples/<name>: it
// looks for examples/<name>/ in the working directory and each folder
// above it, so a test finds the examples from any package of this module.
func ExampleDir(t testing.TB, name string) string {
	t.Helper()
	rel := filepath.Join("examples", name)
	dir := NearestHolding(t, filepath.Join(rel, "main.go"))
	if dir == "" {
		t.Fatalf("no examples/%s/main.go in the working directory or above it", name)
	}
	return filepath.Join(dir, rel)
}

// NearestHolding returns the nearest folder, from the working directory
// up, that holds the file or folder at the relative path name, or "" when
// none does.
func NearestHolding(t testing.TB, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Stdout returns what the server printed on standard output so far (the
// console mailer's messages).
func (s *Server) Stdout() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stdout.String()
}

// Log returns what the server logged on standard error so far, after its
// first line (FirstLine).
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// Stop sends SIGTERM and returns the exit error (nil for exit code 0).
func (s *Server) Stop(t *testing.T) error {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop within 20s of SIGTERM")
		return nil
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// CheckPages fetches every page from s and checks it is served as HTML
// with the pages' security headers, through whichever framework s runs.
// The account pages send a visitor without a session on to /login, which
// the client follows; a mailed link that is not a token (verification or
// reset) answers 400.
func (s *Server) CheckPages(t *testing.T) {
	t.Helper()
	for p, status := range map[string]int{"/login": 200, "/register": 200, "/2fa": 200, "/verify-email/x": 400,
		"/resend-verification": 200, "/forgot-password": 200, "/reset-password/x": 400, "/dashboard": 200,
		"/settings/security": 200, "/assets/app.js": 200} {
		resp, err := http.Get(s.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != status || resp.Header.Get("Content-Security-Policy") == "" ||
			resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: %d (want %d), CSP %q, X-Frame-Options %q, Referrer-Policy %q", p, resp.StatusCode, status,
				resp.Header.Get("Content-Security-Policy"), resp.Header.Get("X-Frame-Options"), resp.Header.Get("Referrer-Policy"))
		}
	}
}

// leastBcryptCost is the least BCRYPT_COST the example server accepts in
// the mode env asks for (exec.Cmd takes the last of duplicate keys, so a
// BCRYPT_COST in env wins over it).
func leastBcryptCost(env []string) string {
	production := false
	for _, kv := range env {
		switch kv {
		case "APP_ENV=production":
			production = true
		case "APP_ENV=development":
			production = false
		}
	}
	if production {
		return "10" // password.MinProductionBcryptCost
	}
	return "4" // bcrypt.MinCost, which development allows
}
