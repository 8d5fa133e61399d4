package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Server is what a framework serves with: *http.Server for net/http and
// gin, an adapter for fiber.
type Server interface {
	Serve(ln net.Listener) error
	Shutdown(ctx context.Context) error
}

// HTTPServer wraps h in an *http.Server with the timeouts the example
// servers use.
func HTTPServer(h http.Handler) Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// Main is the whole life of an example server: load the environment,
// listen, log one line saying where and on what, serve until SIGINT or
// SIGTERM, then shut down gracefully (in-flight requests finish, queued
// mail is sent). mount returns the framework's server for the app.
// It returns the process exit code.
func Main(framework string, mount func(a *App) (Server, error)) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	a, err := Load(os.LookupEnv, os.Stdout, logger)
	if err != nil {
		fmt.Fprintf(os.Stderr, "authkit example (%s): %v\n", framework, err)
		return 1
	}
	srv, err := mount(a)
	if err != nil {
		fmt.Fprintf(os.Stderr, "authkit example (%s): %v\n", framework, err)
		return 1
	}
	ln, err := net.Listen("tcp", a.Addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "authkit example (%s): listen: %v\n", framework, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "authkit example (%s) listening on http://%s (%s)\n", framework, ln.Addr(), a.Description)
	for _, w := range a.Warnings {
		logger.Warn(w)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := 0
	if a.Metrics != nil {
		mln, err := net.Listen("tcp", a.MetricsAddr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "authkit example (%s): METRICS_ADDR: listen: %v\n", framework, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "authkit example (%s) metrics on http://%s/metrics\n", framework, mln.Addr())
		go func() {
			if err := ServeUntil(ctx, logger, HTTPServer(a.Metrics), mln); err != nil {
				logger.Error("metrics server stopped", "err", err)
			}
		}()
	}
	if err := ServeUntil(ctx, logger, srv, ln); err != nil {
		logger.Error("server stopped", "err", err)
		code = 1
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := a.Close(sctx); err != nil {
		logger.Error("close", "err", err)
		code = 1
	}
	return code
}

// ServeUntil serves srv on ln until ctx is done, then shuts it down
// gracefully (in-flight requests get 15 seconds to finish). It returns
// the error that stopped the server early, or the shutdown's.
func ServeUntil(ctx context.Context, logger *slog.Logger, srv Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
