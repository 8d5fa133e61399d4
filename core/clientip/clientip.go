package clientip

import (
	"net/netip"
	"strings"
)

// Limits on the X-Forwarded-For work done per request, so that a hostile
// header cannot cost much. Entries beyond them are treated like an unparsable
// entry: the walk stops there (see [Resolver.ClientIP]).
const (
	// MaxForwardedEntries is the most X-Forwarded-For list elements, empty
	// ones included, that one ClientIP call looks at.
	MaxForwardedEntries = 64

	// MaxForwardedBytes is the most X-Forwarded-For bytes, commas and line
	// joins included, that one ClientIP call looks at, counted from the
	// right.
	MaxForwardedBytes = 8 << 10
)

// A Resolver finds the client address of a request from its socket peer and
// its X-Forwarded-For header, believing the header only as far as it was
// written by trusted proxies. Make one with [New], [TrustAll] or [Parse]. A
// Resolver is immutable and safe for concurrent use. The zero Resolver, and
// a nil *Resolver, trust no proxy.
type Resolver struct {
	all      bool
	prefixes []netip.Prefix // valid, masked, unmapped, no duplicates
}

// New returns a Resolver that trusts the proxies in the given prefixes
// (use [netip.PrefixFrom](addr, addr.BitLen()) for a single address).
// Without prefixes it trusts no proxy, so only the socket address is ever
// used. Prefixes are masked ("10.1.2.3/8" becomes "10.0.0.0/8"), IPv4-mapped
// IPv6 prefixes ("::ffff:10.0.0.0/104") become IPv4 prefixes, invalid
// prefixes are dropped (they would match nothing) and so are duplicates.
// New copies its arguments.
func New(trusted ...netip.Prefix) *Resolver {
	r := &Resolver{}
	for _, p := range trusted {
		if !p.IsValid() {
			continue
		}
		p = normalizePrefix(p)
		dup := false
		for _, q := range r.prefixes {
			if q == p {
				dup = true
				break
			}
		}
		if !dup {
			r.prefixes = append(r.prefixes, p)
		}
	}
	return r
}

// TrustAll returns a Resolver that trusts every peer and every hop, as
// TRUST_PROXY=true does: the client is the first (leftmost) X-Forwarded-For
// entry, which is the spec's rule. Prefer [New] or [Parse] with the
// proxy's own addresses (TRUST_PROXY=10.0.0.0/8), which is right behind
// any proxy.
//
// TrustAll is safe only when every request reaches the server through a
// proxy that OVERWRITES X-Forwarded-For with the address it received the
// request from (nginx: proxy_set_header X-Forwarded-For $remote_addr).
// Behind a proxy that appends (nginx's $proxy_add_x_forwarded_for, most
// load balancers' default), the leftmost entry is whatever the client sent
// in its own header: every request can name a new address, so the per-IP
// rate limits stop limiting anything and each fake address costs a
// counter in the store. A client that reaches the server directly can do
// the same.
func TrustAll() *Resolver {
	return &Resolver{all: true}
}

// noProxy stands in for a nil *Resolver.
var noProxy Resolver

