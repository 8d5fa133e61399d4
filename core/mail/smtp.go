package mail

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/mail"
	"net/netip"
	"net/smtp"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// SMTPConfig configures [NewSMTP].
type SMTPConfig struct {
	// From is the sender, as in "Ada's App <no-reply@example.com>" or a
	// bare address. Required. It goes into the From header (display name
	// RFC 2047-encoded when needed) and, without the display name, into
	// MAIL FROM; its domain names the Message-ID.
	From string

	// Timeout bounds one Send: dialling, the TLS handshake and the whole
	// SMTP transaction, through a context deadline and the connection's
	// deadline. A shorter deadline on the ctx given to Send wins.
	// Default: 10 seconds.
	Timeout time.Duration

	// TLSConfig is the TLS configuration for STARTTLS and smtps://. It is
	// cloned, never modified; ServerName defaults to the URL's host and
	// MinVersion to TLS 1.2. Set RootCAs here to trust a private CA.
	// Default: the system roots.
	TLSConfig *tls.Config

	// Hello is the name sent with EHLO. Default: "localhost".
	Hello string

	// Now is the clock for the Date header. Default: time.Now. Timeouts
	// always use the real clock.
	Now func() time.Time

	// Rand is the source of the Message-ID and the MIME boundary.
	// Default: crypto/rand.Reader.
	Rand io.Reader
}

// Default values of SMTPConfig and the SMTP URL.
const (
	// DefaultSMTPTimeout is SMTPConfig.Timeout's default.
	DefaultSMTPTimeout = 10 * time.Second

	// DefaultSMTPPort is the port of smtp:// URLs without one (submission).
	DefaultSMTPPort = 587

	// DefaultSMTPSPort is the port of smtps:// URLs without one
	// (submission over implicit TLS).
	DefaultSMTPSPort = 465
)

// SMTP is a [Mailer] that delivers each message over its own connection to
// one SMTP submission server. Make it with [NewSMTP]; it is safe for
// concurrent use.
type SMTP struct {
	url         string // redacted
	addr        string // host:port
	host        string
	implicitTLS bool
	requireTLS  bool
	user, pass  string
	from        *mail.Address
	msgDomain   string
	hello       string
	timeout     time.Duration
	tlsConfig   *tls.Config
	now         func() time.Time
	rand        io.Reader
}

var _ Mailer = (*SMTP)(nil)

// NewSMTP returns a mailer for the server named by rawURL:
//
//   - smtp://[user:pass@]host[:port] connects in plain text and upgrades
//     with STARTTLS. STARTTLS is required: a server that does not offer it
//     gets nothing ([ErrTLSRequired]), unless host is a loopback address
//     ("localhost", 127.0.0.0/8, ::1), where STARTTLS is used when offered
//     (and must then succeed) and plain text is allowed otherwise.
//     Default port: 587.
//   - smtps://[user:pass@]host[:port] speaks TLS from the first byte
//     (implicit TLS). Default port: 465.
//
// With a user name, Send authenticates with AUTH PLAIN, which net/smtp
// refuses to do over a connection that is neither TLS nor to localhost.
// Percent-encode reserved characters in the user name and password
// (url.UserPassword does). The URL takes no path, query or fragment.
//
// Every error wraps [ErrInvalidConfig] (and [ErrInvalidHeader] for a bad
// From) and never contains the password.
func NewSMTP(rawURL string, cfg SMTPConfig) (*SMTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error quotes the URL, and a password with a reserved
		// character can end up in the inner error: say neither.
		return nil, fmt.Errorf("%w: SMTP URL does not parse (percent-encode reserved characters in the user name and password)", ErrInvalidConfig)
	}
	s := &SMTP{url: u.Redacted()}
	var defPort int
	switch u.Scheme {
	case "smtp":
		defPort = DefaultSMTPPort
	case "smtps":
		defPort = DefaultSMTPSPort
		s.implicitTLS = true
	default:
		return nil, fmt.Errorf("%w: SMTP URL scheme must be smtp or smtps", ErrInvalidConfig)
	}
	if u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, fmt.Errorf("%w: SMTP URL must be scheme://[user:pass@]host[:port], without path, query or fragment (percent-encode reserved characters in the user name and password)", ErrInvalidConfig)
	}
	s.host = u.Hostname()
	if s.host == "" {
		return nil, fmt.Errorf("%w: SMTP URL has no host", ErrInvalidConfig)
	}
	port := defPort
	if p := u.Port(); p != "" {
		port, err = strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("%w: SMTP URL port must be 1 to 65535", ErrInvalidConfig)
		}
	}
	s.addr = net.JoinHostPort(s.host, strconv.Itoa(port))
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
		if s.user == "" {
			return nil, fmt.Errorf("%w: SMTP URL has credentials without a user name", ErrInvalidConfig)
		}
	}
	s.requireTLS = !s.implicitTLS && requireSTARTTLS(s.host)

	if err := checkHeader("From", cfg.From, 512); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	s.from, err = mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("%w: %w: From is not one address", ErrInvalidConfig, ErrInvalidHeader)
	}
	s.msgDomain = s.from.Address[strings.LastIndexByte(s.from.Address, '@')+1:]
	if !isDotAtom(s.msgDomain) {
		s.msgDomain = "localhost"
	}

	s.hello = cfg.Hello
	if s.hello == "" {
		s.hello = "localhost"
	}
	if !isDotAtom(s.hello) && !isAddressLiteral(s.hello) {
		return nil, fmt.Errorf("%w: Hello must be a domain name or an address literal such as [192.0.2.1]", ErrInvalidConfig)
	}
	s.timeout = cfg.Timeout
	if s.timeout <= 0 {
		s.timeout = DefaultSMTPTimeout
	}
	if cfg.TLSConfig != nil {
		s.tlsConfig = cfg.TLSConfig.Clone()
	} else {
		s.tlsConfig = &tls.Config{}
	}
	if s.tlsConfig.ServerName == "" {
		s.tlsConfig.ServerName = s.host
	}
	if s.tlsConfig.MinVersion == 0 {
		s.tlsConfig.MinVersion = tls.VersionTLS12
	}
	s.now = cfg.Now
	if s.now == nil {
		s.now = time.Now
	}
	s.rand = cfg.Rand
	if s.rand == nil {
		s.rand = rand.Reader
	}
	return s, nil
}

