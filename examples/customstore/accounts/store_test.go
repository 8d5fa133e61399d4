package accounts_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authkit-go/authkit/core/auth"
	"github.com/authkit-go/authkit/core/authtest"
	"github.com/authkit-go/authkit/core/onetime"
	"github.com/authkit-go/authkit/core/store/storetest"
	"github.com/authkit-go/authkit/core/user"
	"github.com/authkit-go/authkit/examples/customstore/accounts"
	"github.com/authkit-go/authkit/nethttpauth"
)

// openDB opens a fresh database file holding the app's table, not yet
// migrated.
func openDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := accounts.Open(context.Background(), filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(accounts.Schema); err != nil {
		t.Fatal(err)
	}
	return db
}

func newStore(t testing.TB) (*accounts.Store, *sql.DB) {
	t.Helper()
	db := openDB(t)
	if err := accounts.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return accounts.New(db, accounts.Config{}), db
}

func TestConformance(t *testing.T) {
	storetest.RunUserStore(t, func(t *testing.T) *accounts.Store {
		s, _ := newStore(t)
		return s
	})
}

// TestOneTime runs the one-time store's conformance suite (refresh
// families included) on the app's database.
func TestOneTime(t *testing.T) {
	storetest.RunOneTimeStore(t, func(t *testing.T, _ *storetest.Clock) onetime.Store {
		s, _ := newStore(t)
		return s.OneTimeStore()
	})
}

// TestFlows runs authkit's whole HTTP flow suite on net/http over this
// store, the hashes at no cost (FastHashing: the store keeps them as
// strings, whatever made them).
func TestFlows(t *testing.T) {
	authtest.Run(t, authtest.Harness{
		Start: func(t *testing.T, svc *auth.Service) string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: nethttpauth.Handler(svc), ReadHeaderTimeout: 10 * time.Second}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
			return "http://" + ln.Addr().String()
		},
		NewUsers: func(t *testing.T) user.Store {
			s, _ := newStore(t)
			return s
		},
		FastHashing: true,
	})
}

