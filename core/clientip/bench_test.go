package clientip

import (
	"net/netip"
	"strings"
	"testing"
)

// BenchmarkClientIP measures ClientIP with the resolver of a typical setup:
// two trusted prefixes.
func BenchmarkClientIP(b *testing.B) {
	benchmarks := []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"direct", "203.0.113.7:52100", nil, "203.0.113.7"},
		{"direct-spoofed", "203.0.113.7:52100", []string{"198.51.100.1, 10.0.0.1"}, "203.0.113.7"},
		{"3-hop", "10.0.0.3:40000", []string{"203.0.113.7, 10.0.0.1, 10.0.0.2"}, "203.0.113.7"},
		{"3-hop-ipv6", "[2001:db8:ffff::3]:40000", []string{"2001:db8:1:2::7, [2001:db8:ffff::1]:443", "2001:db8:ffff::2"}, "2001:db8:1:2::7"},
		{"10000-trusted-entries", "10.0.0.3:40000", []string{strings.Join(hops(10_000), ",")}, hops(10_000)[10_000-64]},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			want := netip.MustParseAddr(bm.want)
			b.ReportAllocs()
			for b.Loop() {
				if got, ok := proxies.ClientIP(bm.remote, bm.xff); !ok || got != want {
					b.Fatalf("ClientIP = %v, %v; want %v", got, ok, want)
				}
			}
		})
	}
}

func BenchmarkKey(b *testing.B) {
	for _, s := range []string{"203.0.113.7", "2001:db8:1:2::7"} {
		a := netip.MustParseAddr(s)
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if Key(a) == "" {
					b.Fatal("empty key")
				}
			}
		})
	}
}
