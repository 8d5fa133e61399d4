package user

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func secretUser() *User {
	return &User{
		ID: "u1", Email: "ada@example.com", Name: "Ada",
		PasswordHash: "SECRET-HASH", TOTPSecret: "SECRET-TOTP", PendingTOTPSecret: "SECRET-PENDING",
		RecoveryCodeHashes: []string{"SECRET-RC1", "SECRET-RC2"}, LastTOTPStep: 12345,
		EmailVerifiedAt:  time.Date(2026, 1, 2, 3, 4, 5, 6789012, time.FixedZone("X", 3600)),
		TwoFactorEnabled: true, SessionVersion: 9, FailedLogins: 3,
	}
}

func TestSecretsNeverSerialise(t *testing.T) {
	u := secretUser()
	for name, v := range map[string]any{"User": u, "Public": u.Public()} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "SECRET") || strings.Contains(string(b), "12345") {
			t.Errorf("%s JSON leaks a secret: %s", name, b)
		}
	}
}

func TestPublic(t *testing.T) {
	p := secretUser().Public()
	b, _ := json.Marshal(p)
	want := `{"id":"u1","email":"ada@example.com","name":"Ada","emailVerified":true,"emailVerifiedAt":"2026-01-02T02:04:05.006Z","twoFactorEnabled":true,"recoveryCodesRemaining":2}`
	if string(b) != want {
		t.Fatalf("Public JSON\n got %s\nwant %s", b, want)
	}
	var zero User
	if p := zero.Public(); p.EmailVerified || p.EmailVerifiedAt != nil || p.CreatedAt != nil {
		t.Fatalf("zero user's view = %+v", p)
	}
}

func TestClone(t *testing.T) {
	u := secretUser()
	c := u.Clone()
	c.RecoveryCodeHashes[0] = "changed"
	c.Email = "other"
	if u.RecoveryCodeHashes[0] != "SECRET-RC1" || u.Email != "ada@example.com" {
		t.Fatal("Clone shares memory with the original")
	}
	if (*User)(nil).Clone() != nil {
		t.Fatal("Clone of nil")
	}
	if c := (&User{}).Clone(); c.RecoveryCodeHashes != nil {
		t.Fatal("Clone turned nil hashes into a slice")
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		b, err := base64.RawURLEncoding.DecodeString(id)
		if err != nil || len(b) != 16 || len(id) != 22 {
			t.Fatalf("NewID() = %q: want 22 base64url characters of 16 bytes", id)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
}
