package mail

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

var testDate = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// countingReader yields 0x00, 0x01, 0x02, ... so Message-IDs and
// boundaries are predictable.
type countingReader struct{ n byte }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.n
		r.n++
	}
	return len(p), nil
}

// First Message-ID and boundary that countingReader produces.
const (
	firstMsgID    = "000102030405060708090a0b0c0d0e0f"
	firstBoundary = "101112131415161718191a1b1c1d1e1f"
)

func testSMTPConfig() SMTPConfig {
	return SMTPConfig{
		From:    "Ada's App <no-reply@example.com>",
		Timeout: 5 * time.Second,
		Now:     func() time.Time { return testDate },
		Rand:    &countingReader{},
	}
}

func newSMTP(t *testing.T, rawURL string, cfg SMTPConfig) *SMTP {
	t.Helper()
	s, err := NewSMTP(rawURL, cfg)
	if err != nil {
		t.Fatalf("NewSMTP(%q): %v", rawURL, err)
	}
	return s
}

func testMessage() Message {
	return Message{
		To:      "bob@example.com",
		Subject: "Vérifiez votre adresse ✓",
		Text:    "Grüße, Bob!\nOpen https://app.example.com/verify-email/tok3n\n",
		HTML:    "<p>Grüße, <b>Bob</b>!</p>\n<p><a href=\"https://app.example.com/verify-email/tok3n\">verify</a></p>\n",
		Kind:    KindVerifyEmail,
		Link:    "https://app.example.com/verify-email/tok3n",
	}
}

// received is a message as a mail client sees it.
type received struct {
	header mail.Header
	parts  []part // in order
}

type part struct {
	contentType string
	body        string // transfer-decoded, line endings as LF
}

// parseReceived checks the raw form of data (CRLF only, no line over 998
// octets, no body line over 76) and parses it with net/mail and
// mime/multipart.
func parseReceived(t *testing.T, data []byte) received {
	t.Helper()
	lines := bytes.SplitAfter(data, []byte("\n"))
	inBody := false
	for i, l := range lines {
		if len(l) == 0 {
			continue
		}
		if !bytes.HasSuffix(l, []byte("\r\n")) || bytes.Count(l, []byte("\r")) != 1 || bytes.Count(l, []byte("\n")) != 1 {
			t.Fatalf("line %d is not CRLF-terminated or holds a bare CR or LF: %q", i, l)
		}
		if len(l) > 1000 {
			t.Fatalf("line %d is longer than 998 octets: %d", i, len(l)-2)
		}
		if string(l) == "\r\n" {
			inBody = true
		}
		if inBody && len(l) > 78 {
			t.Fatalf("body line %d is longer than 76 characters: %q", i, l)
		}
	}
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("mail.ReadMessage: %v\n%s", err, data)
	}
	r := received{header: msg.Header}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type: %v", err)
	}
	if !strings.HasPrefix(mt, "multipart/") {
		if cte := msg.Header.Get("Content-Transfer-Encoding"); cte != "quoted-printable" {
			t.Fatalf("Content-Transfer-Encoding = %q", cte)
		}
		// Decode like multipart does, through a one-part multipart reader.
		body, err := io.ReadAll(msg.Body)
		if err != nil {
			t.Fatal(err)
		}
		wrapped := "--b\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" + string(body) + "\r\n--b--\r\n"
		p, err := multipart.NewReader(strings.NewReader(wrapped), "b").NextPart()
		if err != nil {
			t.Fatal(err)
		}
		dec, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		r.parts = []part{{msg.Header.Get("Content-Type"), lf(string(dec))}}
		return r
	}
	r.parts = readParts(t, msg.Body, params["boundary"])
	return r
}

