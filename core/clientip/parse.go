package clientip

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrInvalidSetting is returned, wrapped with the offending item, by [Parse]
// for a TRUST_PROXY value it does not understand.
var ErrInvalidSetting = errors.New("clientip: invalid TRUST_PROXY setting")

// Named sets of proxies that Parse accepts in a TRUST_PROXY list.
var namedSets = map[string][]netip.Prefix{
	"loopback": {
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("::1/128"),
	},
	"private": {
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("192.168.0.0/16"),
		netip.MustParsePrefix("fc00::/7"),
	},
}

// Parse reads a TRUST_PROXY setting:
//
//   - a comma-separated list of items, each a CIDR prefix ("10.0.0.0/8",
//     "fd00::/8"), a bare address (a /32 or /128), or one of the named sets
//     "loopback" (127.0.0.0/8, ::1) and "private" (the RFC 1918 ranges
//     10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, and the unique local IPv6
//     range fc00::/7): trust exactly those proxies, the recommended form;
//   - "" or "false": trust no proxy ([New] without prefixes);
//   - "true": trust every peer and hop ([TrustAll]), safe only behind a
//     proxy that overwrites X-Forwarded-For: behind one that appends, every
//     client chooses its own rate-limit key.
//
// Items are trimmed of spaces and tabs, and keywords are case-insensitive.
// Prefixes are normalised as by [New], so host bits may be set
// ("10.1.2.3/8" trusts 10.0.0.0/8). An empty item, an address with a zone, a
// bad prefix length or anything else gives an error wrapping
// [ErrInvalidSetting]; "true" and "false" cannot be mixed with other items.
//
// Trust "private" only when no client can reach the server from a private
// address without passing a proxy: such a client could otherwise choose its
// own rate-limit key.
func Parse(setting string) (*Resolver, error) {
	s := strings.Trim(setting, " \t")
	switch {
	case s == "", strings.EqualFold(s, "false"):
		return New(), nil
	case strings.EqualFold(s, "true"):
		return TrustAll(), nil
	}
	var prefixes []netip.Prefix
	for item := range strings.SplitSeq(s, ",") {
		item = strings.Trim(item, " \t")
		p, err := parseItem(item)
		if err != nil {
			return nil, fmt.Errorf("%w: item %q: %v", ErrInvalidSetting, item, err)
		}
		prefixes = append(prefixes, p...)
	}
	return New(prefixes...), nil
}

func parseItem(item string) ([]netip.Prefix, error) {
	if item == "" {
		return nil, errors.New("empty item")
	}
	if set, ok := namedSets[strings.ToLower(item)]; ok {
		return set, nil
	}
	if strings.EqualFold(item, "true") || strings.EqualFold(item, "false") {
		return nil, errors.New(`"true" and "false" must stand alone`)
	}
	if strings.Contains(item, "%") {
		return nil, errors.New("zones are not allowed")
	}
	if strings.Contains(item, "/") {
		p, err := netip.ParsePrefix(item)
		if err != nil {
			return nil, err
		}
		return []netip.Prefix{p}, nil
	}
	a, err := netip.ParseAddr(item)
	if err != nil {
		return nil, fmt.Errorf("not a CIDR prefix, an IP address or a named set (loopback, private): %w", err)
	}
	return []netip.Prefix{netip.PrefixFrom(a, a.BitLen())}, nil
}
