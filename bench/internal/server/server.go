// Package server builds the app every HTTP comparison serves, identically
// on net/http, gin and fiber: GET /bare (a small handler), GET /auth (the
// same handler behind RequireUser) and authkit's routes (POST
// /api/login, ...). The Service uses the in-memory user store, rate limits off, and
// holds one user whose session cookie the load generator sends.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/session"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/fiberauth"
	"github.com/authkit-go/authkit/ginauth"
	"github.com/authkit-go/authkit/nethttpauth"
)

// Frameworks lists the frameworks the comparisons run on.
var Frameworks = []string{"nethttp", "gin", "fiber"}

// Body is what GET /bare and GET /auth answer.
const Body = "hello, world\n"

// Email and Password are the credentials of the one user.
const (
	Email    = "bench@example.com"
	Password = "correct horse battery staple"
)

// Env is a Service with one user signed in.
type Env struct {
	Service *auth.Service
	Users   *store.Memory
	User    *user.User
	// Hasher is the Service's password hasher.
	Hasher password.Hasher
	// Cookie is the value of the user's session cookie (session.DefaultCookieName).
	Cookie string
	// LoginBody is the JSON body of a successful POST /api/login.
	LoginBody string
}

// NewEnv returns an Env whose Service hashes passwords with hasher (nil:
// authkit's default, bcrypt at cost 12). Close the Service when done.
func NewEnv(ctx context.Context, hasher password.Hasher) (*Env, error) {
	if hasher == nil {
		var err error
		if hasher, err = password.New(password.Config{}); err != nil {
			return nil, err
		}
	}
	secret, key := make([]byte, 32), make([]byte, secretbox.KeySize)
	_, _ = rand.Read(secret) // never fails (crypto/rand)
	_, _ = rand.Read(key)
	keys, err := secretbox.NewKeyring(key)
	if err != nil {
		return nil, err
	}
	users := store.NewMemory(store.MemoryConfig{})
	off := auth.Off
	svc, err := auth.New(auth.Config{
		Users:   users,
		Secrets: []string{hex.EncodeToString(secret)},
		Keys:    keys,
		AppURL:  "http://127.0.0.1",
		Mailer:  discardMailer{},
		Hasher:  hasher,
		Limits: auth.Limits{
			LoginIP: off, LoginEmail: off, Register: off, ResetIP: off,
			ResetEmail: off, Resend: off, TwoFactor: off, Password: off,
		},
		Insecure: true, // plain HTTP on the loopback
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	hash, err := hasher.Hash(ctx, Password)
	if err != nil {
		return nil, err
	}
	u, err := users.Create(ctx, &user.User{Email: Email, Name: "Bench", PasswordHash: hash, EmailVerifiedAt: time.Now()})
	if err != nil {
		return nil, err
	}
	var jar cookieJar
	if err := svc.Modules().SessionManager().Session(&jar).Login(ctx, u, false); err != nil {
		return nil, err
	}
	if jar.value == "" {
		return nil, fmt.Errorf("server: Login set no session cookie")
	}
	return &Env{
		Service:   svc,
		Users:     users,
		User:      u,
		Hasher:    hasher,
		Cookie:    jar.value,
		LoginBody: fmt.Sprintf(`{"email":%q,"password":%q}`, Email, Password),
	}, nil
}

// CookieHeader is the Cookie request header that signs the user in.
func (e *Env) CookieHeader() string { return session.DefaultCookieName + "=" + e.Cookie }

// cookieJar is a session.CookieBridge that only records what is set.
type cookieJar struct{ value string }

func (j *cookieJar) Set(name, value string, _ session.CookieOptions) {
	if name == session.DefaultCookieName {
		j.value = value
	}
}
func (j *cookieJar) Get(string) (string, bool)                 { return "", false }
func (j *cookieJar) Delete(string, session.CookieOptions)      {}
func (discardMailer) Send(context.Context, mail.Message) error { return nil }

type discardMailer struct{}

var body = []byte(Body)

func hello(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(body)
}

// NetHTTP returns the app on net/http, with one route for the benchmarks
// only: POST /hash checks the user's password against its hash and nothing
// else, so a load run can hold the login against the hash's own limit on
// the same server, at the same moment.
func NetHTTP(e *Env) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hash", func(w http.ResponseWriter, r *http.Request) {
		ok, err := e.Hasher.Verify(r.Context(), Password, e.User.PasswordHash)
		if err != nil || !ok {
			http.Error(w, "password check failed", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	nethttpauth.Mount(mux, e.Service, "")
	mux.HandleFunc("GET /bare", hello)
	mux.Handle("GET /auth", nethttpauth.RequireUser(e.Service)(http.HandlerFunc(hello)))
	return mux
}

// Gin returns the app on gin, in release mode and without middleware.
func Gin(e *Env) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := ginauth.New(e.Service)
	h := func(c *gin.Context) { c.Data(http.StatusOK, "text/plain; charset=utf-8", body) }
	r.GET("/bare", h)
	r.GET("/auth", ginauth.RequireUser(e.Service), h)
	return r
}

// Fiber returns the app on fiber, configured by fiberauth.ApplyConfig.
func Fiber(e *Env) *fiber.App {
	app := fiber.New(fiberauth.ApplyConfig(e.Service, fiber.Config{DisableStartupMessage: true}))
	fiberauth.Register(app, e.Service)
	h := func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, "text/plain; charset=utf-8")
		return c.Send(body)
	}
	app.Get("/bare", h)
	app.Get("/auth", fiberauth.RequireUser(e.Service), h)
	return app
}