// readParts reads a multipart body whose parts are quoted-printable, as
// the SMTP sender writes them, and returns them decoded, line breaks as LF.
func readParts(t *testing.T, body io.Reader, boundary string) []part {
	t.Helper()
	var parts []part
	mr := multipart.NewReader(body, boundary)
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return parts
		}
		if err != nil {
			t.Fatalf("NextPart: %v", err)
		}
		// multipart.Reader decodes quoted-printable and drops the header.
		if _, ok := p.Header["Content-Transfer-Encoding"]; ok {
			t.Fatalf("part was not quoted-printable: %v", p.Header)
		}
		dec, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part{p.Header.Get("Content-Type"), lf(string(dec))})
	}
}

func lf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

func decodeSubject(t *testing.T, h mail.Header) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil {
		t.Fatalf("decoding Subject %q: %v", h.Get("Subject"), err)
	}
	return s
}

// sendPlain sends m through a fresh test server over plain SMTP, with the
// test config, and returns the server and the one mail it received.
func sendPlain(t *testing.T, m Message) (*testServer, envelope) {
	t.Helper()
	srv := startServer(t, serverOptions{})
	sendOne(t, newSMTP(t, "smtp://"+srv.Addr(), testSMTPConfig()), m)
	return srv, onlyMail(t, srv)
}

