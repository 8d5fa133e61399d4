package clientip

import (
	"net/netip"
	"strings"
	"testing"
)

// oracle parses one entry the obvious way, independently of parseEntry.
func oracle(s string) (netip.Addr, bool) {
	s = strings.Trim(s, " \t")
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().WithZone("").Unmap(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.WithZone("").Unmap(), true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil && a.Is6() {
			return a.WithZone("").Unmap(), true
		}
	}
	return netip.Addr{}, false
}

// FuzzClientIP feeds arbitrary peers and headers (lines split at '\n') to
// three resolvers. ClientIP must never panic; an untrusted peer is always
// the answer; and any answer is a clean address taken from the peer or from
// a well-formed header entry, never made up from garbage.
func FuzzClientIP(f *testing.F) {
	for _, seed := range [][2]string{
		{"203.0.113.7:5000", "198.51.100.1"},
		{"10.0.0.3:1", "198.51.100.9, 203.0.113.7, 10.0.0.1, 10.0.0.2"},
		{"10.0.0.3:1", "203.0.113.7,,10.0.0.1\n10.0.0.2"},
		{"[2001:db8:ffff::2]:443", "[2001:db8::7]:443, [fe80::1%eth0]:80, ::ffff:10.0.0.1"},
		{"[fe80::1%eth0]:80", "unknown"},
		{"@", "203.0.113.7"},
		{"", ""},
		{"10.0.0.3", "\t1.2.3.4:80 ,\t , garbage, 10.0.0.1"},
		{"10.0.0.3:1", strings.Repeat("10.0.0.1,", 100)},
	} {
		f.Add(seed[0], seed[1])
	}
	none, all := New(), TrustAll()
	f.Fuzz(func(t *testing.T, remote, header string) {
		var lines []string
		if header != "" {
			lines = strings.Split(header, "\n")
		}
		peer, peerOK := oracle(remote)
		var entries []netip.Addr
		for _, line := range lines {
			for e := range strings.SplitSeq(line, ",") {
				if a, ok := oracle(e); ok {
					entries = append(entries, a)
				}
			}
		}

		for _, r := range []*Resolver{none, proxies, all} {
			got, ok := r.ClientIP(remote, lines)
			if ok != got.IsValid() {
				t.Fatalf("%v: ClientIP(%q, %q) = %v, %v", r, remote, lines, got, ok)
			}
			if !ok {
				if peerOK && !r.all {
					t.Fatalf("%v: ClientIP(%q, %q) found no address; the peer is %v", r, remote, lines, peer)
				}
				continue
			}
			if got.Zone() != "" || got.Is4In6() {
				t.Fatalf("%v: ClientIP(%q, %q) = %v, not unzoned and unmapped", r, remote, lines, got)
			}
			if peerOK && !r.trusts(peer) && got != peer {
				t.Fatalf("%v: ClientIP(%q, %q) = %v; want the untrusted peer %v", r, remote, lines, got, peer)
			}
			if !r.all && !peerOK {
				t.Fatalf("%v: ClientIP(%q, %q) = %v from a peer that is no address", r, remote, lines, got)
			}
			if got != peer && !contains(entries, got) {
				t.Fatalf("%v: ClientIP(%q, %q) = %v, which is neither the peer nor an entry", r, remote, lines, got)
			}
			if k := Key(got); k == "" {
				t.Fatalf("Key(%v) is empty", got)
			}
		}
	})
}

func contains(as []netip.Addr, a netip.Addr) bool {
	for _, b := range as {
		if a == b {
			return true
		}
	}
	return false
}
