package servers

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/jmoiron/sqlx"

	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/e2e/servertest"
	"github.com/authkit-go/authkit/examples/existingusers/webapp"
)

// TestExistingUsers runs examples/existingusers as a process on a
// PostgreSQL schema of its own that already holds the app's users table
// and a user with a bcrypt cost-10 hash and a mixed-case address: the user
// signs in with the address in lowercase, the hash is upgraded in the
// app's column, and the app's /me answers the app's bigint id.
func TestExistingUsers(t *testing.T) {
	base := servertest.Need(t, "AUTHKIT_TEST_POSTGRES")
	_, _, dbURL := servertest.PostgresSchema(t, base, "existingusers")
	db, err := sqlx.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(webapp.Schema); err != nil {
		t.Fatal(err)
	}
	const legacyHash = "$2a$10$l1m6S6qi9h8yCgOn1n90juFsd2ofoGoluBO1eHhiKL3Vfqi16lZea" // "correct horse battery staple"
	var id int64
	if err := db.Get(&id, `INSERT INTO users (email, password_hash) VALUES ('Grace.Hopper@Example.COM', $1) RETURNING id`, legacyHash); err != nil {
		t.Fatal(err)
	}

	key, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s := servertest.Start(t, "existingusers", "DATABASE_URL="+dbURL, "SESSION_SECRET="+strings.Repeat("s", 32), "ENCRYPTION_KEY="+key)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Post(s.URL+"/api/auth/login", "application/json",
		strings.NewReader(`{"email":"grace.hopper@example.com","password":"correct horse battery staple"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login of the app's existing user: %d", resp.StatusCode)
	}
	var hash string
	if err := db.Get(&hash, `SELECT password_hash FROM users WHERE id = $1`, id); err != nil || !strings.HasPrefix(hash, "$2a$12$") {
		t.Fatalf("the app's password_hash after login = %q, %v; want a cost-12 hash", hash, err)
	}
	resp, err = c.Get(s.URL + "/me")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var me struct {
		ID    int64  `json:"id"`
		Email string `json:"email"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&me); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /me: %d, %v", resp.StatusCode, err)
	}
	if me.ID != id || me.Email != "Grace.Hopper@Example.COM" {
		t.Fatalf("GET /me = %+v, want the app's row %d", me, id)
	}
}