func sendOne(t *testing.T, s *SMTP, m Message) {
	t.Helper()
	if err := s.Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

func onlyMail(t *testing.T, srv *testServer) envelope {
	t.Helper()
	mails := srv.Mails()
	if len(mails) != 1 {
		t.Fatalf("server received %d messages, want 1", len(mails))
	}
	return mails[0]
}

func TestSMTPMessageFormat(t *testing.T) {
	m := testMessage()
	_, env := sendPlain(t, m)
	if env.from != "no-reply@example.com" || !slices.Equal(env.rcpts, []string{"bob@example.com"}) {
		t.Errorf("envelope from %q to %q", env.from, env.rcpts)
	}
	if env.tls || env.auth != "" || env.helo != "localhost" {
		t.Errorf("tls=%v auth=%q helo=%q, want plain, no auth, localhost", env.tls, env.auth, env.helo)
	}
	r := parseReceived(t, env.data)

	want := map[string]string{
		"Date":           "Sat, 01 Mar 2025 12:00:00 +0000",
		"From":           `"Ada's App" <no-reply@example.com>`,
		"To":             "<bob@example.com>",
		"Message-Id":     "<" + firstMsgID + "@example.com>",
		"Mime-Version":   "1.0",
		"Auto-Submitted": "auto-generated",
		"Content-Type":   `multipart/alternative; boundary=` + firstBoundary,
	}
	var keys []string
	for k := range r.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	wantKeys := []string{"Auto-Submitted", "Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Subject", "To"}
	if !slices.Equal(keys, wantKeys) {
		t.Errorf("header keys = %v, want %v", keys, wantKeys)
	}
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if got := decodeSubject(t, r.header); got != m.Subject {
		t.Errorf("Subject = %q, want %q", got, m.Subject)
	}
	if raw := r.header.Get("Subject"); !strings.HasPrefix(raw, "=?utf-8?q?") {
		t.Errorf("raw Subject %q is not Q-encoded", raw)
	}
	if d, err := r.header.Date(); err != nil || !d.Equal(testDate) {
		t.Errorf("Date parses as %v, %v", d, err)
	}
	from, err := mail.ParseAddress(r.header.Get("From"))
	if err != nil || from.Name != "Ada's App" || from.Address != "no-reply@example.com" {
		t.Errorf("From parses as %+v, %v", from, err)
	}
	wantParts := []part{
		{"text/plain; charset=utf-8", m.Text},
		{"text/html; charset=utf-8", m.HTML},
	}
	if !slices.Equal(r.parts, wantParts) {
		t.Errorf("parts = %q\nwant %q", r.parts, wantParts)
	}
	// The body is quoted-printable: no raw non-ASCII byte on the wire.
	for _, b := range env.data {
		if b >= 0x80 {
			t.Fatalf("raw message holds a non-ASCII byte:\n%s", env.data)
		}
	}
}

func TestSMTPTextOnly(t *testing.T) {
	m := testMessage()
	m.HTML = ""
	m.Text = "no trailing newline, ünïcode"
	_, env := sendPlain(t, m)
	r := parseReceived(t, env.data)
	want := []part{{"text/plain; charset=utf-8", m.Text + "\n"}}
	if !slices.Equal(r.parts, want) {
		t.Errorf("parts = %q, want %q", r.parts, want)
	}
}

func TestSMTPLongSubjectIsFolded(t *testing.T) {
	m := testMessage()
	m.Subject = strings.Repeat("Ünïcödé ", 30)[:MaxSubjectLen-1]
	m.Subject = strings.ToValidUTF8(m.Subject, "")
	_, env := sendPlain(t, m)
	data := env.data
	head, _, _ := bytes.Cut(data, []byte("\r\n\r\n"))
	var subjectLines int
	inSubject := false
	for l := range strings.SplitSeq(string(head), "\r\n") {
		switch {
		case strings.HasPrefix(l, "Subject: "):
			inSubject = true
		case inSubject && strings.HasPrefix(l, " "):
		default:
			inSubject = false
		}
		if inSubject {
			subjectLines++
			if len(strings.TrimPrefix(l, "Subject: ")) > 76 {
				t.Errorf("subject line too long (%d): %q", len(l), l)
			}
		}
	}
	if subjectLines < 2 {
		t.Errorf("subject was not folded: %d line(s)", subjectLines)
	}
	if got := decodeSubject(t, parseReceived(t, data).header); got != m.Subject {
		t.Errorf("Subject = %q, want %q", got, m.Subject)
	}
}

func TestSMTPQuotedLocalPart(t *testing.T) {
	m := testMessage()
	m.To = `"john doe"@example.com`
	_, env := sendPlain(t, m)
	if !slices.Equal(env.rcpts, []string{`"john doe"@example.com`}) {
		t.Errorf("RCPT TO %q", env.rcpts)
	}
	if got := parseReceived(t, env.data).header.Get("To"); got != `<"john doe"@example.com>` {
		t.Errorf("To = %q", got)
	}
}

// A body cannot end the DATA section early or smuggle a second message:
// every line break goes out as CRLF and a lone dot is stuffed.
func TestSMTPBodyCannotSmuggle(t *testing.T) {
	m := testMessage()
	m.Text = "a\n.\r\nMAIL FROM:<x@evil.example>\r\nRCPT TO:<y@evil.example>\r\nDATA\r\n.\nb\r.\rc\r\n.\r\n"
	m.HTML = "<p>.</p>\n.\n"
	srv, env := sendPlain(t, m)
	if !slices.Equal(env.rcpts, []string{"bob@example.com"}) {
		t.Fatalf("RCPT TO %q", env.rcpts)
	}
	for _, c := range srv.Commands() {
		if strings.Contains(c, "evil") {
			t.Errorf("server saw command %q", c)
		}
	}
	r := parseReceived(t, env.data)
	wantText := "a\n.\nMAIL FROM:<x@evil.example>\nRCPT TO:<y@evil.example>\nDATA\n.\nb\n.\nc\n.\n"
	if r.parts[0].body != wantText || r.parts[1].body != m.HTML {
		t.Errorf("parts = %q", r.parts)
	}
}

func TestSMTPSTARTTLS(t *testing.T) {
	srv := startServer(t, serverOptions{starttls: true})
	cfg := testSMTPConfig()
	cfg.TLSConfig = clientTLS(t)
	s := newSMTP(t, "smtp://"+srv.Addr(), cfg)
	sendOne(t, s, testMessage())
	if env := onlyMail(t, srv); !env.tls {
		t.Error("message was not sent over TLS")
	}
	if cfg.TLSConfig.ServerName != "" || cfg.TLSConfig.MinVersion != 0 {
		t.Error("NewSMTP modified the caller's tls.Config")
	}
}

// A STARTTLS offer that fails (here: an untrusted certificate) is an error,
// never a silent fall-back to plain text, even on loopback.
func TestSMTPSTARTTLSUntrustedCertificate(t *testing.T) {
	srv := startServer(t, serverOptions{starttls: true})
	s := newSMTP(t, "smtp://"+srv.Addr(), testSMTPConfig()) // system roots
	err := s.Send(t.Context(), testMessage())
	var cve *tls.CertificateVerificationError
	if !errors.As(err, &cve) {
		t.Fatalf("Send = %v, want a certificate verification error", err)
	}
	if n := len(srv.Mails()); n != 0 {
		t.Errorf("server received %d messages", n)
	}
}

func TestRequireSTARTTLS(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"localhost", false},
		{"LOCALHOST", false},
		{"localhost.", false},
		{"127.0.0.1", false},
		{"127.1.2.3", false},
		{"::1", false},
		{"::ffff:127.0.0.1", false},
		{"smtp.example.com", true},
		{"localhost.example.com", true},
		{"mylocalhost", true},
		{"10.0.0.1", true},
		{"192.168.1.10", true},
		{"::2", true},
		{"0.0.0.0", true},
		{"", true},
	} {
		if got := requireSTARTTLS(tc.host); got != tc.want {
			t.Errorf("requireSTARTTLS(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

func TestNewSMTPRequireTLSFromURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"smtp://smtp.example.com", true},
		{"smtp://127.0.0.1:25", false},
		{"smtp://[::1]:25", false},
		{"smtp://localhost", false},
		{"smtps://smtp.example.com", false}, // TLS from the first byte
	} {
		if got := newSMTP(t, tc.url, testSMTPConfig()).requireTLS; got != tc.want {
			t.Errorf("%s: requireTLS = %v, want %v", tc.url, got, tc.want)
		}
	}
}

