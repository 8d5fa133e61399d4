// Command peerserver is authkit's side of the peer benchmark (cmd/peerbench,
// make bench-peers): the JSON routes on net/http (nethttpauth.Mount, so GET
// /api/auth/me behind the session and POST /api/auth/login), users in
// sqlxstore on PostgreSQL, session records in sqlxstore or in
// redisstore.Sessions, passwords hashed by scrypt at better-auth's parameters
// (internal/scrypthash).
//
//	peerserver -postgres URL [-sessions postgres|redis] [-redis URL -redis-prefix P]
//	           [-limits on|off] [-seed-users N -seed-sessions M] [-addr 127.0.0.1:0] [-pprof ADDR]
//
// The PostgreSQL URL names the schema to use (search_path); peerserver
// migrates it. With -limits on the rate limits are authkit's defaults (login:
// 10 per 15 minutes per address), kept in memory with -sessions postgres and
// in Redis with -sessions redis; with off, none. Before it listens it creates
// the user bench@example.com and, when asked, -seed-users users with
// -seed-sessions sessions each (the session a login makes, without the
// password check). Then it prints one JSON line on standard output (Ready)
// and serves until SIGINT or SIGTERM (or, with -stop-on-stdin-eof, until its
// standard input ends).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // served on -pprof only
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authkit-go/authkit/adapters/redisstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/bench/internal/scrypthash"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/nethttpauth"
)

// Email and Password are the benchmark user's credentials (the same on
// better-auth's side, bench/peers/betterauth/server.mjs).
const (
	Email    = "bench@example.com"
	Password = "correct horse battery staple"
)

// Ready is the line printed once the server listens.
type Ready struct {
	Addr        string  `json:"addr"`
	PID         int     `json:"pid"`
	Seeded      int     `json:"seeded"`      // sessions created before listening
	SeedSeconds float64 `json:"seedSeconds"` // how long creating them took
}

type config struct {
	addr, pprof         string
	postgres            string
	sessions            string
	redisURL, prefix    string
	limits              string
	seedUsers, seedEach int
	stdinLifeline       bool
}

func main() {
	var c config
	flag.StringVar(&c.addr, "addr", "127.0.0.1:0", "listen address (keep it on the loopback)")
	flag.StringVar(&c.pprof, "pprof", "", "serve net/http/pprof on this address (off when empty)")
	flag.StringVar(&c.postgres, "postgres", "", "PostgreSQL URL, its search_path the schema to use (required)")
	flag.StringVar(&c.sessions, "sessions", "postgres", "where session records live: postgres or redis")
	flag.StringVar(&c.redisURL, "redis", "", "Redis URL (required with -sessions redis)")
	flag.StringVar(&c.prefix, "redis-prefix", "authkit-peerbench:", "prefix of every Redis key")
	flag.StringVar(&c.limits, "limits", "off", "rate limits: on (authkit's defaults) or off")
	flag.IntVar(&c.seedUsers, "seed-users", 0, "users to create before listening")
	flag.IntVar(&c.seedEach, "seed-sessions", 0, "sessions to create for each seeded user")
	flag.BoolVar(&c.stdinLifeline, "stop-on-stdin-eof", false, "stop when standard input ends (the driver's pipe: the server dies with it)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "peerserver:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.stdinLifeline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
	}
	if c.postgres == "" {
		return errors.New("-postgres is required")
	}
	db, err := sqlxopen.Open(ctx, c.postgres, sqlxstore.Config{CleanupInterval: -1})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}

	var records session.Store = db.Sessions()
	var limitStore func(string) ratelimit.Store // nil: authkit's in-memory stores
	switch c.sessions {
	case "postgres":
	case "redis":
		opt, err := redis.ParseURL(c.redisURL)
		if err != nil {
			return fmt.Errorf("-redis: %w", err)
		}
		client := redis.NewClient(opt)
		defer client.Close()
		records = redisstore.NewSessions(client, redisstore.SessionsConfig{Prefix: c.prefix + "sess:"})
		limits := redisstore.New(client, redisstore.Config{Prefix: c.prefix + "rl:"})
		limitStore = func(string) ratelimit.Store { return limits }
	default:
		return fmt.Errorf("-sessions %q: want postgres or redis", c.sessions)
	}
	var limits auth.Limits
	switch c.limits {
	case "on":
	case "off":
		off := auth.Off
		limits = auth.Limits{LoginIP: off, LoginEmail: off, Register: off, ResetIP: off,
			ResetEmail: off, Resend: off, TwoFactor: off, Password: off, EmailCode: off}
	default:
		return fmt.Errorf("-limits %q: want on or off", c.limits)
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // never fails (crypto/rand)
	key, err := secretbox.GenerateKey()
	if err != nil {
		return err
	}
	keys, err := secretbox.ParseKeyring(key)
	if err != nil {
		return err
	}
	hasher := scrypthash.Hasher{}
	svc, err := auth.New(auth.Config{
		Users:      db.Users(),
		Sessions:   records,
		Secrets:    []string{hex.EncodeToString(secret)},
		Keys:       keys,
		AppURL:     "http://" + ln.Addr().String(),
		Mailer:     discardMailer{},
		Hasher:     hasher,
		Limits:     limits,
		LimitStore: limitStore,
		Insecure:   true, // plain HTTP on the loopback
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer svc.Close(context.Background())

	hash, err := hasher.Hash(ctx, Password)
	if err != nil {
		return err
	}
	if _, err := db.Users().Create(ctx, &user.User{Email: Email, Name: "Bench", PasswordHash: hash, EmailVerifiedAt: time.Now()}); err != nil {
		return fmt.Errorf("create %s: %w", Email, err)
	}
	start := time.Now()
	seeded, err := seed(ctx, svc, db.Users(), hash, c.seedUsers, c.seedEach)
	if err != nil {
		return err
	}
	seedTime := time.Since(start)

	if c.pprof != "" {
		go func() { _ = http.ListenAndServe(c.pprof, nil) }() // http.DefaultServeMux: pprof only
	}
	mux := http.NewServeMux()
	nethttpauth.Mount(mux, svc, "")
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if err := json.NewEncoder(os.Stdout).Encode(Ready{
		Addr: ln.Addr().String(), PID: os.Getpid(), Seeded: seeded, SeedSeconds: seedTime.Seconds(),
	}); err != nil {
		return err
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// seed creates users users with each sessions sessions, the way a login
// makes one (a record in the session store, a signed cookie), eight at a
// time; it returns how many sessions it made.
func seed(ctx context.Context, svc *auth.Service, users *sqlxstore.UserStore, hash string, n, each int) (int, error) {
	if n <= 0 || each <= 0 {
		return 0, nil
	}
	jobs := make(chan int)
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for i := range jobs {
				u, err := users.Create(ctx, &user.User{
					Email: fmt.Sprintf("seed-%06d@example.com", i), Name: "Seed", PasswordHash: hash, EmailVerifiedAt: time.Now(),
				})
				for j := 0; err == nil && j < each; j++ {
					err = svc.Sessions().Session(&cookieJar{}).Login(ctx, u, false)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("seed user %d: %w", i, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return n * each, first
}

// cookieJar is a session.CookieBridge that drops what is set.
type cookieJar struct{}

func (*cookieJar) Set(string, string, session.CookieOptions) {}
func (*cookieJar) Get(string) (string, bool)                 { return "", false }
func (*cookieJar) Delete(string, session.CookieOptions)      {}

type discardMailer struct{}

func (discardMailer) Send(context.Context, mail.Message) error { return nil }
