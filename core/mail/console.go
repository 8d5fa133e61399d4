package mail

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Console is a [Mailer] for development: it prints every message, headers
// and both parts, to a writer instead of sending it.
//
// The printed message holds the live link, so never use Console in
// production or point it at a shared log: whoever reads the output can use
// the links. The example servers use it only when SMTP_URL is unset and
// APP_ENV is not production.
type Console struct {
	mu sync.Mutex
	w  io.Writer
}

var _ Mailer = (*Console)(nil)

// NewConsole returns a Console that writes to w. A nil w means os.Stdout.
func NewConsole(w io.Writer) *Console {
	if w == nil {
		w = os.Stdout
	}
	return &Console{w: w}
}

// Send validates m like a real mailer would and writes it to the writer in
// one Write call, one message at a time, between delimiter lines:
//
//	===== mail: verify_email =====
//	To: ada@example.com
//	Subject: Verify your email address
//
//	--- text/plain ---
//	...
//	--- text/html ---
//	...
//	===== end of mail =====
//
// The HTML section is left out when m.HTML is empty.
func (c *Console) Send(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mail: console: %w", err)
	}
	if err := m.Validate(); err != nil {
		return err
	}
	var b bytes.Buffer
	kind := string(m.Kind)
	if kind == "" {
		kind = "message"
	}
	fmt.Fprintf(&b, "===== mail: %s =====\nTo: %s\nSubject: %s\n\n--- text/plain ---\n", kind, m.To, m.Subject)
	writeSection(&b, m.Text)
	if m.HTML != "" {
		b.WriteString("--- text/html ---\n")
		writeSection(&b, m.HTML)
	}
	b.WriteString("===== end of mail =====\n")

	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("mail: console: %w", err)
	}
	return nil
}

// writeSection writes s and ends it with exactly one newline.
func writeSection(b *bytes.Buffer, s string) {
	b.WriteString(strings.TrimRight(s, "\r\n"))
	b.WriteByte('\n')
}