// With STARTTLS required, a server that does not offer it gets neither
// credentials nor the message.
func TestSMTPTLSRequiredButNotOffered(t *testing.T) {
	srv := startServer(t, serverOptions{user: "ada", pass: "secret"})
	s := newSMTP(t, "smtp://ada:secret@"+srv.Addr(), testSMTPConfig())
	s.requireTLS = true // as for any non-loopback host
	err := s.Send(t.Context(), testMessage())
	if !errors.Is(err, ErrTLSRequired) {
		t.Fatalf("Send = %v, want ErrTLSRequired", err)
	}
	if !permanent(err) {
		t.Error("ErrTLSRequired is not permanent")
	}
	if got := srv.Commands(); !slices.Equal(got, []string{"EHLO localhost"}) {
		t.Errorf("server saw %q, want only EHLO", got)
	}
}

func TestSMTPImplicitTLS(t *testing.T) {
	srv := startServer(t, serverOptions{implicitTLS: true, user: "ada@example.com", pass: "pw"})
	cfg := testSMTPConfig()
	cfg.TLSConfig = clientTLS(t)
	s := newSMTP(t, "smtps://ada%40example.com:pw@"+srv.Addr(), cfg)
	sendOne(t, s, testMessage())
	env := onlyMail(t, srv)
	if !env.tls || env.auth != "ada@example.com\x00pw" {
		t.Errorf("tls=%v auth=%q", env.tls, env.auth)
	}
}

