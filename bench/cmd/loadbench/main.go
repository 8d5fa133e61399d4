// Command loadbench measures the comparison app (cmd/benchserver) under
// load with wrk on the loopback: requests per second of GET /bare and GET
// /auth (the same handler behind RequireUser) on each framework, and of POST
// /api/login against the password hash's own limit. It prints Go
// benchmark lines, so benchstat reads them with the rest:
//
//	BenchmarkHTTPLoad/fw=nethttp/route=bare-1   <requests>   <rate> req/s
//	BenchmarkHTTPLoadLogin/fw=nethttp/path=hash-1    <requests>   <rate> req/s   <ms> cpu-ms/req
//	BenchmarkHTTPLoadLogin/fw=nethttp/path=login-1   <requests>   <rate> req/s   <ms> cpu-ms/req
//
// The server is pinned to one CPU and wrk to another (taskset), so the
// "-1" suffix is the server's single core. The login's limit is the
// password check's own rate on that core: POST /hash, a route that checks
// the password and does nothing else, measured the same way on the same
// server, run for run (path=hash next to path=login). Every run is bounded by
// -duration; a response other than 2xx fails the run.
//
//	loadbench -server PATH [-count 10] [-duration 3s] [-login-duration 5s]
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/authkit-go/authkit/bench/internal/proc"
	"github.com/authkit-go/authkit/bench/internal/wrk"
)

type config struct {
	server        string
	count         int
	duration      time.Duration
	loginDuration time.Duration
	conns         int
	frameworks    []string
	serverCPU     string
	loadCPU       string
}

