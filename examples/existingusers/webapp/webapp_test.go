package webapp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/authkit-go/authkit/adapters/sqlxstore"
	"github.com/authkit-go/authkit/adapters/sqlxstore/sqlxopen"
	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/clock"
	"github.com/authkit-go/authkit/core/mail"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/totp"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/examples/existingusers/webapp"
)

// The app's users before authkit: bcrypt cost 10 of legacyPassword, the
// address in mixed case.
const (
	legacyEmail    = "Legacy.User@Example.COM"
	legacyHash     = "$2a$10$l1m6S6qi9h8yCgOn1n90juFsd2ofoGoluBO1eHhiKL3Vfqi16lZea"
	legacyPassword = "correct horse battery staple"
	appURL         = "http://app.test"
	// testCost is the bcrypt cost of the tests' hasher; testHash starts
	// the hashes it makes.
	testCost = 4
	testHash = "$2a$04$"
)

// env is the app on a PostgreSQL schema of its own, served by httptest.
type env struct {
	db    *sqlxstore.DB
	app   *webapp.App
	srv   *httptest.Server
	mail  *mail.Capture
	clock *clock.Clock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	base := storetest.ServiceURL(t, storetest.EnvPostgres)
	ctx := context.Background()
	var b [5]byte
	_, _ = rand.Read(b[:])
	schema := "existingusers_" + hex.EncodeToString(b[:])
	admin, err := sqlxopen.Open(ctx, base, sqlxstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if _, err := admin.SQLX().ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.SQLX().ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema) // a runtime parameter of every connection
	u.RawQuery = q.Encode()
	db, err := sqlxopen.Open(ctx, u.String(), webapp.StoreConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })

	// The app as it was: its own table and users, created by its own SQL.
	if _, err := db.SQLX().ExecContext(ctx, webapp.Schema); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQLX().ExecContext(ctx, `INSERT INTO users (email, password_hash, created_at)
		VALUES ($1, $2, '2019-05-01T10:00:00Z'), ('Other@Example.COM', $2, '2020-01-01T00:00:00Z')`, legacyEmail, legacyHash); err != nil {
		t.Fatal(err)
	}

	keys, err := secretbox.NewKeyring(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	// bcrypt at the minimum cost: at the default 12, each hash took
	// seconds under the race detector. The legacy hashes keep their 10, so
	// a login still rehashes them into the app's column (at testCost).
	hasher, err := password.New(password.Config{BcryptCost: testCost, AllowLowCost: true})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{db: db, mail: &mail.Capture{}, clock: clock.New(time.Now())}
	e.app, err = webapp.New(ctx, db, auth.Config{
		Secrets: []string{strings.Repeat("k", 32)}, Keys: keys, AppURL: appURL,
		Mailer: e.mail, Insecure: true, Now: e.clock.Now, Logger: slog.New(slog.DiscardHandler),
		Hasher: hasher,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.app.Close(context.Background()) })
	gin.SetMode(gin.TestMode)
	e.srv = httptest.NewServer(e.app.Handler())
	t.Cleanup(e.srv.Close)
	return e
}

// browser is one client with its cookies.
type browser struct {
	t *testing.T
	e *env
	c *http.Client
}

func (e *env) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t, e, &http.Client{Jar: jar}}
}

// do sends a request (JSON body when body is not nil) and returns the
// status and the decoded JSON answer.
func (b *browser) do(method, path string, body any) (int, map[string]any) {
	b.t.Helper()
	var r io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, b.e.srv.URL+path, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Origin", b.e.srv.URL)
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	_ = dec.Decode(&out)
	return resp.StatusCode, out
}

func (b *browser) must(status int, method, path string, body any) map[string]any {
	b.t.Helper()
	got, out := b.do(method, path, body)
	if got != status {
		b.t.Fatalf("%s %s: %d %v, want %d", method, path, got, out, status)
	}
	return out
}

// link returns the token of the last mail of kind to addr, whose link is
// appURL + page + token.
func (e *env) link(t *testing.T, addr string, kind mail.Kind, page string) string {
	t.Helper()
	if err := e.app.Service().FlushMail(context.Background()); err != nil {
		t.Fatal(err)
	}
	var last *mail.Message
	for _, m := range e.mail.To(addr) {
		if m.Kind == kind {
			last = &m
		}
	}
	if last == nil {
		t.Fatalf("no %s mail to %s", kind, addr)
	}
	tok, ok := strings.CutPrefix(last.Link, appURL+page)
	if !ok {
		t.Fatalf("%s mail link %q", kind, last.Link)
	}
	tok, _ = url.PathUnescape(tok)
	return tok
}

