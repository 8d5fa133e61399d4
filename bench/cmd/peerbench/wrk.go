package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/authkit-go/authkit/bench/internal/wrk"
)

// request is what a load run sends, over and over.
type request struct {
	method string
	path   string
	header map[string]string
	body   string
}

// wrkResult is what one wrk run reports.
type wrkResult struct {
	Requests int64         `json:"requests"`
	Seconds  float64       `json:"seconds"`
	Mean     time.Duration `json:"mean"` // mean latency
	P50      time.Duration `json:"p50"`
	P99      time.Duration `json:"p99"`
	Status   map[int]int64 `json:"status"` // responses by status, from the script's counters
	Errors   string        `json:"errors,omitempty"`
}

// script returns the wrk Lua script that sends r and counts the responses
// by status (printed by done() as "STATUS 200=n 429=m ...").
func script(r request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "wrk.method = %s\n", wrk.LuaString(r.method))
	if r.body != "" {
		fmt.Fprintf(&b, "wrk.body = %s\n", wrk.LuaString(r.body))
	}
	for k, v := range r.header {
		fmt.Fprintf(&b, "wrk.headers[%s] = %s\n", wrk.LuaString(k), wrk.LuaString(v))
	}
	b.WriteString(`local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) counts = {} end
function response(status, headers, body) counts[status] = (counts[status] or 0) + 1 end
function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for s, n in pairs(t:get("counts")) do total[s] = (total[s] or 0) + n end
  end
  io.write("STATUS")
  for s, n in pairs(total) do io.write(string.format(" %d=%d", s, n)) end
  io.write("\n")
end
`)
	return b.String()
}

// runWrk runs wrk against base+r.path for d with conns connections, pinned
// to c.loadCPU, and parses its report; raw, when not empty, receives it.
func (c *config) runWrk(ctx context.Context, base string, r request, conns int, d time.Duration, raw string) (wrkResult, error) {
	f, err := os.CreateTemp(c.out, "wrk-*.lua")
	if err != nil {
		return wrkResult{}, err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(script(r)); err != nil {
		f.Close()
		return wrkResult{}, err
	}
	if err := f.Close(); err != nil {
		return wrkResult{}, err
	}
	argv := []string{c.wrk, "-t", "1", "-c", strconv.Itoa(conns), "-d", wrk.Seconds(d), "--latency",
		"--timeout", "10s", "-s", f.Name(), base + r.path}
	if c.loadCPU != "" && c.taskset != "" {
		argv = append([]string{c.taskset, "-c", c.loadCPU}, argv...)
	}
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if raw != "" {
		_ = os.WriteFile(filepath.Join(c.out, raw), out, 0o644)
	}
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk: %w: %s", err, out)
	}
	return parseWrk(string(out))
}

var (
	reTotal  = regexp.MustCompile(`(?m)^\s*(\d+) requests in ([\d.]+)(us|ms|s|m)\b`)
	reMean   = regexp.MustCompile(`(?m)^\s+Latency\s+([\d.]+)(us|ms|s|m)\s`)
	reLat    = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([\d.]+)(us|ms|s|m)\s*$`)
	reStatus = regexp.MustCompile(`(?m)^STATUS((?: \d+=\d+)*)\s*$`)
	reErrors = regexp.MustCompile(`(?m)^\s*Socket errors: .*$`)
)

// parseWrk reads wrk's report (with --latency and the counting script).
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	m := reTotal.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("wrk: no request count in %q", out)
	}
	r.Requests, _ = strconv.ParseInt(m[1], 10, 64)
	d, err := duration(m[2], m[3])
	if err != nil {
		return r, err
	}
	r.Seconds = d.Seconds()
	if m := reMean.FindStringSubmatch(out); m != nil {
		if r.Mean, err = duration(m[1], m[2]); err != nil {
			return r, err
		}
	}
	for _, m := range reLat.FindAllStringSubmatch(out, -1) {
		d, err := duration(m[2], m[3])
		if err != nil {
			return r, err
		}
		if m[1] == "50" {
			r.P50 = d
		} else {
			r.P99 = d
		}
	}
	if r.Requests > 0 && (r.P50 == 0 || r.P99 == 0 || r.Mean == 0) {
		return r, fmt.Errorf("wrk: no latency distribution in %q", out)
	}
	m = reStatus.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("wrk: no STATUS line in %q", out)
	}
	r.Status = map[int]int64{}
	for _, kv := range strings.Fields(m[1]) {
		k, v, _ := strings.Cut(kv, "=")
		code, _ := strconv.Atoi(k)
		n, _ := strconv.ParseInt(v, 10, 64)
		r.Status[code] += n
	}
	r.Errors = strings.TrimSpace(reErrors.FindString(out))
	return r, nil
}

func duration(v, unit string) (time.Duration, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("wrk: duration %q%s", v, unit)
	}
	scale := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute}[unit]
	if scale == 0 {
		return 0, errors.New("wrk: unit " + unit)
	}
	return time.Duration(f * float64(scale)), nil
}
