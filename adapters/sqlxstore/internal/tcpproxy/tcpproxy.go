// Package tcpproxy is a TCP proxy for tests that need a database to become
// unreachable and come back, without touching the database server: point
// the client at [Proxy.Addr], then [Proxy.Cut] and [Proxy.Restore] the
// path.
//
//	p, err := tcpproxy.Start("127.0.0.1:5432")
//	defer p.Close()
//	db := open("postgres://postgres@" + p.Addr() + "/test")
//	p.Cut()     // open connections break, new ones are refused
//	p.Restore() // connections work again
//
// [Proxy.CutWhen] cuts at a chosen moment: right after forwarding the first
// client-to-server chunk that matches, so the server receives a request
// whose answer the client never gets. [Proxy.Settle] then waits until the
// server has dealt with everything it received, so the test can look at
// the final state.
package tcpproxy

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// drainTimeout bounds how long a cut connection waits for the server to
// close its side.
const drainTimeout = 10 * time.Second

// Proxy forwards TCP connections from a local address to a target. It is
// safe for concurrent use.
type Proxy struct {
	target string
	addr   string

	mu      sync.Mutex
	ln      net.Listener // nil while cut
	pairs   map[*pair]struct{}
	trigger func([]byte) bool
	cut     []*pair // cut connections whose server side may still be open
	closed  bool
	wg      sync.WaitGroup
}

// pair is one proxied connection.
type pair struct {
	client, server net.Conn
	frozen         atomic.Bool   // answers are dropped, not forwarded
	done           chan struct{} // closed when the server side is closed
	abandoned      bool          // the server did not close in time; written before done closes
}

// Start listens on 127.0.0.1 at a free port and forwards every connection
// to target ("host:port").
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, addr: ln.Addr().String(), pairs: map[*pair]struct{}{}}
	p.mu.Lock()
	p.serveLocked(ln)
	p.mu.Unlock()
	return p, nil
}

// Addr is the proxy's address, "127.0.0.1:port". It stays the same across
// Cut and Restore.
func (p *Proxy) Addr() string { return p.addr }

// Cut breaks every open connection and stops listening, so new connections
// are refused, until Restore. The clients' sockets close at once; towards
// the server each connection is half-closed, so the server reads to the
// end of what it was sent, then closes (see Settle).
func (p *Proxy) Cut() {
	p.mu.Lock()
	victims := p.stopLocked()
	p.mu.Unlock()
	breakPairs(victims)
}

// stopLocked disarms the trigger, closes the listener and takes every open
// connection out of service, returning them for breakPairs.
func (p *Proxy) stopLocked() []*pair {
	p.trigger = nil
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	victims := make([]*pair, 0, len(p.pairs))
	for c := range p.pairs {
		c.frozen.Store(true)
		victims = append(victims, c)
		delete(p.pairs, c)
	}
	p.cut = append(p.cut, victims...)
	return victims
}

// breakPairs closes the client side of each pair; the forwarding
// goroutines then half-close the server side and drain it.
func breakPairs(victims []*pair) {
	for _, c := range victims {
		_ = c.server.SetReadDeadline(time.Now().Add(drainTimeout))
		_ = c.client.Close()
	}
}

// Settle waits until the server has closed every connection cut so far: by
// then it has processed (committed or rolled back) whatever it received.
// It reports false if some server did not close within 10 seconds.
func (p *Proxy) Settle() bool {
	p.mu.Lock()
	cut := p.cut
	p.cut = nil
	p.mu.Unlock()
	ok := true
	for _, c := range cut {
		<-c.done
		if c.abandoned {
			ok = false
		}
	}
	return ok
}

// Restore listens again on the same address after a Cut. It does nothing
// when the proxy is not cut.
func (p *Proxy) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("tcpproxy: closed")
	}
	if p.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.serveLocked(ln)
	return nil
}

// CutWhen arms a cut: the first chunk a client sends (as read from the
// socket) for which match returns true is forwarded to the server, and the
// proxy cuts as by Cut; no answer to that chunk reaches the client. A Cut
// or Restore disarms it.
func (p *Proxy) CutWhen(match func(chunk []byte) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trigger = match
}

// Close cuts every connection for good and waits for the proxy's
// goroutines to return.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	victims := p.stopLocked()
	p.mu.Unlock()
	breakPairs(victims)
	p.wg.Wait()
	return nil
}

func (p *Proxy) serveLocked(ln net.Listener) {
	p.ln = ln
	p.trigger = nil
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by a cut or Close
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.handle(ln, c)
			}()
		}
	}()
}

func (p *Proxy) handle(ln net.Listener, client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	c := &pair{client: client, server: server, done: make(chan struct{})}
	p.mu.Lock()
	live := p.ln == ln // not cut while this connection was being made
	if live {
		p.pairs[c] = struct{}{}
	}
	p.mu.Unlock()
	if !live {
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.forward(c)
		// Half-close: the server reads what it was sent, then EOF.
		if tc, ok := server.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		} else {
			_ = server.Close()
		}
	}()
	c.backward()
	_ = client.Close()
	_ = server.Close()
	close(c.done)
	p.mu.Lock()
	delete(p.pairs, c)
	p.mu.Unlock()
}

// forward copies client to server chunk by chunk. A chunk that the armed
// trigger matches takes the proxy down (as Cut) before it is sent on, so
// the answer to it is dropped, and the client's side closes after it.
func (p *Proxy) forward(c *pair) {
	buf := make([]byte, 32<<10)
	for {
		n, err := c.client.Read(buf)
		if n > 0 {
			var victims []*pair
			p.mu.Lock()
			if p.trigger != nil && p.trigger(buf[:n]) {
				victims = p.stopLocked()
			}
			p.mu.Unlock()
			_, werr := c.server.Write(buf[:n])
			breakPairs(victims)
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// backward copies server to client until the server closes (or the drain
// deadline passes). Once the pair is frozen it drops what the server
// sends.
func (c *pair) backward() {
	buf := make([]byte, 32<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 && !c.frozen.Load() {
			if _, werr := c.client.Write(buf[:n]); werr != nil {
				c.frozen.Store(true) // the client is gone: keep draining
			}
		}
		if err != nil {
			c.abandoned = isTimeout(err)
			return
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