func (e *env) code(t *testing.T, secret string) string {
	t.Helper()
	g, err := totp.New(totp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.Code(secret, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// legacyID is the app's own id of the user from before authkit.
func (e *env) legacyID(t *testing.T) int64 {
	t.Helper()
	var id int64
	if err := e.db.SQLX().GetContext(t.Context(), &id, `SELECT id FROM users WHERE email = $1`, legacyEmail); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestLegacyUser: a user of the app from before authkit logs in with the
// address in any case and the password of their cost-10 bcrypt hash, which
// is replaced in the app's own column; the app's /me gets the app's own
// bigint id; their address counts as verified.
func TestLegacyUser(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.legacyID(t)

	b := e.browser(t)
	if out := b.must(http.StatusOK, "POST", "/api/auth/login", map[string]any{"email": "legacy.user@EXAMPLE.com", "password": legacyPassword}); out["success"] != true {
		t.Fatalf("login = %v, want {success: true}", out)
	}
	var hash, email string
	if err := e.db.SQLX().QueryRowxContext(ctx, `SELECT password_hash, email FROM users WHERE id = $1`, id).Scan(&hash, &email); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, testHash) || email != legacyEmail {
		t.Fatalf("the app's row after login: hash %q, email %q; want a hash at the configured cost and the address unchanged", hash, email)
	}

	me := b.must(http.StatusOK, "GET", "/me", nil)
	if me["id"] != json.Number(strconv.FormatInt(id, 10)) || me["email"] != legacyEmail {
		t.Fatalf("GET /me = %v, want the app's row %d %s", me, id, legacyEmail)
	}
	authMe := b.must(http.StatusOK, "GET", "/api/auth/me", nil)
	if authMe["id"] != strconv.FormatInt(id, 10) || authMe["email"] != "legacy.user@example.com" || authMe["emailVerified"] != true {
		t.Fatalf("GET /api/auth/me = %v", authMe)
	}
	if code, _ := e.browser(t).do("GET", "/me", nil); code != http.StatusUnauthorized {
		t.Fatalf("GET /me without a session: %d, want 401", code)
	}
}

// TestNewUser: a user who registers after authkit arrived gets a row in
// the app's table with the next bigint id, verifies by the mailed link,
// turns 2FA on, resets the password by the mailed link, and logs in with
// the new password and a TOTP code.
func TestNewUser(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const addr, pw, pw2 = "new.user@example.com", "a new user's password", "another password entirely"
	b := e.browser(t)
	b.must(http.StatusOK, "POST", "/api/auth/register", map[string]any{"email": addr, "password": pw, "name": "New User"})
	var id int64
	var hash string
	if err := e.db.SQLX().QueryRowxContext(ctx, `SELECT id, password_hash FROM users WHERE email = $1`, addr).Scan(&id, &hash); err != nil {
		t.Fatalf("the new user's row in the app's table: %v", err)
	}
	if id <= 2 || !strings.HasPrefix(hash, testHash) {
		t.Fatalf("new row: id %d (the app has 1 and 2), hash %q", id, hash)
	}

	b.must(http.StatusOK, "GET", "/api/auth/verify-email/"+url.PathEscape(e.link(t, addr, mail.KindVerifyEmail, "/verify-email/")), nil)
	if me := b.must(http.StatusOK, "GET", "/api/auth/me", nil); me["emailVerified"] != true || me["id"] != strconv.FormatInt(id, 10) {
		t.Fatalf("after verifying: %v", me)
	}

	setup := b.must(http.StatusOK, "POST", "/api/2fa/setup", nil)
	uri, err := url.Parse(setup["qrUri"].(string))
	if err != nil {
		t.Fatal(err)
	}
	secret := uri.Query().Get("secret")
	b.must(http.StatusOK, "POST", "/api/2fa/confirm", map[string]any{"code": e.code(t, secret)})

	b.must(http.StatusOK, "POST", "/api/auth/forgot-password", map[string]any{"email": addr})
	tok := e.link(t, addr, mail.KindResetPassword, "/reset-password/")
	b.must(http.StatusOK, "POST", "/api/auth/reset-password/"+url.PathEscape(tok), map[string]any{"password": pw2, "confirmPassword": pw2})
	if code, _ := b.do("GET", "/me", nil); code != http.StatusUnauthorized {
		t.Fatalf("the session after a reset: GET /me %d, want 401 (a reset ends every session)", code)
	}

	// The old password is gone; the new one and a TOTP code sign in, and
	// the app's handler sees its own id.
	e.clock.Advance(30 * time.Second) // the confirming code's step is used
	c := e.browser(t)
	if code, out := c.do("POST", "/api/auth/login", map[string]any{"email": addr, "password": pw}); code != http.StatusUnauthorized {
		t.Fatalf("login with the old password: %d %v, want 401", code, out)
	}
	if out := c.must(http.StatusOK, "POST", "/api/auth/login", map[string]any{"email": addr, "password": pw2}); out["requiresTwoFactor"] != true {
		t.Fatalf("login with 2FA on = %v, want {requiresTwoFactor: true}", out)
	}
	c.must(http.StatusOK, "POST", "/api/2fa/verify", map[string]any{"code": e.code(t, secret)})
	if me := c.must(http.StatusOK, "GET", "/me", nil); me["id"] != json.Number(strconv.FormatInt(id, 10)) || me["email"] != addr {
		t.Fatalf("GET /me = %v, want the app's row %d", me, id)
	}
	var state struct {
		TwoFactor bool   `db:"two_factor_enabled"`
		Verified  *int64 `db:"email_verified_at"`
		Changed   *int64 `db:"password_changed_at"`
	}
	if err := e.db.SQLX().GetContext(ctx, &state, `SELECT two_factor_enabled, email_verified_at, password_changed_at
		FROM authkit_user_state WHERE user_id = $1`, id); err != nil {
		t.Fatalf("authkit's state row: %v", err)
	}
	if !state.TwoFactor || state.Verified == nil || state.Changed == nil {
		t.Fatalf("authkit's state of user %d: %+v", id, state)
	}
}

// TestRolloutMailsNoNewSignIn: the first login of a user from before
// authkit mails no "New sign-in" (adding authkit would mail every user) and
// is recorded in authkit_sign_ins; a login from another browser afterwards
// is mailed.
func TestRolloutMailsNoNewSignIn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	notices := func() int {
		t.Helper()
		if err := e.app.Service().FlushMail(ctx); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range e.mail.To(legacyEmail) {
			if m.Kind == mail.KindNewSignIn {
				n++
			}
		}
		return n
	}
	login := map[string]any{"email": legacyEmail, "password": legacyPassword}
	first := e.browser(t)
	first.must(http.StatusOK, "POST", "/api/auth/login", login)
	if n := notices(); n != 0 {
		t.Fatalf("%d new_sign_in mails for the first login under authkit, want 0", n)
	}
	var rows int
	if err := e.db.SQLX().GetContext(ctx, &rows, `SELECT COUNT(*) FROM authkit_sign_ins WHERE user_id = (SELECT id::text FROM users WHERE email = $1)`, legacyEmail); err != nil || rows != 1 {
		t.Fatalf("authkit_sign_ins rows of the user: %d, %v; want 1", rows, err)
	}
	first.must(http.StatusOK, "POST", "/api/auth/login", login)
	e.browser(t).must(http.StatusOK, "POST", "/api/auth/login", login)
	if n := notices(); n != 1 {
		t.Fatalf("%d new_sign_in mails after a second browser, want 1", n)
	}
}

// TestDeleteAccountWithNotes: the app's notes point at its users by a
// foreign key. Support's deletion without the app's hook (the CLI's) stops
// with an error naming the constraint and deletes nothing; the user's own
// deletion runs the app's hook, which deletes the notes in the same
// transaction: the user, the notes and authkit's side row are gone.
func TestDeleteAccountWithNotes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.legacyID(t)
	if _, err := e.db.SQLX().ExecContext(ctx, `INSERT INTO notes (user_id, body) VALUES ($1, 'one'), ($1, 'two')`, id); err != nil {
		t.Fatal(err)
	}
	b := e.browser(t)
	b.must(http.StatusOK, "POST", "/api/auth/login", map[string]any{"email": legacyEmail, "password": legacyPassword})

	sp, err := auth.NewSupport(auth.SupportConfig{Users: e.db.Users()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sp.DeleteAccount(ctx, strconv.FormatInt(id, 10), "test: no hook")
	var ref *user.ReferencedError
	if !errors.As(err, &ref) || ref.Constraint != "notes_user_id_fkey" || ref.Table != "notes" ||
		!strings.Contains(err.Error(), "notes_user_id_fkey") {
		t.Fatalf("Support.DeleteAccount without the hook = %v, want a *user.ReferencedError naming notes_user_id_fkey", err)
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := e.db.SQLX().GetContext(ctx, &n, q, id); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count(`SELECT COUNT(*) FROM users WHERE id = $1`) != 1 || count(`SELECT COUNT(*) FROM notes WHERE user_id = $1`) != 2 {
		t.Fatal("a refused deletion deleted something")
	}

	out := b.must(http.StatusOK, "POST", "/api/auth/delete-account", map[string]any{})
	if out["message"] != "Account deleted" {
		t.Fatalf("delete-account = %v", out)
	}
	if count(`SELECT COUNT(*) FROM users WHERE id = $1`) != 0 || count(`SELECT COUNT(*) FROM notes WHERE user_id = $1`) != 0 ||
		count(`SELECT COUNT(*) FROM authkit_user_state WHERE user_id = $1`) != 0 {
		t.Fatal("after the deletion the user, their notes or authkit's side row remain")
	}
	if count(`SELECT COUNT(*) FROM users WHERE id <> $1`) != 1 {
		t.Fatal("the deletion touched another user")
	}
	if code, _ := b.do("GET", "/api/auth/me", nil); code != http.StatusUnauthorized {
		t.Fatalf("GET /api/auth/me after the deletion: %d, want 401", code)
	}
}
