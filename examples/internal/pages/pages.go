// Package pages is the small set of HTML pages the example servers share:
// server-side templates plus a little plain JavaScript that calls the JSON
// API, embedded in the binary, with no front-end build step and nothing
// loaded from another origin.
//
// The pages are an http.Handler; net/http mounts it directly, gin and fiber
// register each of [Paths] and hand the request to it.
package pages

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// page is one HTML page: its path pattern (ServeMux form), template and title.
type page struct {
	pattern, name, title string
}

var pageList = []page{
	{"/login", "login", "Log in"},
	{"/register", "register", "Create an account"},
	{"/2fa", "twofactor", "Two-factor authentication"},
	{"/verify-email/{token}", "verify", "Verify your email"},
	{"/resend-verification", "resend", "Verify your email"},
	{"/forgot-password", "forgot", "Forgot your password"},
	{"/reset-password/{token}", "reset", "Choose a new password"},
	{"/dashboard", "dashboard", "Dashboard"},
	{"/settings/security", "security", "Security settings"},
}

// Paths lists every path the pages answer (GET), in net/http ServeMux form
// with parameters as {name}; "/" redirects to the dashboard, and the assets
// live under /assets/.
func Paths() []string {
	out := []string{"/", "/assets/app.js", "/assets/app.css", "/assets/favicon.svg"}
	for _, p := range pageList {
		out = append(out, p.pattern)
	}
	return out
}

// ContentSecurityPolicy is sent with every page: scripts, styles and
// connections only from this origin, images also as data: URLs (the QR
// code), no framing, no plugins, forms only to this origin.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// New returns the pages handler. appName titles the pages.
func New(appName string) (http.Handler, error) {
	mux := http.NewServeMux()
	for _, p := range pageList {
		t, err := template.New("layout").ParseFS(templateFS, "templates/layout.html", "templates/"+p.name+".html")
		if err != nil {
			return nil, fmt.Errorf("pages: %s: %w", p.name, err)
		}
		var buf bytes.Buffer
		data := struct{ Title, AppName, Page string }{p.title, appName, p.name}
		if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
			return nil, fmt.Errorf("pages: %s: %w", p.name, err)
		}
		body := buf.Bytes()
		mux.HandleFunc("GET "+p.pattern, func(w http.ResponseWriter, r *http.Request) {
			secure(w.Header())
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(body)
		})
	}
	assets, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return nil, err
	}
	files := http.StripPrefix("/assets/", http.FileServerFS(assets))
	mux.Handle("GET /assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure(w.Header())
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/dashboard", http.StatusFound)
	})
	return mux, nil
}

// secure sets the headers every page and asset carries. Referrer-Policy
// no-referrer keeps the tokens in /verify-email/ and /reset-password/ URLs
// from leaking to any other site.
func secure(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// ColonPath turns a Paths entry into the :name form gin and fiber use.
func ColonPath(p string) string {
	return strings.NewReplacer("{token}", ":token").Replace(p)
}
