//go:build unix

package bench_test

import "syscall"

// cpuNanos returns the CPU time (user and system) the process has used so
// far, or -1 when it cannot tell.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
