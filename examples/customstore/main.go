// Command customstore serves authkit on net/http over an app's own,
// already existing accounts table in SQLite: the user.Store is written by
// hand in package accounts. README.md walks through it.
//
// Unlike the other example servers it wires auth.New itself, because the
// shared example configuration has no way to take a store from outside.
// It reads:
//
//	ADDR            listen address. Default: "localhost:8080" (loopback only).
//	ACCOUNTS_DB     the app's SQLite file. Default: $AUTHKIT_DATA_DIR/accounts.db
//	                (AUTHKIT_DATA_DIR default: .authkit).
//	SESSION_SECRET  required: go run ./cmd/authkit session-secret
//	ENCRYPTION_KEY  required: go run ./cmd/authkit encryption-key
//	APP_URL         base of mailed links. Default: http://localhost:8080;
//	                cookies are Secure when it is https.
//
// Mail is printed on standard output.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/examples/customstore/accounts"
	"github.com/authkit-go/authkit/examples/internal/app"
	"github.com/authkit-go/authkit/nethttpauth"
)

func main() {
	os.Exit(run(os.LookupEnv, os.Stdout, os.Stderr))
}

// run is the life of the server: open the app's database, add authkit's
// columns, serve until SIGINT or SIGTERM, shut down. It returns the exit
// code. Mail goes to stdout, logs to stderr.
func run(env app.Env, stdout, stderr io.Writer) int {
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	fail := func(err error) int {
		fmt.Fprintf(stderr, "authkit example (customstore): %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	secret, key := env.Get("SESSION_SECRET", ""), env.Get("ENCRYPTION_KEY", "")
	if secret == "" || key == "" {
		// No generated fallback: the accounts outlive the process, and TOTP
		// secrets encrypted with a throw-away key could never be read again.
		return fail(errors.New("SESSION_SECRET and ENCRYPTION_KEY are required " +
			"(go run ./cmd/authkit session-secret; go run ./cmd/authkit encryption-key)"))
	}
	keys, err := secretbox.ParseKeyring(key)
	if err != nil {
		return fail(fmt.Errorf("ENCRYPTION_KEY: %w", err))
	}

	path := env.Get("ACCOUNTS_DB", filepath.Join(env.Get("AUTHKIT_DATA_DIR", ".authkit"), "accounts.db"))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fail(err)
	}
	db, err := accounts.Open(ctx, path)
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, accounts.Schema); err != nil {
		return fail(fmt.Errorf("the app's migration: %w", err))
	}
	if err := accounts.Migrate(ctx, db); err != nil {
		return fail(err)
	}

	appURL := env.Get("APP_URL", "http://localhost:8080")
	svc, err := auth.New(auth.Config{
		Users:    accounts.New(db, accounts.Config{}),
		Secrets:  app.SplitList(secret),
		Keys:     keys,
		AppURL:   appURL,
		AppName:  "customstore example",
		Mailer:   mail.NewConsole(stdout),
		Insecure: !strings.HasPrefix(appURL, "https://"),
		Logger:   logger,
	})
	if err != nil {
		return fail(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := svc.Close(sctx); err != nil {
			logger.Error("close", "err", err)
		}
	}()

	mux := http.NewServeMux()
	nethttpauth.Mount(mux, svc, "")
	mux.Handle("GET /api/hello", nethttpauth.RequireUser(svc)(hello(db)))
	srv := app.HTTPServer(mux)

	ln, err := net.Listen("tcp", env.Get("ADDR", "localhost:8080"))
	if err != nil {
		return fail(fmt.Errorf("listen: %w", err))
	}
	fmt.Fprintf(stderr, "authkit example (customstore) listening on http://%s (users: accounts table in %s, mail: console)\n", ln.Addr(), path)
	if err := app.ServeUntil(ctx, logger, srv, ln); err != nil {
		logger.Error("server stopped", "err", err)
		return 1
	}
	return 0
}

// hello is one of the app's own routes: it greets the signed-in user and
// reads the app's own column of the same row.
func hello(db *sql.DB) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := nethttpauth.CurrentUser(r)
		var plan string
		if err := db.QueryRowContext(r.Context(), `SELECT plan FROM accounts WHERE account_id = ?`, u.ID).Scan(&plan); err != nil {
			http.Error(w, "Service unavailable", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "Hello, %s (plan: %s)\n", u.Name, plan)
	})
}
