package main

import (
	"strings"
	"testing"
)

const input = `goos: linux
BenchmarkX/dist=hot/impl=a-2   	 100	 100.0 ns/op	 0 B/op
BenchmarkX/dist=hot/impl=b-2   	 100	 300.0 ns/op	 40 B/op
BenchmarkX/dist=hot/impl=a-2   	 100	 120.0 ns/op	 0 B/op
BenchmarkX/dist=hot/impl=b-2   	 100	 360.0 ns/op	 40 B/op
BenchmarkX/dist=hot/impl=a-2   	 100	 110.0 ns/op	 0 B/op
BenchmarkX/dist=cold/impl=b-2  	 100	 5.0 ns/op
BenchmarkX/dist=hot/impl=a-2 some log line
PASS
`

func TestTable(t *testing.T) {
	rs, err := parse(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 6 {
		t.Fatalf("parsed %d results, want 6", len(rs))
	}
	var b strings.Builder
	if err := table(&b, rs, "impl", "sec/op", false); err != nil {
		t.Fatal(err)
	}
	want := `| benchmark | a sec/op | b sec/op | b / a |
| --- | --- | --- | --- |
| X/dist=hot-2 | 110 ns | 330 ns | 3.00 |
| X/dist=cold-2 |  | 5 ns |  |
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	// Run by run: 300/100 and 360/120 are both 3.
	if err := table(&b, rs, "impl", "sec/op", true); err != nil || !strings.Contains(b.String(), "| X/dist=hot-2 | 110 ns | 330 ns | 3.00 |") {
		t.Errorf("paired table:\n%s (%v)", b.String(), err)
	}
	if err := table(&b, rs, "impl", "req/s", false); err == nil {
		t.Error("a unit no benchmark reports gave no error")
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct{ name, col, row, value string }{
		{"HTTP/fw=gin/route=auth-2", "route", "HTTP/fw=gin-2", "auth"},
		{"HTTPLoad/fw=fiber/route=auth-next-1", "route", "HTTPLoad/fw=fiber-1", "auth-next"},
		{"Token/op=verify/impl=jwt-hs256", "impl", "Token/op=verify", "jwt-hs256"},
		{"Login/path=hash-2", "path", "Login-2", "hash"},
		{"Secretbox/op=encrypt-2", "impl", "Secretbox/op=encrypt-2", ""},
	} {
		if row, value := split(c.name, c.col); row != c.row || value != c.value {
			t.Errorf("split(%s, %s) = %s, %s; want %s, %s", c.name, c.col, row, value, c.row, c.value)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{99.44e-9, "sec/op", "99.4 ns"}, {17.23e-6, "sec/op", "17.2 µs"}, {0.2125, "sec/op", "212 ms"},
		{84655.6, "req/s", "84656"}, {0.11, "refused/op", "0.11"}, {52.61, "B/key", "52.6"}, {3, "allocs/op", "3"},
	} {
		if got := format(c.v, c.unit); got != c.want {
			t.Errorf("format(%v, %s) = %s, want %s", c.v, c.unit, got, c.want)
		}
	}
}