func TestSMTPAuthPlain(t *testing.T) {
	const user, pass = "ada@example.com", "p@ss w:rd/?#"
	url := func(addr, pw string) string {
		return "smtp://ada%40example.com:" + strings.NewReplacer("@", "%40", " ", "%20", ":", "%3A", "/", "%2F", "?", "%3F", "#", "%23").Replace(pw) + "@" + addr
	}
	t.Run("STARTTLS", func(t *testing.T) {
		srv := startServer(t, serverOptions{starttls: true, user: user, pass: pass})
		cfg := testSMTPConfig()
		cfg.TLSConfig = clientTLS(t)
		sendOne(t, newSMTP(t, url(srv.Addr(), pass), cfg), testMessage())
		if env := onlyMail(t, srv); !env.tls || env.auth != user+"\x00"+pass {
			t.Errorf("tls=%v auth=%q", env.tls, env.auth)
		}
	})
	t.Run("plain loopback", func(t *testing.T) {
		srv := startServer(t, serverOptions{user: user, pass: pass})
		sendOne(t, newSMTP(t, url(srv.Addr(), pass), testSMTPConfig()), testMessage())
		if env := onlyMail(t, srv); env.tls || env.auth != user+"\x00"+pass {
			t.Errorf("tls=%v auth=%q", env.tls, env.auth)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		srv := startServer(t, serverOptions{starttls: true, user: user, pass: pass})
		cfg := testSMTPConfig()
		cfg.TLSConfig = clientTLS(t)
		const wrong = "wr0ng-Passw0rd"
		err := newSMTP(t, url(srv.Addr(), wrong), cfg).Send(t.Context(), testMessage())
		var te *textproto.Error
		if !errors.As(err, &te) || te.Code != 535 {
			t.Fatalf("Send = %v, want a 535 reply", err)
		}
		if strings.Contains(err.Error(), wrong) {
			t.Errorf("error %q contains the password", err)
		}
		if len(srv.Mails()) != 0 {
			t.Error("message sent despite failed auth")
		}
	})
	t.Run("AUTH not offered", func(t *testing.T) {
		srv := startServer(t, serverOptions{})
		err := newSMTP(t, url(srv.Addr(), pass), testSMTPConfig()).Send(t.Context(), testMessage())
		if err == nil || !strings.Contains(err.Error(), "AUTH PLAIN") {
			t.Fatalf("Send = %v, want an AUTH PLAIN error", err)
		}
		if got := srv.Commands(); !slices.Equal(got, []string{"EHLO localhost"}) {
			t.Errorf("server saw %q", got)
		}
	})
}

func TestSMTPRecipientRejected(t *testing.T) {
	srv := startServer(t, serverOptions{rcptReply: "550 5.1.1 <bob@example.com>: no such user"})
	err := newSMTP(t, "smtp://"+srv.Addr(), testSMTPConfig()).Send(t.Context(), testMessage())
	var te *textproto.Error
	if !errors.As(err, &te) || te.Code != 550 {
		t.Fatalf("Send = %v, want a 550 reply", err)
	}
	if !permanent(err) {
		t.Error("a 550 reply is not permanent")
	}
}

func TestSMTPTimeout(t *testing.T) {
	srv := startServer(t, serverOptions{silent: true})
	cfg := testSMTPConfig()
	cfg.Timeout = 100 * time.Millisecond
	err := newSMTP(t, "smtp://"+srv.Addr(), cfg).Send(t.Context(), testMessage())
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Send = %v, want a deadline error", err)
	}
	if !strings.Contains(err.Error(), "greeting") {
		t.Errorf("error %q does not name the step", err)
	}
}

func TestSMTPContextDeadlineWins(t *testing.T) {
	srv := startServer(t, serverOptions{silent: true})
	cfg := testSMTPConfig()
	cfg.Timeout = time.Hour
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	err := newSMTP(t, "smtp://"+srv.Addr(), cfg).Send(ctx, testMessage())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send = %v, want context.DeadlineExceeded", err)
	}
}