// TestExistingRows: rows the app wrote before authkit, in its own columns,
// survive the migration and read back as users; a row with authkit's
// columns set by hand maps field by field; and the store's writes land in
// the app's columns without touching the ones it does not know.
func TestExistingRows(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	mustExec(t, db, `INSERT INTO accounts (account_id, login_email, display_name, pw_hash, created, plan)
		VALUES ('acc_1001', 'ada@example.com', 'Ada Lovelace', '$2y$10$legacy', '2019-05-01 09:30:00', 'pro')`)
	mustExec(t, db, `INSERT INTO accounts (account_id, login_email) VALUES ('acc_1002', 'grace@example.com')`)
	if err := accounts.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	s := accounts.New(db, accounts.Config{})

	ada, err := s.ByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	want := &user.User{
		ID: "acc_1001", Email: "ada@example.com", Name: "Ada Lovelace", PasswordHash: "$2y$10$legacy",
		CreatedAt: time.Date(2019, 5, 1, 9, 30, 0, 0, time.UTC),
	}
	checkUser(t, ada, want)

	grace, err := s.ByID(ctx, "acc_1002")
	if err != nil {
		t.Fatal(err)
	}
	if grace.Name != "" || grace.PasswordHash != "" || grace.CreatedAt.IsZero() || grace.CreatedAt.Location() != time.UTC {
		t.Fatalf("row with NULL name and hash, default created: %+v", grace)
	}

	// authkit's columns, filled in by hand.
	mustExec(t, db, `UPDATE accounts SET mfa_on = 1, mfa_secret_enc = 'enc-secret', mfa_backup_hashes = '["h1","h2"]',
		mfa_last_step = 58000001, email_confirmed_ms = 1700000000123, email_changed_ms = 1600000000000,
		pw_changed_ms = 1650000000999, session_gen = 4, failed_logins = 2, locked_until_ms = 1800000000000
		WHERE account_id = 'acc_1001'`)
	ada, err = s.ByID(ctx, "acc_1001")
	if err != nil {
		t.Fatal(err)
	}
	want.TwoFactorEnabled, want.TOTPSecret, want.RecoveryCodeHashes, want.LastTOTPStep = true, "enc-secret", []string{"h1", "h2"}, 58000001
	want.EmailVerifiedAt = time.UnixMilli(1700000000123)
	want.EmailChangedAt = time.UnixMilli(1600000000000)
	want.PasswordChangedAt = time.UnixMilli(1650000000999)
	want.SessionVersion, want.FailedLogins, want.LockedUntil = 4, 2, time.UnixMilli(1800000000000)
	checkUser(t, ada, want)

	// Writes through the store, read back in the app's columns.
	at := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC)
	if err := s.ChangeEmail(ctx, "acc_1001", "ada@example.com", "ada@lovelace.example", at); err != nil {
		t.Fatal(err)
	}
	grace, err = s.ByID(ctx, "acc_1002")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ResetPassword(ctx, "acc_1002", user.Reset{OldHash: grace.PasswordHash, Hash: "$2a$12$new", IssuedBefore: at, At: at}); err != nil {
		t.Fatal(err)
	}
	var email, plan string
	var changed, confirmed sql.NullInt64
	var gen int64
	row := db.QueryRow(`SELECT login_email, plan, email_changed_ms, email_confirmed_ms, session_gen FROM accounts WHERE account_id = 'acc_1001'`)
	if err := row.Scan(&email, &plan, &changed, &confirmed, &gen); err != nil {
		t.Fatal(err)
	}
	if email != "ada@lovelace.example" || plan != "pro" || changed.Int64 != at.UnixMilli() || confirmed.Valid || gen != 5 {
		t.Fatalf("after ChangeEmail: login_email %q plan %q email_changed_ms %v email_confirmed_ms %v session_gen %d",
			email, plan, changed, confirmed, gen)
	}
	var hash string
	var pwChanged sql.NullInt64
	if err := db.QueryRow(`SELECT pw_hash, pw_changed_ms, plan FROM accounts WHERE account_id = 'acc_1002'`).Scan(&hash, &pwChanged, &plan); err != nil {
		t.Fatal(err)
	}
	if hash != "$2a$12$new" || pwChanged.Int64 != at.UnixMilli() || plan != "free" {
		t.Fatalf("after SetPassword: pw_hash %q pw_changed_ms %v plan %q", hash, pwChanged, plan)
	}

	// A new account gets the app's defaults for the columns authkit does
	// not know, and a created value the app can read.
	u, err := s.Create(ctx, &user.User{Email: "new@example.com", Name: "New", PasswordHash: "h", CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	var created string
	if err := db.QueryRow(`SELECT created, plan FROM accounts WHERE account_id = ?`, u.ID).Scan(&created, &plan); err != nil {
		t.Fatal(err)
	}
	if created != "2026-01-02 03:04:05.678" || plan != "free" {
		t.Fatalf("created row: created %q plan %q", created, plan)
	}
}

func checkUser(t *testing.T, got, want *user.User) {
	t.Helper()
	if got.ID != want.ID || got.Email != want.Email || got.Name != want.Name || got.PasswordHash != want.PasswordHash ||
		got.TwoFactorEnabled != want.TwoFactorEnabled || got.TOTPSecret != want.TOTPSecret ||
		got.PendingTOTPSecret != want.PendingTOTPSecret || got.LastTOTPStep != want.LastTOTPStep ||
		got.SessionVersion != want.SessionVersion || got.FailedLogins != want.FailedLogins ||
		!slices.Equal(got.RecoveryCodeHashes, want.RecoveryCodeHashes) || (got.RecoveryCodeHashes == nil) != (want.RecoveryCodeHashes == nil) ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.EmailVerifiedAt.Equal(want.EmailVerifiedAt) ||
		!got.EmailChangedAt.Equal(want.EmailChangedAt) || !got.PasswordChangedAt.Equal(want.PasswordChangedAt) ||
		!got.LockedUntil.Equal(want.LockedUntil) {
		t.Fatalf("user = %+v\nwant %+v", got, want)
	}
}

func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TestRecoveryHashesNilVersusEmpty: NULL (never issued) and [] (all used)
// stay apart, as user.User documents.
func TestRecoveryHashesNilVersusEmpty(t *testing.T) {
	ctx := t.Context()
	s, db := newStore(t)
	u, err := s.Create(ctx, &user.User{Email: "a@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ByID(ctx, u.ID); got.RecoveryCodeHashes != nil {
		t.Fatalf("never issued: %#v, want nil", got.RecoveryCodeHashes)
	}
	if err := s.BeginTOTPSetup(ctx, u.ID, "p"); err != nil {
		t.Fatal(err)
	}
	if err := s.EnableTOTP(ctx, u.ID, user.EnableTOTP{Pending: "p", Secret: "s", RecoveryCodeHashes: []string{"x"}, Step: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.ConsumeRecoveryCode(ctx, u.ID, []string{"x"}, nil); err != nil {
		t.Fatal(err)
	}
	var text string
	if err := db.QueryRow(`SELECT mfa_backup_hashes FROM accounts WHERE account_id = ?`, u.ID).Scan(&text); err != nil || text != "[]" {
		t.Fatalf("mfa_backup_hashes = %q, %v; want []", text, err)
	}
	if got, _ := s.ByID(ctx, u.ID); got.RecoveryCodeHashes == nil || len(got.RecoveryCodeHashes) != 0 {
		t.Fatalf("all used: %#v, want empty and non-nil", got.RecoveryCodeHashes)
	}
}

func TestMigrate(t *testing.T) {
	ctx := t.Context()
	_, db := newStore(t)
	if err := accounts.Migrate(ctx, db); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info('accounts')`).Scan(&n); err != nil || n != 6+11 {
		t.Fatalf("columns after two migrations: %d, %v; want 17", n, err)
	}

	empty, err := accounts.Open(ctx, filepath.Join(t.TempDir(), "empty.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if err := accounts.Migrate(ctx, empty); err == nil || !strings.Contains(err.Error(), "table accounts does not exist") {
		t.Fatalf("Migrate without the app's table: %v", err)
	}
	mustExec(t, empty, `CREATE TABLE accounts (account_id TEXT PRIMARY KEY, email TEXT)`)
	err = accounts.Migrate(ctx, empty)
	if err == nil || !strings.Contains(err.Error(), "lacks the app column(s) login_email, display_name, pw_hash, created") {
		t.Fatalf("Migrate on a table with other names: %v", err)
	}
	if err := empty.QueryRow(`SELECT count(*) FROM pragma_table_info('accounts')`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("a failed Migrate changed the table: %d columns, %v", n, err)
	}
}

func TestOpenRejectsNonFiles(t *testing.T) {
	for _, path := range []string{"", ":memory:", "file:x.db", "x.db?_pragma=foreign_keys(0)"} {
		if db, err := accounts.Open(t.Context(), path); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
	_, err := accounts.Open(t.Context(), filepath.Join(t.TempDir(), "no-such-dir", "x.db"))
	if !errors.Is(err, user.ErrUnavailable) {
		t.Fatalf("Open in a missing folder: %v, want ErrUnavailable", err)
	}
}

// TestUnavailable: a backend that fails is ErrUnavailable (the flows answer
// 503), for reads, conditional updates, transactions and creates alike; a
// caller that gave up gets its context's error instead.
func TestUnavailable(t *testing.T) {
	s, db := newStore(t)
	u, err := s.Create(t.Context(), &user.User{Email: "a@example.com"})
	if err != nil {
		t.Fatal(err)
	}

	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = s.ByID(canceled, u.ID)
	if !errors.Is(err, context.Canceled) || errors.Is(err, user.ErrUnavailable) {
		t.Fatalf("ByID with a canceled context: %v", err)
	}

	db.Close()
	ctx := t.Context()
	_, errCreate := s.Create(ctx, &user.User{Email: "b@example.com"})
	_, errRead := s.ByEmail(ctx, "a@example.com")
	_, errBump := s.BumpSessionVersion(ctx, u.ID)
	_, _, errFail := s.RecordLoginFailure(ctx, u.ID, 5, time.Minute, time.Now())
	for what, err := range map[string]error{
		"Create": errCreate, "ByEmail": errRead, "BumpSessionVersion": errBump, "RecordLoginFailure": errFail,
		"VerifyEmail":   s.VerifyEmail(ctx, u.ID, "a@example.com", time.Now()),
		"ChangeEmail":   s.ChangeEmail(ctx, u.ID, "a@example.com", "c@example.com", time.Now()),
		"Migrate":       accounts.Migrate(ctx, db),
		"Delete":        s.Delete(ctx, u.ID),
		"DisableTOTP":   s.DisableTOTP(ctx, u.ID),
		"ClearFailures": s.ClearLoginFailures(ctx, u.ID),
	} {
		if !errors.Is(err, user.ErrUnavailable) {
			t.Errorf("%s on a closed database: %v, want ErrUnavailable", what, err)
		}
	}
}

// TestCorruptRow: a value the store cannot read is an error naming the
// account and column, not a panic or a silently wrong record.
func TestCorruptRow(t *testing.T) {
	s, db := newStore(t)
	mustExec(t, db, `INSERT INTO accounts (account_id, login_email, created, mfa_backup_hashes) VALUES ('x', 'x@example.com', 'yesterday', '[]')`)
	_, err := s.ByID(t.Context(), "x")
	if err == nil || !strings.Contains(err.Error(), `account x: created "yesterday"`) {
		t.Fatalf("unreadable created: %v", err)
	}
	mustExec(t, db, `UPDATE accounts SET created = '2020-01-01 00:00:00', mfa_backup_hashes = '{"a":1}'`)
	_, err = s.ByID(t.Context(), "x")
	if err == nil || !strings.Contains(err.Error(), "account x: mfa_backup_hashes") {
		t.Fatalf("unreadable hashes: %v", err)
	}
}

func BenchmarkByEmail(b *testing.B) {
	s, _ := newStore(b)
	if _, err := s.Create(context.Background(), &user.User{Email: "bench@example.com", PasswordHash: "h"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ByEmail(context.Background(), "bench@example.com"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAcceptTOTPStep(b *testing.B) {
	ctx := context.Background()
	s, _ := newStore(b)
	u, err := s.Create(ctx, &user.User{Email: "bench@example.com", TwoFactorEnabled: true, LastTOTPStep: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	step := int64(1)
	for b.Loop() {
		step++
		if err := s.AcceptTOTPStep(ctx, u.ID, step, step); err != nil {
			b.Fatal(err)
		}
	}
}
