package mail

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"io"
	"math/big"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testCert is a self-signed certificate for 127.0.0.1, ::1 and localhost,
// made once per test binary.
var testCert = sync.OnceValues(func() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "authkit mail test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
})

// clientTLS returns a client config that trusts testCert.
func clientTLS(t testing.TB) *tls.Config {
	t.Helper()
	cert, err := testCert()
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	return &tls.Config{RootCAs: pool}
}

// serverOptions shape a testServer.
type serverOptions struct {
	implicitTLS bool            // TLS from the first byte (smtps)
	starttls    bool            // offer STARTTLS
	user, pass  string          // offer AUTH PLAIN and accept these credentials
	silent      bool            // accept connections and never answer
	rcptReply   string          // reply to RCPT TO instead of "250 OK", e.g. "550 ..."
	accepted    chan<- struct{} // if set, gets a value per accepted connection
}

// envelope is one message the test server accepted.
type envelope struct {
	from  string   // MAIL FROM path, without brackets or parameters
	rcpts []string // RCPT TO paths
	data  []byte   // the DATA section with dot-stuffing undone, CRLFs kept
	tls   bool     // the transaction ran over TLS
	auth  string   // "user\x00pass" as authenticated, empty if none
	helo  string   // the EHLO argument
}

// testServer is a minimal ESMTP server (RFC 5321) on 127.0.0.1:0 that
// records what it receives.
type testServer struct {
	t    *testing.T
	opts serverOptions
	ln   net.Listener
	cert tls.Certificate

	mu       sync.Mutex
	conns    int
	mails    []envelope
	errs     []error
	open     map[net.Conn]struct{}
	commands []string // every command line, as received (AUTH redacted)
	wg       sync.WaitGroup
}

func startServer(t *testing.T, opts serverOptions) *testServer {
	t.Helper()
	cert, err := testCert()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{t: t, opts: opts, ln: ln, cert: cert, open: map[net.Conn]struct{}{}}
	s.wg.Go(s.serve)
	t.Cleanup(s.close)
	return s
}

// Addr returns "127.0.0.1:port".
func (s *testServer) Addr() string { return s.ln.Addr().String() }

func (s *testServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.open {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	for _, err := range s.errs {
		s.t.Errorf("test SMTP server: %v", err)
	}
}

func (s *testServer) Mails() []envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]envelope(nil), s.mails...)
}

func (s *testServer) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

func (s *testServer) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.commands...)
}

func (s *testServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns++
		s.open[c] = struct{}{}
		s.mu.Unlock()
		if s.opts.accepted != nil {
			s.opts.accepted <- struct{}{}
		}
		s.wg.Go(func() {
			defer func() {
				s.mu.Lock()
				delete(s.open, c)
				s.mu.Unlock()
				c.Close()
			}()
			if err := s.session(c); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, syscall.ECONNRESET) {
				s.mu.Lock()
				s.errs = append(s.errs, err)
				s.mu.Unlock()
			}
		})
	}
}

