package pages

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/i18n"
	"github.com/authkit-go/authkit/core/user"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

//go:embed locales/*.json
var localeFS embed.FS

// ContentSecurityPolicy is sent with every page and asset: scripts, styles,
// fonts and connections only from the app's own origin, images also as
// data: URLs (the QR code), no framing, no plugins, forms only to this
// origin. No page has an inline script or style.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Config configures the pages. Zero fields mean the documented defaults;
// New never changes the Config it is given.
type Config struct {
	// Prefix is the path the pages are mounted under, e.g. "/auth": the
	// login page is then /auth/login, and every link and form of the pages
	// carries the prefix. Default: "", the pages at the root (/login).
	// The Service's mailed links must point at the pages: see [MailLinks].
	Prefix string

	// AfterLogin is where a successful login (and a verified email of a
	// signed-in person) goes: an app's own page, e.g. "/app".
	// Default: the pages' own dashboard, Prefix + "/dashboard".
	AfterLogin string

	// Templates overrides templates: a file of it with the name of one of
	// the embedded templates (layout.html, login.html, ...; see the
	// package documentation) is used instead of the embedded one. An app
	// that only wants its own frame replaces layout.html. Default: none.
	Templates fs.FS

	// Theme is the look: app name, logo, colours and font.
	Theme Theme

	// Texts adds languages of the pages' texts, or replaces texts of the
	// built-in German, as i18n catalog files whose "texts" use the keys of
	// the built-in German file (pages/locales/de.json). A page is shown in
	// the language of its auth.Visit, that is the Service's Catalog match
	// of Accept-Language: the same language as the API's errors and the
	// mails. Default: the built-in German only.
	Texts *i18n.Catalog

	// WarnPlainHTTP puts a hidden warning on every page that the script
	// shows when the page was opened over plain HTTP on a host that is not
	// loopback, where a browser drops the Secure session cookie. Set it
	// when the Service's cookies are Secure (production). Default: false.
	WarnPlainHTTP bool

	// Passkeys turns on the pages' passkey steps, for an app that mounts
	// the passkeys module (github.com/authkit-go/authkit/passkeys) on the
	// same origin at [PasskeysPath]: "Sign in with a passkey" and the
	// browser's passkey autofill on the login page, "Sign up with a
	// passkey" (no password) on the register page, "Use a passkey" at the
	// second step, and the user's passkeys on the security page (listed,
	// renamed and deleted by plain forms; added by the script). The pages
	// load the module's script (PasskeysPath + "/passkeys.js"); what needs
	// it is hidden until the script shows it, so without JavaScript no
	// control is dead. The pages stay free of WebAuthn: the ceremonies are
	// the module's. Default: nil, no passkey steps.
	Passkeys *Passkeys

	// Social lists the providers of the social module
	// (github.com/authkit-go/authkit/social) mounted on the same origin:
	// the login and registration pages offer each as a link to its start
	// route (SocialPath + "/{name}/start", returning to the page after
	// login), and the login page shows the error a failed sign-in comes
	// back with (?error=social_..., only codes of authkit's, in the visit's
	// language). The security page lists the user's linked provider
	// accounts (auth.Service.Identities), each with an Unlink form, and a
	// "Link <provider>" button per provider, when the user store holds
	// identities (user.Identities). Links and forms, no script. Default:
	// none.
	Social []SocialProvider

	// Logger logs what a person cannot be told (a template that fails).
	// Default: slog.Default().
	Logger *slog.Logger
}

// PasskeysPath is where the pages expect the passkeys module's routes and
// script: the module's passkeys.Prefix.
const PasskeysPath = "/api/passkeys"

// SocialPath is where the social module serves its sign-in routes.
const SocialPath = "/api/auth/oauth"

// SocialProvider is one provider the pages offer (Config.Social).
type SocialProvider struct {
	Name  string // the provider's name in the social module's configuration ("google")
	Label string // what the button names: "Google"
}

