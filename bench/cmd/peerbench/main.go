// Command peerbench runs authkit and better-auth side by side on one
// machine, the same PostgreSQL and Redis, in one run (make bench-peers):
//
//   - session check: an authenticated GET returning the current user
//     (authkit GET /api/auth/me, better-auth GET /api/auth/get-session),
//     sessions in PostgreSQL, then in Redis (authkit's redisstore.Sessions,
//     better-auth's secondaryStorage);
//   - login: email and password, both hashing with scrypt at better-auth's
//     parameters (N=16384, r=16, p=1; authkit's Hasher is
//     internal/scrypthash), so the difference is the work around the hash;
//   - attack: wrong-password logins from one address once its limit (10 per
//     15 minutes on both) is reached: the 429s each server answers per second;
//   - memory: each process's RSS once 100,000 sessions exist (made at
//     start-up, as a login makes them, without the password check).
//
// Each scenario starts both servers (cmd/peerserver and
// bench/peers/betterauth/server.mjs), each pinned to -server-cpu, in a
// PostgreSQL schema and Redis key prefix of its own, dropped and deleted at
// the end. wrk, pinned to -load-cpu, measures requests/s and latency p50/p99
// at fixed concurrency; /proc/PID/stat gives each server's CPU time per
// request. Rounds alternate the order of the servers, so both see the same
// load of a shared machine; the load average at each round is recorded.
// Every response must be the expected one (200, or 429 under attack) or the
// run fails.
//
//	peerbench -authkit BIN -betterauth DIR [-rounds 5] [-duration 5s] [-out DIR] [-smoke]
//
// -smoke only starts both servers (sessions in PostgreSQL, nothing seeded)
// and checks one login and one session check on each; -table FILE prints
// the table of an earlier run from its JSON again. Results, in -out: the
// table (printed at the end), every run as JSON, the machine and versions,
// wrk's raw reports, and authkit's heap profile and CPU profiles of one
// extra, uncounted run of each kind.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/authkit-go/authkit/bench/internal/proc"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

type config struct {
	authkitBin, betterAuthDir, node, wrk, taskset string
	pgURL, redisURL                               string
	out                                           string
	rounds                                        int
	duration, loginDuration                       time.Duration
	checkConns, loginConns, attackConns           int
	seedUsers, seedEach                           int
	serverCPU, loadCPU                            string
	smoke                                         bool
	tableFrom                                     string

	runs []run
	rss  []rssRow
}

