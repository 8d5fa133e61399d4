package redistest

import (
	"context"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterNodeTimeout is the cluster-node-timeout of a Cluster: how long a
// primary must be unreachable before the others mark it failed and its
// replica takes over (Redis's default is 15 seconds).
const ClusterNodeTimeout = time.Second

// Cluster is a Redis Cluster of three primaries, each with one replica,
// started by StartCluster.
type Cluster struct {
	// Nodes are the six nodes in the order given to redis-cli --cluster
	// create: the first three began as the primaries. Which node is a
	// primary changes with every failover; CLUSTER NODES on any of them
	// tells.
	Nodes []*Node
}

// StartCluster starts a Cluster from the machine's redis-server on free
// ports of 127.0.0.1, each node with a cluster bus port of its own and a
// folder of its own under tb.TempDir, joins it with redis-cli --cluster
// create, and returns once every node sees the cluster ok and every
// replica is in sync. Every node is killed, and its files removed, when tb
// ends. It skips tb when redis-server or redis-cli is not installed, or
// fails it when AUTHKIT_REQUIRE_SERVICES=1. It never touches another
// Redis. Starting takes about two seconds; tb's log says how long.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	bins := lookPaths(tb, "the Redis Cluster tests", "redis-server", "redis-cli")
	began := time.Now()
	dir := tb.TempDir()
	ports := freePorts(tb, 12)
	c := &Cluster{}
	for i := range 6 {
		nodeDir := filepath.Join(dir, strconv.Itoa(i))
		port, busPort := ports[2*i], ports[2*i+1]
		c.Nodes = append(c.Nodes, start(tb, bins[0], nodeDir, port, dataConf(port,
			"cluster-enabled yes", "cluster-port "+strconv.Itoa(busPort), "cluster-config-file nodes.conf",
			"cluster-node-timeout "+strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10))))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range c.Nodes {
		waitFor(tb, ctx, n, "answers PING", func(rc *redis.Client) bool { return rc.Ping(ctx).Err() == nil })
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, bins[1], args...).CombinedOutput(); err != nil {
		tb.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, n := range c.Nodes {
		waitFor(tb, ctx, n, "sees the cluster ok, with six nodes and a synced link", func(rc *redis.Client) bool {
			info, err := rc.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:6") {
				return false
			}
			repl, err := rc.Info(ctx, "replication").Result()
			return err == nil && (strings.Contains(repl, "role:master") && strings.Contains(repl, "connected_slaves:1") ||
				strings.Contains(repl, "role:slave") && strings.Contains(repl, "master_link_status:up"))
		})
	}
	tb.Logf("redistest: a Cluster of six nodes up in %v", time.Since(began).Round(time.Millisecond))
	return c
}

// Addrs returns the addresses of the six nodes, in the order of Nodes.
func (c *Cluster) Addrs() []string { return addrs(c.Nodes) }

// Node returns the node listening on addr, or nil if none does.
func (c *Cluster) Node(addr string) *Node {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// URL returns the cluster's address as redis.ParseClusterURL reads it:
// redis://<first node>?addr=<second node>&addr=...
func (c *Cluster) URL() string {
	q := url.Values{"addr": c.Addrs()[1:]}
	return (&url.URL{Scheme: "redis", Host: c.Nodes[0].Addr, RawQuery: q.Encode()}).String()
}

// Client returns a Cluster client seeded with every node, closed when tb
// ends. Its timeouts are short (250 ms), so that a call to a dead node
// fails fast.
func (c *Cluster) Client(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	rc := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:       c.Addrs(),
		DialTimeout: shortTimeout, ReadTimeout: shortTimeout, WriteTimeout: shortTimeout,
		PoolSize: 16,
	})
	tb.Cleanup(func() { _ = rc.Close() })
	return rc
}

// shortTimeout is the dial, read and write timeout of the clients that
// Cluster.Client and Sentinel.Client return.
const shortTimeout = 250 * time.Millisecond