// Passkeys configures the pages' passkey steps (Config.Passkeys).
type Passkeys struct {
	// SecondFactorOnly takes passwordless sign-in off the login page (the
	// button and the autofill): set it when the passkeys module's
	// AllowPasswordless is false. Default: false, offered.
	SecondFactorOnly bool
}

// Theme is the look of the default templates, applied as CSS custom
// properties in a stylesheet the pages serve (theme.css, beside the assets), so that
// no template changes and the Content-Security-Policy stays strict. Empty
// fields keep the default theme's value, which has a dark variant that
// follows the system setting (prefers-color-scheme); a colour set here
// applies to both.
type Theme struct {
	// AppName names the app in the header and the page titles.
	// Default: "authkit".
	AppName string
	// Logo is the URL of an image shown beside the app name: a path on the
	// app's own origin or a data: URL (the policy allows no other).
	Logo string
	// Accent colours buttons and links, e.g. "#0b7285".
	Accent string
	// Background, Surface (the card) and Text colour the page.
	Background, Surface, Text string
	// Error colours error messages and danger buttons.
	Error string
	// Font is a CSS font-family list, e.g. `"Inter", system-ui, sans-serif`.
	Font string
	// Radius rounds corners, e.g. "0" or ".75rem".
	Radius string
}

// MailLinks returns the auth.Config VerifyEmailPath and ResetPasswordPath
// that make the Service's mailed links open the pages mounted at prefix:
//
//	cfg.VerifyEmailPath, cfg.ResetPasswordPath = pages.MailLinks("/auth")
//
// At the root (prefix ""), they are the Service's defaults.
func MailLinks(prefix string) (verifyEmailPath, resetPasswordPath string) {
	p := cleanPrefix(prefix)
	return p + "/verify-email/", p + "/reset-password/"
}

// cleanPrefix makes "/auth/", "auth" and "/auth" all "/auth", and "/" "".
func cleanPrefix(p string) string {
	p = strings.Trim(p, "/")
	if p == "" {
		return ""
	}
	return "/" + p
}

// Handler serves the pages. Make one with [New] and mount it under its
// prefix: every path under the prefix belongs to it, and one it does not
// know answers an HTML 404 page.
type Handler struct {
	svc        *auth.Service
	cfg        Config
	prefix     string
	afterLogin string
	mux        *http.ServeMux
	tmpl       map[string]*template.Template
	texts      []*i18n.Catalog // the app's, then the built-in
	themeCSS   []byte
	assets     fs.FS
	log        *slog.Logger
	started    time.Time // Last-Modified of the assets
}

// templates are the page templates; each is parsed with layout.html and
// parts.html.
var templates = []string{"login", "register", "twofactor", "verify", "resend", "forgot", "reset",
	"dashboard", "security", "confirm", "codes", "notfound", "problem", "signin", "signinlink", "delete"}

// New returns the pages of svc. It parses every template (the app's
// overrides first) and fails on one that does not parse.
func New(svc *auth.Service, cfg Config) (*Handler, error) {
	if svc == nil {
		return nil, errors.New("pages: New needs a *auth.Service")
	}
	h := &Handler{svc: svc, cfg: cfg, prefix: cleanPrefix(cfg.Prefix), mux: http.NewServeMux(),
		tmpl: map[string]*template.Template{}, log: cfg.Logger, started: time.Now()}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.cfg.Theme.AppName == "" {
		h.cfg.Theme.AppName = "authkit"
	}
	if cfg.Passkeys != nil {
		if _, ok := svc.Modules().Users().(user.Passkeys); !ok {
			return nil, fmt.Errorf("pages: Config.Passkeys needs a user store that holds passkeys (user.Passkeys); auth.Config.Users (%T) does not", svc.Modules().Users())
		}
	}
	for _, p := range cfg.Social {
		if p.Label != "" { // the notices core mails name the provider so, as the pages do
			svc.Modules().LabelProvider(p.Name, p.Label)
		}
	}
	h.afterLogin = cfg.AfterLogin
	if h.afterLogin == "" {
		h.afterLogin = h.prefix + "/dashboard"
	}
	builtin := i18n.New()
	if err := builtin.LoadFS(localeFS, "locales/*.json"); err != nil {
		return nil, fmt.Errorf("pages: built-in texts: %w", err)
	}
	if cfg.Texts != nil {
		h.texts = append(h.texts, cfg.Texts)
	}
	h.texts = append(h.texts, builtin)
	for _, name := range templates {
		t, err := h.parse(name)
		if err != nil {
			return nil, err
		}
		h.tmpl[name] = t
	}
	css, err := themeCSS(h.cfg.Theme)
	if err != nil {
		return nil, err
	}
	h.themeCSS = css
	if h.assets, err = fs.Sub(assetFS, "assets"); err != nil {
		return nil, fmt.Errorf("pages: assets: %w", err)
	}
	h.routes()
	return h, nil
}

