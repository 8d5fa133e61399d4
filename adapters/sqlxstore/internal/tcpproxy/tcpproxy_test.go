package tcpproxy_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/authkit-go/authkit/adapters/sqlxstore/internal/tcpproxy"
)

// echoServer answers every line with the same line, and records the lines
// it received.
type echoServer struct {
	ln  net.Listener
	got chan string // every line received, in order
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln, got: make(chan string, 100)}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					s.got <- strings.TrimSpace(line)
					if _, err := io.WriteString(c, line); err != nil {
						return
					}
				}
			}()
		}
	}()
	return s
}

// next returns the next line the server received, failing the test if
// none arrives in a few seconds.
func (s *echoServer) next(t *testing.T) string {
	t.Helper()
	select {
	case line := <-s.got:
		return line
	case <-time.After(5 * time.Second):
		t.Fatal("the server received nothing")
		return ""
	}
}

// startProxy starts a proxy to echo; the caller closes it.
func startProxy(t *testing.T, echo *echoServer) *tcpproxy.Proxy {
	t.Helper()
	p, err := tcpproxy.Start(echo.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// roundTrip sends line and reads the echo.
func roundTrip(c net.Conn, line string) (string, error) {
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(got), err
}

func dialEcho(t *testing.T, p *tcpproxy.Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestCutAndRestore(t *testing.T) {
	echo := startEcho(t)
	p := startProxy(t, echo)
	defer p.Close()

	c := dialEcho(t, p)
	if got, err := roundTrip(c, "hello"); err != nil || got != "hello" {
		t.Fatalf("through the proxy: %q, %v", got, err)
	}

	p.Cut()
	if _, err := roundTrip(c, "after cut"); err == nil {
		t.Fatal("an open connection survived Cut")
	}
	if _, err := net.Dial("tcp", p.Addr()); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial during the cut: %v, want connection refused", err)
	}

	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	c = dialEcho(t, p)
	if got, err := roundTrip(c, "back"); err != nil || got != "back" {
		t.Fatalf("after Restore: %q, %v", got, err)
	}
	if err := p.Restore(); err != nil {
		t.Fatalf("Restore when not cut: %v", err)
	}
}

func TestCutWhen(t *testing.T) {
	echo := startEcho(t)
	p := startProxy(t, echo)
	defer p.Close()

	c := dialEcho(t, p)
	p.CutWhen(func(b []byte) bool { return bytes.Contains(b, []byte("MARK")) })
	if got, err := roundTrip(c, "plain"); err != nil || got != "plain" {
		t.Fatalf("a chunk without the mark: %q, %v", got, err)
	}
	if got, err := roundTrip(c, "MARK 1"); err == nil {
		t.Fatalf("the marked chunk was answered: %q", got)
	}
	// The server got the marked chunk; the client never saw the answer.
	if !p.Settle() {
		t.Fatal("Settle: the server did not close the cut connection")
	}
	if first, second := echo.next(t), echo.next(t); first != "plain" || second != "MARK 1" {
		t.Fatalf("server received %q, %q; want plain, MARK 1", first, second)
	}
	if _, err := net.Dial("tcp", p.Addr()); err == nil {
		t.Fatal("the proxy accepts connections after the triggered cut")
	}
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	c = dialEcho(t, p)
	if got, err := roundTrip(c, "MARK 2"); err != nil || got != "MARK 2" {
		t.Fatalf("Restore did not disarm the trigger: %q, %v", got, err)
	}
}

func TestCloseEndsEverything(t *testing.T) {
	echo := startEcho(t)
	p := startProxy(t, echo)
	c := dialEcho(t, p)
	if _, err := roundTrip(c, "x"); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Restore(); err == nil {
		t.Fatal("Restore after Close succeeded")
	}
	if _, err := roundTrip(c, "y"); err == nil {
		t.Fatal("a connection survived Close")
	}
}
