package passkeys_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/store"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/passkeys"
	"github.com/authkit-go/authkit/passkeys/passkeystest"
)

const (
	origin = "http://localhost"
	goodPW = "correct horse battery staple"
)

// env is a Service over a memory store with the passkeys handler, as an
// app mounts them, with a settable clock, captured mail and audit events.
type env struct {
	t     testing.TB
	cfg   auth.Config // svc's, for another instance of the app
	svc   *auth.Service
	h     *passkeys.Handler
	mux   *http.ServeMux
	users *store.Memory
	mail  *mail.Capture
	audit authtest.AuditLog
	mu    sync.Mutex // guards now
	now   time.Time
}

func newEnv(t testing.TB, change func(*passkeys.Config), changeCore func(*auth.Config)) *env {
	t.Helper()
	e := &env{t: t, now: time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)}
	e.users = store.NewMemory(store.MemoryConfig{Now: e.clock})
	e.svc, e.mail = authtest.NewService(t, e.users, func(c *auth.Config) {
		c.AppURL, c.Now, c.Audit = origin, e.clock, e.audit.Record
		if changeCore != nil {
			changeCore(c)
		}
		e.cfg = *c
	})
	pc := passkeys.Config{RPID: "localhost", RPDisplayName: "Test", Origins: []string{origin}, Now: e.clock}
	if change != nil {
		change(&pc)
	}
	var err error
	e.h, err = passkeys.New(e.svc, pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.h.Close() })
	e.mux = serve(e.svc)
	return e
}