// Must returns h, and panics when err is not nil: for a program's
// start-up, where a Config that New refuses is a bug to fix (like
// template.Must). Never on a request path.
//
//	mux.Handle("/", pages.Must(pages.New(svc, pages.Config{})))
func Must(h *Handler, err error) *Handler {
	if err != nil {
		panic(err)
	}
	return h
}

// parse parses the page template name with the layout and the parts,
// each from the app's Templates when it has the file.
func (h *Handler) parse(name string) (*template.Template, error) {
	t := template.New(name)
	for _, file := range []string{"layout.html", "parts.html", name + ".html"} {
		src, err := h.templateSource(file)
		if err != nil {
			return nil, err
		}
		if _, err := t.New(file).Parse(string(src)); err != nil {
			return nil, fmt.Errorf("pages: template %s: %w", file, err)
		}
	}
	if t.Lookup("layout") == nil || t.Lookup("content") == nil {
		return nil, fmt.Errorf("pages: template %s: needs a \"layout\" (layout.html) and a \"content\" (%s.html)", name, name)
	}
	return t, nil
}

// templateSource reads file from the app's Templates, else the embedded.
func (h *Handler) templateSource(file string) ([]byte, error) {
	if h.cfg.Templates != nil {
		b, err := fs.ReadFile(h.cfg.Templates, file)
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("pages: template %s: %w", file, err)
		}
	}
	b, err := templateFS.ReadFile("templates/" + file)
	if err != nil {
		return nil, fmt.Errorf("pages: template %s: %w", file, err)
	}
	return b, nil
}

// Prefix returns the path the pages are mounted under ("" for the root).
func (h *Handler) Prefix() string { return h.prefix }

// URL returns the path of a page under the prefix, e.g. URL("/login").
func (h *Handler) URL(page string) string { return h.prefix + page }

// ServeHTTP serves the page at r's path; any path under the prefix that is
// not a page answers the HTML 404 page.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			h.log.ErrorContext(r.Context(), "authkit pages: panic", "path", r.URL.Path, "panic", p)
			h.serverError(w, r, h.visit(r).Language())
		}
	}()
	h.mux.ServeHTTP(w, r)
}

// NotFound answers the HTML 404 page, for an app that routes unknown paths
// outside the prefix to it.
func (h *Handler) NotFound(w http.ResponseWriter, r *http.Request) {
	h.notFound(w, r)
}

// secure sets the headers every page and asset carries. Referrer-Policy
// no-referrer keeps the tokens of /verify-email/ and /reset-password/
// URLs from leaking to any other site.
func secure(hd http.Header) {
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// serveAsset serves one embedded asset, or the theme's stylesheet.
func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	secure(w.Header())
	w.Header().Set("Cache-Control", "no-cache")
	if name == "theme.css" {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		http.ServeContent(w, r, name, h.started, bytes.NewReader(h.themeCSS))
		return
	}
	b, err := fs.ReadFile(h.assets, name)
	if err != nil || name != path.Base(name) {
		h.notFound(w, r)
		return
	}
	http.ServeContent(w, r, name, h.started, bytes.NewReader(b))
}

// withQuery adds key=value to the query of target (a path, maybe with a
// query of its own).
func withQuery(target, key, value string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}
