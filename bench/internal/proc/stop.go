package proc

import (
	"os/exec"
	"syscall"
	"time"
)

// Stop ends a started server process the way its operator would: SIGTERM,
// so it shuts down cleanly, then waits for it, killing it when it has not
// exited after grace.
func Stop(cmd *exec.Cmd, grace time.Duration) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}
