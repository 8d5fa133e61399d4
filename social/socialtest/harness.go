package socialtest

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/social"
)

// The suite signs in at a real OpenID provider: zitadel/oidc's op package
// (social/testdata/oidcprovider), built once per test process and started as a
// process per test, with the accounts below. Its login page is a form the
// browser posts.

// provider is this test process's build of the provider: one go build
// per process, however many Runs and StartProviders it makes.
var provider struct {
	once sync.Once
	bin  string
	err  error
}

// buildProvider builds the provider once per test process and returns
// the binary. It is kept at a path of its own per source folder in the
// temporary folder (authkit-socialtest/), so that go build, finding it up
// to date, links it again only when its code changed (a link costs
// seconds of CPU, and the suite runs many times in one CI run); go build
// moves the new binary into place with one rename. Where that folder
// cannot be made, a folder of this process's own. The provider's source
// is found beside this package, wherever the go command says it is, so
// the suite runs from any module of the repository's workspace.
func buildProvider(t *testing.T) string {
	t.Helper()
	provider.once.Do(func() {
		// The go command names this package's folder, however the test
		// binary was built: with -trimpath its source file names are
		// import paths, not places on disk.
		dir, err := exec.Command("go", "list", "-f", "{{.Dir}}", reflect.TypeFor[account]().PkgPath()).Output()
		if err != nil {
			provider.err = fmt.Errorf("socialtest: locate the provider's source: %w", err)
			return
		}
		src := filepath.Join(strings.TrimSpace(string(dir)), "..", "testdata", "oidcprovider")
		sum := sha256.Sum256([]byte(src))
		out := filepath.Join(os.TempDir(), "authkit-socialtest", hex.EncodeToString(sum[:6]))
		if err := os.MkdirAll(out, 0o700); err != nil {
			if out, err = os.MkdirTemp("", "authkit-socialtest-"); err != nil {
				provider.err = err
				return
			}
		}
		provider.bin = filepath.Join(out, "oidcprovider")
		build := exec.Command("go", "build", "-o", provider.bin, ".")
		build.Dir = src
		build.Env = append(os.Environ(), "GOWORK=off")
		if msg, err := build.CombinedOutput(); err != nil {
			provider.err = fmt.Errorf("build the OpenID provider: %w\n%s", err, msg)
		}
	})
	if provider.err != nil {
		t.Fatal(provider.err)
	}
	return provider.bin
}

// An account at the provider.
type account struct {
	ID            string
	Username      string
	Password      string
	FirstName     string
	LastName      string
	Email         string
	EmailVerified bool
}

// The provider's accounts: subjects are their IDs.
var (
	alice   = account{ID: "sub-alice", Username: "alice", Password: "alice-pw", FirstName: "Alice", LastName: "Liddell", Email: "alice@example.com", EmailVerified: true}
	bob     = account{ID: "sub-bob", Username: "bob", Password: "bob-pw", FirstName: "Bob", LastName: "B", Email: "bob@example.com", EmailVerified: true}
	mallory = account{ID: "sub-mallory", Username: "mallory", Password: "mallory-pw", FirstName: "Mal", LastName: "Lory", Email: "victim@example.com", EmailVerified: false}
	// eve's provider vouches for victim@example.com (verified), but the
	// test provider is not authoritative for it unless a test says so.
	eve = account{ID: "sub-eve", Username: "eve", Password: "eve-pw", FirstName: "Eve", LastName: "E", Email: "victim@example.com", EmailVerified: true}
	// relay hides their address behind an Apple private relay one.
	relay = account{ID: "sub-relay", Username: "relay", Password: "relay-pw", FirstName: "Re", LastName: "Lay", Email: "x7k2q9@" + social.ApplePrivateRelay, EmailVerified: true}
)

// StartProvider builds the suite's real OpenID provider (zitadel/oidc's
// op package, social/testdata/oidcprovider) (once per test process) and
// runs it for the confidential client "web" (secret "secret") whose
// redirect URI is redirect, until t ends. It returns the issuer URL. Its
// accounts sign in on its login form (#username, #password) as alice
// (password "alice-pw", alice@example.com, verified), bob ("bob-pw",
// bob@example.com, verified), mallory ("mallory-pw", victim@example.com,
// not verified) and eve ("eve-pw", victim@example.com, verified). For an
// app's or a browser's tests of social sign-in against a real provider.
func StartProvider(t *testing.T, redirect string) (issuer string) {
	t.Helper()
	issuer, _ = startProvider(t, buildProvider(t), redirect)
	return issuer
}

