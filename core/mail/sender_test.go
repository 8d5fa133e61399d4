package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// logBuffer collects log output from several goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Lines returns the log lines that contain substr.
func (l *logBuffer) Lines(substr string) []string {
	var out []string
	for line := range strings.Lines(l.String()) {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}

func newTestLogger() (*slog.Logger, *logBuffer) {
	buf := &logBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// gateMailer blocks every Send until the message's subject is released or
// ctx ends, then hands it to a Capture.
type gateMailer struct {
	started chan string // each Send's subject, as it starts
	cap     Capture

	mu    sync.Mutex
	gates map[string]chan struct{}
}

func newGateMailer() *gateMailer {
	return &gateMailer{started: make(chan string, 100), gates: map[string]chan struct{}{}}
}

func (g *gateMailer) gate(subject string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch, ok := g.gates[subject]
	if !ok {
		ch = make(chan struct{})
		g.gates[subject] = ch
	}
	return ch
}

func (g *gateMailer) release(subject string) { close(g.gate(subject)) }

func (g *gateMailer) Send(ctx context.Context, m Message) error {
	g.started <- m.Subject
	select {
	case <-g.gate(m.Subject):
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.cap.Send(ctx, m)
}

// waitStarted waits until the Send of subject has started.
func (g *gateMailer) waitStarted(t *testing.T, subject string) {
	t.Helper()
	if got := <-g.started; got != subject {
		t.Fatalf("Send started for %q, want %q", got, subject)
	}
}

const (
	testLink  = "https://app.example.com/reset-password/SECRET-T0KEN"
	testToken = "SECRET-T0KEN"
)

func msg(subject string) Message {
	return Message{
		To:      "Bob.Smith@Example.com",
		Subject: subject,
		Text:    "Open " + testLink + " to reset. BODY-MARKER\n",
		Kind:    KindResetPassword,
		Link:    testLink,
	}
}

func subjects(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Subject)
	}
	return out
}

func newTestSender(t *testing.T, m Mailer, cfg SenderConfig) *Sender {
	t.Helper()
	if cfg.Backoff == 0 {
		cfg.Backoff = time.Microsecond
	}
	s := NewSender(m, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func flush(t *testing.T, s *Sender) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// assertNoSecrets fails if the log holds the link, the token, the body or
// the recipient's full address.
func assertNoSecrets(t *testing.T, logs string) {
	t.Helper()
	lower := strings.ToLower(logs)
	for _, secret := range []string{testLink, testToken, "BODY-MARKER", "bob.smith@"} {
		if strings.Contains(lower, strings.ToLower(secret)) {
			t.Errorf("log contains %q:\n%s", secret, logs)
		}
	}
}

func TestSenderDelivers(t *testing.T) {
	var c Capture
	s := newTestSender(t, &c, SenderConfig{Workers: 1})
	for _, sub := range []string{"one", "two", "three"} {
		if err := s.Send(t.Context(), msg(sub)); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	flush(t, s)
	if got := subjects(c.Messages()); !slices.Equal(got, []string{"one", "two", "three"}) {
		t.Errorf("delivered %q", got)
	}
	if got := c.Messages()[0]; got != msg("one") {
		t.Errorf("delivered %+v, want %+v", got, msg("one"))
	}
}

func TestSenderRetries(t *testing.T) {
	var c Capture
	log, logs := newTestLogger()
	s := newTestSender(t, &c, SenderConfig{Attempts: 3, Logger: log})
	c.FailNext(2, errors.New("421 try again later"))
	if err := s.Send(t.Context(), msg("retry")); err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	if c.Attempts() != 3 || c.Len() != 1 {
		t.Errorf("attempts=%d delivered=%d, want 3 and 1", c.Attempts(), c.Len())
	}
	if got := logs.Lines("will retry"); len(got) != 2 {
		t.Errorf("retry log lines = %q, want 2", got)
	}
	if got := logs.Lines("level=ERROR"); len(got) != 0 {
		t.Errorf("error log lines = %q", got)
	}
	if got := logs.Lines("mail: sent"); len(got) != 1 || !strings.Contains(got[0], "attempt=3") {
		t.Errorf("sent log lines = %q", got)
	}
	assertNoSecrets(t, logs.String())
}

func TestSenderBackoffDoubles(t *testing.T) {
	var c Capture
	log, logs := newTestLogger()
	s := newTestSender(t, &c, SenderConfig{Attempts: 4, Backoff: time.Millisecond, Logger: log})
	c.FailNext(3, errors.New("boom"))
	if err := s.Send(t.Context(), msg("backoff")); err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	var got []string
	for _, l := range logs.Lines("will retry") {
		_, b, _ := strings.Cut(l, "backoff=")
		b, _, _ = strings.Cut(b, " ")
		got = append(got, b)
	}
	if want := []string{"1ms", "2ms", "4ms"}; !slices.Equal(got, want) {
		t.Errorf("backoffs = %q, want %q", got, want)
	}
}

func TestSenderGivesUp(t *testing.T) {
	var c Capture
	log, logs := newTestLogger()
	s := newTestSender(t, &c, SenderConfig{Attempts: 3, Logger: log})
	// A server reply that echoes the address (in another case) and a
	// mailer error that quotes the link must both be scrubbed.
	c.SetFail(fmt.Errorf("451 <BOB.SMITH@example.COM>: greylisted; while sending %s", testLink))
	if err := s.Send(t.Context(), msg("doomed")); err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	if c.Attempts() != 3 || c.Len() != 0 {
		t.Errorf("attempts=%d delivered=%d, want 3 and 0", c.Attempts(), c.Len())
	}
	lines := logs.Lines("level=ERROR")
	if len(lines) != 1 {
		t.Fatalf("error log lines = %q, want 1", lines)
	}
	for _, want := range []string{`msg="mail: giving up"`, "kind=reset_password", "domain=example.com", "attempts=3", "[recipient]@example.com", "[link]"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("log line %q lacks %q", lines[0], want)
		}
	}
	assertNoSecrets(t, logs.String())
}

func TestSenderPermanentFailureNotRetried(t *testing.T) {
	for _, tc := range []struct {
		err      error
		attempts int
	}{
		{&textproto.Error{Code: 550, Msg: "5.1.1 no such user"}, 1},
		{fmt.Errorf("mail: smtp x: rcpt to: %w", &textproto.Error{Code: 554, Msg: "rejected"}), 1},
		{fmt.Errorf("wrapped: %w", ErrTLSRequired), 1},
		{&textproto.Error{Code: 450, Msg: "mailbox busy"}, 3},
		{errors.New("connection refused"), 3},
	} {
		var c Capture
		log, logs := newTestLogger()
		s := newTestSender(t, &c, SenderConfig{Attempts: 3, Logger: log})
		c.SetFail(tc.err)
		if err := s.Send(t.Context(), msg("x")); err != nil {
			t.Fatal(err)
		}
		flush(t, s)
		if c.Attempts() != tc.attempts {
			t.Errorf("%v: %d attempts, want %d", tc.err, c.Attempts(), tc.attempts)
		}
		if got := logs.Lines("giving up"); len(got) != 1 {
			t.Errorf("%v: giving-up lines = %q", tc.err, got)
		}
	}
}

func TestSenderRejectsInvalidMessage(t *testing.T) {
	var c Capture
	s := newTestSender(t, &c, SenderConfig{})
	m := msg("ok")
	m.To = "bob@example.com\r\nBcc: eve@evil.example"
	if err := s.Send(t.Context(), m); !errors.Is(err, ErrInvalidHeader) {
		t.Fatalf("Send = %v, want ErrInvalidHeader", err)
	}
	m = msg("ok")
	m.Text = ""
	if err := s.Send(t.Context(), m); !errors.Is(err, ErrInvalidBody) {
		t.Fatalf("Send = %v, want ErrInvalidBody", err)
	}
	flush(t, s)
	if c.Attempts() != 0 {
		t.Errorf("Mailer called %d times", c.Attempts())
	}
}

func TestSenderFlush(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		s := newTestSender(t, &Capture{}, SenderConfig{})
		flush(t, s)
	})
	t.Run("waits for the oldest message", func(t *testing.T) {
		g := newGateMailer()
		s := newTestSender(t, g, SenderConfig{Workers: 2})
		for _, sub := range []string{"A", "B"} {
			if err := s.Send(t.Context(), msg(sub)); err != nil {
				t.Fatal(err)
			}
		}
		got := []string{<-g.started, <-g.started}
		slices.Sort(got)
		if !slices.Equal(got, []string{"A", "B"}) {
			t.Fatalf("started %q", got)
		}
		// B finishes first; A is still in flight, so Flush must wait.
		g.release("B")
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		if err := s.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Flush with A in flight = %v, want context.DeadlineExceeded", err)
		}
		g.release("A")
		flush(t, s)
		if got := subjects(g.cap.Messages()); len(got) != 2 {
			t.Errorf("delivered %q", got)
		}
	})
	t.Run("ignores later messages", func(t *testing.T) {
		g := newGateMailer()
		s := newTestSender(t, g, SenderConfig{Workers: 2})
		if err := s.Send(t.Context(), msg("A")); err != nil {
			t.Fatal(err)
		}
		g.waitStarted(t, "A")
		target := s.enqueued() // what Flush reads when called here
		if err := s.Send(t.Context(), msg("later")); err != nil {
			t.Fatal(err)
		}
		g.waitStarted(t, "later")
		g.release("A")
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		if err := s.waitHandled(ctx, target); err != nil {
			t.Fatalf("waiting for A with a later message in flight: %v", err)
		}
		g.release("later")
	})
}

