package mail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/textproto"
	"strings"
	"sync"
	"time"
)

// SenderConfig configures [NewSender]. Zero or negative values mean the
// defaults.
type SenderConfig struct {
	// Queue is how many messages may wait for a worker. Send drops a
	// message when the queue is full. Default: 1000.
	Queue int

	// Workers is how many messages are sent at the same time. Default: 2.
	Workers int

	// Attempts is how many times a message is tried in all, the first try
	// included; 1 means no retry. A permanent failure (an invalid message,
	// an SMTP 5xx reply, [ErrTLSRequired]) is not retried. Default: 3.
	Attempts int

	// Backoff is the wait before the first retry; it doubles for each
	// further retry, up to MaxBackoff. Default: 1 second.
	Backoff time.Duration

	// Logger receives one record per message given up on or dropped, and
	// debug records for sends and retries. Records name the kind and the
	// recipient's domain, never the full address, the link or the body.
	// Default: slog.Default().
	Logger *slog.Logger
}

// Defaults of SenderConfig.
const (
	DefaultQueue    = 1000        // SenderConfig.Queue
	DefaultWorkers  = 2           // SenderConfig.Workers
	DefaultAttempts = 3           // SenderConfig.Attempts
	DefaultBackoff  = time.Second // SenderConfig.Backoff

	// MaxBackoff caps the wait between two attempts.
	MaxBackoff = 5 * time.Minute
)

// Sender is an asynchronous [Mailer]: Send validates the message, puts it in
// a queue and returns at once; workers hand it to the wrapped Mailer,
// retrying failures. A flow's response time thus never depends on whether,
// or how fast, a mail was sent: forgot-password answers as fast for an
// unknown address as for a known one.
//
// Make a Sender with [NewSender] and [Sender.Close] it on shutdown; it is
// safe for concurrent use.
type Sender struct {
	m        Mailer
	log      *slog.Logger
	attempts int
	backoff  time.Duration

	mu      sync.Mutex
	closed  bool
	queue   chan job
	next    uint64              // sequence number of the last enqueued message
	done    uint64              // every message up to this one has been handled
	ahead   map[uint64]struct{} // handled messages above done
	changed chan struct{}       // closed and replaced whenever done grows

	stop        context.Context // cancelled when a Close gives up waiting
	cancel      context.CancelFunc
	workersDone chan struct{}
}

type job struct {
	ctx context.Context
	m   Message
	seq uint64
}

var _ Mailer = (*Sender)(nil)

// NewSender starts cfg.Workers goroutines that deliver through m and
// returns the Sender that feeds them. m must not be nil; if it is, every
// Send fails.
func NewSender(m Mailer, cfg SenderConfig) *Sender {
	queue := cfg.Queue
	if queue <= 0 {
		queue = DefaultQueue
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	s := &Sender{
		m:           m,
		log:         cfg.Logger,
		attempts:    cfg.Attempts,
		backoff:     cfg.Backoff,
		queue:       make(chan job, queue),
		ahead:       make(map[uint64]struct{}),
		changed:     make(chan struct{}),
		workersDone: make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.attempts <= 0 {
		s.attempts = DefaultAttempts
	}
	if s.backoff <= 0 {
		s.backoff = DefaultBackoff
	}
	s.stop, s.cancel = context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range workers {
		wg.Go(s.work)
	}
	go func() {
		wg.Wait()
		close(s.workersDone)
	}()
	return s
}

// Send validates m and queues it. It returns nil once m is queued, an error
// wrapping [ErrInvalidHeader] or [ErrInvalidBody] for an invalid message,
// [ErrQueueFull] when the queue is full (the message is dropped and the
// drop logged, so callers need not log it again), and [ErrClosed] after
// Close.
//
// The message is sent with a context that carries ctx's values but not its
// cancellation or deadline: a request that ends does not stop its mail.
// Close bounds the sending instead.
func (s *Sender) Send(ctx context.Context, m Message) error {
	if s.m == nil {
		return errors.New("mail: Sender has no Mailer")
	}
	if err := m.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	select {
	case s.queue <- job{ctx: context.WithoutCancel(ctx), m: m, seq: s.next + 1}:
		s.next++
		s.mu.Unlock()
		return nil
	default:
		s.mu.Unlock()
	}
	s.log.LogAttrs(ctx, slog.LevelError, "mail: queue full, message dropped", logAttrs(m)...)
	return fmt.Errorf("%w: %s message dropped", ErrQueueFull, m.Kind)
}

// Flush waits until every message queued before the call has been handled:
// accepted by the Mailer, given up on, or dropped by Close. Messages queued
// during the call are not waited for. Flush returns ctx's error if ctx ends
// first. Tests use it to assert that a mail was, or was not, sent without
// sleeping.
func (s *Sender) Flush(ctx context.Context) error {
	return s.waitHandled(ctx, s.enqueued())
}

// enqueued returns the sequence number of the last message queued.
func (s *Sender) enqueued() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// waitHandled waits until every message up to target has been handled.
func (s *Sender) waitHandled(ctx context.Context, target uint64) error {
	for {
		s.mu.Lock()
		if s.done >= target {
			s.mu.Unlock()
			return nil
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("mail: flush: %w", ctx.Err())
		}
	}
}

// Close stops accepting messages and waits until the queue is drained,
// retries included, and the workers have stopped. If ctx ends first, Close
// cancels the sends in progress, has the workers drop (and log) what is
// still queued, and returns ctx's error without waiting further. Close is
// idempotent: a later call waits again, bounded by its own ctx, and returns
// nil once the workers have stopped.
func (s *Sender) Close(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.queue)
	}
	s.mu.Unlock()
	select {
	case <-s.workersDone:
	case <-ctx.Done():
		select {
		case <-s.workersDone: // finished just in time
		default:
			s.cancel()
			return fmt.Errorf("mail: close: %w", ctx.Err())
		}
	}
	s.cancel() // release the stop context
	return nil
}

