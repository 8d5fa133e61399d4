package clientip

import (
	"net/netip"
	"strings"
	"testing"
)

// proxies is the resolver most tests use: an internal IPv4 network and an
// IPv6 /48 of load balancers.
var proxies = New(
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("2001:db8:ffff::/48"),
)

func TestClientIP(t *testing.T) {
	none, all := New(), TrustAll()
	tests := []struct {
		name   string
		r      *Resolver
		remote string
		xff    []string
		want   string // "" means ok == false
	}{
		// Untrusted peers: the header is ignored.
		{"direct, no header", proxies, "203.0.113.7:5000", nil, "203.0.113.7"},
		{"direct, spoofed header", proxies, "203.0.113.7:5000", []string{"198.51.100.1"}, "203.0.113.7"},
		{"direct, spoofed proxy address", proxies, "203.0.113.7:5000", []string{"203.0.113.9, 10.0.0.1"}, "203.0.113.7"},
		{"direct ipv6, spoofed header", proxies, "[2001:db8::1]:443", []string{"1.1.1.1"}, "2001:db8::1"},
		{"trust none, peer in private range", none, "10.0.0.1:80", []string{"203.0.113.7"}, "10.0.0.1"},
		{"trust none, loopback peer", none, "127.0.0.1:80", []string{"203.0.113.7"}, "127.0.0.1"},

		// Trusted peer.
		{"single hop", proxies, "10.0.0.1:1234", []string{"203.0.113.7"}, "203.0.113.7"},
		{"single hop ipv6 proxy", proxies, "[2001:db8:ffff::2]:443", []string{"2001:db8:1:2::5"}, "2001:db8:1:2::5"},
		{"trusted peer, no header", proxies, "10.0.0.1:1234", nil, "10.0.0.1"},
		{"trusted peer, empty header", proxies, "10.0.0.1:1234", []string{""}, "10.0.0.1"},
		{"trusted peer, blank header", proxies, "10.0.0.1:1234", []string{" \t ,  "}, "10.0.0.1"},
		{"chain of trusted proxies", proxies, "10.0.0.3:1", []string{"198.51.100.9, 203.0.113.7, 10.0.0.1, 10.0.0.2"}, "203.0.113.7"},
		{"chain across families", proxies, "[2001:db8:ffff::2]:443", []string{"203.0.113.7, 2001:db8:ffff::1, 10.9.9.9"}, "203.0.113.7"},
		{"all trusted: leftmost", proxies, "10.0.0.3:1", []string{"10.0.0.9, 10.0.0.1"}, "10.0.0.9"},

		// TrustAll: the spec's rule, the first entry.
		{"trust all: leftmost even when private", all, "10.0.0.3:1", []string{"192.168.1.20, 203.0.113.7"}, "192.168.1.20"},
		{"trust all: public peer's header believed", all, "203.0.113.7:1", []string{"  198.51.100.1 , 10.0.0.1"}, "198.51.100.1"},
		{"trust all: no header", all, "203.0.113.7:1", nil, "203.0.113.7"},
		{"trust all: several lines", all, "10.0.0.3:1", []string{"1.1.1.1, 2.2.2.2", "3.3.3.3"}, "1.1.1.1"},

		// Garbage stops the walk at the last trusted address.
		{"garbage only", proxies, "10.0.0.3:1", []string{"unknown"}, "10.0.0.3"},
		{"garbage rightmost", proxies, "10.0.0.3:1", []string{"203.0.113.7, unknown"}, "10.0.0.3"},
		{"garbage between trusted hops", proxies, "10.0.0.3:1", []string{"203.0.113.7, unknown, 10.0.0.1"}, "10.0.0.1"},
		{"garbage left of the client is never reached", proxies, "10.0.0.3:1", []string{"unknown, 203.0.113.7"}, "203.0.113.7"},
		{"trust all: garbage leftmost", all, "10.0.0.3:1", []string{"garbage, 203.0.113.7, 10.0.0.1"}, "203.0.113.7"},
		{"trust all: garbage rightmost", all, "10.0.0.3:1", []string{"203.0.113.7, _"}, "10.0.0.3"},
		{"garbage in an earlier line", proxies, "10.0.0.3:1", []string{"203.0.113.7 x", "10.0.0.1"}, "10.0.0.1"},

		// Empty entries are skipped.
		{"empty middle entry", proxies, "10.0.0.3:1", []string{"203.0.113.7,,10.0.0.1"}, "203.0.113.7"},
		{"leading and trailing commas", proxies, "10.0.0.3:1", []string{",203.0.113.7,"}, "203.0.113.7"},
		{"trust all: empties around the first", all, "10.0.0.3:1", []string{",, 1.2.3.4,,5.6.7.8,"}, "1.2.3.4"},
		{"empty line between lines", proxies, "10.0.0.3:1", []string{"198.51.100.1", "", "10.0.0.1"}, "198.51.100.1"},

		// Spaces and tabs.
		{"spaces and tabs", proxies, "10.0.0.3:1", []string{"\t203.0.113.7 \t,  10.0.0.1\t"}, "203.0.113.7"},
		{"spaced peer", proxies, " 203.0.113.7:1 ", nil, "203.0.113.7"},

		// Ports and brackets.
		{"ipv4 entry with port", proxies, "10.0.0.3:1", []string{"203.0.113.7:5000"}, "203.0.113.7"},
		{"bracketed ipv6 entry with port", proxies, "10.0.0.3:1", []string{"[2001:db8::7]:443"}, "2001:db8::7"},
		{"bracketed ipv6 entry", proxies, "10.0.0.3:1", []string{"[2001:db8::7]"}, "2001:db8::7"},
		{"trusted hop with port", proxies, "10.0.0.3:1", []string{"203.0.113.7, 10.0.0.1:8080, [2001:db8:ffff::9]:80"}, "203.0.113.7"},
		{"bare ipv4 peer", proxies, "10.0.0.3", []string{"203.0.113.7"}, "203.0.113.7"},
		{"bare ipv6 peer", proxies, "2001:db8::1", nil, "2001:db8::1"},
		{"bracketed ipv6 peer", proxies, "[2001:db8::1]", nil, "2001:db8::1"},
		{"port 0", proxies, "10.0.0.3:0", []string{"203.0.113.7:0"}, "203.0.113.7"},

		// Zones are removed.
		{"zoned peer", none, "[fe80::1%eth0]:80", nil, "fe80::1"},
		{"zoned entry", proxies, "10.0.0.3:1", []string{"fe80::1%eth0"}, "fe80::1"},
		{"zoned bracketed entry with port", proxies, "10.0.0.3:1", []string{"[fe80::1%eth0]:443"}, "fe80::1"},
		{"zoned trusted peer", New(netip.MustParsePrefix("fe80::/10")), "[fe80::1%eth0]:80", []string{"203.0.113.7"}, "203.0.113.7"},

		// IPv4-mapped IPv6 becomes IPv4.
		{"mapped peer", none, "[::ffff:203.0.113.7]:80", nil, "203.0.113.7"},
		{"mapped peer matches ipv4 prefix", proxies, "[::ffff:10.0.0.3]:80", []string{"::ffff:203.0.113.7"}, "203.0.113.7"},
		{"mapped trusted hop", proxies, "10.0.0.3:1", []string{"203.0.113.7, ::ffff:10.0.0.1"}, "203.0.113.7"},
		{"mapped bracketed entry", proxies, "10.0.0.3:1", []string{"[::ffff:203.0.113.7]:9"}, "203.0.113.7"},

		// Several header lines form one list.
		{"lines: client in first", proxies, "10.0.0.3:1", []string{"198.51.100.9, 203.0.113.7", "10.0.0.1, 10.0.0.2"}, "203.0.113.7"},
		{"lines: one entry each", proxies, "10.0.0.3:1", []string{"203.0.113.7", "10.0.0.1"}, "203.0.113.7"},
		{"lines: client in last", proxies, "10.0.0.3:1", []string{"198.51.100.9", "203.0.113.7"}, "203.0.113.7"},
		{"lines: all trusted", proxies, "10.0.0.3:1", []string{"10.0.0.9", "10.0.0.1"}, "10.0.0.9"},

		// Peers that are not IP addresses.
		{"unix socket peer", proxies, "@", []string{"203.0.113.7"}, ""},
		{"empty peer", none, "", nil, ""},
		{"host name peer", proxies, "localhost:80", []string{"203.0.113.7"}, ""},
		{"trust all: unix socket peer", all, "@", []string{"203.0.113.7, 10.0.0.1"}, "203.0.113.7"},
		{"trust all: unix socket, no header", all, "@", nil, ""},
		{"trust all: unix socket, garbage", all, "", []string{"junk"}, ""},
		{"trust all: unix socket, garbage left", all, "@", []string{"junk, 203.0.113.7"}, "203.0.113.7"},

		// The zero and nil resolvers trust nobody.
		{"zero resolver", &Resolver{}, "10.0.0.1:1", []string{"203.0.113.7"}, "10.0.0.1"},
		{"nil resolver", nil, "10.0.0.1:1", []string{"203.0.113.7"}, "10.0.0.1"},
		{"nil resolver, unix socket", nil, "@", []string{"203.0.113.7"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.r.ClientIP(tt.remote, tt.xff)
			checkResult(t, tt.remote, tt.xff, got, ok, tt.want)
		})
	}
}