func TestSMTPContextCancelled(t *testing.T) {
	t.Run("before", func(t *testing.T) {
		srv := startServer(t, serverOptions{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := newSMTP(t, "smtp://"+srv.Addr(), testSMTPConfig()).Send(ctx, testMessage())
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Send = %v, want context.Canceled", err)
		}
		if n := srv.Conns(); n != 0 {
			t.Errorf("%d connections made", n)
		}
	})
	t.Run("during", func(t *testing.T) {
		accepted := make(chan struct{}, 1)
		srv := startServer(t, serverOptions{silent: true, accepted: accepted})
		cfg := testSMTPConfig()
		cfg.Timeout = time.Hour
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-accepted
			cancel()
		}()
		err := newSMTP(t, "smtp://"+srv.Addr(), cfg).Send(ctx, testMessage())
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Send = %v, want context.Canceled", err)
		}
	})
}

// Invalid messages are refused before any connection is made.
func TestSMTPRejectsBeforeConnecting(t *testing.T) {
	srv := startServer(t, serverOptions{})
	s := newSMTP(t, "smtp://"+srv.Addr(), testSMTPConfig())
	for _, tc := range []struct {
		name string
		edit func(*Message)
		want error
	}{
		{"To with CRLF", func(m *Message) { m.To = "bob@example.com\r\nBcc: eve@evil.example" }, ErrInvalidHeader},
		{"To with LF", func(m *Message) { m.To = "bob@example.com\nBcc: eve@evil.example" }, ErrInvalidHeader},
		{"two recipients", func(m *Message) { m.To = "bob@example.com, eve@evil.example" }, ErrInvalidHeader},
		{"display name", func(m *Message) { m.To = "Bob <bob@example.com>" }, ErrInvalidHeader},
		{"not an address", func(m *Message) { m.To = "bob" }, ErrInvalidHeader},
		{"empty To", func(m *Message) { m.To = "" }, ErrInvalidHeader},
		{"long To", func(m *Message) { m.To = strings.Repeat("a", 64) + "@" + strings.Repeat("b", 190) + ".com" }, ErrInvalidHeader},
		{"Subject with CRLF", func(m *Message) { m.Subject = "Hi\r\nBcc: eve@evil.example" }, ErrInvalidHeader},
		{"Subject with LF", func(m *Message) { m.Subject = "Hi\nBcc: eve@evil.example" }, ErrInvalidHeader},
		{"Subject with CR", func(m *Message) { m.Subject = "Hi\rBcc: eve@evil.example" }, ErrInvalidHeader},
		{"Subject with NUL", func(m *Message) { m.Subject = "Hi\x00" }, ErrInvalidHeader},
		{"Subject with NEL", func(m *Message) { m.Subject = "Hi\u0085there" }, ErrInvalidHeader},
		{"Subject invalid UTF-8", func(m *Message) { m.Subject = "Hi\xff" }, ErrInvalidHeader},
		{"empty Subject", func(m *Message) { m.Subject = "" }, ErrInvalidHeader},
		{"long Subject", func(m *Message) { m.Subject = strings.Repeat("x", MaxSubjectLen+1) }, ErrInvalidHeader},
		{"empty Text", func(m *Message) { m.Text = "" }, ErrInvalidBody},
		{"Text invalid UTF-8", func(m *Message) { m.Text = "a\xc3" }, ErrInvalidBody},
		{"HTML invalid UTF-8", func(m *Message) { m.HTML = "a\xc3" }, ErrInvalidBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testMessage()
			tc.edit(&m)
			err := s.Send(t.Context(), m)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Send = %v, want %v", err, tc.want)
			}
			if !errors.Is(m.Validate(), tc.want) {
				t.Errorf("Validate = %v, want %v", m.Validate(), tc.want)
			}
			if strings.Contains(err.Error(), "evil") {
				t.Errorf("error %q quotes the value", err)
			}
		})
	}
	if n := srv.Conns(); n != 0 {
		t.Errorf("%d connections made", n)
	}
}

