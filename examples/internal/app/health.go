package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/authkit-go/authkit/core/user"
)

// ReadyTimeout bounds the readiness checks of one GET /readyz: a store
// that takes longer counts as down.
const ReadyTimeout = 2 * time.Second

// RetryAfter is the Retry-After, in seconds, of every 503 the example
// servers answer themselves (GET /readyz while a store is down).
const RetryAfter = "5"

// HealthPaths are the paths Health answers (GET), for the servers to mount.
var HealthPaths = []string{"/healthz", "/readyz"}

// Health answers a load balancer's probes, without rate limits and without
// a log line per request:
//
//   - GET /healthz, liveness: 200 {"status":"ok"} whenever the process
//     serves requests;
//   - GET /readyz, readiness: 200 {"status":"ready"} when the user store
//     and the rate-limit store answer within [ReadyTimeout], else 503
//     {"status":"unavailable","checks":{"users":"down","limits":"ok"}} with
//     Retry-After. The user store is asked for a random id that no user has
//     (anything but user.ErrNotFound is down); the limit store is pinged
//     when it is Redis (the in-memory one cannot be down).
//
// Both send Cache-Control: no-store and X-Content-Type-Options: nosniff.
// A change of readiness is logged once,
// with the cause; the answer never carries it.
func (a *App) Health() http.Handler {
	var (
		mu    sync.Mutex
		ready = true
	)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeHealth(w, http.StatusOK, map[string]any{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
		defer cancel()
		errs := a.checkReady(ctx)
		checks, allOK := map[string]string{}, true
		for name, err := range errs {
			checks[name] = "ok"
			if err != nil {
				checks[name], allOK = "down", false
			}
		}
		mu.Lock()
		if allOK != ready {
			ready = allOK
			if allOK {
				a.logger.Info("ready again: every store answers")
			} else {
				var attrs []any
				for name, err := range errs {
					if err != nil {
						attrs = append(attrs, slog.String(name, err.Error()))
					}
				}
				a.logger.Warn("not ready: a store is down", attrs...)
			}
		}
		mu.Unlock()
		if !allOK {
			w.Header().Set("Retry-After", RetryAfter)
			writeHealth(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "checks": checks})
			return
		}
		writeHealth(w, http.StatusOK, map[string]any{"status": "ready"})
	})
	return mux
}

// checkReady runs the readiness checks at the same time and returns each
// one's error (nil: fine). It returns by ctx's deadline: a check still
// running then counts as down with ctx's error, and finishes unobserved.
func (a *App) checkReady(ctx context.Context) map[string]error {
	checks := map[string]func(context.Context) error{"users": a.pingUsers, "limits": a.pingLimits}
	if a.pingLimits == nil {
		checks["limits"] = func(context.Context) error { return nil }
	}
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(checks)) // never blocks a late check
	for name, check := range checks {
		go func() { results <- result{name, check(ctx)} }()
	}
	errs := map[string]error{}
	for range checks {
		select {
		case r := <-results:
			errs[r.name] = r.err
		case <-ctx.Done():
			for name := range checks {
				if _, done := errs[name]; !done {
					errs[name] = ctx.Err()
				}
			}
			return errs
		}
	}
	return errs
}

// pingUsers asks the user store for a random id that no user has: a store
// that answers user.ErrNotFound works.
func (a *App) pingUsers(ctx context.Context) error {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	_, err := a.Users.ByID(ctx, "readyz-"+hex.EncodeToString(b[:]))
	if errors.Is(err, user.ErrNotFound) {
		return nil
	}
	if err == nil {
		return errors.New("a lookup of a random id found a user")
	}
	return err
}

func writeHealth(w http.ResponseWriter, status int, body map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