func main() {
	var c config
	var fws string
	flag.StringVar(&c.server, "server", "", "path of the benchserver binary (required)")
	flag.IntVar(&c.count, "count", 10, "runs of each measurement")
	flag.DurationVar(&c.duration, "duration", 3*time.Second, "length of one GET run")
	flag.DurationVar(&c.loginDuration, "login-duration", 5*time.Second, "length of one login run (0: skip)")
	flag.IntVar(&c.conns, "conns", 32, "wrk connections for the GET runs")
	flag.StringVar(&fws, "fw", "nethttp,gin,fiber", "frameworks, comma-separated")
	flag.StringVar(&c.serverCPU, "server-cpu", "1", "CPU list the server is pinned to (taskset -c)")
	flag.StringVar(&c.loadCPU, "load-cpu", "0", "CPU list wrk is pinned to (taskset -c)")
	flag.Parse()
	c.frameworks = strings.Split(fws, ",")
	if err := run(c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

// ready is benchserver's first line.
type ready struct {
	Addr       string `json:"addr"`
	Cookie     string `json:"cookie"`
	LoginBody  string `json:"loginBody"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

func run(c config, out io.Writer) error {
	if c.server == "" {
		return errors.New("-server is required")
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		return errors.New("wrk is not installed (apt-get install -y wrk)")
	}
	pin := func(cpus string, argv ...string) []string {
		if _, err := exec.LookPath("taskset"); err != nil || cpus == "" {
			return argv
		}
		return append([]string{"taskset", "-c", cpus}, argv...)
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench: taskset missing: server and wrk run unpinned")
	}
	tmp, err := os.MkdirTemp("", "loadbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	fmt.Fprintf(out, "goos: linux\npkg: github.com/authkit-go/authkit/bench/cmd/loadbench\n")
	for _, fw := range c.frameworks {
		if err := runFramework(c, out, fw, tmp, pin); err != nil {
			return fmt.Errorf("%s: %w", fw, err)
		}
	}
	return nil
}

func runFramework(c config, out io.Writer, fw, tmp string, pin func(string, ...string) []string) error {
	argv := pin(c.serverCPU, c.server, "-fw", fw, "-max", "15m")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer proc.Stop(cmd, 10*time.Second)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return fmt.Errorf("benchserver did not start: %w", err)
	}
	var r ready
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return fmt.Errorf("benchserver said %q: %w", line, err)
	}
	base := "http://" + r.Addr
	runWrk := func(d time.Duration, conns int, extra ...string) (result, error) {
		args := append([]string{"wrk", "-t1", "-c" + strconv.Itoa(conns), "-d" + wrk.Seconds(d), "--timeout", "10s"}, extra...)
		argv := pin(c.loadCPU, args...)
		b, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			return result{}, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, b)
		}
		res, err := parseWrk(string(b))
		if err != nil {
			return result{}, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, b)
		}
		return res, nil
	}
	get := func(route string, d time.Duration) (result, error) {
		return runWrk(d, c.conns, "-H", "Cookie: "+r.Cookie, base+"/"+route)
	}
	// Warm up both routes (connections, pools, JIT-free but cache-warm).
	for _, route := range routes {
		if _, err := get(route, time.Second); err != nil {
			return err
		}
	}
	for range c.count {
		for _, route := range routes {
			res, err := get(route, c.duration)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "BenchmarkHTTPLoad/fw=%s/route=%s-%d\t%d\t%.1f req/s\n", fw, route, r.GOMAXPROCS, res.requests, res.rate)
		}
	}
	if c.loginDuration <= 0 || fw != "nethttp" {
		return nil
	}
	// Login: the framework does not matter next to a bcrypt check, so it
	// runs on net/http only, over one connection, each run of POST
	// /api/login next to a run of POST /hash (the password check alone,
	// the limit) on the same server. Two figures per run:
	//   - req/s from wrk's mean latency (the count of completed requests in
	//     a few seconds misses the one in flight at the end, up to 5%);
	//   - cpu-ms/req, the server's CPU time per request (/proc/PID/stat),
	//     which other processes on its core do not inflate.
	script := filepath.Join(tmp, "login.lua")
	lua := fmt.Sprintf("wrk.method = \"POST\"\nwrk.body = %s\nwrk.headers[\"Content-Type\"] = \"application/json\"\n", wrk.LuaString(r.LoginBody))
	if err := os.WriteFile(script, []byte(lua), 0o600); err != nil {
		return err
	}
	for range c.count {
		for _, path := range []string{"hash", "login"} {
			url := base + "/api/login"
			if path == "hash" {
				url = base + "/hash"
			}
			cpu0, err := proc.CPUTicks(cmd.Process.Pid)
			if err != nil {
				return err
			}
			res, err := runWrk(c.loginDuration, 1, "-s", script, url)
			if err != nil {
				return err
			}
			cpu1, err := proc.CPUTicks(cmd.Process.Pid)
			if err != nil {
				return err
			}
			if res.latency <= 0 {
				return errors.New("login: wrk reported no latency")
			}
			cpuMs := float64(cpu1-cpu0) * 1000 / proc.ClockTicks / float64(res.requests)
			fmt.Fprintf(out, "BenchmarkHTTPLoadLogin/fw=%s/path=%s-%d\t%d\t%.3f req/s\t%.1f cpu-ms/req\n",
				fw, path, r.GOMAXPROCS, res.requests, 1/res.latency.Seconds(), cpuMs)
		}
	}
	return nil
}

// routes are the GET routes measured: the handler bare and behind
// RequireUser.
var routes = []string{"bare", "auth"}

// result is what one wrk run reports.
type result struct {
	requests int64
	rate     float64
	latency  time.Duration // mean
}

var (
	reRequests = regexp.MustCompile(`(?m)^\s*(\d+) requests in `)
	reRate     = regexp.MustCompile(`(?m)^Requests/sec:\s*([0-9.]+)`)
	reNon2xx   = regexp.MustCompile(`(?m)^\s*Non-2xx or 3xx responses:\s*(\d+)`)
	reSocket   = regexp.MustCompile(`(?m)^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	reLatency  = regexp.MustCompile(`(?m)^\s*Latency\s+([0-9.]+)(us|ms|s|m)\s`)
)

// parseWrk reads wrk's report. A run with any non-2xx/3xx response or any
// socket error is an error: the figure would not be of the route measured.
func parseWrk(s string) (result, error) {
	m := reRequests.FindStringSubmatch(s)
	r := reRate.FindStringSubmatch(s)
	if m == nil || r == nil {
		return result{}, errors.New("no request count or rate in wrk's output")
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	rate, err := strconv.ParseFloat(r[1], 64)
	if err != nil {
		return result{}, fmt.Errorf("rate %q: %w", r[1], err)
	}
	if n == 0 {
		return result{}, errors.New("no request completed")
	}
	if e := reNon2xx.FindStringSubmatch(s); e != nil {
		return result{}, fmt.Errorf("%s responses were not 2xx or 3xx", e[1])
	}
	if e := reSocket.FindStringSubmatch(s); e != nil && e[1]+e[2]+e[3]+e[4] != "0000" {
		return result{}, fmt.Errorf("socket errors: %s", strings.TrimSpace(e[0]))
	}
	res := result{requests: n, rate: rate}
	if l := reLatency.FindStringSubmatch(s); l != nil {
		v, err := strconv.ParseFloat(l[1], 64)
		if err != nil {
			return result{}, fmt.Errorf("latency %q: %w", l[1], err)
		}
		unit := map[string]float64{"us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9}[l[2]]
		res.latency = time.Duration(v * unit)
	}
	return res, nil
}
