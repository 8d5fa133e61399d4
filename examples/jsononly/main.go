// Command jsononly is an authkit app whose pages are a front end of its
// own (a single-page app, here a few static files under /app/), not the
// pages module: only authkit's JSON routes are mounted, and the mailed
// links point at the front end's own URLs, which then call the JSON API.
//
// The two lines that do it are in newService:
//
//	cfg.VerifyEmailPath = "/app/verify-email/"   // {APP_URL}/app/verify-email/{token}
//	cfg.ResetPasswordPath = "/app/reset-password/"
//
// A front end on another origin sets APP_URL to its origin and lists it
// in TRUSTED_ORIGINS (auth.Config.TrustedOrigins) so its posts pass the
// cross-origin check.
//
// It reads ADDR (default "localhost:8080", loopback only) and APP_URL (default
// http://localhost:8080); users live in memory, secrets are random at each
// start, and mail is printed on standard output.
package main

import (
	"cmp"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"fmt"
	"io/fs"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/nethttpauth"
)

//go:embed spa
var spaFS embed.FS

func main() {
	var secret, key [32]byte
	rand.Read(secret[:]) // never fails: Go 1.24+ crashes the program instead
	rand.Read(key[:])
	keys, err := secretbox.NewKeyring(key[:])
	if err != nil {
		log.Fatal(err)
	}
	appURL := cmp.Or(os.Getenv("APP_URL"), "http://localhost:8080")
	svc, err := newService(auth.Config{Users: store.NewMemory(store.MemoryConfig{}), Keys: keys,
		Secrets: []string{base64.RawURLEncoding.EncodeToString(secret[:])}, AppURL: appURL,
		// Secure cookies unless the app runs on plain HTTP (development).
		Insecure: !strings.HasPrefix(appURL, "https://"),
		Logger:   slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		log.Fatal(err)
	}
	h, err := handler(svc)
	if err != nil {
		log.Fatal(err)
	}
	addr := cmp.Or(os.Getenv("ADDR"), "localhost:8080")
	fmt.Fprintf(os.Stderr, "authkit example (jsononly) listening on %s; the front end is at /app/\n", addr)
	log.Fatal(http.ListenAndServe(addr, h))
}

// newService is auth.New with the mailed links pointing at the front end.
func newService(cfg auth.Config) (*auth.Service, error) {
	cfg.VerifyEmailPath = "/app/verify-email/"
	cfg.ResetPasswordPath = "/app/reset-password/"
	return auth.New(cfg)
}

// handler serves authkit's JSON routes and the front end: every path
// under /app/ answers its one page, which reads the path itself (a
// single-page app's routing); its script and style are files under
// /app/assets/.
func handler(svc *auth.Service) (http.Handler, error) {
	mux := http.NewServeMux()
	nethttpauth.Mount(mux, svc, "")
	spa, err := fs.Sub(spaFS, "spa")
	if err != nil {
		return nil, err
	}
	index, err := fs.ReadFile(spa, "index.html")
	if err != nil {
		return nil, err
	}
	assets := http.FileServerFS(spa)
	mux.Handle("GET /app/assets/", http.StripPrefix("/app", assets))
	mux.HandleFunc("GET /app/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
		w.Header().Set("Referrer-Policy", "no-referrer") // the tokens in the path stay here
		_, _ = w.Write(index)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/app/", http.StatusFound)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			resp := svc.Modules().NotFound(nethttpauth.Request(r))
			resp.Write(w)
			return
		}
		http.NotFound(w, r)
	})
	return mux, nil
}