func main() {
	var c config
	flag.StringVar(&c.authkitBin, "authkit", "", "path of the cmd/peerserver binary (required)")
	flag.StringVar(&c.betterAuthDir, "betterauth", "peers/betterauth", "folder of server.mjs, its node_modules installed (npm ci)")
	flag.StringVar(&c.node, "node", "node", "Node.js")
	flag.StringVar(&c.wrk, "wrk", "wrk", "wrk")
	flag.StringVar(&c.pgURL, "postgres", envOr("AUTHKIT_TEST_POSTGRES", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL (schemas of their own are made and dropped)")
	flag.StringVar(&c.redisURL, "redis", envOr("AUTHKIT_TEST_REDIS", "redis://127.0.0.1:6379/0"), "Redis (keys of a prefix of their own, deleted after)")
	flag.StringVar(&c.out, "out", "results/peers", "results folder")
	flag.IntVar(&c.rounds, "rounds", 5, "rounds, each measuring both servers, their order alternating")
	flag.DurationVar(&c.duration, "duration", 5*time.Second, "length of one wrk run")
	flag.DurationVar(&c.loginDuration, "login-duration", 10*time.Second, "length of one login run (a login takes scrypt's time)")
	flag.IntVar(&c.checkConns, "check-conns", 32, "connections of the session-check runs")
	flag.IntVar(&c.loginConns, "login-conns", 2, "connections of the login runs")
	flag.IntVar(&c.attackConns, "attack-conns", 32, "connections of the attack runs")
	flag.IntVar(&c.seedUsers, "seed-users", 1000, "users made at start-up of the PostgreSQL scenario")
	flag.IntVar(&c.seedEach, "seed-sessions", 100, "sessions made for each of them")
	flag.StringVar(&c.serverCPU, "server-cpu", "1", "CPU list the servers are pinned to (taskset -c; empty: unpinned)")
	flag.StringVar(&c.loadCPU, "load-cpu", "0", "CPU list wrk is pinned to (taskset -c; empty: unpinned)")
	flag.BoolVar(&c.smoke, "smoke", false, "only start both servers and check one login and one session check each")
	flag.StringVar(&c.tableFrom, "table", "", "only print the table of an earlier run from its runs.json")
	flag.Parse()
	if err := c.main(); err != nil {
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// results is what runs.json holds.
type results struct {
	Runs []run    `json:"runs"`
	RSS  []rssRow `json:"rss"`
}

func (c *config) main() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.tableFrom != "" {
		b, err := os.ReadFile(c.tableFrom)
		if err != nil {
			return err
		}
		var r results
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", c.tableFrom, err)
		}
		c.runs, c.rss = r.Runs, r.RSS
		fmt.Print(c.table())
		return nil
	}
	if c.authkitBin == "" {
		return errors.New("-authkit is required")
	}
	if _, err := os.Stat(filepath.Join(c.betterAuthDir, "node_modules", "better-auth")); err != nil {
		return fmt.Errorf("better-auth is not installed in %s (npm ci): %w", c.betterAuthDir, err)
	}
	if p, err := exec.LookPath("taskset"); err == nil {
		c.taskset = p
	} else {
		fmt.Fprintln(os.Stderr, "peerbench: taskset missing: servers and wrk run unpinned")
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	if c.smoke {
		return c.scenario(ctx, "smoke", setup{sessions: "postgres"}, nil)
	}
	if _, err := exec.LookPath(c.wrk); err != nil {
		return fmt.Errorf("wrk is needed for the load runs: %w", err)
	}
	if err := c.writeMachine(ctx, "before"); err != nil {
		return err
	}
	for _, sc := range []struct {
		name  string
		setup setup
		kinds []string
	}{
		{"postgres", setup{sessions: "postgres", seedUsers: c.seedUsers, seedEach: c.seedEach}, []string{"check", "login"}},
		{"redis", setup{sessions: "redis"}, []string{"check", "login"}},
		{"attack", setup{sessions: "postgres", limits: true}, []string{"attack"}},
	} {
		fmt.Fprintf(os.Stderr, "== %s (%s)\n", sc.name, time.Now().UTC().Format(time.TimeOnly))
		if err := c.scenario(ctx, sc.name, sc.setup, sc.kinds); err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
	}
	if err := c.writeMachine(ctx, "after"); err != nil {
		return err
	}
	b, err := json.MarshalIndent(results{c.runs, c.rss}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.out, "runs.json"), b, 0o644); err != nil {
		return err
	}
	table := c.table()
	if err := os.WriteFile(filepath.Join(c.out, "table.md"), []byte(table), 0o644); err != nil {
		return err
	}
	fmt.Print(table)
	fmt.Fprintf(os.Stderr, "results: %s (table.md, runs.json, machine.txt, wrk reports, authkit-*.pprof)\n", c.out)
	return nil
}

// run is one wrk run against one server.
type run struct {
	Scenario string  `json:"scenario"`
	Kind     string  `json:"kind"` // check, login, attack
	Server   string  `json:"server"`
	Round    int     `json:"round"`
	Load     string  `json:"loadavg"` // /proc/loadavg when the run began
	Conns    int     `json:"connections"`
	CPU      float64 `json:"cpuSeconds"`
	wrkResult
}

type rssRow struct {
	Scenario string  `json:"scenario"`
	Server   string  `json:"server"`
	Sessions int     `json:"sessions"`
	Seeded   int64   `json:"rssSeeded"` // bytes, after start-up and seeding
	After    int64   `json:"rssAfter"`  // bytes, after the rounds
	SeedSecs float64 `json:"seedSeconds"`
}

// scenario starts both servers for st, signs in on each, and measures kinds
// for c.rounds rounds; with no kinds it stops there (the smoke test).
func (c *config) scenario(ctx context.Context, name string, st setup, kinds []string) (err error) {
	suffix := randomHex(4)
	pg, err := pgx.Connect(ctx, c.pgURL)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer pg.Close(context.Background())
	opt, err := redis.ParseURL(c.redisURL)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()

	sides := []side{authkitSide, betterAuthSide}
	servers := make([]*server, len(sides))
	errs := make([]error, len(sides))
	var wg sync.WaitGroup
	for i, sd := range sides {
		schema := "peerbench_" + sd.short + "_" + suffix
		prefix := "peerbench:" + suffix + ":" + sd.short + ":"
		if _, err := pg.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
		defer func() {
			_, derr := pg.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			err = errors.Join(err, derr, deleteKeys(rdb, prefix))
		}()
		u, err := withSearchPath(c.pgURL, schema)
		if err != nil {
			return err
		}
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
			defer cancel()
			servers[i], errs[i] = c.start(sctx, sd, st, u, prefix)
		})
	}
	wg.Wait()
	for _, s := range servers {
		if s != nil {
			defer s.stop()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, s := range servers {
		if err := s.signIn(ctx); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "   %s ready at %s, pid %d: %d sessions made in %.1f s, login and session check answered 200\n",
			s.name, s.Addr, s.PID, s.Seeded, s.SeedSeconds)
	}
	if len(kinds) == 0 {
		fmt.Fprintln(os.Stderr, "smoke: both servers answered a login and a session check")
		return nil
	}
	if st.limits {
		for _, s := range servers {
			if err := s.exhaust(ctx); err != nil {
				return err
			}
		}
	}
	// Warm-up (not counted): connections, caches, V8's JIT.
	for _, s := range servers {
		for _, k := range kinds {
			if _, err := c.measure(ctx, s, name, k, 0); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
	}
	for r := 1; r <= c.rounds; r++ {
		order := servers
		if r%2 == 0 {
			order = []*server{servers[1], servers[0]}
		}
		for _, s := range order {
			for _, k := range kinds {
				res, err := c.measure(ctx, s, name, k, r)
				if err != nil {
					return err
				}
				c.runs = append(c.runs, res)
				fmt.Fprintf(os.Stderr, "   round %d %-11s %-6s %8.0f/s  p50 %-9v p99 %-9v cpu %6.0f µs/req  load %s\n",
					r, s.name, k, res.rate(), res.P50, res.P99, res.cpuPerRequest()*1e6, res.Load)
			}
		}
	}
	for _, s := range servers {
		after, err := proc.RSS(s.PID)
		if err != nil {
			return err
		}
		c.rss = append(c.rss, rssRow{Scenario: name, Server: s.name, Sessions: s.Seeded, Seeded: s.rssSeeded, After: after, SeedSecs: s.SeedSeconds})
	}
	// authkit's heap now, and one more run of each kind under its CPU
	// profiler, not counted: where authkit is not ahead, this is where its
	// memory and its time went.
	if err := c.heapProfile(servers[0], name); err != nil {
		return err
	}
	for _, k := range kinds {
		if err := c.profile(ctx, servers[0], name, k); err != nil {
			return err
		}
	}
	return nil
}

// measure makes one wrk run of kind against s and checks every response.
func (c *config) measure(ctx context.Context, s *server, scenario, kind string, round int) (run, error) {
	if kind == "check" {
		// A fresh session for every check run: the login runs before it
		// sign the same user in thousands of times, and authkit keeps at
		// most 100 sessions per account (Config.MaxSessionsPerUser),
		// ending the oldest.
		if err := s.signIn(ctx); err != nil {
			return run{}, err
		}
	}
	req, conns, want := c.request(s, kind)
	load := loadavg()
	cpu0, err := proc.CPUTicks(s.PID)
	if err != nil {
		return run{}, err
	}
	raw := ""
	d := c.duration
	if kind == "login" {
		d = c.loginDuration
	}
	if round == 0 { // warm-up or profile
		d = min(d, 5*time.Second)
	} else {
		raw = fmt.Sprintf("%s-%s-%s-%d.txt", scenario, kind, s.short, round)
	}
	res, err := c.runWrk(ctx, "http://"+s.Addr, req, conns, d, raw)
	if err != nil {
		return run{}, fmt.Errorf("%s %s: %w", s.name, kind, err)
	}
	cpu1, err := proc.CPUTicks(s.PID)
	if err != nil {
		return run{}, err
	}
	if res.Status[want] != res.Requests || res.Requests == 0 || res.Errors != "" {
		return run{}, fmt.Errorf("%s %s: want %d requests all answered %d, got %v %s", s.name, kind, res.Requests, want, res.Status, res.Errors)
	}
	return run{Scenario: scenario, Kind: kind, Server: s.name, Round: round, Load: load, Conns: conns,
		CPU: float64(cpu1-cpu0) / proc.ClockTicks, wrkResult: res}, nil
}

// request returns what a run of kind sends to s, its connections and the
// one status every response must have.
func (c *config) request(s *server, kind string) (request, int, int) {
	switch kind {
	case "check":
		return request{method: "GET", path: s.checkPath, header: map[string]string{"Cookie": s.cookie}}, c.checkConns, http.StatusOK
	case "login":
		return request{method: "POST", path: s.loginPath, header: map[string]string{"Content-Type": "application/json"},
			body: fmt.Sprintf(`{"email":%q,"password":%q}`, email, password)}, c.loginConns, http.StatusOK
	default: // attack
		return request{method: "POST", path: s.loginPath,
			header: map[string]string{"Content-Type": "application/json", "X-Forwarded-For": attacker},
			body:   fmt.Sprintf(`{"email":%q,"password":"wrong password"}`, email)}, c.attackConns, http.StatusTooManyRequests
	}
}

// profile runs wrk against authkit's server while its CPU profiler records
// the same seconds, and writes the profile to authkit-SCENARIO-KIND.pprof.
func (c *config) profile(ctx context.Context, s *server, scenario, kind string) error {
	secs := int(min(c.duration, 5*time.Second) / time.Second)
	if kind == "login" {
		secs = int(min(c.loginDuration, 5*time.Second) / time.Second)
	}
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", s.pprofAddr, secs))
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("pprof: %s", resp.Status)
		}
		got <- result{b, err}
	}()
	time.Sleep(100 * time.Millisecond) // the profiler starts before the load
	if _, err := c.measure(ctx, s, scenario, kind, 0); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	r := <-got
	if r.err != nil {
		return fmt.Errorf("profile: %w", r.err)
	}
	return os.WriteFile(filepath.Join(c.out, fmt.Sprintf("authkit-%s-%s.pprof", scenario, kind)), r.b, 0o644)
}

