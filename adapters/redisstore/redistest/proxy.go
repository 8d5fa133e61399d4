package redistest

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy forwards TCP connections from a port of 127.0.0.1 to a server (a
// Redis, or any other: a test may put one in front of its database too),
// so that a test can cut the network to the server and restore it without
// touching the server. Start one with [StartProxy].
//
// A proxy cuts the path in one of two ways. [Proxy.Cut] still accepts
// connections but closes them at once, as a network that drops them would:
// every call fails, and a client's pool (go-redis's) does not back off from
// a port that refuses connections, so it works again as soon as the proxy
// is restored. [Proxy.Refuse] stops listening: clients fail to dial, as
// they do when the server is down.
type Proxy struct {
	addr   string
	target string
	wg     sync.WaitGroup

	mu    sync.Mutex
	ln    net.Listener // nil while refusing
	cut   bool
	conns map[net.Conn]struct{} // both sides of every open connection
}

// StartProxy listens on 127.0.0.1 at a free port and forwards every
// connection to target ("host:port"). It is closed when the test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{addr: ln.Addr().String(), target: target, conns: make(map[net.Conn]struct{})}
	p.serve(ln)
	t.Cleanup(func() {
		p.Refuse()
		p.wg.Wait()
	})
	return p
}

// Addr is the address ("127.0.0.1:port") clients dial instead of the
// server's. It stays the same across Refuse and Restore.
func (p *Proxy) Addr() string { return p.addr }

// Cut closes every open connection, and closes new ones as soon as they
// are accepted, until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
	p.closeAll()
}

// Refuse stops listening and closes every open connection, until Restore.
func (p *Proxy) Refuse() {
	p.Cut()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
}

// Restore forwards new connections again, after Cut or Refuse. After
// Refuse it listens on Addr again, which fails if another process took the
// port in between.
func (p *Proxy) Restore() error {
	p.mu.Lock()
	p.cut = false
	refusing := p.ln == nil
	p.mu.Unlock()
	if !refusing {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.serve(ln)
	return nil
}

func (p *Proxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return // closed by Refuse
			}
			p.wg.Go(func() { p.handle(client) })
		}
	})
}

// handle copies both ways between client and a new connection to the
// server until either side ends, then closes both.
func (p *Proxy) handle(client net.Conn) {
	p.mu.Lock()
	cut := p.cut
	p.mu.Unlock()
	if cut {
		_ = client.Close()
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.cut { // cut while dialling
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[client] = struct{}{}
	p.conns[server] = struct{}{}
	p.mu.Unlock()

	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done // one side ended: end both
	_ = client.Close()
	_ = server.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}
