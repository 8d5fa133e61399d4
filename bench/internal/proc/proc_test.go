package proc

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       int64
	}{
		// Fields 14 and 15 (utime, stime) are 1234 and 56; the command
		// name holds a space and a parenthesis.
		{"name with a space and a paren", "4242 (bench server) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 1234 56 0 0 20 0 3 0 100 0 0\n", 1290},
		{"nested parens", "4242 (node (main)) S 1 2 3 4 5 6 7 8 9 10 123 45 0 0 20 0 11 0 99 1000 2000", 168},
	} {
		if got, err := ParseStat(tc.stat); err != nil || got != tc.want {
			t.Errorf("%s: ParseStat = %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	for name, stat := range map[string]string{
		"too few fields":  "4242 (x) S 1",
		"no command name": "4242 node S 1",
	} {
		if _, err := ParseStat(stat); err == nil {
			t.Errorf("%s: ParseStat accepted %q", name, stat)
		}
	}
}

func TestParseRSS(t *testing.T) {
	b, err := ParseRSS("Name:\tnode\nVmPeak:\t  900 kB\nVmRSS:\t  123456 kB\nThreads:\t11\n")
	if err != nil || b != 123456*1024 {
		t.Errorf("ParseRSS = %d, %v; want %d", b, err, 123456*1024)
	}
	if _, err := ParseRSS("Name:\tnode\n"); err == nil {
		t.Error("ParseRSS accepted a status without VmRSS")
	}
}

func TestSelf(t *testing.T) {
	if n, err := CPUTicks(os.Getpid()); err != nil || n < 0 {
		t.Errorf("CPUTicks(self) = %d, %v", n, err)
	}
	if n, err := RSS(os.Getpid()); err != nil || n <= 0 {
		t.Errorf("RSS(self) = %d, %v", n, err)
	}
}