// A display name that tries to inject a header goes through Render, the
// SMTP mailer and a real SMTP exchange without adding a header or a
// recipient.
func TestHeaderInjectionEndToEnd(t *testing.T) {
	srv := startServer(t, serverOptions{})
	s := newSMTP(t, "smtp://"+srv.Addr(), testSMTPConfig())
	tpl := Templates{VerifyEmail: Template{Subject: "Welcome, {{.Name}}"}}
	for _, name := range []string{
		"Bob\r\nBcc: eve@evil.example",
		"Bob\nBcc: eve@evil.example",
		"Bob\rBcc: eve@evil.example",
		"Bob\r\n\r\nBcc: eve@evil.example",
		"Bob\u2028Bcc: eve@evil.example",
	} {
		m, err := tpl.Render(KindVerifyEmail, Data{To: "bob@example.com", Name: name, Link: "https://app.example.com/verify-email/t"})
		if err != nil {
			t.Fatalf("Render(%q): %v", name, err)
		}
		sendOne(t, s, m)
	}
	mails := srv.Mails()
	if len(mails) != 5 {
		t.Fatalf("server received %d messages, want 5", len(mails))
	}
	for _, env := range mails {
		if !slices.Equal(env.rcpts, []string{"bob@example.com"}) {
			t.Errorf("RCPT TO %q", env.rcpts)
		}
		r := parseReceived(t, env.data)
		for _, k := range []string{"Bcc", "Cc"} {
			if v, ok := r.header[k]; ok {
				t.Errorf("received a %s header: %q", k, v)
			}
		}
		if got := decodeSubject(t, r.header); got != "Welcome, Bob Bcc: eve@evil.example" {
			t.Errorf("Subject = %q", got)
		}
	}
}

func TestNewSMTP(t *testing.T) {
	const secret = "s3cr3t-pw"
	for _, tc := range []struct {
		url         string
		addr        string
		implicitTLS bool
		user, pass  string
		str         string
	}{
		{"smtp://mail.example.com", "mail.example.com:587", false, "", "", "smtp://mail.example.com"},
		{"smtps://mail.example.com", "mail.example.com:465", true, "", "", "smtps://mail.example.com"},
		{"SMTP://mail.example.com:2525/", "mail.example.com:2525", false, "", "", "smtp://mail.example.com:2525/"},
		{"smtp://ada:" + secret + "@mail.example.com:25", "mail.example.com:25", false, "ada", secret, "smtp://ada:xxxxx@mail.example.com:25"},
		{"smtps://ada%40example.com:p%40ss@[::1]", "[::1]:465", true, "ada@example.com", "p@ss", "smtps://ada%40example.com:xxxxx@[::1]"},
		{"smtp://apikey@mail.example.com", "mail.example.com:587", false, "apikey", "", "smtp://apikey@mail.example.com"},
	} {
		s := newSMTP(t, tc.url, testSMTPConfig())
		if s.addr != tc.addr || s.implicitTLS != tc.implicitTLS || s.user != tc.user || s.pass != tc.pass || s.String() != tc.str {
			t.Errorf("%s: addr=%q tls=%v user=%q pass=%q String=%q", tc.url, s.addr, s.implicitTLS, s.user, s.pass, s.String())
		}
	}
	for _, tc := range []struct {
		name, url string
		edit      func(*SMTPConfig)
		also      error
	}{
		{"empty", "", nil, nil},
		{"scheme", "http://mail.example.com", nil, nil},
		{"no scheme", "ada:" + secret + "@mail.example.com", nil, nil},
		{"no host", "smtp://", nil, nil},
		{"no host with user", "smtp://ada:" + secret + "@", nil, nil},
		{"port", "smtp://mail.example.com:0", nil, nil},
		{"port range", "smtp://mail.example.com:70000", nil, nil},
		{"port text", "smtp://ada:" + secret + "@mail.example.com:smtp", nil, nil},
		{"path", "smtp://mail.example.com/x", nil, nil},
		{"query", "smtp://mail.example.com?tls=false", nil, nil},
		{"fragment", "smtp://mail.example.com#x", nil, nil},
		{"unescaped slash in password", "smtp://ada:" + secret + "/x@mail.example.com", nil, nil},
		{"unescaped hash in password", "smtp://ada:123#" + secret + "@mail.example.com", nil, nil},
		{"unescaped space in password", "smtp://ada:" + secret + " x@mail.example.com", nil, nil},
		{"bad escape in password", "smtp://ada:" + secret + "%zz@mail.example.com", nil, nil},
		{"empty user", "smtp://:" + secret + "@mail.example.com", nil, nil},
		{"no From", "smtp://mail.example.com", func(c *SMTPConfig) { c.From = "" }, ErrInvalidHeader},
		{"From with CRLF", "smtp://mail.example.com", func(c *SMTPConfig) { c.From = "a@example.com\r\nBcc: eve@evil.example" }, ErrInvalidHeader},
		{"From two addresses", "smtp://mail.example.com", func(c *SMTPConfig) { c.From = "a@example.com, b@example.com" }, ErrInvalidHeader},
		{"Hello with space", "smtp://mail.example.com", func(c *SMTPConfig) { c.Hello = "my host" }, nil},
		{"Hello with CRLF", "smtp://mail.example.com", func(c *SMTPConfig) { c.Hello = "host\r\nRCPT TO:<x@y>" }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testSMTPConfig()
			if tc.edit != nil {
				tc.edit(&cfg)
			}
			_, err := NewSMTP(tc.url, cfg)
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("NewSMTP(%q) = %v, want ErrInvalidConfig", tc.url, err)
			}
			if tc.also != nil && !errors.Is(err, tc.also) {
				t.Errorf("NewSMTP(%q) = %v, want also %v", tc.url, err, tc.also)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q contains the password", err)
			}
		})
	}
}

