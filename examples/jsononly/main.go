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
// The front end may live on another origin of the same site
// (https://app.example.com calling https://api.example.com; README.md, "A
// front end on another origin"): the API then lists the front end's origin
// in FRONTEND_ORIGINS, which answers CORS with credentials to exactly those
// origins (github.com/rs/cors) and trusts their posts
// (auth.Config.TrustedOrigins), and the server that hosts the front end
// is told the API's origin in API_URL.
//
// It reads ADDR (default "localhost:8080", loopback only), APP_URL (default
// http://localhost:8080; the front end's origin, where mailed links lead),
// FRONTEND_ORIGINS and API_URL (both unset: one origin); users live in
// memory, secrets are random at each start, and mail is printed on
// standard output.
package main

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"fmt"
	"html"
	"io/fs"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/nethttpauth"
	"github.com/rs/cors"
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
	origins := splitList(os.Getenv("FRONTEND_ORIGINS"))
	svc, err := newService(auth.Config{Users: store.NewMemory(store.MemoryConfig{}), Keys: keys,
		Secrets: []string{base64.RawURLEncoding.EncodeToString(secret[:])}, AppURL: appURL,
		// Secure cookies unless the app runs on plain HTTP (development).
		Insecure: !strings.HasPrefix(appURL, "https://"),
		// The front end's posts from its own origin pass authkit's check.
		TrustedOrigins: origins,
		Logger:         slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		log.Fatal(err)
	}
	h, err := handler(svc, frontEnd{apiURL: strings.TrimSuffix(os.Getenv("API_URL"), "/"), origins: origins})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", cmp.Or(os.Getenv("ADDR"), "localhost:8080"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "authkit example (jsononly) listening on http://%s; the front end is at /app/\n", ln.Addr())
	log.Fatal(http.Serve(ln, h))
}

// frontEnd is where the front end and the API live when they are apart.
type frontEnd struct {
	// apiURL is the API's origin the front end calls ("": its own).
	apiURL string
	// origins are the front ends on other origins the API answers.
	origins []string
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSuffix(strings.TrimSpace(p), "/"); p != "" {
			out = append(out, p)
		}
	}
	return out
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
// /app/assets/. With fe.origins, the API answers those origins' requests
// with credentials (CORS); with fe.apiURL, the page calls the API there.
func handler(svc *auth.Service, fe frontEnd) (http.Handler, error) {
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
	// The page learns where the API is from a meta element (escaped: it is
	// the operator's setting, but still text in HTML).
	index = bytes.Replace(index, []byte(`<meta name="authkit-api" content="">`),
		[]byte(`<meta name="authkit-api" content="`+html.EscapeString(fe.apiURL)+`">`), 1)
	connect := "'self'"
	if fe.apiURL != "" {
		connect += " " + fe.apiURL
	}
	assets := http.FileServerFS(spa)
	mux.Handle("GET /app/assets/", http.StripPrefix("/app", assets))
	mux.HandleFunc("GET /app/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src "+connect+"; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
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
	if len(fe.origins) == 0 {
		return mux, nil
	}
	// Exactly the listed origins, with credentials; never "*", never the
	// Origin echoed back.
	return cors.New(cors.Options{
		AllowedOrigins:   fe.origins,
		AllowCredentials: true,
		AllowedMethods:   []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete},
		AllowedHeaders:   []string{"Content-Type"},
		MaxAge:           600,
	}).Handler(mux), nil
}
