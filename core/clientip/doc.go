// Package clientip finds the client address that rate-limit keys are made
// of (docs/api.md, Rate limits; SECURITY.md deviation 3).
//
//	resolver, err := clientip.Parse(os.Getenv("TRUST_PROXY"))
//	if err != nil {
//		return err
//	}
//	log.Printf("trusted proxies: %s", resolver)
//	...
//	ip, ok := resolver.ClientIP(req.RemoteAddr, req.Header.Values("X-Forwarded-For"))
//	if !ok {
//		// no address (a Unix socket without a usable header): choose a
//		// policy, such as one shared key
//	}
//	key := "login:ip:" + clientip.Key(ip)
//
// # The rule
//
// The client is the socket peer, unless the peer is a trusted proxy. Then
// X-Forwarded-For is walked from the right, skipping addresses that are
// trusted proxies, and the first address that is not a trusted proxy is the
// client; if every entry is trusted, the leftmost entry is. A header that
// arrives from an untrusted peer is ignored entirely, so a client talking to
// the server directly cannot choose its own key.
//
// Walking from the right matters: each proxy appends the address it received
// the request from, so only the entries written by trusted proxies can be
// believed. The spec's rule, "the first entry", takes the entry that the
// client wrote itself whenever the client sends its own header through a
// proxy that appends. TRUST_PROXY=true ([TrustAll]) keeps the spec's rule
// for those who ask for it: every peer and hop is trusted, so the walk ends
// at the leftmost entry. That is safe only behind a proxy that overwrites
// X-Forwarded-For; behind one that appends (nginx's usual
// $proxy_add_x_forwarded_for), every client chooses its own rate-limit key.
// Name the proxies instead (TRUST_PROXY=10.0.0.0/8, or the proxy's address).
//
// An entry that cannot be parsed stops the walk, and the result is the last
// trusted address seen (the entry to its right, or the peer): such an entry
// was written either by a trusted proxy (so its own address is the safest
// key) or by a client that is itself in a trusted range (whose address is
// then that last trusted one). The same happens past [MaxForwardedEntries]
// entries or [MaxForwardedBytes] bytes, which bound the work one request can
// cause. See [Resolver.ClientIP] for the accepted entry forms.
//
// # Keys
//
// [Key] turns an address into a rate-limit key part: IPv4 addresses as
// they are, IPv6 addresses as their /64, since one IPv6 host usually holds a
// whole /64 and could otherwise use a new address for every attempt.
//
// # TRUST_PROXY
//
// [Parse] reads the TRUST_PROXY environment variable: a comma-separated
// list of the proxies' CIDR prefixes, bare addresses and the named sets
// "loopback" and "private", for example "10.0.0.0/8, 192.168.1.5" or
// "loopback,private" (the recommended form); empty or "false" trusts
// nobody; "true" trusts everybody, which is safe only behind a proxy that
// overwrites X-Forwarded-For (see [TrustAll]). [Resolver.String] gives the
// setting back for a startup log.
package clientip