// heapProfile writes authkit's heap profile to authkit-SCENARIO-heap.pprof.
func (c *config) heapProfile(s *server, scenario string) error {
	resp, err := http.Get("http://" + s.pprofAddr + "/debug/pprof/heap")
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("heap profile: %s", resp.Status)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.out, "authkit-"+scenario+"-heap.pprof"), b, 0o644)
}

// writeMachine appends the machine, the versions and the load to machine.txt.
func (c *config) writeMachine(ctx context.Context, when string) error {
	var b strings.Builder
	if when == "before" {
		fmt.Fprintf(&b, "date: %s\n", time.Now().UTC().Format(time.RFC3339))
		lscpu, _ := exec.CommandContext(ctx, "lscpu").Output()
		for line := range strings.Lines(string(lscpu)) {
			if k, _, _ := strings.Cut(line, ":"); k == "Model name" || k == "CPU(s)" || k == "Thread(s) per core" {
				b.WriteString("lscpu " + strings.Join(strings.Fields(line), " ") + "\n")
			}
		}
		gov, _ := exec.CommandContext(ctx, "go", "version").Output()
		nodev, _ := exec.CommandContext(ctx, c.node, "--version").Output()
		fmt.Fprintf(&b, "go: %s", gov)
		fmt.Fprintf(&b, "node: %s", nodev)
		for _, p := range []string{"better-auth", "pg", "ioredis"} {
			var pkg struct{ Version string }
			raw, _ := os.ReadFile(filepath.Join(c.betterAuthDir, "node_modules", p, "package.json"))
			_ = json.Unmarshal(raw, &pkg)
			fmt.Fprintf(&b, "%s: %s\n", p, pkg.Version)
		}
		if pg, err := pgx.Connect(ctx, c.pgURL); err == nil {
			var v string
			_ = pg.QueryRow(ctx, "SHOW server_version").Scan(&v)
			_ = pg.Close(ctx)
			fmt.Fprintf(&b, "postgresql: %s\n", v)
		}
		if opt, err := redis.ParseURL(c.redisURL); err == nil {
			rdb := redis.NewClient(opt)
			info, _ := rdb.Info(ctx, "server").Result()
			_ = rdb.Close()
			for line := range strings.Lines(info) {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
					fmt.Fprintf(&b, "redis: %s\n", v)
				}
			}
		}
		fmt.Fprintf(&b, "rounds: %d; runs of %v (login %v); connections: check %d, login %d, attack %d; servers on CPU %q, wrk on CPU %q\n",
			c.rounds, c.duration, c.loginDuration, c.checkConns, c.loginConns, c.attackConns, c.serverCPU, c.loadCPU)
	}
	up, _ := exec.CommandContext(ctx, "uptime").Output()
	fmt.Fprintf(&b, "uptime %s: %s", when, up)
	f, err := os.OpenFile(filepath.Join(c.out, "machine.txt"), os.O_CREATE|os.O_WRONLY|mode(when), 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func mode(when string) int {
	if when == "before" {
		return os.O_TRUNC
	}
	return os.O_APPEND
}

// loadavg returns the three load averages of /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// withSearchPath returns the PostgreSQL URL raw with search_path=schema.
func withSearchPath(raw, schema string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("postgres URL: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// splitSchema returns the search_path of a URL made by withSearchPath and
// the URL without it (node-postgres takes the schema as an option).
func splitSchema(raw string) (schema, base string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("postgres URL: %w", err)
	}
	q := u.Query()
	schema = q.Get("search_path")
	q.Del("search_path")
	q.Del("sslmode") // node-postgres reads sslmode=disable as a request for TLS
	u.RawQuery = q.Encode()
	return schema, u.String(), nil
}

// deleteKeys deletes every Redis key that starts with prefix.
func deleteKeys(rdb *redis.Client, prefix string) error {
	ctx := context.Background()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
		if len(keys) == 1000 {
			if err := rdb.Unlink(ctx, keys...).Err(); err != nil {
				return err
			}
			keys = keys[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(keys) > 0 {
		return rdb.Unlink(ctx, keys...).Err()
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}
