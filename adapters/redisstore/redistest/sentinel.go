package redistest

import (
	"context"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMasterName is the name under which the sentinels of a Sentinel
// watch its primary (go-redis's FailoverOptions.MasterName).
const SentinelMasterName = "authkit"

// SentinelDownAfter is the down-after-milliseconds of a Sentinel's
// sentinels: how long the primary must be unreachable before a sentinel
// holds it down (Redis's default is 30 seconds). Two of the three must
// agree before one of them promotes the replica.
const SentinelDownAfter = time.Second

// Sentinel is a primary with one replica, watched by three sentinels,
// started by StartSentinel.
type Sentinel struct {
	// Data are the two data nodes: Data[0] began as the primary, Data[1]
	// as its replica. Which is the primary changes with every failover;
	// Primary tells.
	Data []*Node
	// Sentinels are the three sentinels, each a redis-server --sentinel.
	Sentinels []*Node
}

// StartSentinel starts a Sentinel from the machine's redis-server on free
// ports of 127.0.0.1, each process in a folder of its own under
// tb.TempDir, and returns once WaitReady holds. Every process is killed,
// and its files removed, when tb ends. It skips tb when redis-server is
// not installed, or fails it when AUTHKIT_REQUIRE_SERVICES=1. It never
// touches another Redis. Starting takes two to three seconds, most of it
// the sentinels finding each other.
func StartSentinel(tb testing.TB) *Sentinel {
	tb.Helper()
	bin := lookPaths(tb, "the Redis Sentinel tests", "redis-server")[0]
	dir := tb.TempDir()
	ports := freePorts(tb, 5)
	s := &Sentinel{}
	primary := "127.0.0.1 " + strconv.Itoa(ports[0])
	s.Data = append(s.Data,
		start(tb, bin, filepath.Join(dir, "primary"), ports[0], dataConf(ports[0])),
		start(tb, bin, filepath.Join(dir, "replica"), ports[1], dataConf(ports[1], "replicaof "+primary)))
	for i, port := range ports[2:] {
		conf := append(baseConf(port),
			"sentinel monitor "+SentinelMasterName+" "+primary+" 2",
			"sentinel down-after-milliseconds "+SentinelMasterName+" "+strconv.FormatInt(SentinelDownAfter.Milliseconds(), 10),
			"sentinel failover-timeout "+SentinelMasterName+" 5000")
		s.Sentinels = append(s.Sentinels, start(tb, bin, filepath.Join(dir, "sentinel"+strconv.Itoa(i)), port, conf, "--sentinel"))
	}
	s.WaitReady(tb, 30*time.Second)
	return s
}

// SentinelAddrs returns the addresses of the three sentinels.
func (s *Sentinel) SentinelAddrs() []string {
	addrs := make([]string, len(s.Sentinels))
	for i, n := range s.Sentinels {
		addrs[i] = n.Addr
	}
	return addrs
}

// URL returns the sentinels' addresses and the master name as
// redis.ParseFailoverURL reads them:
// redis://<first sentinel>?addr=<second>&addr=<third>&master_name=authkit
func (s *Sentinel) URL() string {
	q := url.Values{"addr": s.SentinelAddrs()[1:], "master_name": {SentinelMasterName}}
	return (&url.URL{Scheme: "redis", Host: s.Sentinels[0].Addr, RawQuery: q.Encode()}).String()
}

// Client returns a go-redis failover client (redis.NewFailoverClient) on
// the sentinels, closed when tb ends. Its timeouts are short (250 ms), so
// that a call to a dead primary fails fast.
func (s *Sentinel) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	rc := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: SentinelMasterName, SentinelAddrs: s.SentinelAddrs(),
		DialTimeout: shortTimeout, ReadTimeout: shortTimeout, WriteTimeout: shortTimeout,
		PoolSize: 16,
	})
	tb.Cleanup(func() { _ = rc.Close() })
	return rc
}

// Primary returns the data node that the first sentinel names as the
// primary now, failing tb if it names none of them.
func (s *Sentinel) Primary(tb testing.TB) *Node {
	tb.Helper()
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Sentinels[0].Addr})
	defer sc.Close()
	addr, err := sc.GetMasterAddrByName(context.Background(), SentinelMasterName).Result()
	if err != nil || len(addr) != 2 {
		tb.Fatalf("SENTINEL GET-MASTER-ADDR-BY-NAME on %s = %v, %v", s.Sentinels[0].Addr, addr, err)
	}
	for _, n := range s.Data {
		if n.Addr == addr[0]+":"+addr[1] {
			return n
		}
	}
	tb.Fatalf("the sentinels name %s:%s as the primary, no data node of the set", addr[0], addr[1])
	return nil
}

// Replica returns the data node that is not Primary.
func (s *Sentinel) Replica(tb testing.TB) *Node {
	tb.Helper()
	if p := s.Primary(tb); p == s.Data[0] {
		return s.Data[1]
	}
	return s.Data[0]
}

// WaitReady waits, failing tb after timeout, until the set can fail over:
// every sentinel names the same primary, which answers as one and has a
// replica in sync with it; every sentinel sees that replica up, and the
// two other sentinels. After a failover it waits for the old primary to
// come back as the new one's replica; after a kill, with one data node
// left, it cannot hold.
func (s *Sentinel) WaitReady(tb testing.TB, timeout time.Duration) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	primary := s.Primary(tb)
	var replica *Node
	for _, n := range s.Data {
		if n != primary {
			replica = n
		}
	}
	waitFor(tb, ctx, primary, "is a primary with a replica", func(rc *redis.Client) bool {
		info, err := rc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "role:master") && !strings.Contains(info, "connected_slaves:0")
	})
	waitFor(tb, ctx, replica, "is a replica in sync with "+primary.Addr, func(rc *redis.Client) bool {
		info, err := rc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "role:slave") && strings.Contains(info, "master_link_status:up") &&
			strings.Contains(info, "master_port:"+primary.Addr[strings.LastIndexByte(primary.Addr, ':')+1:])
	})
	for _, n := range s.Sentinels {
		waitFor(tb, ctx, n, "sees "+primary.Addr+" as the primary, "+replica.Addr+" as its replica and the other sentinels", func(rc *redis.Client) bool {
			m := redis.NewMapStringStringCmd(ctx, "sentinel", "master", SentinelMasterName)
			if rc.Process(ctx, m) != nil || m.Val()["ip"]+":"+m.Val()["port"] != primary.Addr ||
				m.Val()["flags"] != "master" || m.Val()["num-other-sentinels"] != strconv.Itoa(len(s.Sentinels)-1) {
				return false
			}
			r := redis.NewMapStringStringSliceCmd(ctx, "sentinel", "replicas", SentinelMasterName)
			if rc.Process(ctx, r) != nil {
				return false
			}
			for _, rep := range r.Val() {
				if rep["ip"]+":"+rep["port"] == replica.Addr {
					return rep["flags"] == "slave" && rep["master-link-status"] == "ok"
				}
			}
			return false
		})
	}
}
