package pages

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
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/clock"
	"github.com/authkit-go/authkit/core/i18n"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
)

// env is one Service with its pages behind an httptest server, the
// store, the captured mail and the clock: every test starts clean.
type env struct {
	t     *testing.T
	svc   *auth.Service
	pages *Handler
	users *store.Memory
	mail  *mail.Capture
	clock *clock.Clock
	srv   *httptest.Server
}

// setup makes an env; change adjusts the Service's and the pages' Config.
func setup(t *testing.T, change func(*auth.Config, *Config)) *env {
	t.Helper()
	e := &env{t: t, clock: clock.New(time.Date(2031, 3, 14, 15, 9, 0, 0, time.UTC))}
	e.users = store.NewMemory(store.MemoryConfig{Now: e.clock.Now})
	pcfg := Config{Logger: slog.New(slog.DiscardHandler)}
	e.svc, e.mail = authtest.NewService(t, e.users, func(c *auth.Config) {
		c.Now = e.clock.Now
		if change != nil {
			change(c, &pcfg)
		}
	})
	var err error
	if e.pages, err = New(e.svc, pcfg); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(cmpOr(e.pages.Prefix()+"/", "/"), e.pages)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	return e
}

func cmpOr(a, b string) string {
	if a == "/" || a == "" {
		return b
	}
	return a
}

// german makes the Service answer German to Accept-Language: de.
func german(c *auth.Config, _ *Config) {
	cat := i18n.New()
	if err := cat.Add(i18n.German()); err != nil {
		panic(err)
	}
	c.Catalog = cat
}

// catalog returns a catalog of the one language l.
func catalog(t *testing.T, l i18n.Language) *i18n.Catalog {
	t.Helper()
	cat := i18n.New()
	if err := cat.Add(l); err != nil {
		t.Fatal(err)
	}
	return cat
}

// browser is a client with a cookie jar that does not follow redirects,
// so tests see each 303.
type browser struct {
	e      *env
	c      *http.Client
	header http.Header // sent with every request
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, header: http.Header{}, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is one answer.
type page struct {
	Status int
	Header http.Header
	Body   string
	URL    string
}

func (b *browser) do(method, path string, form url.Values) *page {
	b.e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.e.srv.URL+path, body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	for k, v := range b.header {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return &page{Status: res.StatusCode, Header: res.Header, Body: string(raw), URL: path}
}

func (b *browser) get(path string) *page { return b.do("GET", path, nil) }

func (b *browser) post(path string, form url.Values) *page { return b.do("POST", path, form) }

// cookie returns the jar's value of the named cookie for the server.
func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.e.srv.URL)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// wantRedirect checks a 303 to target.
func (p *page) wantRedirect(t *testing.T, target string) {
	t.Helper()
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != target {
		t.Fatalf("%s: %d to %q, want 303 to %q\n%s", p.URL, p.Status, p.Header.Get("Location"), target, p.Body)
	}
}

// wantPage checks the status and that the page is the template name.
func (p *page) wantPage(t *testing.T, status int, name string) {
	t.Helper()
	if p.Status != status || !strings.Contains(p.Body, `data-page="`+name+`"`) {
		t.Fatalf("%s: %d, want %d and page %s\n%s", p.URL, p.Status, status, name, p.Body)
	}
}

// fieldError returns the error shown beside the input id, checking that
// the input points at it (aria-invalid, aria-describedby).
func (p *page) fieldError(t *testing.T, id string) string {
	t.Helper()
	m := regexp.MustCompile(`<p class="field-error" id="` + regexp.QuoteMeta(id) + `-error">([^<]*)</p>`).FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("%s: no error beside #%s\n%s", p.URL, id, p.Body)
	}
	input := regexp.MustCompile(`<input id="` + regexp.QuoteMeta(id) + `"[^>]*>`).FindString(p.Body)
	if !strings.Contains(input, `aria-invalid="true"`) || !strings.Contains(input, `aria-describedby="`+id+`-error"`) {
		t.Errorf("%s: #%s is not marked invalid and described by its error: %s", p.URL, id, input)
	}
	return unescape(m[1])
}