func checkResult(t *testing.T, remote string, xff []string, got netip.Addr, ok bool, want string) {
	t.Helper()
	if want == "" {
		if ok || got.IsValid() {
			t.Errorf("ClientIP(%q, %q) = %v, %v; want no address", remote, xff, got, ok)
		}
		return
	}
	if !ok || got != netip.MustParseAddr(want) {
		t.Errorf("ClientIP(%q, %q) = %v, %v; want %s, true", remote, xff, got, ok, want)
	}
}

func TestClientIPGarbageEntries(t *testing.T) {
	garbage := []string{
		"unknown", "_hidden", "1.2.3", "1.2.3.4.5", "01.2.3.4", "256.1.1.1", "example.com",
		"[1.2.3.4]:80", "[1.2.3.4]", "1.2.3.4:", "1.2.3.4:99999", "1.2.3.4:-1", "1.2.3.4:+80",
		"1.2.3.4:0x50", "[::1", "::1]", "[::1]:", "[::1]80", "[::1]:80:80", "1.2.3.4 5.6.7.8",
		"2001:db8::g", "fe80::1%", "[]", "\"1.2.3.4\"", "1.2.3.4\x00", "1.2.3.4\n",
		"\u00a01.2.3.4",
	}
	for _, g := range garbage {
		for _, tt := range []struct {
			xff  string
			want string
		}{
			{g, "10.0.0.3"},
			{"203.0.113.7, " + g, "10.0.0.3"},
			{"203.0.113.7, " + g + ", 10.0.0.1", "10.0.0.1"},
			{g + ", 203.0.113.7", "203.0.113.7"},
			{g + ", 10.0.0.1", "10.0.0.1"},
		} {
			got, ok := proxies.ClientIP("10.0.0.3:1", []string{tt.xff})
			checkResult(t, "10.0.0.3:1", []string{tt.xff}, got, ok, tt.want)
		}
		if got, ok := New().ClientIP(g, nil); ok {
			t.Errorf("ClientIP(%q, nil) = %v, true; want no address", g, got)
		}
	}
}