func (s *Sender) work() {
	for j := range s.queue {
		s.handle(j)
		s.markDone(j.seq)
	}
}

// handle tries j until it is sent, fails permanently, runs out of attempts,
// or the Sender is stopped.
func (s *Sender) handle(j job) {
	ctx, cancel := context.WithCancel(j.ctx)
	defer cancel()
	defer context.AfterFunc(s.stop, cancel)()

	wait := s.backoff
	for attempt := 1; ; attempt++ {
		if s.stop.Err() != nil {
			s.log.LogAttrs(ctx, slog.LevelError, "mail: sender closed, message dropped", logAttrs(j.m)...)
			return
		}
		err := s.try(ctx, j.m)
		if err == nil {
			s.log.LogAttrs(ctx, slog.LevelDebug, "mail: sent", append(logAttrs(j.m), slog.Int("attempt", attempt))...)
			return
		}
		msg := redact(err.Error(), j.m)
		if s.stop.Err() != nil {
			s.log.LogAttrs(ctx, slog.LevelError, "mail: sender closed, message dropped",
				append(logAttrs(j.m), slog.Int("attempts", attempt), slog.String("error", msg))...)
			return
		}
		if attempt >= s.attempts || permanent(err) {
			s.log.LogAttrs(ctx, slog.LevelError, "mail: giving up",
				append(logAttrs(j.m), slog.Int("attempts", attempt), slog.String("error", msg))...)
			return
		}
		s.log.LogAttrs(ctx, slog.LevelDebug, "mail: send failed, will retry",
			append(logAttrs(j.m), slog.Int("attempt", attempt), slog.Duration("backoff", wait), slog.String("error", msg))...)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.stop.Done():
			t.Stop()
		}
		wait = min(2*wait, MaxBackoff)
	}
}

// try calls the Mailer, turning a panic into an error so that one bad
// message cannot kill a worker and stall Flush and Close.
func (s *Sender) try(ctx context.Context, m Message) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mail: Mailer panicked: %v", r)
		}
	}()
	return s.m.Send(ctx, m)
}

func (s *Sender) markDone(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq != s.done+1 {
		s.ahead[seq] = struct{}{}
		return
	}
	s.done = seq
	for {
		if _, ok := s.ahead[s.done+1]; !ok {
			break
		}
		delete(s.ahead, s.done+1)
		s.done++
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// permanent reports whether retrying err cannot help.
func permanent(err error) bool {
	if errors.Is(err, ErrInvalidHeader) || errors.Is(err, ErrInvalidBody) ||
		errors.Is(err, ErrInvalidConfig) || errors.Is(err, ErrTLSRequired) {
		return true
	}
	var te *textproto.Error
	return errors.As(err, &te) && te.Code >= 500 && te.Code < 600
}

// logAttrs are the only facts about m that reach a log.
func logAttrs(m Message) []slog.Attr {
	return []slog.Attr{slog.String("kind", string(m.Kind)), slog.String("domain", domainOf(m.To))}
}

// redact removes m's link and recipient address from an error text: SMTP
// servers echo the address in their replies ("550 <ada@example.com>: no
// such user"), and a Mailer might quote the message.
func redact(s string, m Message) string {
	if m.Link != "" {
		s = strings.ReplaceAll(s, m.Link, "[link]")
	}
	if a, err := parseRecipient(m.To); err == nil {
		s = replaceFold(s, a.Address, "[recipient]@"+domainOf(m.To))
	}
	return s
}

// replaceFold replaces every occurrence of old in s, compared without
// regard to ASCII case, with repl.
func replaceFold(s, old, repl string) string {
	if old == "" {
		return s
	}
	var b strings.Builder
	i := 0
	for i+len(old) <= len(s) {
		if strings.EqualFold(s[i:i+len(old)], old) {
			b.WriteString(repl)
			i += len(old)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	b.WriteString(s[i:])
	return b.String()
}