// summary returns the texts of the error summary.
func (p *page) summary(t *testing.T) []string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<div class="error-summary"[^>]*role="alert"[^>]*>.*?<ul>(.*?)</ul>`).FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("%s: no error summary\n%s", p.URL, p.Body)
	}
	var out []string
	for _, li := range regexp.MustCompile(`<li>(?:<a href="#[^"]+">)?([^<]*)`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, unescape(li[1]))
	}
	return out
}

// text returns the text of the element with the given id (no markup in it).
func (p *page) text(t *testing.T, id string) string {
	t.Helper()
	m := regexp.MustCompile(`id="` + regexp.QuoteMeta(id) + `"[^>]*>([^<]*)<`).FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("%s: no #%s\n%s", p.URL, id, p.Body)
	}
	return unescape(m[1])
}

func unescape(s string) string {
	return strings.NewReplacer("&#39;", "'", "&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`).Replace(s)
}

func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

const (
	adaEmail = "ada@example.com"
	adaPass  = "correct horse battery"
)

// register registers Ada through the register page.
func (b *browser) register() {
	b.e.t.Helper()
	b.post("/register", form("name", "Ada", "email", adaEmail, "password", adaPass)).wantRedirect(b.e.t, "/dashboard?done=registered")
}

// user reads Ada's record from the store.
func (e *env) user(email string) *user.User {
	e.t.Helper()
	u, err := e.users.ByEmail(context.Background(), email)
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// mailed returns the links of kind ("verify-email", "reset-password") in
// the mails sent so far, as paths of the test server.
func (e *env) mailed(kind string) []string {
	e.t.Helper()
	e.flushMail()
	var out []string
	re := regexp.MustCompile(`http://app\.test(/[^\s"<>]*` + kind + `/[A-Za-z0-9_-]+)`)
	for _, m := range e.mail.Messages() {
		if l := re.FindStringSubmatch(m.Text); l != nil {
			out = append(out, l[1])
		}
	}
	return out
}

// flushMail hands the Service's queued mail to the capture.
func (e *env) flushMail() {
	e.t.Helper()
	if err := e.svc.FlushMail(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// enableTwoFactor turns 2FA on through the security page and returns the
// secret and the recovery codes.
func (b *browser) enableTwoFactor() (secret string, codes []string) {
	t := b.e.t
	t.Helper()
	_, uri, secret := b.startTwoFactor()
	p := b.post("/settings/2fa/confirm", form("code", b.e.code(secret), "uri", uri))
	p.wantPage(t, http.StatusOK, "security")
	for _, li := range regexp.MustCompile(`<li>([0-9a-z]{8}-[0-9a-z]{8})</li>`).FindAllStringSubmatch(p.Body, -1) {
		codes = append(codes, li[1])
	}
	if len(codes) != 8 {
		t.Fatalf("confirm: %d recovery codes shown, want 8\n%s", len(codes), p.Body)
	}
	b.e.clock.Advance(30 * time.Second) // the next login needs the next step's code
	return secret, codes
}

// code is the TOTP code of secret now.
func (e *env) code(secret string) string {
	e.t.Helper()
	tp, err := totp.New(totp.Config{})
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := tp.Code(secret, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// resetLink registers an account in e through a browser of its own and
// returns the path of the reset link mailed to it.
func resetLink(t *testing.T, e *env) string {
	t.Helper()
	b := e.browser()
	b.post("/register", form("name", "Reset", "email", "reset@example.com", "password", adaPass))
	b.post("/forgot-password", form("email", "reset@example.com"))
	links := e.mailed("reset-password")
	if len(links) == 0 {
		t.Fatal("no reset link mailed")
	}
	return links[len(links)-1]
}