// hops returns n trusted proxy addresses, all different, from 10.0.0.1.
func hops(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i + 1)}).String()
	}
	return out
}

func TestClientIPLimits(t *testing.T) {
	join := func(parts ...[]string) string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return strings.Join(all, ", ")
	}
	client := []string{"203.0.113.7"}
	tests := []struct {
		name string
		xff  []string
		want string
	}{
		{"64 trusted entries: the leftmost", []string{join(hops(64))}, hops(64)[0]},
		{"65 trusted entries: the walk stops at 64", []string{join(hops(65))}, hops(65)[1]},
		{"client after 63 hops is found", []string{join(client, hops(63))}, "203.0.113.7"},
		{"client after 64 hops is not reached", []string{join(client, hops(64))}, hops(64)[0]},
		{"empty entries count", []string{join(client, make([]string, 62), []string{"10.0.0.1"})}, "203.0.113.7"},
		{"empty entries count, one too many", []string{join(client, make([]string, 63), []string{"10.0.0.1"})}, "10.0.0.1"},
		{"64 lines", append(client, hops(63)...), "203.0.113.7"},
		{"65 lines", append(client, hops(64)...), hops(64)[0]},
		{"empty lines count", append(client, make([]string, 64)...), "10.0.0.3"},
		// The byte budget: " 10.0.0.1" and its comma cost 10 bytes, so the
		// first element of the line may have 8182.
		{"element at the byte limit", []string{strings.Repeat(" ", 8171) + "203.0.113.7, 10.0.0.1"}, "203.0.113.7"},
		{"element over the byte limit", []string{strings.Repeat(" ", 8172) + "203.0.113.7, 10.0.0.1"}, "10.0.0.1"},
		{"line join counts one byte", []string{strings.Repeat(" ", 8172) + "203.0.113.7", "10.0.0.1"}, "203.0.113.7"},
		{"line join counts one byte, one too many", []string{strings.Repeat(" ", 8173) + "203.0.113.7", "10.0.0.1"}, "10.0.0.1"},
		{"a megabyte entry", []string{strings.Repeat("1", 1<<20)}, "10.0.0.3"},
		{"a megabyte of spaces before the client", []string{strings.Repeat(" ", 1<<20) + "203.0.113.7"}, "10.0.0.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := proxies.ClientIP("10.0.0.3:1", tt.xff)
			checkResult(t, "10.0.0.3:1", nil, got, ok, tt.want)
		})
	}
}

