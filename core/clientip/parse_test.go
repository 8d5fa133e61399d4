package clientip

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const private = "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7"
	tests := []struct {
		setting string
		want    string // the resolver's String
	}{
		{"", "none"},
		{"  ", "none"},
		{"false", "none"},
		{"FALSE", "none"},
		{" false ", "none"},
		{"true", "all"},
		{"True", "all"},
		{"\ttrue\t", "all"},
		{"10.0.0.0/8", "10.0.0.0/8"},
		{" 10.0.0.0/8 , 192.168.0.0/16 ", "10.0.0.0/8,192.168.0.0/16"},
		{"10.0.0.0/8,\t192.168.0.0/16", "10.0.0.0/8,192.168.0.0/16"},
		{"10.1.2.3/8", "10.0.0.0/8"},
		{"192.168.1.5", "192.168.1.5/32"},
		{"2001:db8::1", "2001:db8::1/128"},
		{"2001:db8::/32", "2001:db8::/32"},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"::ffff:10.1.2.3", "10.1.2.3/32"},
		{"0.0.0.0/0", "0.0.0.0/0"},
		{"loopback", "127.0.0.0/8,::1/128"},
		{"private", private},
		{"Private, 10.0.0.0/8", private},
		{"loopback,private", "127.0.0.0/8,::1/128," + private},
		{"10.0.0.0/8, 10.0.0.0/8", "10.0.0.0/8"},
	}
	for _, tt := range tests {
		t.Run(tt.setting, func(t *testing.T) {
			r, err := Parse(tt.setting)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.setting, err)
			}
			if got := r.String(); got != tt.want {
				t.Errorf("Parse(%q).String() = %q; want %q", tt.setting, got, tt.want)
			}
			if got := r.String(); got == "none" || got == "all" {
				return // the list form below is the one that round-trips
			}
			again, err := Parse(r.String())
			if err != nil || again.String() != r.String() {
				t.Errorf("Parse(%q) = %v, %v; want the same resolver back", r.String(), again, err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		setting string
		item    string // the item the error must name
	}{
		{"10.0.0.0/33", "10.0.0.0/33"},
		{"::/129", "::/129"},
		{"10.0.0.0/-1", "10.0.0.0/-1"},
		{"10.0.0.0/8/8", "10.0.0.0/8/8"},
		{"10.0.0.0 /8", "10.0.0.0 /8"},
		{"foo", "foo"},
		{"10.0.0.0/8, foo", "foo"},
		{"10.0.0.0/8,", ""},
		{",", ""},
		{"10.0.0.0/8,,192.168.0.0/16", ""},
		{"true,10.0.0.0/8", "true"},
		{"10.0.0.0/8, false", "false"},
		{"fe80::1%eth0", "fe80::1%eth0"},
		{"fe80::%eth0/64", "fe80::%eth0/64"},
		{"1.2.3.4:80", "1.2.3.4:80"},
		{"[::1]", "[::1]"},
		{"0x0a000001", "0x0a000001"},
		{"010.0.0.1", "010.0.0.1"},
		{"*", "*"},
		{"yes", "yes"},
	}
	for _, tt := range tests {
		t.Run(tt.setting, func(t *testing.T) {
			r, err := Parse(tt.setting)
			if !errors.Is(err, ErrInvalidSetting) {
				t.Fatalf("Parse(%q) = %v, %v; want ErrInvalidSetting", tt.setting, r, err)
			}
			if r != nil {
				t.Errorf("Parse(%q) returned a resolver with its error", tt.setting)
			}
			if q := "item " + strconv.Quote(tt.item); !strings.Contains(err.Error(), q) {
				t.Errorf("Parse(%q) error %q does not name %s", tt.setting, err, q)
			}
		})
	}
}

// TestParseTrust checks the parsed sets by what they trust.
func TestParseTrust(t *testing.T) {
	tests := []struct {
		setting string
		peer    string
		trusted bool
	}{
		{"private", "10.255.255.255", true},
		{"private", "172.16.0.1", true},
		{"private", "172.31.255.255", true},
		{"private", "172.32.0.0", false},
		{"private", "192.168.0.1", true},
		{"private", "192.169.0.1", false},
		{"private", "fd12:3456::1", true},
		{"private", "fe80::1", false},
		{"private", "127.0.0.1", false},
		{"loopback", "127.0.0.1", true},
		{"loopback", "127.255.0.9", true},
		{"loopback", "::1", true},
		{"loopback", "::ffff:127.0.0.1", true},
		{"loopback", "::2", false},
		{"192.168.1.5", "192.168.1.5", true},
		{"192.168.1.5", "192.168.1.6", false},
		{"2001:db8::/32", "2001:db8:ffff::1", true},
		{"2001:db8::/32", "2001:db9::1", false},
		{"::/0", "203.0.113.9", false}, // IPv6 prefixes never match IPv4
		{"0.0.0.0/0", "::ffff:203.0.113.9", true},
		{"", "127.0.0.1", false},
		{"true", "203.0.113.9", true},
	}
	for _, tt := range tests {
		r, err := Parse(tt.setting)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.setting, err)
		}
		peer := netip.AddrPortFrom(netip.MustParseAddr(tt.peer), 1).String()
		got, _ := r.ClientIP(peer, []string{"198.51.100.1"})
		if trusted := got == netip.MustParseAddr("198.51.100.1"); trusted != tt.trusted {
			t.Errorf("Parse(%q) trusts %s: %v; want %v", tt.setting, tt.peer, trusted, tt.trusted)
		}
	}
}