// String returns the server's URL with the password replaced by "xxxxx",
// for logs.
func (s *SMTP) String() string { return s.url }

// requireSTARTTLS reports whether an smtp:// connection to host must be
// upgraded with STARTTLS: always, except to a loopback host, where the
// traffic never leaves the machine.
func requireSTARTTLS(host string) bool {
	return !isLoopback(host)
}

// isLoopback reports whether host is "localhost" or a loopback IP address.
// Other names are not resolved: a name that merely resolves to a loopback
// address today may not tomorrow.
func isLoopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// Send delivers m: it validates m and builds the whole MIME message before
// connecting, then dials, upgrades to TLS, authenticates and runs one SMTP
// transaction, all within SMTPConfig.Timeout and ctx. Once the server has
// accepted the data the message counts as sent, whatever QUIT answers.
//
// A server's refusal comes back as an error wrapping the *textproto.Error
// with its reply code (5xx: permanent). Errors may contain the recipient
// address as the server echoed it; they never contain the password.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	to, err := m.recipient()
	if err != nil {
		return err
	}
	raw, err := buildMessage(m, s.from, to, s.now(), s.msgDomain, s.rand)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mail: smtp %s: %w", s.addr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	step, err := s.send(ctx, envelopeAddress(to), raw)
	if err != nil {
		if cerr := contextErr(ctx); cerr != nil && !errors.Is(err, cerr) {
			return fmt.Errorf("mail: smtp %s: %s: %w: %w", s.addr, step, cerr, err)
		}
		return fmt.Errorf("mail: smtp %s: %s: %w", s.addr, step, err)
	}
	return nil
}

// contextErr is ctx.Err(), and context.DeadlineExceeded once ctx's deadline
// has passed even if ctx's timer has not fired yet: the connection's
// deadline, which is the same instant, may fire first.
func contextErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// send runs one connection and returns the step that failed.
func (s *SMTP) send(ctx context.Context, rcpt string, raw []byte) (step string, err error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return "dial", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(dl); err != nil {
			return "dial", err
		}
	}
	// Cancelling ctx unblocks whatever read or write is in progress.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	var c *smtp.Client
	if s.implicitTLS {
		tc := tls.Client(conn, s.tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			return "tls handshake", err
		}
		// net/smtp sees the *tls.Conn and reports TLS to the auth.
		c, err = smtp.NewClient(tc, s.host)
	} else {
		c, err = smtp.NewClient(conn, s.host)
	}
	if err != nil {
		return "greeting", err
	}
	defer c.Close()
	if err := c.Hello(s.hello); err != nil {
		return "hello", err
	}
	if !s.implicitTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(s.tlsConfig); err != nil {
				return "starttls", err
			}
		} else if s.requireTLS {
			return "starttls", ErrTLSRequired
		}
	}
	if s.user != "" {
		ok, mechs := c.Extension("AUTH")
		if !ok || !hasField(mechs, "PLAIN") {
			return "auth", errors.New("server does not offer AUTH PLAIN")
		}
		if err := c.Auth(smtp.PlainAuth("", s.user, s.pass, s.host)); err != nil {
			return "auth", err
		}
	}
	if err := c.Mail(envelopeAddress(s.from)); err != nil {
		return "mail from", err
	}
	if err := c.Rcpt(rcpt); err != nil {
		return "rcpt to", err
	}
	w, err := c.Data()
	if err != nil {
		return "data", err
	}
	if _, err := w.Write(raw); err != nil {
		return "data", err
	}
	if err := w.Close(); err != nil {
		return "data", err
	}
	// The server has taken responsibility for the message: a failed QUIT
	// must not make a caller retry and deliver it twice.
	_ = c.Quit()
	return "", nil
}

// hasField reports whether the space-separated list holds f, ignoring case.
func hasField(list, f string) bool {
	for _, x := range strings.Fields(list) {
		if strings.EqualFold(x, f) {
			return true
		}
	}
	return false
}

// isDotAtom reports whether s is a plain ASCII host name: letters, digits,
// hyphens and dots, not empty.
func isDotAtom(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// isAddressLiteral reports whether s is "[ip]", as EHLO takes an address.
func isAddressLiteral(s string) bool {
	inner, ok := strings.CutPrefix(s, "[")
	if !ok {
		return false
	}
	inner, ok = strings.CutSuffix(inner, "]")
	if !ok {
		return false
	}
	inner = strings.TrimPrefix(inner, "IPv6:")
	_, err := netip.ParseAddr(inner)
	return err == nil
}