func TestSenderClose(t *testing.T) {
	var c Capture
	s := NewSender(&c, SenderConfig{Workers: 1, Backoff: time.Microsecond})
	c.FailNext(1, errors.New("transient"))
	for i := range 50 {
		if err := s.Send(t.Context(), msg(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if c.Len() != 50 {
		t.Errorf("delivered %d of 50 before Close returned", c.Len())
	}
	if err := s.Send(t.Context(), msg("late")); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Errorf("second Close = %v", err)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Close(done); err != nil {
		t.Errorf("Close with a done context after draining = %v", err)
	}
	flush(t, s)
}

func TestSenderCloseBoundedByContext(t *testing.T) {
	g := newGateMailer() // never released
	log, logs := newTestLogger()
	s := NewSender(g, SenderConfig{Workers: 1, Backoff: time.Hour, Logger: log})
	for _, sub := range []string{"A", "B", "C"} {
		if err := s.Send(t.Context(), msg(sub)); err != nil {
			t.Fatal(err)
		}
	}
	g.waitStarted(t, "A")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v, want context.Canceled", err)
	}
	// A's send was cancelled, B and C were dropped without a try.
	flush(t, s)
	if err := s.Close(t.Context()); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if got := logs.Lines("sender closed, message dropped"); len(got) != 3 {
		t.Errorf("dropped lines = %q, want 3", got)
	}
	select {
	case sub := <-g.started:
		t.Errorf("%q was tried after Close gave up", sub)
	default:
	}
	assertNoSecrets(t, logs.String())
}

func TestSenderQueueFull(t *testing.T) {
	g := newGateMailer()
	log, logs := newTestLogger()
	s := newTestSender(t, g, SenderConfig{Workers: 1, Queue: 1, Logger: log})
	if err := s.Send(t.Context(), msg("A")); err != nil {
		t.Fatal(err)
	}
	g.waitStarted(t, "A") // the worker holds A; the queue is empty
	if err := s.Send(t.Context(), msg("B")); err != nil {
		t.Fatalf("Send B: %v", err)
	}
	if err := s.Send(t.Context(), msg("C")); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Send C = %v, want ErrQueueFull", err)
	}
	lines := logs.Lines("queue full")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=ERROR") || !strings.Contains(lines[0], "domain=example.com") {
		t.Errorf("queue-full log = %q", lines)
	}
	g.release("A")
	g.release("B")
	flush(t, s)
	if got := subjects(g.cap.Messages()); !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("delivered %q, want A and B", got)
	}
	assertNoSecrets(t, logs.String())
}

