// Package proc reads a process's CPU time and resident memory from Linux's
// /proc, for the load commands that measure a server process from outside
// (cmd/loadbench, cmd/peerbench), and stops that process when they are done.
package proc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ClockTicks is USER_HZ, the unit of the CPU times in /proc/PID/stat: 100
// on every Linux architecture Go supports.
const ClockTicks = 100

// CPUTicks returns the user and system CPU time of process pid (all its
// threads), in clock ticks.
func CPUTicks(pid int) (int64, error) { return read(pid, "stat", ParseStat) }

// ParseStat returns utime + stime from the text of /proc/PID/stat (fields
// 14 and 15; the command name, field 2, may hold spaces and parentheses but
// ends at the last ')').
func ParseStat(s string) (int64, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no command name")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, errors.New("/proc stat: too few fields")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc stat: utime %q, stime %q", f[11], f[12])
	}
	return utime + stime, nil
}

// RSS returns the resident set size of process pid in bytes (VmRSS).
func RSS(pid int) (int64, error) { return read(pid, "status", ParseRSS) }

// read parses /proc/PID/name with parse.
func read(pid int, name string, parse func(string) (int64, error)) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
	if err != nil {
		return 0, err
	}
	return parse(string(b))
}

// ParseRSS returns VmRSS, in bytes, from the text of /proc/PID/status.
func ParseRSS(status string) (int64, error) {
	for line := range strings.Lines(status) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc status: VmRSS %q", v)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("/proc status: no VmRSS")
}
