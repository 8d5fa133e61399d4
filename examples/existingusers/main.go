// Command existingusers serves a gin app that had its own PostgreSQL users
// table before authkit (bigserial ids, mixed-case addresses, bcrypt cost-10
// hashes) and adds authkit by configuration only: see package webapp and
// README.md. It reads:
//
//	DATABASE_URL    required: postgres://user:pass@host:5432/db
//	ADDR            listen address. Default: "localhost:8080" (loopback only).
//	SESSION_SECRET  required: go run ./cmd/authkit session-secret
//	ENCRYPTION_KEY  required: go run ./cmd/authkit encryption-key
//	APP_URL         base of mailed links. Default: http://localhost:8080;
//	                cookies are Secure when it is https.
//
// Mail is printed on standard output.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/jmoiron/sqlx"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/examples/existingusers/webapp"
)

func main() {
	if err := run(); err != nil {
		log.Fatalf("existingusers: %v", err)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	gin.SetMode(gin.ReleaseMode)

	url, secret, key := os.Getenv("DATABASE_URL"), os.Getenv("SESSION_SECRET"), os.Getenv("ENCRYPTION_KEY")
	if url == "" || secret == "" || key == "" {
		return errors.New("DATABASE_URL, SESSION_SECRET and ENCRYPTION_KEY are required")
	}
	keys, err := secretbox.ParseKeyring(key)
	if err != nil {
		return fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	// A PostgreSQL-only app links pgx alone: it opens its pool itself and
	// hands it to sqlxstore.New (sqlxopen.Open would link all three drivers).
	pool, err := sqlx.Open("pgx", url)
	if err != nil {
		return err
	}
	defer pool.Close()
	pool.SetMaxOpenConns(25)
	db, err := sqlxstore.New(pool, webapp.StoreConfig())
	if err != nil {
		return err
	}
	defer db.Close()
	appURL := cmp.Or(os.Getenv("APP_URL"), "http://localhost:8080")
	app, err := webapp.New(ctx, db, auth.Config{
		Secrets:  strings.Split(secret, ","),
		Keys:     keys,
		AppURL:   appURL,
		AppName:  "existingusers example",
		Mailer:   mail.NewConsole(os.Stdout),
		Insecure: !strings.HasPrefix(appURL, "https://"),
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cmp.Or(os.Getenv("ADDR"), "localhost:8080"))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "existingusers example listening on http://%s (users: the app's users table, mail: console)\n", ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	return app.Close(sctx)
}