type ctxKey struct{}

// mailerFunc adapts a function to Mailer.
type mailerFunc func(context.Context, Message) error

func (f mailerFunc) Send(ctx context.Context, m Message) error { return f(ctx, m) }

// A request that ends does not cancel its mail; its context values still
// reach the Mailer.
func TestSenderDetachesContext(t *testing.T) {
	type seen struct {
		value any
		err   error
	}
	got := make(chan seen, 1)
	s := newTestSender(t, mailerFunc(func(ctx context.Context, m Message) error {
		got <- seen{ctx.Value(ctxKey{}), ctx.Err()}
		return nil
	}), SenderConfig{})
	ctx, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "req-42"))
	if err := s.Send(ctx, msg("x")); err != nil {
		t.Fatal(err)
	}
	cancel()
	flush(t, s)
	if g := <-got; g.value != "req-42" || g.err != nil {
		t.Errorf("Mailer saw value %v, err %v", g.value, g.err)
	}
}

func TestSenderRecoversPanic(t *testing.T) {
	log, logs := newTestLogger()
	s := newTestSender(t, mailerFunc(func(context.Context, Message) error { panic("kaboom") }), SenderConfig{Attempts: 2, Logger: log})
	if err := s.Send(t.Context(), msg("x")); err != nil {
		t.Fatal(err)
	}
	flush(t, s)
	if got := logs.Lines("giving up"); len(got) != 1 || !strings.Contains(got[0], "kaboom") {
		t.Errorf("log = %q", got)
	}
}

