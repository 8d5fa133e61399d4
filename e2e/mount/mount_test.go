// Package mount proves the one-line mounts of the pages module under a
// prefix on each framework (pages/README.md, "Mount it"): the pages, their
// links, forms, assets, redirects and the mailed links all under /auth,
// beside authkit's JSON routes.
package mount

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v2"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/e2e/internal/frameworks"
	"github.com/authkit-go/authkit/fiberauth"
	"github.com/authkit-go/authkit/ginauth"
	"github.com/authkit-go/authkit/nethttpauth"
	"github.com/authkit-go/authkit/pages"
)

// mounts serve svc's JSON routes and its pages under /auth on one
// framework, and return the server's base URL.
var mounts = map[string]func(t *testing.T, svc *auth.Service, p *pages.Handler) string{
	"nethttp": func(t *testing.T, svc *auth.Service, p *pages.Handler) string {
		mux := http.NewServeMux()
		nethttpauth.Mount(mux, svc, "")
		mux.Handle("/auth/", p)
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv.URL
	},
	"gin": func(t *testing.T, svc *auth.Service, p *pages.Handler) string {
		gin.SetMode(gin.ReleaseMode)
		r := ginauth.New(svc)
		r.Any("/auth/*page", gin.WrapH(p))
		srv := httptest.NewServer(r)
		t.Cleanup(srv.Close)
		return srv.URL
	},
	"fiber": func(t *testing.T, svc *auth.Service, p *pages.Handler) string {
		app := fiber.New(fiberauth.ApplyConfig(svc, fiber.Config{DisableStartupMessage: true}))
		fiberauth.Register(app, svc)
		app.All("/auth/*", fiberauth.HTTPHandler(p))
		return frameworks.ServeFiber(t, app)
	},
}

func TestPagesUnderAPrefix(t *testing.T) {
	for name, mount := range mounts {
		t.Run(name, func(t *testing.T) {
			key, _ := secretbox.GenerateKey()
			keys, _ := secretbox.ParseKeyring(key)
			mails := &mail.Capture{}
			cfg := auth.Config{Users: store.NewMemory(store.MemoryConfig{}), Keys: keys, Secrets: []string{strings.Repeat("s", 32)},
				AppURL: "http://app.test", Mailer: mails, Hasher: password.ForTesting(), Insecure: true, Logger: slog.New(slog.DiscardHandler)}
			cfg.VerifyEmailPath, cfg.ResetPasswordPath = pages.MailLinks("/auth")
			svc, err := auth.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { svc.Close(context.Background()) })
			p, err := pages.New(svc, pages.Config{Prefix: "/auth", Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			base := mount(t, svc, p)
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			do := func(method, path string, form url.Values) (int, http.Header, string) {
				t.Helper()
				var body io.Reader
				if form != nil {
					body = strings.NewReader(form.Encode())
				}
				req, _ := http.NewRequest(method, base+path, body)
				if form != nil {
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				}
				res, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res.StatusCode, res.Header, string(b)
			}

			status, _, body := do("GET", "/auth/login", nil)
			if status != 200 || !strings.Contains(body, `<form id="login-form" method="post" action="/auth/login">`) ||
				!strings.Contains(body, `<script src="/auth/assets/app.js" defer></script>`) {
				t.Fatalf("GET /auth/login: %d\n%s", status, body)
			}
			if status, h, _ := do("GET", "/auth/assets/app.css", nil); status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/css") {
				t.Errorf("GET /auth/assets/app.css: %d %s", status, h.Get("Content-Type"))
			}
			status, h, body := do("POST", "/auth/register", url.Values{"name": {"Ada"}, "email": {"ada@example.com"}, "password": {"correct horse"}})
			if status != http.StatusSeeOther || h.Get("Location") != "/auth/dashboard?done=registered" || !strings.Contains(h.Get("Set-Cookie"), "authkit_session=") {
				t.Fatalf("POST /auth/register: %d to %q, Set-Cookie %q\n%s", status, h.Get("Location"), h.Get("Set-Cookie"), body)
			}
			if status, _, body := do("GET", "/auth/dashboard", nil); status != 200 || !strings.Contains(body, `<dd id="user-email">ada@example.com</dd>`) {
				t.Fatalf("GET /auth/dashboard: %d\n%s", status, body)
			}
			// The JSON routes answer beside the pages, with the same session.
			if status, _, body := do("GET", "/api/auth/me", nil); status != 200 || !strings.Contains(body, `"email":"ada@example.com"`) {
				t.Errorf("GET /api/auth/me: %d %s", status, body)
			}
			if err := svc.FlushMail(context.Background()); err != nil {
				t.Fatal(err)
			}
			m, _ := mails.Last()
			link := regexp.MustCompile(`http://app\.test(/auth/verify-email/[A-Za-z0-9_-]+)`).FindStringSubmatch(m.Text)
			if link == nil {
				t.Fatalf("the mailed link does not open the pages under /auth:\n%s", m.Text)
			}
			if status, h, _ := do("GET", link[1], nil); status != http.StatusSeeOther || h.Get("Location") != "/auth/dashboard?done=email-verified" {
				t.Errorf("GET %s: %d to %q", link[1], status, h.Get("Location"))
			}
			if status, _, body := do("GET", "/auth/no/such-page", nil); status != 404 || !strings.Contains(body, "<title>Page not found · authkit</title>") {
				t.Errorf("GET /auth/no/such-page: %d\n%s", status, body)
			}
			if status, h, _ := do("POST", "/auth/logout", url.Values{}); status != http.StatusSeeOther || h.Get("Location") != "/auth/login?done=logged-out" {
				t.Errorf("POST /auth/logout: %d to %q", status, h.Get("Location"))
			}
		})
	}
}
