package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/adapters/redisstore/redistest"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/user"
)

// probe sends GET path to h and returns the status, the body (trimmed)
// and the headers.
func probe(t *testing.T, h http.Handler, path string) (int, string, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, strings.TrimSpace(rec.Body.String()), rec.Header()
}

// downUsers is a user store whose backend is gone.
type downUsers struct{ user.Store }

func (downUsers) ByID(context.Context, string) (*user.User, error) {
	return nil, errors.New("connection refused")
}

// slowUsers answers only when its context ends.
type slowUsers struct{ user.Store }

func (slowUsers) ByID(ctx context.Context, _ string) (*user.User, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestHealth(t *testing.T) {
	for _, tt := range []struct {
		name       string
		app        *App
		path       string
		status     int
		body       string
		retryAfter string
	}{
		{"liveness", &App{Users: downUsers{}, logger: quiet}, "/healthz", 200, `{"status":"ok"}`, ""},
		{"ready", &App{Users: store.NewMemory(store.MemoryConfig{}), logger: quiet}, "/readyz", 200, `{"status":"ready"}`, ""},
		{"user store down", &App{Users: downUsers{}, logger: quiet}, "/readyz", 503,
			`{"checks":{"limits":"ok","users":"down"},"status":"unavailable"}`, RetryAfter},
		{"limit store down", &App{Users: store.NewMemory(store.MemoryConfig{}), logger: quiet,
			pingLimits: func(context.Context) error { return errors.New("redis: connection refused") }}, "/readyz", 503,
			`{"checks":{"limits":"down","users":"ok"},"status":"unavailable"}`, RetryAfter},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body, h := probe(t, tt.app.Health(), tt.path)
			if status != tt.status || body != tt.body {
				t.Errorf("GET %s: %d %s, want %d %s", tt.path, status, body, tt.status, tt.body)
			}
			if got := h.Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tt.retryAfter)
			}
			if h.Get("Cache-Control") != "no-store" || h.Get("Content-Type") != "application/json" {
				t.Errorf("headers %v: want Cache-Control: no-store and JSON", h)
			}
		})
	}
}

// TestReadyTimeout: a store that does not answer within ReadyTimeout is
// down. (The test waits ReadyTimeout once.)
func TestReadyTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits ReadyTimeout")
	}
	a := &App{Users: slowUsers{}, logger: quiet}
	status, body, h := probe(t, a.Health(), "/readyz")
	if status != 503 || body != `{"checks":{"limits":"ok","users":"down"},"status":"unavailable"}` || h.Get("Retry-After") != RetryAfter {
		t.Fatalf("GET /readyz with a store that never answers: %d %s %v", status, body, h)
	}
}

// TestReadyWithRedis runs the readiness check of a server on a real Redis,
// reached through a TCP proxy that the test cuts: 200 while Redis answers,
// 503 with Retry-After while it is cut, 200 again once it is back. The
// change is logged once each way, and go-redis's own lines come out of the
// app's structured logger.
func TestReadyWithRedis(t *testing.T) {
	redisURL := storetest.ServiceURL(t, storetest.EnvRedis)
	target := strings.TrimPrefix(redisURL, "redis://")
	target, db, _ := strings.Cut(target, "/")
	p := redistest.StartProxy(t, target)

	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	a, err := Load(env(map[string]string{"AUTHKIT_DATA_DIR": t.TempDir(), "DATABASE_URL": "memory",
		"REDIS_URL": "redis://" + p.Addr() + "/" + db}), io.Discard, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	h := a.Health()
	if status, body, _ := probe(t, h, "/readyz"); status != 200 || body != `{"status":"ready"}` {
		t.Fatalf("Redis up: %d %s", status, body)
	}

	p.Refuse()
	for range 2 {
		status, body, hdr := probe(t, h, "/readyz")
		if status != 503 || body != `{"checks":{"limits":"down","users":"ok"},"status":"unavailable"}` || hdr.Get("Retry-After") != RetryAfter {
			t.Fatalf("Redis cut: %d %s, Retry-After %q", status, body, hdr.Get("Retry-After"))
		}
	}
	if status, body, _ := probe(t, h, "/healthz"); status != 200 || body != `{"status":"ok"}` {
		t.Fatalf("Redis cut: liveness %d %s, want 200: the process still serves", status, body)
	}
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	if status, body, _ := probe(t, h, "/readyz"); status != 200 || body != `{"status":"ready"}` {
		t.Fatalf("Redis back: %d %s", status, body)
	}

	var notReady, readyAgain, goRedis int
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not a JSON record", line)
		}
		switch {
		case rec["msg"] == "not ready: a store is down" && strings.HasPrefix(rec["limits"].(string), "redisstore: ping: "):
			notReady++
		case rec["msg"] == "ready again: every store answers":
			readyAgain++
		case rec["component"] == "go-redis" && strings.Contains(rec["msg"].(string), "failed to dial"):
			goRedis++
		}
	}
	if notReady != 1 || readyAgain != 1 || goRedis == 0 {
		t.Fatalf("logged %d not-ready, %d ready-again and %d go-redis records, want 1, 1 and some:\n%s", notReady, readyAgain, goRedis, logs.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