func TestSenderNilMailer(t *testing.T) {
	s := newTestSender(t, nil, SenderConfig{})
	if err := s.Send(t.Context(), msg("x")); err == nil {
		t.Fatal("Send with a nil Mailer succeeded")
	}
}

func TestSenderDefaults(t *testing.T) {
	s := newTestSender(t, &Capture{}, SenderConfig{Queue: -1, Workers: -1, Attempts: -1, Backoff: -1})
	if cap(s.queue) != DefaultQueue || s.attempts != DefaultAttempts || s.backoff != DefaultBackoff || s.log != slog.Default() {
		t.Errorf("queue=%d attempts=%d backoff=%v", cap(s.queue), s.attempts, s.backoff)
	}
}

func TestSenderConcurrent(t *testing.T) {
	var c Capture
	s := newTestSender(t, &c, SenderConfig{Workers: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if err := s.Send(context.Background(), msg(fmt.Sprintf("%d-%d", g, i))); err != nil {
					t.Error(err)
				}
				if i%10 == 0 {
					if err := s.Flush(context.Background()); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	flush(t, s)
	if c.Len() != 400 {
		t.Errorf("delivered %d of 400", c.Len())
	}
}

func TestRedact(t *testing.T) {
	m := Message{To: "Ada@Example.com", Link: "https://x.example/t/abc"}
	got := redact("550 <ada@example.COM> and ADA@EXAMPLE.COM; link https://x.example/t/abc end", m)
	want := "550 <[recipient]@example.com> and [recipient]@example.com; link [link] end"
	if got != want {
		t.Errorf("redact = %q, want %q", got, want)
	}
}

func TestMessageLogValue(t *testing.T) {
	log, logs := newTestLogger()
	log.Info("sending", "msg", msg("x"))
	line := logs.String()
	if !strings.Contains(line, "msg.kind=reset_password msg.domain=example.com") {
		t.Errorf("log = %q", line)
	}
	assertNoSecrets(t, line)
}
