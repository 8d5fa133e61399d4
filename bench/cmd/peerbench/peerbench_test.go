package main

import (
	"strings"
	"testing"
	"time"
)

const wrkReport = `Running 5s test @ http://127.0.0.1:40000/api/auth/me
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    14.21ms    9.02ms 120.34ms   80.12%
    Req/Sec     2.31k   310.22     2.90k    70.00%
  Latency Distribution
     50%   12.50ms
     75%   17.00ms
     90%   24.10ms
     99%   51.30ms
  11550 requests in 5.01s, 4.10MB read
Requests/sec:   2305.39
Transfer/sec:    837.95KB
STATUS 200=11540 401=10
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk(wrkReport)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 11550 || r.Seconds != 5.01 {
		t.Errorf("requests, seconds = %d, %v; want 11550, 5.01", r.Requests, r.Seconds)
	}
	if r.Mean != 14210*time.Microsecond || r.P50 != 12500*time.Microsecond || r.P99 != 51300*time.Microsecond {
		t.Errorf("mean, p50, p99 = %v, %v, %v; want 14.21ms, 12.5ms, 51.3ms", r.Mean, r.P50, r.P99)
	}
	if r.Status[200] != 11540 || r.Status[401] != 10 || len(r.Status) != 2 {
		t.Errorf("status = %v; want 200=11540 401=10", r.Status)
	}
	if r.Errors != "" {
		t.Errorf("errors = %q; want none", r.Errors)
	}
}

func TestParseWrkSocketErrors(t *testing.T) {
	out := strings.Replace(wrkReport, "Requests/sec", "  Socket errors: connect 0, read 3, write 0, timeout 2\nRequests/sec", 1)
	r, err := parseWrk(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != "Socket errors: connect 0, read 3, write 0, timeout 2" {
		t.Errorf("errors = %q", r.Errors)
	}
}

func TestParseWrkRefusesIncompleteReports(t *testing.T) {
	for name, out := range map[string]string{
		"no count":  strings.Replace(wrkReport, "11550 requests in 5.01s", "", 1),
		"no p99":    strings.Replace(wrkReport, "     99%   51.30ms\n", "", 1),
		"no STATUS": strings.Replace(wrkReport, "STATUS 200=11540 401=10\n", "", 1),
		"bad unit":  strings.Replace(wrkReport, "5.01s", "5.01h", 1),
		"empty":     "",
		"no mean":   strings.Replace(wrkReport, "    Latency    14.21ms    9.02ms 120.34ms   80.12%\n", "", 1),
	} {
		if _, err := parseWrk(out); err == nil {
			t.Errorf("%s: parseWrk accepted it", name)
		}
	}
}

func TestRate(t *testing.T) {
	check := run{Kind: "check", wrkResult: wrkResult{Requests: 1000, Seconds: 4}}
	if got := check.rate(); got != 250 {
		t.Errorf("check rate = %v; want 250 (requests / seconds)", got)
	}
	// A login run: 2 connections, 500 ms each: 4 logins/s, though wrk
	// counted only the 18 that ended before it stopped.
	login := run{Kind: "login", Conns: 2, wrkResult: wrkResult{Requests: 18, Seconds: 5, Mean: 500 * time.Millisecond}}
	if got := login.rate(); got != 4 {
		t.Errorf("login rate = %v; want 4 (connections / mean latency)", got)
	}
	if got := (run{CPU: 0.5, wrkResult: wrkResult{Requests: 1000}}).cpuPerRequest(); got != 0.0005 {
		t.Errorf("cpuPerRequest = %v; want 0.0005", got)
	}
}

func TestSpreadAndVerdict(t *testing.T) {
	if s := spreadOf([]float64{5, 1, 3, 9, 7}); s != (spread{1, 5, 9}) {
		t.Errorf("odd spread = %+v", s)
	}
	if s := spreadOf([]float64{4, 1, 3, 2}); s != (spread{1, 2.5, 4}) {
		t.Errorf("even spread = %+v", s)
	}
	for _, tc := range []struct {
		ak, ba float64
		higher bool
		want   string
	}{
		{200, 100, true, "ahead, ×2.00"},
		{50, 100, true, "**behind**, ×2.00"},
		{1, 3, false, "ahead, ×3.00"},
		{3, 1, false, "**behind**, ×3.00"},
		{0, 1, true, "-"},
	} {
		if got := verdict(tc.ak, tc.ba, tc.higher); got != tc.want {
			t.Errorf("verdict(%v, %v, %v) = %q; want %q", tc.ak, tc.ba, tc.higher, got, tc.want)
		}
	}
}

func TestSchemaURLs(t *testing.T) {
	u, err := withSearchPath("postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "peerbench_ak_1")
	if err != nil {
		t.Fatal(err)
	}
	if u != "postgres://postgres@127.0.0.1:5432/test?search_path=peerbench_ak_1&sslmode=disable" {
		t.Errorf("withSearchPath = %q", u)
	}
	schema, base, err := splitSchema(u)
	if err != nil || schema != "peerbench_ak_1" || base != "postgres://postgres@127.0.0.1:5432/test" {
		t.Errorf("splitSchema = %q, %q, %v", schema, base, err)
	}
}

func TestScript(t *testing.T) {
	s := script(request{method: "POST", path: "/api/auth/login", body: `{"email":"a\"b"}`,
		header: map[string]string{"X-Forwarded-For": "203.0.113.7"}})
	for _, want := range []string{
		`wrk.method = "POST"`,
		`wrk.body = "{\"email\":\"a\\\"b\"}"`,
		`wrk.headers["X-Forwarded-For"] = "203.0.113.7"`,
		`io.write("STATUS")`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %s:\n%s", want, s)
		}
	}
}
