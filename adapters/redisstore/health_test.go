package redisstore

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"

	"github.com/authkit-go/authkit/adapters/redisstore/redistest"
	"github.com/authkit-go/authkit/core/store/storetest"
)

// TestPing: Ping answers nil while Redis answers, the client's error,
// wrapped, while it is cut off, and nil again once it is back.
func TestPing(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			opts, prefix := b.options(t)
			p := redistest.StartProxy(t, opts.Addr)
			viaProxy := *opts
			viaProxy.Addr = p.Addr()
			viaProxy.DialTimeout = 500 * time.Millisecond
			viaProxy.ReadTimeout = 500 * time.Millisecond
			viaProxy.MaxRetries = 0
			s := New(newClient(t, &viaProxy), Config{Prefix: prefix})
			if err := s.Ping(t.Context()); err != nil {
				t.Fatalf("Ping: %v", err)
			}
			p.Cut()
			if err := s.Ping(t.Context()); err == nil || !strings.HasPrefix(err.Error(), "redisstore: ping: ") {
				t.Fatalf("Ping while cut: %v; want the client's error, wrapped", err)
			}
			if err := p.Restore(); err != nil {
				t.Fatal(err)
			}
			if err := s.Ping(t.Context()); err != nil {
				t.Fatalf("Ping after Restore: %v", err)
			}
		})
	}
	if err := New(nil, Config{}).Ping(t.Context()); err == nil || err.Error() != "redisstore: ping: nil redis client" {
		t.Fatalf("Ping with a nil client: %v", err)
	}
}

// TestLogger: a line go-redis itself logs (its pool failing to dial) comes
// out of the slog logger as a structured record.
func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	redis.SetLogger(NewLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
	t.Cleanup(logging.Enable) // go-redis's own logger again

	c := newClient(t, &redis.Options{Addr: storetest.ClosedAddr(t), MaxRetries: 0, DialerRetries: 1})
	if err := c.Ping(t.Context()).Err(); err == nil {
		t.Fatal("Ping to a closed port succeeded")
	}
	var rec map[string]any
	line, _, _ := bytes.Cut(buf.Bytes(), []byte("\n"))
	if err := json.Unmarshal(line, &rec); err != nil {
		t.Fatalf("go-redis's line did not come out as a JSON record: %q (%v)", buf.String(), err)
	}
	if rec["level"] != "WARN" || rec["component"] != "go-redis" ||
		!strings.HasPrefix(rec["msg"].(string), "connection pool: failed to dial after 1 attempts") {
		t.Fatalf("record %v: want level WARN, component go-redis, the pool's message without \"redis: \"", rec)
	}
}
