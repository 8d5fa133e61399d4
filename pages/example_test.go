package pages_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/pages"
)

// The pages under /auth on net/http, with the mailed links pointing at them.
func Example() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	cfg := auth.Config{Users: store.NewMemory(store.MemoryConfig{}), Keys: keys,
		Secrets: []string{strings.Repeat("s", 32)}, AppURL: "https://app.example.com"}
	cfg.VerifyEmailPath, cfg.ResetPasswordPath = pages.MailLinks("/auth")
	svc, err := auth.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	p, err := pages.New(svc, pages.Config{Prefix: "/auth", Theme: pages.Theme{AppName: "Acme", Accent: "#0b7285"}})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/", p)

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/auth/login", nil))
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `<form id="login-form" method="post" action="/auth/login">`))
	// Output: 200 true
}

// MailLinks gives the Service's link paths for the pages' prefix.
func ExampleMailLinks() {
	verify, reset := pages.MailLinks("/auth")
	fmt.Println(verify, reset)
	// Output: /auth/verify-email/ /auth/reset-password/
}

// With the passkeys module mounted at /api/passkeys, the pages offer its
// steps: here the login page's passkey autofill and its script.
func ExampleConfig_passkeys() {
	key, _ := secretbox.GenerateKey()
	keys, _ := secretbox.ParseKeyring(key)
	svc, err := auth.New(auth.Config{Users: store.NewMemory(store.MemoryConfig{}), Keys: keys,
		Secrets: []string{strings.Repeat("s", 32)}, AppURL: "https://app.example.com"})
	if err != nil {
		log.Fatal(err)
	}
	p := pages.Must(pages.New(svc, pages.Config{Passkeys: &pages.Passkeys{}}))
	// passkeys.New(svc, ...) before mounting svc adds the passkey routes
	// to it: see the passkeys module.

	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequest("GET", "/login", nil))
	body := rec.Body.String()
	fmt.Println(strings.Contains(body, `autocomplete="username webauthn"`), strings.Contains(body, `src="/api/passkeys/passkeys.js"`))
	// Output: true true
}
