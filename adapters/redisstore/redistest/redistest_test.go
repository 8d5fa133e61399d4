package redistest

import (
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestURLs: the URLs of a Cluster and of a Sentinel set name every node,
// or every sentinel and the master name, as go-redis's parsers read them.
func TestURLs(t *testing.T) {
	nodes := func(addrs ...string) []*Node {
		var ns []*Node
		for _, a := range addrs {
			ns = append(ns, &Node{Addr: a})
		}
		return ns
	}
	c := &Cluster{Nodes: nodes("127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003")}
	co, err := redis.ParseClusterURL(c.URL())
	if err != nil {
		t.Fatalf("ParseClusterURL(%q): %v", c.URL(), err)
	}
	if !slices.Equal(co.Addrs, c.Addrs()) {
		t.Errorf("ParseClusterURL(%q).Addrs = %v, want %v", c.URL(), co.Addrs, c.Addrs())
	}
	s := &Sentinel{Sentinels: nodes("127.0.0.1:26379", "127.0.0.1:26380", "127.0.0.1:26381")}
	fo, err := redis.ParseFailoverURL(s.URL())
	if err != nil {
		t.Fatalf("ParseFailoverURL(%q): %v", s.URL(), err)
	}
	if !slices.Equal(fo.SentinelAddrs, s.SentinelAddrs()) || fo.MasterName != SentinelMasterName {
		t.Errorf("ParseFailoverURL(%q) = %v, %q; want %v, %q", s.URL(), fo.SentinelAddrs, fo.MasterName, s.SentinelAddrs(), SentinelMasterName)
	}
}
