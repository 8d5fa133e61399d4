package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/authkit-go/authkit/bench/internal/proc"
)

// The benchmark user, created by both servers at start-up.
const (
	email    = "bench@example.com"
	password = "correct horse battery staple"
)

// side describes one server of the comparison: how to start it and its routes.
type side struct {
	name      string // "authkit" or "better-auth"
	short     string // schema and key prefix: "ak" or "ba"
	checkPath string // the authenticated GET returning the current user
	loginPath string // email + password sign-in
}

var (
	authkitSide    = side{name: "authkit", short: "ak", checkPath: "/api/auth/me", loginPath: "/api/auth/login"}
	betterAuthSide = side{name: "better-auth", short: "ba", checkPath: "/api/auth/get-session", loginPath: "/api/auth/sign-in/email"}
)

// setup is what a scenario asks of both servers.
type setup struct {
	sessions  string // "postgres" or "redis"
	limits    bool   // login rate limits on (10 per 15 minutes per address)
	seedUsers int    // users to create at start-up, each with seedEach sessions
	seedEach  int
}

// ready is the line each server prints once it listens.
type ready struct {
	Addr        string  `json:"addr"`
	PID         int     `json:"pid"`
	Seeded      int     `json:"seeded"`
	SeedSeconds float64 `json:"seedSeconds"`
}

// server is one running server process.
type server struct {
	side
	ready
	cmd       *exec.Cmd
	stdin     io.Closer // closing it stops the server (and a driver that dies closes it)
	stderr    *lockedBuffer
	pprofAddr string // authkit only
	cookie    string // Cookie header of the benchmark user's session
	rssSeeded int64  // bytes, once the seeding is done
}

func (s *server) url(path string) string { return "http://" + s.Addr + path }

// start starts the server of sd for st in its own schema (pgURL's
// search_path) and Redis prefix, pinned to cpus, and waits for its ready
// line (the seeding comes before it).
func (c *config) start(ctx context.Context, sd side, st setup, pgURL, redisPrefix string) (*server, error) {
	var argv, env []string
	s := &server{side: sd, stderr: &lockedBuffer{}}
	switch sd.name {
	case "authkit":
		pp, err := freePort()
		if err != nil {
			return nil, err
		}
		s.pprofAddr = "127.0.0.1:" + strconv.Itoa(pp)
		limits := "off"
		if st.limits {
			limits = "on"
		}
		argv = []string{c.authkitBin, "-postgres", pgURL, "-sessions", st.sessions, "-redis", c.redisURL,
			"-redis-prefix", redisPrefix, "-limits", limits, "-pprof", s.pprofAddr, "-stop-on-stdin-eof",
			"-seed-users", strconv.Itoa(st.seedUsers), "-seed-sessions", strconv.Itoa(st.seedEach)}
	default:
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		schema, base, err := splitSchema(pgURL)
		if err != nil {
			return nil, err
		}
		limits := "off"
		if st.limits {
			limits = "on"
		}
		argv = []string{c.node, filepath.Join(c.betterAuthDir, "server.mjs")}
		env = []string{"NODE_ENV=production", "PORT=" + strconv.Itoa(port), "DATABASE_URL=" + base,
			"PG_SCHEMA=" + schema, "SESSIONS=" + st.sessions, "REDIS_URL=" + c.redisURL,
			"REDIS_PREFIX=" + redisPrefix, "RATE_LIMIT=" + limits, "STOP_ON_STDIN_EOF=1", "BETTER_AUTH_SECRET=" + randomHex(32),
			"SEED_USERS=" + strconv.Itoa(st.seedUsers), "SEED_SESSIONS=" + strconv.Itoa(st.seedEach)}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if c.serverCPU != "" && c.taskset != "" {
		cmd = exec.Command(c.taskset, append([]string{"-c", c.serverCPU}, argv...)...)
	}
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", sd.name, err)
	}
	s.cmd, s.stdin = cmd, stdin
	line := make(chan []byte, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Bytes()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case b, ok := <-line:
		if !ok {
			s.stop()
			return nil, fmt.Errorf("%s exited before it was ready: %s", sd.name, s.stderr.tail())
		}
		if err := json.Unmarshal(b, &s.ready); err != nil || s.Addr == "" || s.PID == 0 {
			s.stop()
			return nil, fmt.Errorf("%s: ready line %q: %v", sd.name, b, err)
		}
	case <-ctx.Done():
		s.stop()
		return nil, fmt.Errorf("%s: not ready: %w (%s)", sd.name, ctx.Err(), s.stderr.tail())
	}
	if s.rssSeeded, err = proc.RSS(s.PID); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// stop closes the server's standard input and sends SIGTERM, then waits for
// it, killing it after 10 seconds.
func (s *server) stop() {
	_ = s.stdin.Close()
	proc.Stop(s.cmd, 10*time.Second)
}

// signIn logs the benchmark user in over HTTP, keeps the session cookie,
// and checks that the session check then answers 200 with the user's
// address: the smoke test of both servers, and the cookie of the load runs.
func (s *server) signIn(ctx context.Context) error {
	body := fmt.Sprintf(`{"email":%q,"password":%q}`, email, password)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url(s.loginPath), strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s login: %w", s.name, err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s login: %d %s", s.name, resp.StatusCode, b)
	}
	var parts []string
	for _, ck := range resp.Cookies() {
		if ck.Value != "" {
			parts = append(parts, ck.Name+"="+ck.Value)
		}
	}
	if len(parts) == 0 {
		return fmt.Errorf("%s login: no session cookie", s.name)
	}
	s.cookie = strings.Join(parts, "; ")
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, s.url(s.checkPath), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Cookie", s.cookie)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s session check: %w", s.name, err)
	}
	b, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"email":"`+email+`"`)) {
		return fmt.Errorf("%s session check: %d %s", s.name, resp.StatusCode, b)
	}
	return nil
}

// exhaust sends wrong-password logins from the attacker's address until the
// server answers 429, and fails if it has not after 50.
func (s *server) exhaust(ctx context.Context) error {
	body := fmt.Sprintf(`{"email":%q,"password":"wrong password"}`, email)
	for i := range 50 {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url(s.loginPath), strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", attacker)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("%s attack: %w", s.name, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			if i == 0 {
				return fmt.Errorf("%s attack: the first attempt was refused", s.name)
			}
			return nil
		}
	}
	return fmt.Errorf("%s attack: no 429 after 50 wrong passwords", s.name)
}

// attacker is the one address the attack comes from: better-auth reads it
// from X-Forwarded-For (its default header); authkit, trusting no proxy,
// keys on the connection's address, the loopback, one address as well.
const attacker = "203.0.113.7"

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// lockedBuffer keeps the last 64 KiB a process wrote to standard error.
type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if len(l.b) > 64<<10 {
		l.b = l.b[len(l.b)-64<<10:]
	}
	return len(p), nil
}

func (l *lockedBuffer) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.TrimSpace(string(l.b))
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}
