// Command benchserver serves the comparison app (package server) on one
// framework for the load runs of cmd/loadbench: GET /bare, GET /auth (the
// same handler behind RequireUser) and POST /api/login, on the in-memory
// store with rate limits off.
//
//	benchserver -fw nethttp|gin|fiber [-addr 127.0.0.1:0] [-max 10m]
//
// Once listening it prints one JSON line on standard output: the address,
// the session cookie and the login body to send, and GOMAXPROCS. It serves
// until SIGINT or SIGTERM, or until -max has passed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/authkit-go/authkit/bench/internal/server"
	"github.com/authkit-go/authkit/core/password"
)

// Ready is the line printed once the server listens.
type Ready struct {
	Addr       string `json:"addr"`
	Cookie     string `json:"cookie"`    // the Cookie request header
	LoginBody  string `json:"loginBody"` // JSON body of POST /api/login
	GOMAXPROCS int    `json:"gomaxprocs"`
}

func main() {
	fw := flag.String("fw", "nethttp", "framework: nethttp, gin or fiber")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (keep it on the loopback)")
	maxLife := flag.Duration("max", 10*time.Minute, "stop serving after this long")
	flag.Parse()
	if err := run(*fw, *addr, *maxLife); err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(1)
	}
}

func run(fw, addr string, maxLife time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, maxLife)
	defer cancel()

	hasher, err := password.New(password.Config{})
	if err != nil {
		return err
	}
	env, err := server.NewEnv(ctx, hasher)
	if err != nil {
		return err
	}
	defer env.Service.Close(context.Background())

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	var serve func() error
	var shutdown func(context.Context) error
	switch fw {
	case "nethttp", "gin":
		h := server.NetHTTP(env)
		if fw == "gin" {
			h = server.Gin(env)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
		serve = func() error { return srv.Serve(ln) }
		shutdown = srv.Shutdown
	case "fiber":
		app := server.Fiber(env)
		serve = func() error { return app.Listener(ln) }
		shutdown = app.ShutdownWithContext
	default:
		_ = ln.Close()
		return fmt.Errorf("unknown framework %q", fw)
	}

	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	if err := json.NewEncoder(os.Stdout).Encode(Ready{
		Addr: ln.Addr().String(), Cookie: env.CookieHeader(), LoginBody: env.LoginBody,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
	}); err != nil {
		return err
	}
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	return shutdown(sctx)
}
