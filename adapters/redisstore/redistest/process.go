package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/core/store/storetest"
)

// Node is one redis-server process (a data node or a sentinel) started by
// StartCluster or StartSentinel. It is killed when the test that started
// it ends.
type Node struct {
	// Addr is the address the node listens on: 127.0.0.1 and a port that
	// was free when it started.
	Addr string

	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// Kill ends the node at once (SIGKILL: no shutdown, no last words to a
// replica or a sentinel) and waits until it has exited. Killing a node
// twice is harmless.
func (n *Node) Kill() {
	_ = n.cmd.Process.Kill()
	<-n.done
}

// lookPaths returns the paths of the named programs. It skips tb, naming
// what is missing and what, when one is not installed, or fails it when
// AUTHKIT_REQUIRE_SERVICES=1.
func lookPaths(tb testing.TB, what string, names ...string) []string {
	tb.Helper()
	paths := make([]string, len(names))
	for i, name := range names {
		p, err := exec.LookPath(name)
		if err != nil {
			storetest.SkipMissing(tb, name, fmt.Sprintf("%s is not installed: skipping %s", name, what))
		}
		paths[i] = p
	}
	return paths
}

// start writes conf, the lines of a redis.conf, to a new folder dir, runs
// the redis-server at bin on it with flags (its output goes to
// dir/redis.log) and returns the node listening on port, which conf
// names. The node is killed when tb ends; tb's cleanups run last first, so
// that happens before the removal of the t.TempDir that holds dir.
func start(tb testing.TB, bin, dir string, port int, conf []string, flags ...string) *Node {
	tb.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	confPath := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(confPath, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{confPath}, flags...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		tb.Fatalf("start %s: %v", bin, err)
	}
	n := &Node{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = log.Close(); close(n.done) }()
	tb.Cleanup(n.Kill)
	return n
}

// baseConf is the start of every node's redis.conf: 127.0.0.1 only, the
// port, files in the node's folder (its working directory).
func baseConf(port int) []string {
	return []string{"bind 127.0.0.1", "port " + strconv.Itoa(port), "dir ."}
}

// dataConf is the redis.conf of a data node: baseConf, no persistence,
// and replicas that sync at once without touching the disk; then more.
func dataConf(port int, more ...string) []string {
	return append(append(baseConf(port), `save ""`, "appendonly no",
		"repl-diskless-sync yes", "repl-diskless-sync-delay 0"), more...)
}

// waitFor polls ok on a client of node n until it holds, failing tb when
// ctx ends or n exits first.
func waitFor(tb testing.TB, ctx context.Context, n *Node, what string, ok func(*redis.Client) bool) {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	for !ok(c) {
		select {
		case <-ctx.Done():
			tb.Fatalf("node %s never %s", n.Addr, what)
		case <-n.done:
			tb.Fatalf("node %s exited before it %s; its log ends:\n%s", n.Addr, what, n.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// freePorts returns n distinct TCP ports of 127.0.0.1 that were free: all
// are held open together, so none is handed out twice, then released.
func freePorts(tb testing.TB, n int) []int {
	tb.Helper()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatalf("find a free port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// addrs returns the addresses of nodes.
func addrs(nodes []*Node) []string {
	a := make([]string, len(nodes))
	for i, n := range nodes {
		a[i] = n.Addr
	}
	return a
}

// logTail returns the last lines of n's log, for a failure message.
func (n *Node) logTail() string {
	b, err := os.ReadFile(filepath.Join(n.cmd.Dir, "redis.log"))
	if err != nil {
		return err.Error()
	}
	return string(b[max(0, len(b)-1500):])
}
