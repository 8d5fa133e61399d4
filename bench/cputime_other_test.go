//go:build !unix

package bench_test

// cpuNanos returns -1: the CPU time of the process is not read on this
// platform.
func cpuNanos() int64 { return -1 }
