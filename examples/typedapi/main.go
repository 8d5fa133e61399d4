// Command typedapi is an authkit app that calls the flows from Go: its own
// net/http handlers and html/template pages (register, verify the email,
// sign in with 2FA by TOTP or recovery code, reset a password) over the
// typed methods of *auth.Service, with no authkit JSON route mounted.
// README.md walks through it.
//
// It reads:
//
//	ADDR            listen address. Default: "localhost:8080" (loopback only).
//	APP_URL         base of mailed links. Default: http://localhost:8080;
//	                cookies are Secure when it is https.
//	SESSION_SECRET  signs cookies and tokens. Default: random at each start.
//	ENCRYPTION_KEY  encrypts TOTP secrets. Default: random at each start.
//
// Users live in memory and mail is printed on standard output, so
// everything is gone when the process ends.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(logger); err != nil {
		fmt.Fprintf(os.Stderr, "authkit example (typedapi): %v\n", err)
		os.Exit(1)
	}
}

// getenv returns the trimmed value of key, or def when it is unset or blank.
func getenv(key, def string) string {
	if v := strings.TrimSpace(os.Getenv(key)); v != "" {
		return v
	}
	return def
}

// config is the app's auth.Config from the environment.
func config(logger *slog.Logger) (auth.Config, error) {
	secret, key := getenv("SESSION_SECRET", ""), getenv("ENCRYPTION_KEY", "")
	if secret == "" || key == "" {
		// Development only: the users are in memory, so nothing signed or
		// encrypted with these outlives them.
		logger.Warn("SESSION_SECRET/ENCRYPTION_KEY unset: using random ones for this run (never in production)")
	}
	if secret == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return auth.Config{}, err
		}
		secret = base64.RawURLEncoding.EncodeToString(b[:])
	}
	if key == "" {
		var err error
		if key, err = secretbox.GenerateKey(); err != nil {
			return auth.Config{}, err
		}
	}
	keys, err := secretbox.ParseKeyring(key)
	if err != nil {
		return auth.Config{}, fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	appURL := strings.TrimSuffix(getenv("APP_URL", "http://localhost:8080"), "/")
	return auth.Config{
		Users:    store.NewMemory(store.MemoryConfig{}),
		Secrets:  strings.FieldsFunc(secret, func(r rune) bool { return r == ',' || r == ' ' }), // several rotate; the first signs
		Keys:     keys,
		AppURL:   appURL,
		AppName:  "typedapi example",
		Mailer:   mail.NewConsole(os.Stdout),
		Insecure: !strings.HasPrefix(appURL, "https://"),
		Logger:   logger,
	}, nil
}

// run serves until SIGINT or SIGTERM, then shuts down: requests in flight
// finish and queued mail is sent.
func run(logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := config(logger)
	if err != nil {
		return err
	}
	staff, err := parseDirectory(getenv("STAFF_DIRECTORY", ""))
	if err != nil {
		return err
	}
	a, err := newApp(cfg, staff)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", getenv("ADDR", "localhost:8080"))
	if err != nil {
		_ = a.Close(context.Background())
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler:           a,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	fmt.Fprintf(os.Stderr, "authkit example (typedapi) listening on http://%s (users: memory, mail: console)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		logger.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		err = srv.Shutdown(sctx)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return errors.Join(err, a.Close(sctx))
}
