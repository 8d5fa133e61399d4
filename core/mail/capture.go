package mail

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Capture is a [Mailer] for tests: it records the messages it is given
// instead of sending them. Other packages' test suites use it to read the
// links that flows mail.
//
// Send behaves like a real mailer up to the network: it fails on a done
// context and refuses invalid messages (see [Message.Validate]) without
// recording them, and can be told to fail with [Capture.SetFail] or
// [Capture.FailNext]. The zero value is ready to use; a Capture is safe for
// concurrent use.
type Capture struct {
	mu       sync.Mutex
	msgs     []Message
	attempts int
	fail     error
	failLeft int // sends left to fail with fail; -1 means every send
}

var _ Mailer = (*Capture)(nil)

// Send records m, or returns an error without recording it: ctx's error
// when ctx is done, a validation error, or the injected failure. Every call
// counts as an attempt (see [Capture.Attempts]).
func (c *Capture) Send(ctx context.Context, m Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts++
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mail: capture: %w", err)
	}
	if err := m.Validate(); err != nil {
		return err
	}
	if c.failLeft != 0 {
		if c.failLeft > 0 {
			c.failLeft--
		}
		return c.fail
	}
	c.msgs = append(c.msgs, m)
	return nil
}

// SetFail makes every following Send fail with err, until SetFail(nil).
func (c *Capture) SetFail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail = err
	c.failLeft = 0
	if err != nil {
		c.failLeft = -1
	}
}

// FailNext makes the next n calls of Send fail with err; later calls
// succeed again. FailNext(0, nil) clears any injected failure.
func (c *Capture) FailNext(n int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail = err
	c.failLeft = max(n, 0)
	if err == nil {
		c.failLeft = 0
	}
}

// Messages returns a copy of the recorded messages, oldest first.
func (c *Capture) Messages() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.msgs)
}

// Last returns the most recently recorded message, and false when none was.
func (c *Capture) Last() (Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.msgs) == 0 {
		return Message{}, false
	}
	return c.msgs[len(c.msgs)-1], true
}

// To returns the recorded messages whose recipient is addr, oldest first.
// Addresses compare without regard to case or angle brackets.
func (c *Capture) To(addr string) []Message {
	want := normalizeAddr(addr)
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Message
	for _, m := range c.msgs {
		if normalizeAddr(m.To) == want {
			out = append(out, m)
		}
	}
	return out
}

// Len returns the number of recorded messages.
func (c *Capture) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

// Attempts returns the number of Send calls so far, failed ones included.
func (c *Capture) Attempts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attempts
}

// Reset forgets every recorded message, zeroes the attempt count and clears
// any injected failure.
func (c *Capture) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = nil
	c.attempts = 0
	c.fail = nil
	c.failLeft = 0
}

// normalizeAddr returns the lowercase addr-spec of s, or s lowercased when
// it does not parse.
func normalizeAddr(s string) string {
	if a, err := parseRecipient(s); err == nil {
		return strings.ToLower(a.Address)
	}
	return strings.ToLower(s)
}
