package ginauth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/ginauth"
	"github.com/gin-gonic/gin"
)

// exampleService stands for the app's Service, configured from its
// environment (SESSION_SECRET, ENCRYPTION_KEY, ...).
func exampleService() *auth.Service {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{
		Users:   store.NewMemory(store.MemoryConfig{}),
		Secrets: []string{strings.Repeat("x", 32)}, // SESSION_SECRET: at least 32 random bytes
		Keys:    keys,
		AppURL:  "https://app.example.com",
		Hasher:  password.ForTesting(), // the default bcrypt cost in production
	})
	if err != nil {
		panic(err)
	}
	return svc
}

// get serves one GET request on h and prints the answer.
func get(h http.Handler, path string) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
}

// Adding authkit to an existing gin app: its routes under a prefix, and
// the app's own route behind RequireUser.
func Example() {
	gin.SetMode(gin.ReleaseMode)
	svc := exampleService()
	defer svc.Close(context.Background()) // on shutdown: drains the mail queue

	r := gin.New()
	r.Use(gin.Recovery())
	ginauth.Register(r.Group("/auth"), svc) // /auth/api/login, /auth/api/2fa/setup, ...
	r.GET("/dashboard", ginauth.RequireUser(svc), func(c *gin.Context) {
		u, _ := ginauth.CurrentUser(c)
		c.String(http.StatusOK, "hello %s", u.Name)
	})

	get(r, "/dashboard")        // no session cookie
	get(r, "/auth/api/auth/me") // authkit's route, under the prefix
	get(r, "/auth/api/login")   // wrong method
	// Output:
	// 401 {"error":"Not authenticated","code":"not_authenticated"}
	// 401 {"error":"Not authenticated","code":"not_authenticated"}
	// 405 {"error":"Method not allowed","code":"method_not_allowed"}
}

// New is an engine with nothing but authkit's routes, answering other
// paths with JSON.
func ExampleNew() {
	gin.SetMode(gin.ReleaseMode)
	svc := exampleService()
	defer svc.Close(context.Background())
	r := ginauth.New(svc)
	get(r, "/api/nope")
	// Output:
	// 404 {"error":"Not found","code":"not_found"}
}

// RateLimit limits the app's own routes with authkit's store, headers
// and 429 answer.
func ExampleRateLimit() {
	gin.SetMode(gin.ReleaseMode)
	svc := exampleService()
	defer svc.Close(context.Background())
	rl, err := svc.NewRateLimit("search", auth.Limit{Max: 30, Window: time.Minute}, nil, "")
	if err != nil {
		panic(err)
	}
	defer rl.Close()
	r := gin.New()
	r.GET("/search", ginauth.RateLimit(rl), func(c *gin.Context) { c.String(http.StatusOK, "results") })

	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/search", nil))
	fmt.Println(w.Code, w.Body.String(), "remaining:", w.Header().Get("X-RateLimit-Remaining"))
	// Output:
	// 200 results remaining: 29
}

// An app's own login handler, its own answer on success: the three
// one-liners around the typed method answer a failure as POST /api/login
// does.
func ExampleWriteError() {
	gin.SetMode(gin.ReleaseMode)
	svc := exampleService()
	defer svc.Close(context.Background())

	r := gin.New()
	r.POST("/session", func(c *gin.Context) {
		v := ginauth.Visit(c, svc)
		res, err := svc.Login(c.Request.Context(), v, auth.LoginInput{Email: c.PostForm("email"), Password: c.PostForm("password")})
		if err != nil {
			ginauth.WriteError(c, svc, v, err)
			return
		}
		ginauth.WriteHeaders(c, v) // the session cookie
		c.String(http.StatusOK, "welcome %s", res.User.Name)
	})

	w := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/session", strings.NewReader("email=nobody@example.com&password=guess"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.ServeHTTP(w, req)
	fmt.Println(w.Code, w.Header().Get("X-RateLimit-Remaining"), w.Body.String())
	// Output:
	// 401 4 {"error":"Invalid credentials","code":"invalid_credentials"}
}
