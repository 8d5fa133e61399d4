package redistest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
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
// touches another Redis. Starting takes about a second; tb's log says
// how long.
func StartSentinel(tb testing.TB) *Sentinel {
	tb.Helper()
	bin := lookPaths(tb, "the Redis Sentinel tests", "redis-server")[0]
	began := time.Now()
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
	tb.Logf("redistest: a primary, its replica and three sentinels up in %v", time.Since(began).Round(time.Millisecond))
	return s
}

// SentinelAddrs returns the addresses of the three sentinels.
func (s *Sentinel) SentinelAddrs() []string { return addrs(s.Sentinels) }

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
		if n.Addr == net.JoinHostPort(addr[0], addr[1]) {
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
// every sentinel names the same data node as the primary, which answers
// as one; the other data node is its replica, in sync; every sentinel
// sees that replica up, and the two other sentinels. After a failover it
// waits for the old primary to come back as the new one's replica; after
// a kill, with one data node left, it cannot hold.
//
// While it waits the sentinels poll their nodes every 200 ms (SENTINEL
// DEBUG info-period and publish-period) instead of every 10 and 2
// seconds, so that they find each other, and turn an old primary into a
// replica, within a second or two instead of ten; it gives them Redis's
// periods back before it returns, so that a failover runs at the pace it
// has in production.
func (s *Sentinel) WaitReady(tb testing.TB, timeout time.Duration) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	clients := map[*Node]*redis.Client{}
	for _, n := range append(s.Data, s.Sentinels...) {
		clients[n] = redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1, DialTimeout: time.Second})
		defer clients[n].Close()
	}
	for _, n := range s.Sentinels {
		// A sentinel just started may not listen yet (a loaded machine
		// takes a while): ask until it answers, or has exited.
		waitFor(tb, ctx, n, "answered SENTINEL DEBUG", func(*redis.Client) bool {
			return clients[n].Do(ctx, "sentinel", "debug", "info-period", 200, "publish-period", 200).Err() == nil
		})
		defer func() {
			// Redis's defaults, on a context of its own: ctx may be over.
			if err := clients[n].Do(context.Background(), "sentinel", "debug", "info-period", 10000, "publish-period", 2000).Err(); err != nil {
				tb.Errorf("SENTINEL DEBUG on %s: %v", n.Addr, err)
			}
		}()
	}
	for {
		why := s.notReady(ctx, clients)
		if why == "" {
			return
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("the Sentinel set is not ready after %v: %s", timeout, why)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// notReady returns why the set is not ready (see WaitReady), or "" if it
// is, asking each node through its client in clients.
func (s *Sentinel) notReady(ctx context.Context, clients map[*Node]*redis.Client) string {
	var primary, replica *Node
	for i, n := range s.Sentinels {
		cmd := redis.NewStringSliceCmd(ctx, "sentinel", "get-master-addr-by-name", SentinelMasterName)
		err := clients[n].Process(ctx, cmd)
		addr := cmd.Val()
		if err != nil || len(addr) != 2 {
			return fmt.Sprintf("sentinel %s names no primary: %v", n.Addr, err)
		}
		named := net.JoinHostPort(addr[0], addr[1])
		if i == 0 {
			for j, d := range s.Data {
				if d.Addr == named {
					primary, replica = d, s.Data[1-j]
				}
			}
			if primary == nil {
				return "sentinel " + n.Addr + " names " + named + ", no data node of the set"
			}
		} else if named != primary.Addr {
			return fmt.Sprintf("sentinel %s names %s, sentinel %s names %s", s.Sentinels[0].Addr, primary.Addr, n.Addr, named)
		}
	}
	info, err := clients[primary].Info(ctx, "replication").Result()
	if err != nil || !strings.Contains(info, "role:master") || strings.Contains(info, "connected_slaves:0") {
		return fmt.Sprintf("%s is no primary with a replica (%v)", primary.Addr, err)
	}
	info, err = clients[replica].Info(ctx, "replication").Result()
	if err != nil || !strings.Contains(info, "role:slave") || !strings.Contains(info, "master_link_status:up") ||
		!strings.Contains(info, "master_port:"+primary.Addr[strings.LastIndexByte(primary.Addr, ':')+1:]) {
		return fmt.Sprintf("%s is no replica in sync with %s (%v)", replica.Addr, primary.Addr, err)
	}
	for _, n := range s.Sentinels {
		m := redis.NewMapStringStringCmd(ctx, "sentinel", "master", SentinelMasterName)
		if err := clients[n].Process(ctx, m); err != nil || m.Val()["flags"] != "master" ||
			m.Val()["num-other-sentinels"] != strconv.Itoa(len(s.Sentinels)-1) {
			return fmt.Sprintf("sentinel %s: master %v, %v", n.Addr, m.Val(), err)
		}
		r := redis.NewMapStringStringSliceCmd(ctx, "sentinel", "replicas", SentinelMasterName)
		if err := clients[n].Process(ctx, r); err != nil {
			return fmt.Sprintf("sentinel %s: replicas: %v", n.Addr, err)
		}
		if !slices.ContainsFunc(r.Val(), func(rep map[string]string) bool {
			return net.JoinHostPort(rep["ip"], rep["port"]) == replica.Addr && rep["flags"] == "slave" && rep["master-link-status"] == "ok"
		}) {
			return fmt.Sprintf("sentinel %s does not see %s as an ok replica: %v", n.Addr, replica.Addr, r.Val())
		}
	}
	return ""
}
