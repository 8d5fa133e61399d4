package nethttpauth_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/ratelimit"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/nethttpauth"
)

func Example() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{
		Users:   store.NewMemory(store.MemoryConfig{}),
		Secrets: []string{strings.Repeat("s", 32)}, // SESSION_SECRET
		Keys:    keys,                              // ENCRYPTION_KEY
		AppURL:  "https://app.example.com",
		Hasher:  password.ForTesting(), // the default bcrypt cost in production
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer svc.Close(context.Background())

	mux := http.NewServeMux()
	nethttpauth.Mount(mux, svc, "/auth")
	mux.Handle("GET /dashboard", nethttpauth.RequireUser(svc)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := nethttpauth.CurrentUser(r)
		fmt.Fprintf(w, "hello %s", u.Name)
	})))

	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, _ := http.Get(srv.URL + "/dashboard")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
	// Output:
	// 401 {"error":"Not authenticated","code":"not_authenticated"}
}

// An app's own login handler, its own answer on success: the three
// one-liners around the typed method answer a failure as POST /api/login
// does.
func ExampleWriteError() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{
		Users:   store.NewMemory(store.MemoryConfig{}),
		Secrets: []string{strings.Repeat("s", 32)},
		Keys:    keys,
		AppURL:  "https://app.example.com",
		Hasher:  password.ForTesting(),
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer svc.Close(context.Background())

	login := func(w http.ResponseWriter, r *http.Request) {
		v := nethttpauth.Visit(r, svc)
		res, err := svc.Login(r.Context(), v, auth.LoginInput{Email: r.FormValue("email"), Password: r.FormValue("password")})
		if err != nil {
			nethttpauth.WriteError(w, r, svc, v, err)
			return
		}
		nethttpauth.WriteHeaders(w, v) // the session cookie
		fmt.Fprintf(w, "welcome %s", res.User.Name)
	}

	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/session", strings.NewReader("email=nobody@example.com&password=guess"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	login(w, r)
	fmt.Println(w.Code, w.Header().Get("X-RateLimit-Remaining"), w.Body.String())
	// Output:
	// 401 4 {"error":"Invalid credentials","code":"invalid_credentials"}
}

// An app that wants authkit's rate limit and nothing else: a
// ratelimit.Limiter (here on the memory store; sqlxstore and redisstore
// hold its counters across instances) behind RateLimit, with no Service.
func ExampleRateLimit_withoutService() {
	store := ratelimit.NewMemoryStore(ratelimit.MemoryConfig{})
	defer store.Close()
	lim, err := ratelimit.New(ratelimit.Config{MaxAttempts: 2, Window: time.Minute, Store: store})
	if err != nil {
		panic(err)
	}
	search, err := auth.NewRequestLimiter(auth.RequestLimiterConfig{Limiter: lim, Name: "search"})
	if err != nil {
		panic(err)
	}
	h := nethttpauth.RateLimit(search)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "results")
	}))

	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/search?q=go", nil))
		line := fmt.Sprintf("%d, %s left", w.Code, w.Header().Get("X-RateLimit-Remaining"))
		if after := w.Header().Get("Retry-After"); after != "" {
			line += ", retry after " + after + "s"
		}
		fmt.Println(line)
	}
	// Output:
	// 200, 1 left
	// 200, 0 left
	// 429, 0 left, retry after 60s
}
