package proc

import (
	"bufio"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestStop: a process that honours SIGTERM ends by it; one that ignores it
// is killed once the grace has passed.
func TestStop(t *testing.T) {
	for _, c := range []struct {
		name   string
		script string
		want   syscall.Signal
	}{
		{"honours SIGTERM", "echo ready; exec sleep 60", syscall.SIGTERM},
		{"ignores SIGTERM", `trap "" TERM; echo ready; sleep 60 & wait`, syscall.SIGKILL},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", c.script)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The shell says ready once its trap is set.
			if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
				t.Fatalf("the script said %q, %v", line, err)
			}
			Stop(cmd, 500*time.Millisecond)
			ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != c.want {
				t.Errorf("the process ended with %v, want by %v", cmd.ProcessState, c.want)
			}
		})
	}
}