// startProvider runs the provider for a client whose redirect URI is
// redirect and returns its issuer and a function that stops it.
func startProvider(t *testing.T, bin, redirect string, flags ...string) (issuer string, stop func()) {
	t.Helper()
	users := map[string]account{}
	for _, a := range []account{alice, bob, mallory, eve, relay} {
		users[a.ID] = a
	}
	file := filepath.Join(t.TempDir(), "users.json")
	b, _ := json.Marshal(users)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"-users", file, "-client", "web:secret", "-redirect", redirect}, flags...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) }
	t.Cleanup(stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the provider printed no issuer: %v", err)
	}
	return strings.TrimSpace(line), stop
}

// env is an app served by the harness's framework with the social module
// and one provider, "test", at the real OpenID provider. The app's URL is
// known before the Service (AppURL, the redirect URI registered at the
// provider): it is a reverse proxy in front of the framework's server,
// passing every request and answer through unchanged (Host included).
type env struct {
	t        *testing.T
	app      *httptest.Server
	issuer   string
	stop     func() // stops the provider
	svc      *auth.Service
	h        *social.Handler
	users    users
	mail     *mail.Capture
	audit    authtest.AuditLog
	callback string // the redirect URI
}

// users is the user store as the suite uses it: core's parts, the
// identities and the passkeys.
type users interface {
	user.Store
	user.Identities
	user.Passkeys
}

type options struct {
	apple         bool // the provider answers as Apple, the app uses the social.Apple preset
	authoritative []string
	core          func(*auth.Config)
	appRedirects  []string // social.Config.AppRedirects
}

func newEnv(t *testing.T, h Harness, o options) *env {
	t.Helper()
	e := &env{t: t, mail: &mail.Capture{}}
	var handler http.Handler
	e.app = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(e.app.Close)
	e.callback = e.app.URL + social.Prefix + "/test/callback"
	var appleKey *ecdsa.PrivateKey
	if o.apple {
		var flags []string
		appleKey, flags = appleFlags(t)
		e.issuer, e.stop = startProvider(t, h.bin, e.callback, flags...)
	} else {
		e.issuer, e.stop = startProvider(t, h.bin, e.callback)
	}
	if h.NewUsers == nil {
		e.users = store.NewMemory(store.MemoryConfig{})
	} else {
		u, ok := h.NewUsers(t).(users)
		if !ok {
			t.Fatal("socialtest: Harness.NewUsers's store does not implement user.Identities and user.Passkeys")
		}
		e.users = u
	}
	key, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secretbox.ParseKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := auth.Config{
		Users: e.users, Secrets: []string{strings.Repeat("s", 32)}, Keys: keys, AppURL: e.app.URL,
		Insecure: true, Mailer: e.mail, Hasher: password.ForTesting(),
		Audit: e.audit.Record,
	}
	if o.core != nil {
		o.core(&cfg)
	}
	if e.svc, err = auth.New(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.svc.Close(context.Background()) })
	prov, err := social.NewOIDC(social.OIDCConfig{Issuer: e.issuer, ClientID: "web", ClientSecret: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	pc := social.ProviderConfig{Name: "test", Label: providerLabel, Provider: prov, Authoritative: o.authoritative}
	if o.apple {
		// The preset as an app configures it, at the test provider's
		// issuer, under the suite's provider name.
		if pc, err = social.Apple(social.AppleConfig{ClientID: "web", TeamID: appleTeam, KeyID: appleKID, PrivateKey: appleKey, Issuer: e.issuer}); err != nil {
			t.Fatal(err)
		}
		pc.Name, pc.Label = "test", providerLabel
	}
	var states onetime.Store
	if h.NewStates != nil {
		states = h.NewStates(t)
	}
	e.h, err = social.New(e.svc, social.Config{AppURL: e.app.URL, Logger: slog.New(slog.DiscardHandler), States: states,
		Providers:    []social.ProviderConfig{pc},
		AppRedirects: o.appRedirects})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.h.Close() })
	target, err := url.Parse(h.Start(t, e.svc))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	handler = proxy
	return e
}

// providerLabel is the test provider's Label, which the notices name.
const providerLabel = "Test Provider"