// TestClientIPHugeHeader checks that 10,000 entries, in one line or in
// 10,000 lines, give sane answers without allocating: the walk looks at no
// more than MaxForwardedEntries of them.
func TestClientIPHugeHeader(t *testing.T) {
	many := hops(10_000)
	oneLine := []string{strings.Join(many, ",")}
	clientLast := []string{strings.Join(many, ",") + ", 203.0.113.7"}
	tests := []struct {
		name   string
		r      *Resolver
		remote string
		xff    []string
		want   string
	}{
		{"untrusted peer", proxies, "203.0.113.9:1", oneLine, "203.0.113.9"},
		{"trusted hops, one line", proxies, "10.0.0.3:1", oneLine, many[10_000-64]},
		{"trusted hops, many lines", proxies, "10.0.0.3:1", many, many[10_000-64]},
		{"client rightmost", proxies, "10.0.0.3:1", clientLast, "203.0.113.7"},
		{"trust all", TrustAll(), "10.0.0.3:1", oneLine, many[10_000-64]},
		{"ten thousand empty lines", proxies, "10.0.0.3:1", make([]string, 10_000), "10.0.0.3"},
		{"ten thousand commas", proxies, "10.0.0.3:1", []string{strings.Repeat(",", 10_000)}, "10.0.0.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got netip.Addr
			var ok bool
			allocs := testing.AllocsPerRun(10, func() { got, ok = tt.r.ClientIP(tt.remote, tt.xff) })
			checkResult(t, tt.remote, nil, got, ok, tt.want)
			if allocs != 0 {
				t.Errorf("ClientIP allocated %v times per call; want 0", allocs)
			}
		})
	}
}