func TestNewSMTPDefaults(t *testing.T) {
	s := newSMTP(t, "smtp://mail.example.com", SMTPConfig{From: "no-reply@example.com"})
	if s.timeout != DefaultSMTPTimeout || s.hello != "localhost" || s.msgDomain != "example.com" ||
		s.tlsConfig.ServerName != "mail.example.com" || s.tlsConfig.MinVersion != tls.VersionTLS12 {
		t.Errorf("defaults: timeout=%v hello=%q domain=%q tls=%q/%x", s.timeout, s.hello, s.msgDomain, s.tlsConfig.ServerName, s.tlsConfig.MinVersion)
	}
	s = newSMTP(t, "smtp://mail.example.com", SMTPConfig{From: "no-reply@bücher.example", Hello: "[192.0.2.1]"})
	if s.msgDomain != "localhost" || s.hello != "[192.0.2.1]" {
		t.Errorf("msgDomain=%q hello=%q", s.msgDomain, s.hello)
	}
}

func TestBuildMessageRandFailure(t *testing.T) {
	cfg := testSMTPConfig()
	cfg.Rand = strings.NewReader("short")
	srv := startServer(t, serverOptions{})
	err := newSMTP(t, "smtp://"+srv.Addr(), cfg).Send(t.Context(), testMessage())
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Send = %v, want io.ErrUnexpectedEOF", err)
	}
	if n := srv.Conns(); n != 0 {
		t.Errorf("%d connections made", n)
	}
}

func TestSMTPLongNonASCIIFromName(t *testing.T) {
	srv := startServer(t, serverOptions{})
	cfg := testSMTPConfig()
	name := strings.TrimSpace(strings.Repeat("Büchër ", 53)) // about 1200 characters encoded
	cfg.From = `"` + name + `" <no-reply@example.com>`
	sendOne(t, newSMTP(t, "smtp://"+srv.Addr(), cfg), testMessage())
	r := parseReceived(t, onlyMail(t, srv).data) // checks the line limits
	from, err := mail.ParseAddress(r.header.Get("From"))
	if err != nil || from.Name != name || from.Address != "no-reply@example.com" {
		t.Errorf("From parses as %+v, %v", from, err)
	}
}
