package fiberauth_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/fiberauth"
)

// newExampleService is the app's *auth.Service.
func newExampleService() *auth.Service {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{
		Users:   store.NewMemory(store.MemoryConfig{}),
		Secrets: []string{strings.Repeat("x", 32)}, // SESSION_SECRET: at least 32 random bytes
		Keys:    keys,
		AppURL:  "https://app.example.com",
		Mailer:  &mail.Capture{},
		Hasher:  password.ForTesting(), // the default bcrypt cost in production
	})
	if err != nil {
		panic(err)
	}
	return svc
}

// An existing fiber app adds authkit under /auth and protects one of its
// own routes.
func Example() {
	svc := newExampleService()
	defer svc.Close(context.Background())
	app := fiber.New(fiberauth.ApplyConfig(svc, fiber.Config{}))
	fiberauth.Register(app.Group("/auth"), svc)
	app.Get("/dashboard", fiberauth.RequireUser(svc), func(c *fiber.Ctx) error {
		u, _ := fiberauth.CurrentUser(c)
		return c.SendString("hello " + u.Name)
	})

	show := func(method, path, cookie, body string) string {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Cookie", cookie)
		resp, err := app.Test(req, -1) // no time limit: registering hashes a password
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, string(b))
		if c := resp.Cookies(); len(c) > 0 {
			return c[0].Name + "=" + c[0].Value
		}
		return ""
	}
	show("GET", "/dashboard", "", "")
	session := show("POST", "/auth/api/auth/register", "",
		`{"email":"ada@example.com","password":"correct horse battery staple","name":"Ada"}`)
	show("GET", "/dashboard", session, "")
	show("GET", "/auth/api/nope", "", "")
	// Output:
	// 401 {"error":"Not authenticated","code":"not_authenticated"}
	// 200 {"message":"Registration successful. Check your email to verify your address."}
	// 200 hello Ada
	// 404 {"error":"Not found","code":"not_found"}
}

func ExampleRegister() {
	svc := newExampleService()
	defer svc.Close(context.Background())
	app := fiber.New(fiberauth.ApplyConfig(svc, fiber.Config{}))
	fiberauth.Register(app.Group("/auth"), svc)
	var paths []string
	for _, r := range app.GetRoutes(true) {
		paths = append(paths, r.Path)
	}
	slices.Sort(paths)
	for _, p := range slices.Compact(paths) {
		fmt.Println(p)
	}
	// Output:
	// /auth/api/2fa/confirm
	// /auth/api/2fa/disable
	// /auth/api/2fa/recover
	// /auth/api/2fa/regenerate-codes
	// /auth/api/2fa/setup
	// /auth/api/2fa/verify
	// /auth/api/auth/change-email
	// /auth/api/auth/change-password
	// /auth/api/auth/confirm-password
	// /auth/api/auth/delete-account
	// /auth/api/auth/export
	// /auth/api/auth/forgot-password
	// /auth/api/auth/login
	// /auth/api/auth/logout
	// /auth/api/auth/logout-all
	// /auth/api/auth/me
	// /auth/api/auth/register
	// /auth/api/auth/resend-verification
	// /auth/api/auth/reset-password/:token
	// /auth/api/auth/sessions
	// /auth/api/auth/sessions/:id
	// /auth/api/auth/verify-email/:token
	// /auth/api/login
}

// Apps limit their own routes with the same store, headers and 429 body as
// authkit's.
func ExampleRateLimit() {
	svc := newExampleService()
	defer svc.Close(context.Background())
	search, err := svc.NewRateLimit("search", auth.Limit{Max: 1, Window: time.Minute}, nil, "")
	if err != nil {
		panic(err)
	}
	app := fiber.New(fiberauth.ApplyConfig(svc, fiber.Config{}))
	app.Get("/search", fiberauth.RateLimit(search), func(c *fiber.Ctx) error { return c.SendString("results") })
	for range 2 {
		resp, err := app.Test(httptest.NewRequest("GET", "/search", nil), -1)
		if err != nil {
			panic(err)
		}
		fmt.Println(resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
	}
	// Output:
	// 200 0
	// 429 0
}

// An app's own login handler, its own answer on success: the three
// one-liners around the typed method answer a failure as POST /api/login
// does.
func ExampleWriteError() {
	svc := newExampleService()
	defer svc.Close(context.Background())

	app := fiber.New(fiberauth.ApplyConfig(svc, fiber.Config{}))
	app.Post("/session", func(c *fiber.Ctx) error {
		v := fiberauth.Visit(c, svc)
		res, err := svc.Login(c.UserContext(), v, auth.LoginInput{Email: c.FormValue("email"), Password: c.FormValue("password")})
		if err != nil {
			return fiberauth.WriteError(c, svc, v, err)
		}
		fiberauth.WriteHeaders(c, v) // the session cookie
		return c.SendString("welcome " + res.User.Name)
	})

	req := httptest.NewRequest("POST", "/session", strings.NewReader("email=nobody@example.com&password=guess"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := app.Test(req, -1)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"), string(body))
	// Output:
	// 401 4 {"error":"Invalid credentials","code":"invalid_credentials"}
}