// session speaks SMTP on one connection until QUIT or EOF.
func (s *testServer) session(c net.Conn) error {
	if s.opts.silent {
		_, err := io.Copy(io.Discard, c) // until the client gives up
		return err
	}
	isTLS := false
	if s.opts.implicitTLS {
		tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{s.cert}})
		if err := tc.Handshake(); err != nil {
			return nil // the client refused our certificate; its test checks that
		}
		c, isTLS = tc, true
	}
	tp := textproto.NewConn(c)
	if err := tp.PrintfLine("220 test.local ESMTP ready"); err != nil {
		return err
	}
	var env envelope
	var auth, helo string
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return err
		}
		verb, arg, _ := strings.Cut(line, " ")
		verb = strings.ToUpper(verb)
		s.mu.Lock()
		if verb == "AUTH" {
			s.commands = append(s.commands, "AUTH [redacted]")
		} else {
			s.commands = append(s.commands, line)
		}
		s.mu.Unlock()
		switch verb {
		case "EHLO", "HELO":
			helo = arg
			env = envelope{}
			ext := []string{"test.local greets " + arg, "8BITMIME", "SMTPUTF8"}
			if s.opts.starttls && !isTLS {
				ext = append(ext, "STARTTLS")
			}
			if s.opts.user != "" {
				ext = append(ext, "AUTH PLAIN")
			}
			for i, e := range ext {
				sep := "-"
				if i == len(ext)-1 {
					sep = " "
				}
				if err := tp.PrintfLine("250%s%s", sep, e); err != nil {
					return err
				}
			}
		case "STARTTLS":
			if !s.opts.starttls || isTLS {
				err = tp.PrintfLine("502 not offered")
				break
			}
			if err := tp.PrintfLine("220 go ahead"); err != nil {
				return err
			}
			tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{s.cert}})
			if err := tc.Handshake(); err != nil {
				return nil // the client refused our certificate
			}
			c, isTLS = tc, true
			tp = textproto.NewConn(c)
			helo, auth, env = "", "", envelope{} // RFC 3207: forget everything
		case "AUTH":
			mech, ir, _ := strings.Cut(arg, " ")
			if s.opts.user == "" || !strings.EqualFold(mech, "PLAIN") {
				err = tp.PrintfLine("504 unsupported")
				break
			}
			if ir == "" {
				if err := tp.PrintfLine("334 "); err != nil {
					return err
				}
				if ir, err = tp.ReadLine(); err != nil {
					return err
				}
			}
			raw, derr := base64.StdEncoding.DecodeString(ir)
			parts := strings.Split(string(raw), "\x00")
			if derr != nil || len(parts) != 3 || parts[1] != s.opts.user || parts[2] != s.opts.pass {
				err = tp.PrintfLine("535 5.7.8 authentication failed")
				break
			}
			auth = parts[1] + "\x00" + parts[2]
			err = tp.PrintfLine("235 2.7.0 authenticated")
		case "MAIL":
			if helo == "" {
				err = tp.PrintfLine("503 EHLO first")
				break
			}
			if s.opts.user != "" && auth == "" {
				err = tp.PrintfLine("530 authentication required")
				break
			}
			env = envelope{from: path(arg, "FROM:"), tls: isTLS, auth: auth, helo: helo}
			err = tp.PrintfLine("250 OK")
		case "RCPT":
			if s.opts.rcptReply != "" {
				err = tp.PrintfLine("%s", s.opts.rcptReply)
				break
			}
			env.rcpts = append(env.rcpts, path(arg, "TO:"))
			err = tp.PrintfLine("250 OK")
		case "DATA":
			if len(env.rcpts) == 0 {
				err = tp.PrintfLine("503 no recipients")
				break
			}
			if err := tp.PrintfLine("354 end with <CRLF>.<CRLF>"); err != nil {
				return err
			}
			data, rerr := readData(tp.R)
			if rerr != nil {
				return rerr
			}
			env.data = data
			s.mu.Lock()
			s.mails = append(s.mails, env)
			s.mu.Unlock()
			env = envelope{}
			err = tp.PrintfLine("250 queued")
		case "RSET":
			env = envelope{}
			err = tp.PrintfLine("250 OK")
		case "NOOP":
			err = tp.PrintfLine("250 OK")
		case "QUIT":
			_ = tp.PrintfLine("221 bye")
			return nil
		default:
			err = tp.PrintfLine("500 unknown command")
		}
		if err != nil {
			return err
		}
	}
}

// path extracts the address from "FROM:<a@b> BODY=8BITMIME".
func path(arg, prefix string) string {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "?" + arg
	}
	p := arg[len(prefix):]
	if i := strings.LastIndexByte(p, '>'); strings.HasPrefix(p, "<") && i > 0 {
		return p[1:i]
	}
	return "?" + arg
}

// readData reads a DATA section up to the lone "." line, undoing the
// dot-stuffing but keeping every byte else, line endings included, so
// tests can check them. Only CRLF.CRLF ends the data, as RFC 5321 says.
func readData(r *bufio.Reader) ([]byte, error) {
	var data []byte
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		if bytes.Equal(line, []byte(".\r\n")) {
			return data, nil
		}
		if line[0] == '.' {
			line = line[1:]
		}
		data = append(data, line...)
	}
}
