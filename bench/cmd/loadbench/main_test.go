package main

import (
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
