package redisstore

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// clusterPrimaries returns the addresses of the nodes that are primaries serving
// slots now (not marked failed), and for each the address of its replica
// (empty when it has none), as node seed sees them in CLUSTER NODES.
func clusterPrimaries(t *testing.T, seed string) (prims []string, replicaOf map[string]string) {
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
