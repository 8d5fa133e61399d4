// Package pages is the small set of HTML pages the example servers share:
// server-side templates plus a little plain JavaScript that calls the JSON
// API, embedded in the binary, with no front-end build step and nothing
// loaded from another origin.
//
// The pages are an http.Handler; net/http mounts it directly, gin and fiber
// register each of [Paths] and hand the request to it, and every server
// answers its other non-API paths with [Handler.NotFound].
//
// Every form has method="post" and, as its action, the JSON route its
// script calls (the API accepts form posts too). The script submits it
// with fetch; without the script (turned off, failed, not loaded yet) the
// browser posts it there itself and shows the API's answer: a password or
// a code never goes into a URL, the history or an access log.
package pages

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
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
	{"/settings/recovery-codes", "codes", "New recovery codes"},
}

// notFound is the page of every path no page or route answers.
var notFound = page{"", "notfound", "Page not found"}

// Paths lists every path the pages answer (GET), in net/http ServeMux form
// with parameters as {name}; "/" redirects to the dashboard, the assets
// live under /assets/, and /favicon.ico, which browsers ask for on pages
// that name no icon (the API's answers to a form posted without the
// script), is the SVG icon.
func Paths() []string {
	out := []string{"/", "/favicon.ico", "/assets/app.js", "/assets/app.css", "/assets/favicon.svg"}
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

// Config configures the pages.
type Config struct {
	// AppName titles the pages.
	AppName string
	// SecureCookies says that the session cookie is Secure, as in
	// production: a browser then drops it on a page reached over plain
	// HTTP (loopback aside), and the pages warn the person who opened one
	// that signing in needs HTTPS.
	SecureCookies bool
}

// Handler serves the pages: it is an http.Handler for [Paths], and
// [Handler.NotFound] answers every other path.
type Handler struct {
	mux      *http.ServeMux
	cfg      Config
	notFound *template.Template
}

// data is what a page's templates see.
type data struct {
	Title, AppName, Page string
	SecureCookies        bool
	Token                string // the {token} of the path, path-escaped, or ""
}

// New returns the pages handler. cfg is not modified.
func New(cfg Config) (*Handler, error) {
	h := &Handler{mux: http.NewServeMux(), cfg: cfg}
	var err error
	if h.notFound, err = h.parse(notFound); err != nil {
		return nil, err
	}
	for _, p := range pageList {
		t, err := h.parse(p)
		if err != nil {
			return nil, err
		}
		h.mux.HandleFunc("GET "+p.pattern, func(w http.ResponseWriter, r *http.Request) {
			h.render(w, http.StatusOK, t, p, url.PathEscape(r.PathValue("token")))
		})
	}
	assets, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return nil, err
	}
	files := http.StripPrefix("/assets/", http.FileServerFS(assets))
	h.mux.Handle("GET /assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure(w.Header())
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	h.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/assets/favicon.svg"
		h.mux.ServeHTTP(w, r2)
	})
	h.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/dashboard", http.StatusFound)
	})
	return h, nil
}

// parse parses p's template with the layout and the shared parts, and
// renders it once, so that a broken template fails New, not a request.
func (h *Handler) parse(p page) (*template.Template, error) {
	t, err := template.New("layout").ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+p.name+".html")
	if err != nil {
		return nil, fmt.Errorf("pages: %s: %w", p.name, err)
	}
	if err := t.ExecuteTemplate(io.Discard, "layout", h.data(p, "x")); err != nil {
		return nil, fmt.Errorf("pages: %s: %w", p.name, err)
	}
	return t, nil
}

func (h *Handler) data(p page, token string) data {
	return data{Title: p.title, AppName: h.cfg.AppName, Page: p.name, SecureCookies: h.cfg.SecureCookies, Token: token}
}

// render writes page p with status.
func (h *Handler) render(w http.ResponseWriter, status int, t *template.Template, p page, token string) {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", h.data(p, token)); err != nil {
		// New rendered every template once: this cannot happen.
		http.Error(w, "Internal server error", http.StatusInternalServerError)
		return
	}
	secure(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// ServeHTTP serves the page at r's path; see [Paths].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mux.ServeHTTP(w, r)
}

// NotFound answers 404 with an HTML page in the pages' layout that links
// home, for any path that neither a page nor a route answers. (Unknown API
// paths keep authkit's JSON 404.)
func (h *Handler) NotFound(w http.ResponseWriter, r *http.Request) {
	h.render(w, http.StatusNotFound, h.notFound, notFound, "")
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
