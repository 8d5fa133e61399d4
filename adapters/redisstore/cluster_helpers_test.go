package redisstore

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterNodeTimeout is the cluster-node-timeout of the test cluster: how
// long a primary must be unreachable before the others mark it failed and
// its replica takes over (Redis's default is 15 seconds).
const clusterNodeTimeout = time.Second

// testCluster is a Redis Cluster of three primaries, each with one replica,
// started by startCluster from the machine's redis-server on free ports of
// 127.0.0.1, in a temporary folder of its own.
type testCluster struct {
	nodes []*clusterNode // in the order given to redis-cli --cluster create
}

// clusterNode is one redis-server process of a testCluster.
type clusterNode struct {
	addr string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// startCluster starts a testCluster for t and stops every process (and
// removes its files, through t.TempDir) when t ends. It skips t when
// redis-server or redis-cli is not installed, or fails it when
// AUTHKIT_REQUIRE_SERVICES=1. It never touches another Redis: each node
// listens on a port, and a cluster bus port, that were free when it began.
func startCluster(t *testing.T) *testCluster {
	t.Helper()
	var bins [2]string
	for i, name := range []string{"redis-server", "redis-cli"} {
		p, err := exec.LookPath(name)
		if err != nil {
			if os.Getenv("AUTHKIT_REQUIRE_SERVICES") == "1" {
				t.Fatalf("%s is not installed and AUTHKIT_REQUIRE_SERVICES=1: the Redis Cluster tests need it", name)
			}
			t.Skipf("%s is not installed: skipping the Redis Cluster tests", name)
		}
		bins[i] = p
	}
	dir := t.TempDir()
	ports := freePorts(t, 12)
	tc := &testCluster{}
	t.Cleanup(tc.stop) // before TempDir's removal: cleanups run last first
	for i := range 6 {
		nodeDir := filepath.Join(dir, strconv.Itoa(i))
		if err := os.Mkdir(nodeDir, 0o700); err != nil {
			t.Fatal(err)
		}
		log, err := os.Create(filepath.Join(nodeDir, "redis.log"))
		if err != nil {
			t.Fatal(err)
		}
		port, busPort := ports[2*i], ports[2*i+1]
		cmd := exec.Command(bins[0],
			"--bind", "127.0.0.1", "--port", strconv.Itoa(port),
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(busPort),
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(clusterNodeTimeout.Milliseconds(), 10),
			"--dir", nodeDir, "--save", "", "--appendonly", "no",
			"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			_ = log.Close()
			t.Fatalf("start redis-server: %v", err)
		}
		n := &clusterNode{addr: "127.0.0.1:" + strconv.Itoa(port), cmd: cmd, done: make(chan struct{})}
		go func() { _ = cmd.Wait(); _ = log.Close(); close(n.done) }()
		tc.nodes = append(tc.nodes, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range tc.nodes {
		tc.waitFor(t, ctx, n, "answers PING", func(c *redis.Client) bool { return c.Ping(ctx).Err() == nil })
	}
	args := []string{"--cluster", "create"}
	for _, n := range tc.nodes {
		args = append(args, n.addr)
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, bins[1], args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, n := range tc.nodes {
		tc.waitFor(t, ctx, n, "sees the cluster ok, with six nodes and a synced link", func(c *redis.Client) bool {
			info, err := c.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:6") {
				return false
			}
			repl, err := c.Info(ctx, "replication").Result()
			return err == nil && (strings.Contains(repl, "role:master") && strings.Contains(repl, "connected_slaves:1") ||
				strings.Contains(repl, "role:slave") && strings.Contains(repl, "master_link_status:up"))
		})
	}
	return tc
}

// waitFor polls ok on a client of node n until it holds, failing t when
// ctx ends first.
func (tc *testCluster) waitFor(t *testing.T, ctx context.Context, n *clusterNode, what string, ok func(*redis.Client) bool) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: n.addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	for !ok(c) {
		select {
		case <-ctx.Done():
			t.Fatalf("node %s never %s", n.addr, what)
		case <-n.done:
			t.Fatalf("node %s exited before it %s", n.addr, what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop kills every node still running and waits for it to exit.
func (tc *testCluster) stop() {
	for _, n := range tc.nodes {
		n.kill()
	}
}

// kill ends node n at once (SIGKILL: no shutdown, no last words to its
// replica) and waits until it has exited.
func (n *clusterNode) kill() {
	_ = n.cmd.Process.Kill()
	<-n.done
}

// primaries returns the addresses of the nodes that are primaries serving
// slots now (not marked failed), and for each the address of its replica
// (empty when it has none), as node seed sees them in CLUSTER NODES.
func (tc *testCluster) primaries(t *testing.T, seed string) (prims []string, replicaOf map[string]string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: seed})
	defer c.Close()
	out, err := c.ClusterNodes(context.Background()).Result()
	if err != nil {
		t.Fatalf("CLUSTER NODES on %s: %v", seed, err)
	}
	// <id> <ip:port@cport> <flags> <master id or -> <ping> <pong> <epoch>
	// <link> <slot ranges (of a primary that serves some)>...
	idAddr := map[string]string{}
	type line struct {
		addr, flags, master string
		slots               bool
	}
	var lines []line
	for l := range strings.Lines(out) {
		f := strings.Fields(l)
		if len(f) < 4 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		idAddr[f[0]] = addr
		lines = append(lines, line{addr, f[2], f[3], len(f) > 8})
	}
	replicaOf = map[string]string{}
	for _, l := range lines {
		flags := strings.Split(l.flags, ",")
		switch {
		case slices.Contains(flags, "fail"):
		case slices.Contains(flags, "master") && l.slots:
			prims = append(prims, l.addr)
		case slices.Contains(flags, "slave"):
			replicaOf[idAddr[l.master]] = l.addr
		}
	}
	slices.Sort(prims)
	return prims, replicaOf
}

// node returns the node listening on addr.
func (tc *testCluster) node(t *testing.T, addr string) *clusterNode {
	t.Helper()
	for _, n := range tc.nodes {
		if n.addr == addr {
			return n
		}
	}
	t.Fatalf("no node at %s", addr)
	return nil
}

// client returns a Cluster client seeded with every node, closed when t
// ends. Its timeouts are short, so that a call to a dead node fails fast.
func (tc *testCluster) client(t *testing.T) *redis.ClusterClient {
	t.Helper()
	addrs := make([]string, len(tc.nodes))
	for i, n := range tc.nodes {
		addrs[i] = n.addr
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:       addrs,
		DialTimeout: 250 * time.Millisecond, ReadTimeout: 250 * time.Millisecond, WriteTimeout: 250 * time.Millisecond,
		PoolSize: 16,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// freePorts returns n distinct TCP ports of 127.0.0.1 that were free: all
// are held open together, so none is handed out twice, then released.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
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
			t.Fatalf("find a free port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// masterAddr returns the address of the primary that serves key's slot,
// as c sees it.
func masterAddr(t *testing.T, c *redis.ClusterClient, key string) string {
	t.Helper()
	m, err := c.MasterForKey(context.Background(), key)
	if err != nil {
		t.Fatalf("MasterForKey(%q): %v", key, err)
	}
	return m.Options().Addr
}