// mails returns the messages of kind mailed to to so far (the queue
// flushed first).
func (e *env) mails(kind mail.Kind, to string) []mail.Message {
	e.t.Helper()
	if err := e.svc.FlushMail(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	var out []mail.Message
	for _, m := range e.mail.To(to) {
		if m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

// wantNotice checks that exactly n notices of kind, naming the test
// provider, went to to.
func (e *env) wantNotice(kind mail.Kind, to string, n int) {
	e.t.Helper()
	ms := e.mails(kind, to)
	if len(ms) != n {
		e.t.Fatalf("%d %s mails to %s, want %d", len(ms), kind, to, n)
	}
	for _, m := range ms {
		if !strings.Contains(m.Subject, providerLabel) || !strings.Contains(m.Text, providerLabel) {
			e.t.Fatalf("%s mail %q does not name the provider %q:\n%s", kind, m.Subject, providerLabel, m.Text)
		}
	}
}

// local creates an account with a password, verified or not.
func (e *env) local(email string, verified bool) *user.User {
	e.t.Helper()
	hash, err := password.ForTesting().Hash(context.Background(), "local password 1")
	if err != nil {
		e.t.Fatal(err)
	}
	u, err := e.users.Create(context.Background(), &user.User{Email: email, Name: "Local", PasswordHash: hash})
	if err != nil {
		e.t.Fatal(err)
	}
	if verified {
		if err := e.users.VerifyEmail(context.Background(), u.ID, email, u.CreatedAt); err != nil {
			e.t.Fatal(err)
		}
	}
	return u
}

func (e *env) identities(userID string) []*user.Identity {
	e.t.Helper()
	ids, err := e.users.ListIdentities(context.Background(), userID)
	if err != nil {
		e.t.Fatal(err)
	}
	return ids
}

func (e *env) userCount() int {
	e.t.Helper()
	n := 0
	for _, em := range []string{alice.Email, bob.Email, mallory.Email} {
		if _, err := e.users.ByEmail(context.Background(), em); err == nil {
			n++
		}
	}
	return n
}

// browser is a cookie jar that follows the provider's redirects and stops
// at every redirect to the app, so each answer of the app is seen.
type browser struct {
	t   *testing.T
	e   *env
	c   *http.Client
	app *url.URL
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	app, _ := url.Parse(e.app.URL)
	b := &browser{t: e.t, e: e, app: app}
	b.c = &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Host == app.Host || (req.URL.Scheme != "http" && req.URL.Scheme != "https") { // the app's own, or a native app's
			return http.ErrUseLastResponse
		}
		return nil
	}}
	return b
}

func (b *browser) do(method, target string, form url.Values) *http.Response {
	b.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = b.e.app.URL + target
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, target, err)
	}
	b.t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func (b *browser) get(target string) *http.Response { return b.do(http.MethodGet, target, nil) }

// signInAt starts a sign-in at the app (start path and query), signs in
// at the provider as a, and returns the callback URL the provider sends
// the browser to, not yet visited.
func (b *browser) signInAt(start string, a account) string {
	b.t.Helper()
	page := b.get(start)
	if page.StatusCode != http.StatusOK || page.Request.URL.Host == b.app.Host {
		b.t.Fatalf("GET %s ended at %s with %d, want the provider's login page", start, page.Request.URL, page.StatusCode)
	}
	id := page.Request.URL.Query().Get("authRequestID")
	if id == "" {
		b.t.Fatalf("the provider's login page %s has no authRequestID", page.Request.URL)
	}
	login := *page.Request.URL
	login.RawQuery = ""
	resp := b.do(http.MethodPost, login.String(), url.Values{"username": {a.Username}, "password": {a.Password}, "id": {id}})
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, b.e.callback+"?") {
		body, _ := io.ReadAll(resp.Body)
		b.t.Fatalf("the provider's login answered %d to %q, want 302 to the callback (%s)", resp.StatusCode, loc, body)
	}
	return loc
}

// signIn is signInAt the default start, then the callback; it returns the
// callback's answer.
func (b *browser) signIn(a account) *http.Response {
	b.t.Helper()
	return b.get(b.signInAt(social.Prefix+"/test/start", a))
}

// wantRedirect checks a 303 (or status) to location.
func wantRedirect(t *testing.T, resp *http.Response, status int, location string) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("Location") != location {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %d to %q, want %d to %q (%s)", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, resp.Header.Get("Location"), status, location, body)
	}
}

// me is GET /api/auth/me's status and, on 200, the user's id.
func (b *browser) me() (int, string) {
	b.t.Helper()
	resp := b.get("/api/auth/me")
	var body struct {
		ID string `json:"id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.ID
}
