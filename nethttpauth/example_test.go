package nethttpauth_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/password"
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
