package clientip_test

import (
	"fmt"
	"net/netip"

	"github.com/authkit-go/authkit/core/clientip"
)

func ExampleResolver_ClientIP() {
	// TRUST_PROXY=10.0.0.0/8: the load balancers live in 10.0.0.0/8.
	r, err := clientip.Parse("10.0.0.0/8")
	if err != nil {
		panic(err)
	}

	// A client talking to the server directly cannot choose its address.
	ip, ok := r.ClientIP("203.0.113.7:52100", []string{"198.51.100.1"})
	fmt.Println(ip, ok)

	// Behind two proxies, a client that sent its own header is still found:
	// the walk goes from the right over the trusted hops only.
	ip, ok = r.ClientIP("10.0.0.2:40000", []string{"198.51.100.1, 203.0.113.7", "10.0.0.1"})
	fmt.Println(ip, ok)

	// TRUST_PROXY=true believes every hop: the first entry wins (the spec's rule).
	ip, ok = clientip.TrustAll().ClientIP("10.0.0.2:40000", []string{"198.51.100.1, 203.0.113.7", "10.0.0.1"})
	fmt.Println(ip, ok)

	// A Unix socket peer that is not trusted has no address.
	ip, ok = r.ClientIP("@", []string{"203.0.113.7"})
	fmt.Println(ip, ok)

	// Output:
	// 203.0.113.7 true
	// 203.0.113.7 true
	// 198.51.100.1 true
	// invalid IP false
}

func ExampleKey() {
	for _, s := range []string{"203.0.113.7", "2001:db8:1:2::1", "2001:db8:1:2:aaaa::9", "::ffff:198.51.100.1"} {
		fmt.Println("login:ip:" + clientip.Key(netip.MustParseAddr(s)))
	}
	// Output:
	// login:ip:203.0.113.7
	// login:ip:2001:db8:1:2::/64
	// login:ip:2001:db8:1:2::/64
	// login:ip:198.51.100.1
}

func ExampleParse() {
	for _, setting := range []string{" 10.0.0.0/8 , 192.168.1.5", "loopback", "", "true", "10.0.0.0/33"} {
		r, err := clientip.Parse(setting)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%q: trusted proxies: %s\n", setting, r)
	}
	// Output:
	// " 10.0.0.0/8 , 192.168.1.5": trusted proxies: 10.0.0.0/8,192.168.1.5/32
	// "loopback": trusted proxies: 127.0.0.0/8,::1/128
	// "": trusted proxies: none
	// "true": trusted proxies: all
	// error: clientip: invalid TRUST_PROXY setting: item "10.0.0.0/33": netip.ParsePrefix("10.0.0.0/33"): prefix length out of range
}
