package redistest

import (
	"errors"
	"io"
	"net"
	"testing"
)

// TestProxyCutAndRestore checks the proxy itself: bytes pass; a cut breaks
// the open connection and every new one, a refusal the open one and the
// dial of a new one; a restore after either lets new ones pass.
func TestProxyCutAndRestore(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	p := StartProxy(t, echo.Addr().String())
	roundTrip := func(c net.Conn) error {
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err != nil {
			return err
		}
		if string(b) != "ping" {
			return errors.New("echo: " + string(b))
		}
		return nil
	}
	// open dials the proxy and checks that bytes pass: the connection
	// is open and forwarded.
	open := func(when string) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		t.Cleanup(func() { c.Close() })
		if err := roundTrip(c); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		return c
	}

	c := open("through the proxy")
	p.Cut()
	if err := roundTrip(c); err == nil {
		t.Fatal("an open connection still works after the cut")
	}
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := roundTrip(c2); err == nil {
		t.Fatal("a new connection works while cut")
	}
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	c = open("after restoring a cut")

	p.Refuse()
	if err := roundTrip(c); err == nil {
		t.Fatal("an open connection still works after the refusal")
	}
	if c3, err := net.Dial("tcp", p.Addr()); err == nil {
		c3.Close()
		t.Fatal("a new connection was accepted while refusing")
	}
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	open("after restoring a refusal")
}
