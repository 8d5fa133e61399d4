package attack

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// proxy forwards TCP connections from a local port to a backend, and can
// cut the path and restore it without touching the backend: cut closes
// every open connection and stops listening (new connections are
// refused), restore listens again on the same port.
type proxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener // nil while cut
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// startProxy listens on 127.0.0.1 at a free port and forwards to target
// ("host:port"). It is closed when the test ends.
func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.close)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by cut or close
			}
			p.wg.Go(func() { p.forward(ln, c) })
		}
	})
}

// forward copies both ways between client, accepted by ln, and a new
// backend connection until either side ends, then closes both.
func (p *proxy) forward(ln net.Listener, client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(ln, client, server) {
		client.Close()
		server.Close()
		return
	}
	defer p.untrack(client, server)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	client.Close()
	server.Close()
	<-done
}

// track registers a live pair accepted by ln; it reports false when the
// proxy was cut since, so that no connection outlives a cut.
func (p *proxy) track(ln net.Listener, cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != ln {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

// cut stops listening and breaks every open connection.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// restore listens again on the same address after a cut.
func (p *proxy) restore() error {
	p.mu.Lock()
	cut := p.ln == nil
	p.mu.Unlock()
	if !cut {
		return errors.New("proxy: not cut")
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.serve(ln)
	return nil
}

func (p *proxy) close() {
	p.cut()
	p.wg.Wait()
}

// TestProxyCutAndRestore checks the proxy itself: bytes pass, a cut breaks
// the open connection and refuses new ones, a restore lets new ones pass.
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
	p := startProxy(t, echo.Addr().String())
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
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	p.cut()
	if err := roundTrip(c); err == nil {
		t.Fatal("an open connection still works after the cut")
	}
	if c2, err := net.Dial("tcp", p.addr); err == nil {
		c2.Close()
		t.Fatal("a new connection was accepted while cut")
	}
	if err := p.restore(); err != nil {
		t.Fatal(err)
	}
	c3, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatalf("after restore: %v", err)
	}
	defer c3.Close()
	if err := roundTrip(c3); err != nil {
		t.Fatalf("after restore: %v", err)
	}
}
