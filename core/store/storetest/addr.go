package storetest

import (
	"net"
	"testing"
)

// ClosedAddr returns a loopback address ("127.0.0.1:port") on which nothing
// listens, so that a connection to it is refused at once: for the tests of
// what a store, a pool or a command does when its server is down. The port
// was free a moment ago; another process may take it, which is unlikely
// enough on a test machine.
func ClosedAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}
