package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

const wrkOK = `Running 3s test @ http://127.0.0.1:40000/auth
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   812.11us  301.22us   9.10ms   91.02%
    Req/Sec    39.61k     2.01k   42.30k    80.00%
  118266 requests in 3.00s, 16.24MB read
Requests/sec:  39412.53
Transfer/sec:      5.41MB
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk(wrkOK)
	if err != nil {
		t.Fatal(err)
	}
	if r.requests != 118266 || r.rate != 39412.53 || r.latency != 812110*time.Nanosecond {
		t.Errorf("parseWrk = %+v, want 118266 requests at 39412.53/s, 812.11us mean latency", r)
	}
	slow := strings.Replace(wrkOK, "812.11us", "209.50ms", 1)
	if r, err := parseWrk(slow); err != nil || r.latency != 209500*time.Microsecond {
		t.Errorf("parseWrk(209.50ms) = %v, %v", r.latency, err)
	}
}

func TestParseWrkRejects(t *testing.T) {
	for name, out := range map[string]string{
		"non-2xx":  strings.Replace(wrkOK, "Requests/sec", "  Non-2xx or 3xx responses: 118266\nRequests/sec", 1),
		"timeouts": strings.Replace(wrkOK, "Requests/sec", "  Socket errors: connect 0, read 0, write 0, timeout 12\nRequests/sec", 1),
		"empty":    "",
		"nothing":  strings.Replace(wrkOK, "118266 requests", "0 requests", 1),
	} {
		if _, err := parseWrk(out); err == nil {
			t.Errorf("%s: parseWrk accepted it", name)
		}
	}
	ok := strings.Replace(wrkOK, "Requests/sec", "  Socket errors: connect 0, read 0, write 0, timeout 0\nRequests/sec", 1)
	if _, err := parseWrk(ok); err != nil {
		t.Errorf("zero socket errors: %v", err)
	}
}

func TestLuaString(t *testing.T) {
	got := luaString(`{"email":"a@b","password":"x\y` + "\n" + `"}`)
	want := `"{\"email\":\"a@b\",\"password\":\"x\\y\010\"}"`
	if got != want {
		t.Errorf("luaString = %s, want %s", got, want)
	}
}

func TestWrkSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "1s", 500 * time.Millisecond: "1s", 3 * time.Second: "3s", 3100 * time.Millisecond: "4s",
	} {
		if got := wrkSeconds(d); got != want {
			t.Errorf("wrkSeconds(%v) = %s, want %s", d, got, want)
		}
	}
}

func TestParseStat(t *testing.T) {
	// Fields 14 and 15 (utime, stime) are 1234 and 56; the command name
	// holds a space and a parenthesis.
	stat := "4242 (bench server) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 1234 56 0 0 20 0 3 0 100 0 0\n"
	if got, err := parseStat(stat); err != nil || got != 1290 {
		t.Errorf("parseStat = %d, %v; want 1290", got, err)
	}
	if _, err := parseStat("4242 (x) S 1"); err == nil {
		t.Error("a short stat line was accepted")
	}
	if n, err := cpuTicks(os.Getpid()); err != nil || n < 0 {
		t.Errorf("cpuTicks(self) = %d, %v", n, err)
	}
}