func normalizePrefix(p netip.Prefix) netip.Prefix {
	p = p.Masked()
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// String describes the trusted proxies for a startup log: "none", "all", or
// the prefixes joined by commas ("10.0.0.0/8,fc00::/7"); [Parse] accepts
// such a list back.
func (r *Resolver) String() string {
	switch {
	case r == nil:
		return "none"
	case r.all:
		return "all"
	case len(r.prefixes) == 0:
		return "none"
	}
	var b strings.Builder
	for i, p := range r.prefixes {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// trusts reports whether a (valid, unzoned, unmapped) is a trusted proxy.
func (r *Resolver) trusts(a netip.Addr) bool {
	if r.all {
		return true
	}
	for _, p := range r.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientIP returns the client address of a request whose socket peer is
// remoteAddr (as net/http's Request.RemoteAddr gives it: "ip:port",
// "[ipv6]:port", or a bare address) and whose X-Forwarded-For header lines
// are forwardedFor, in the order received (req.Header.Values
// ("X-Forwarded-For")). Several lines form one comma-separated list, as if
// joined by commas.
//
// The client is the socket peer unless the peer is a trusted proxy, in which
// case the list is walked from the right, skipping trusted proxies; the
// first address that is not a trusted proxy is the client. When every entry
// is trusted, the leftmost entry is the client. From an untrusted peer the
// header is ignored entirely. With [TrustAll] every hop is trusted, so the
// walk ends at the leftmost entry.
//
// Entries are trimmed of spaces and tabs; empty entries are skipped. An
// entry may be an IPv4 or IPv6 address, "ipv4:port", "[ipv6]:port" or
// "[ipv6]"; IPv6 zones are removed and IPv4-mapped IPv6 addresses become
// IPv4, both for entries and for remoteAddr. Anything else ("unknown",
// "1.2.3", a host name, an unbracketed IPv6 address with a port) is
// unparsable. An unparsable entry stops the walk, and so does reaching
// [MaxForwardedEntries] entries or [MaxForwardedBytes] bytes: the result is
// then the last trusted address seen, that is the entry to the right of
// where the walk stopped, or the peer itself. Garbage is never believed and
// never skipped: everything left of it came through it.
//
// ok is false only when there is no address: remoteAddr is not an IP
// address (a Unix socket gives "@" or "") and, for a TrustAll resolver, the
// header gave none either. A Unix-socket peer counts as a trusted proxy only
// under TrustAll; with prefixes it is never trusted.
//
// The returned address is valid when ok, has no zone, and is never an
// IPv4-mapped IPv6 address. ClientIP does not allocate for well-formed
// input.
func (r *Resolver) ClientIP(remoteAddr string, forwardedFor []string) (netip.Addr, bool) {
	if r == nil {
		r = &noProxy
	}
	last, lastOK := parseEntry(remoteAddr)
	if lastOK == entryEmpty {
		lastOK = entryBad
	}
	switch {
	case lastOK == entryBad && !r.all:
		return netip.Addr{}, false
	case lastOK == entryOK && !r.trusts(last):
		return last, true
	}

	// The peer is a trusted proxy (or an unknown peer under TrustAll). last
	// is always the leftmost trusted address seen so far.
	w := walker{lines: forwardedFor, line: len(forwardedFor) - 1, budget: MaxForwardedBytes}
	if w.line >= 0 {
		w.end = len(forwardedFor[w.line])
	}
	for range MaxForwardedEntries {
		entry, ok := w.next()
		if !ok {
			break // the list ended (last is the leftmost) or the byte limit hit
		}
		a, st := parseEntry(entry)
		switch st {
		case entryEmpty:
			continue
		case entryBad:
			return last, lastOK == entryOK
		}
		if !r.trusts(a) {
			return a, true
		}
		last, lastOK = a, entryOK
	}
	// Reached the end of the list or a limit.
	return last, lastOK == entryOK
}

// walker yields the elements of a list split over several header lines,
// from the right, looking at no more than budget bytes.
type walker struct {
	lines  []string
	line   int // index of the current line; -1 when done
	end    int // the current line's unread part is lines[line][:end]
	budget int // bytes that may still be looked at
}

// next returns the next element from the right. ok is false when the list
// is exhausted or the element does not fit in the byte budget; a line join
// counts as one byte, like the comma it stands for.
func (w *walker) next() (entry string, ok bool) {
	if w.line < 0 || w.budget <= 0 {
		return "", false
	}
	s := w.lines[w.line][:w.end]
	start := max(0, len(s)-w.budget) // look only at what the budget allows
	if i := strings.LastIndexByte(s[start:], ','); i >= 0 {
		i += start
		w.end = i
		w.budget -= len(s) - i // the element and its comma
		return s[i+1:], true
	}
	if start > 0 {
		w.line = -1 // the element is longer than the budget
		return "", false
	}
	// The element starts its line; the previous line joins with a comma.
	w.budget -= len(s) + 1
	w.line--
	if w.line >= 0 {
		w.end = len(w.lines[w.line])
	}
	return s, true
}

type entryState uint8

const (
	entryOK entryState = iota
	entryEmpty
	entryBad
)

// parseEntry parses one X-Forwarded-For element or a RemoteAddr.
func parseEntry(s string) (netip.Addr, entryState) {
	s = strings.Trim(s, " \t")
	if s == "" {
		return netip.Addr{}, entryEmpty
	}
	var a netip.Addr
	switch {
	case s[0] == '[':
		if s[len(s)-1] == ']' { // "[ipv6]"
			var err error
			if a, err = netip.ParseAddr(s[1 : len(s)-1]); err != nil || !a.Is6() {
				return netip.Addr{}, entryBad
			}
			break
		}
		ap, err := netip.ParseAddrPort(s) // "[ipv6]:port"; refuses "[ipv4]:port"
		if err != nil {
			return netip.Addr{}, entryBad
		}
		a = ap.Addr()
	case strings.Count(s, ":") == 1: // "ipv4:port"
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return netip.Addr{}, entryBad
		}
		a = ap.Addr()
	default: // "ipv4" or "ipv6"
		var err error
		if a, err = netip.ParseAddr(s); err != nil {
			return netip.Addr{}, entryBad
		}
	}
	return a.WithZone("").Unmap(), entryOK
}

// Key returns the rate-limit key part for a client address: an IPv4 address
// as itself ("203.0.113.7"), an IPv6 address as its /64 prefix
// ("2001:db8:1:2::/64"), since one host usually holds a whole /64 and could
// otherwise pick a fresh key for every attempt. The price is that hosts
// sharing a /64 (a LAN with SLAAC, some hosting providers) share a key, as
// hosts behind one IPv4 NAT do. Zones are dropped and IPv4-mapped addresses
// are keyed as IPv4. Key returns "" for the zero Addr.
func Key(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	a = a.WithZone("").Unmap()
	var buf [len("ffff:ffff:ffff:ffff::/64")]byte
	if a.Is4() {
		return string(a.AppendTo(buf[:0]))
	}
	return string(netip.PrefixFrom(a, 64).Masked().AppendTo(buf[:0]))
}