func TestClientIPDoesNotAllocate(t *testing.T) {
	for _, tt := range []struct {
		remote string
		xff    []string
	}{
		{"203.0.113.7:5000", []string{"198.51.100.1"}},
		{"10.0.0.3:1", []string{"203.0.113.7, 10.0.0.1, 10.0.0.2"}},
		{"[2001:db8:ffff::1]:443", []string{"2001:db8:1:2::5, [2001:db8:ffff::9]:80"}},
		{"10.0.0.3:1", []string{"203.0.113.7,,10.0.0.1", "10.0.0.2:8080"}},
		{"10.0.0.3:1", nil},
	} {
		if allocs := testing.AllocsPerRun(10, func() { proxies.ClientIP(tt.remote, tt.xff) }); allocs != 0 {
			t.Errorf("ClientIP(%q, %q) allocated %v times; want 0", tt.remote, tt.xff, allocs)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name     string
		prefixes []netip.Prefix
		want     string
	}{
		{"none", nil, "none"},
		{"masked", []netip.Prefix{netip.MustParsePrefix("10.1.2.3/8")}, "10.0.0.0/8"},
		{"mapped becomes ipv4", []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/104")}, "10.0.0.0/8"},
		{"mapped single address", []netip.Prefix{netip.MustParsePrefix("::ffff:10.1.2.3/128")}, "10.1.2.3/32"},
		{"invalid dropped", []netip.Prefix{{}, netip.PrefixFrom(netip.MustParseAddr("10.0.0.1"), 33)}, "none"},
		{"zone dropped", []netip.Prefix{netip.PrefixFrom(netip.MustParseAddr("fe80::1%eth0"), 64)}, "fe80::/64"},
		{"duplicates dropped", []netip.Prefix{
			netip.MustParsePrefix("10.0.0.0/8"),
			netip.MustParsePrefix("fc00::/7"),
			netip.MustParsePrefix("10.9.9.9/8"),
		}, "10.0.0.0/8,fc00::/7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(tt.prefixes...).String(); got != tt.want {
				t.Errorf("New(%v).String() = %q; want %q", tt.prefixes, got, tt.want)
			}
		})
	}

	t.Run("copies its arguments", func(t *testing.T) {
		ps := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
		r := New(ps...)
		ps[0] = netip.MustParsePrefix("192.168.0.0/16")
		got, _ := r.ClientIP("10.0.0.1:1", []string{"203.0.113.7"})
		if want := netip.MustParseAddr("203.0.113.7"); got != want {
			t.Errorf("after the caller's slice changed, ClientIP = %v; want %v", got, want)
		}
	})
}

func TestString(t *testing.T) {
	for _, tt := range []struct {
		r    *Resolver
		want string
	}{
		{nil, "none"},
		{&Resolver{}, "none"},
		{New(), "none"},
		{TrustAll(), "all"},
		{proxies, "10.0.0.0/8,2001:db8:ffff::/48"},
	} {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("String() = %q; want %q", got, tt.want)
		}
	}
}

func TestKey(t *testing.T) {
	tests := []struct {
		addr netip.Addr
		want string
	}{
		{netip.MustParseAddr("203.0.113.7"), "203.0.113.7"},
		{netip.MustParseAddr("0.0.0.0"), "0.0.0.0"},
		{netip.MustParseAddr("2001:db8:1:2::1"), "2001:db8:1:2::/64"},
		{netip.MustParseAddr("2001:db8:1:2:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64"},
		{netip.MustParseAddr("2001:db8:1:3::1"), "2001:db8:1:3::/64"},
		{netip.MustParseAddr("::1"), "::/64"},
		{netip.MustParseAddr("fe80::1%eth0"), "fe80::/64"},
		{netip.MustParseAddr("::ffff:203.0.113.7"), "203.0.113.7"},
		{netip.Addr{}, ""},
	}
	for _, tt := range tests {
		if got := Key(tt.addr); got != tt.want {
			t.Errorf("Key(%v) = %q; want %q", tt.addr, got, tt.want)
		}
	}

	// One /64 is one key, whatever address inside it the client picks.
	a, _ := proxies.ClientIP("10.0.0.1:1", []string{"2001:db8:1:2::1"})
	b, _ := proxies.ClientIP("10.0.0.1:1", []string{"2001:db8:1:2:a:b:c:d"})
	c, _ := proxies.ClientIP("10.0.0.1:1", []string{"2001:db8:1:3::1"})
	if Key(a) != Key(b) {
		t.Errorf("Key(%v) = %q and Key(%v) = %q; want one key for one /64", a, Key(a), b, Key(b))
	}
	if Key(a) == Key(c) {
		t.Errorf("Key(%v) = Key(%v) = %q; want different keys for different /64s", a, c, Key(a))
	}
}