// serve serves svc's routes, the passkey routes among them, as
// nethttpauth.Handler does: a known path with another method 405, any
// other path 404, as JSON.
func serve(svc *auth.Service) *http.ServeMux {
	mux := http.NewServeMux()
	for _, p := range svc.Modules().Paths() {
		for _, rt := range p.Routes {
			mux.HandleFunc(rt.Method+" "+rt.Pattern, func(w http.ResponseWriter, r *http.Request) {
				resp := svc.Modules().Handle(rt, auth.HTTPRequest(r, nil))
				resp.Write(w)
			})
		}
		mux.HandleFunc(p.Pattern, func(w http.ResponseWriter, r *http.Request) {
			resp := svc.Modules().MethodNotAllowed(auth.HTTPRequest(r, nil), p.Allow)
			resp.Write(w)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		resp := svc.Modules().NotFound(auth.HTTPRequest(r, nil))
		resp.Write(w)
	})
	return mux
}

func (e *env) clock() time.Time { e.mu.Lock(); defer e.mu.Unlock(); return e.now }

func (e *env) advance(d time.Duration) { e.mu.Lock(); e.now = e.now.Add(d); e.mu.Unlock() }

// mails returns the mails of kind sent so far.
func (e *env) mails(kind mail.Kind) []mail.Message {
	e.t.Helper()
	if err := e.svc.FlushMail(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	var out []mail.Message
	for _, m := range e.mail.Messages() {
		if m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

// client is one browser: its cookies, carried from request to request.
type client struct {
	e       *env
	mu      sync.Mutex
	cookies map[string]string
}

func (e *env) client() *client { return &client{e: e, cookies: map[string]string{}} }

// reply is one answer.
type reply struct {
	status  int
	body    []byte
	cookies []*http.Cookie
}

func (r reply) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer %d %s is not a JSON object: %v", r.status, r.body, err)
	}
	return m
}

// do sends one request from c (from the site's own origin) and keeps the
// cookies it sets.
func (c *client) do(method, path string, body any) reply {
	c.e.t.Helper()
	return c.doT(c.e.t, method, path, body)
}

// doT is do reporting to t (a fuzz target's own).
func (c *client) doT(t testing.TB, method, path string, body any) reply {
	t.Helper()
	var rd *bytes.Reader
	switch b := body.(type) {
	case nil:
		rd = bytes.NewReader(nil)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, origin+path, rd)
	req.RemoteAddr = "192.0.2.7:4711"
	req.Header.Set("Content-Type", "application/json")
	if method != http.MethodGet {
		req.Header.Set("Origin", origin)
	}
	rec := c.serve(req)
	res := rec.Result()
	r := reply{status: res.StatusCode, body: rec.Body.Bytes(), cookies: res.Cookies()}
	c.mu.Lock()
	for _, ck := range r.cookies {
		if ck.MaxAge < 0 {
			delete(c.cookies, ck.Name)
		} else {
			c.cookies[ck.Name] = ck.Value
		}
	}
	c.mu.Unlock()
	return r
}

func (c *client) cookie(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cookies[name]
}

// clone is a second browser with c's cookies (an attacker's copy).
func (c *client) clone() *client {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.e.client()
	for k, v := range c.cookies {
		d.cookies[k] = v
	}
	return d
}

// want checks an answer's status and, for an error, its code.
func want(t testing.TB, what string, r reply, status int, code auth.Code) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d (%s), want %d", what, r.status, r.body, status)
	}
	if code == "" {
		return
	}
	var body struct {
		Error string    `json:"error"`
		Code  auth.Code `json:"code"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil || body.Code != code || body.Error == "" {
		t.Fatalf("%s: body %s, want code %q with a text", what, r.body, code)
	}
}

// signUp registers email on a new client, which is then signed in and
// recently authenticated, and marks the address verified in the store (a
// passkey needs a verified address; passkeystest follows the mailed link).
func (e *env) signUp(email string) (*client, *user.User) {
	e.t.Helper()
	c := e.client()
	r := c.do(http.MethodPost, "/api/auth/register", map[string]string{"email": email, "password": goodPW, "name": "Ada"})
	if r.status != http.StatusCreated && r.status != http.StatusOK {
		e.t.Fatalf("register: %d %s", r.status, r.body)
	}
	u, err := e.users.ByEmail(context.Background(), email)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.users.VerifyEmail(context.Background(), u.ID, email, e.clock()); err != nil {
		e.t.Fatal(err)
	}
	if u, err = e.users.ByID(context.Background(), u.ID); err != nil {
		e.t.Fatal(err)
	}
	return c, u
}

// addPasskey registers a passkey of a on c, named name.
func (e *env) addPasskey(c *client, a *passkeystest.Authenticator, name string) (*passkeystest.Credential, map[string]any) {
	e.t.Helper()
	begin := c.do(http.MethodPost, passkeys.Prefix+"/register/begin", nil)
	want(e.t, "register/begin", begin, http.StatusOK, "")
	cred, k := a.Create(begin.body, origin)
	cred["name"] = name
	fin := c.do(http.MethodPost, passkeys.Prefix+"/register/finish", cred)
	want(e.t, "register/finish", fin, http.StatusOK, "")
	return k, fin.json(e.t)
}

// signedInAs returns the id of c's signed-in user, "" for none.
func (c *client) signedInAs() string {
	r := c.do(http.MethodGet, "/api/auth/me", nil)
	if r.status != http.StatusOK {
		return ""
	}
	var me struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(r.body, &me)
	return me.ID
}

// passwordless signs c in with a (its newest key, or k), from from.
func (e *env) passwordless(c *client, a *passkeystest.Authenticator, k *passkeystest.Credential, from string) reply {
	e.t.Helper()
	begin := c.do(http.MethodPost, passkeys.Prefix+"/login/begin", nil)
	want(e.t, "login/begin", begin, http.StatusOK, "")
	return c.do(http.MethodPost, passkeys.Prefix+"/login/finish", a.Get(begin.body, from, k))
}

// doFrom sends a request with another Origin header.
func (c *client) doFrom(from, method, path string) reply {
	req := httptest.NewRequest(method, origin+path, bytes.NewReader([]byte("{}")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", from)
	rec := c.serve(req)
	return reply{status: rec.Code, body: rec.Body.Bytes()}
}

// serve sends req with the client's cookies to the app and returns the
// recorded answer.
func (c *client) serve(req *http.Request) *httptest.ResponseRecorder {
	c.addCookies(req)
	rec := httptest.NewRecorder()
	c.e.mux.ServeHTTP(rec, req)
	return rec
}

// addCookies adds the cookies the client holds to req, as a browser does.
func (c *client) addCookies(req *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func unb64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("base64url %q: %v", s, err)
	}
	return b
}
