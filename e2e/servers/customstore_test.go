package servers

import (
	"database/sql"
	"io"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/e2e/servertest"
	"github.com/authkit-go/authkit/examples/customstore/accounts"
)

// TestCustomStore runs examples/customstore on a database that already
// holds the app's table and one of its accounts, with a password hash from
// the app's old PHP days: that account signs in, its hash is upgraded in
// the app's pw_hash column, the app's own route reads the app's own
// column, and a new registration lands in the app's table with the app's
// defaults.
func TestCustomStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := accounts.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(accounts.Schema); err != nil {
		t.Fatal(err)
	}
	legacy, err := password.ForTesting().Hash(t.Context(), "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	legacy = strings.Replace(legacy, "$2a$", "$2y$", 1) // PHP's password_hash writes $2y$
	if _, err := db.Exec(`INSERT INTO accounts (account_id, login_email, display_name, pw_hash, created, plan)
		VALUES ('acc_1001', 'ada@example.com', 'Ada Lovelace', ?, '2019-05-01 09:30:00', 'pro')`, legacy); err != nil {
		t.Fatal(err)
	}

	key, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	// BCRYPT_COST= : the server's default cost (12), which the upgrade must reach.
	s := servertest.Start(t, "customstore", "BCRYPT_COST=", "ACCOUNTS_DB="+path, "SESSION_SECRET="+strings.Repeat("s", 32), "ENCRYPTION_KEY="+key)
	if want := "users: accounts table in " + path; !strings.Contains(s.FirstLine, want) {
		t.Errorf("first log line %q lacks %q", s.FirstLine, want)
	}

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	post := func(path, body string) int {
		t.Helper()
		resp, err := c.Post(s.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	hello := func() (int, string) {
		t.Helper()
		resp, err := c.Get(s.URL + "/api/hello")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	if code, _ := hello(); code != 401 {
		t.Fatalf("/api/hello without a session: %d", code)
	}
	if code := post("/api/auth/login", `{"email":"Ada@Example.com","password":"wrong password"}`); code != 401 {
		t.Fatalf("login with a wrong password: %d", code)
	}
	var failures int
	if err := db.QueryRow(`SELECT failed_logins FROM accounts WHERE account_id = 'acc_1001'`).Scan(&failures); err != nil || failures != 1 {
		t.Fatalf("failed_logins = %d, %v; want 1", failures, err)
	}
	if code := post("/api/auth/login", `{"email":"Ada@Example.com","password":"correct horse battery"}`); code != 200 {
		t.Fatalf("login of the app's existing account: %d", code)
	}
	if code, body := hello(); code != 200 || body != "Hello, Ada Lovelace (plan: pro)\n" {
		t.Fatalf("/api/hello: %d %q", code, body)
	}
	var hash string
	if err := db.QueryRow(`SELECT pw_hash, failed_logins FROM accounts WHERE account_id = 'acc_1001'`).Scan(&hash, &failures); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, "$2a$12$") || failures != 0 {
		t.Fatalf("after login: pw_hash %q (want the cost-4 $2y$ hash upgraded to $2a$12$), failed_logins %d", hash, failures)
	}

	if code := post("/api/auth/logout", `{}`); code != 200 {
		t.Fatalf("logout: %d", code)
	}
	if code := post("/api/auth/register", `{"email":"grace@example.com","password":"another good one","name":"Grace"}`); code != 200 {
		t.Fatalf("register: %d", code)
	}
	if code, body := hello(); code != 200 || body != "Hello, Grace (plan: free)\n" {
		t.Fatalf("/api/hello as the new user: %d %q", code, body)
	}
	var name, plan, created string
	var confirmed sql.NullInt64
	if err := db.QueryRow(`SELECT display_name, plan, created, email_confirmed_ms FROM accounts WHERE login_email = 'grace@example.com'`).
		Scan(&name, &plan, &created, &confirmed); err != nil {
		t.Fatal(err)
	}
	if name != "Grace" || plan != "free" || len(created) != len("2006-01-02 15:04:05.000") || confirmed.Valid {
		t.Fatalf("registered row: display_name %q plan %q created %q email_confirmed_ms %v", name, plan, created, confirmed)
	}

	if err := s.Stop(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}
