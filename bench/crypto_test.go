package bench_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	pqtotp "github.com/pquerna/otp/totp"

	"github.com/authkit-go/authkit/bench/internal/server"
	"github.com/authkit-go/authkit/core/password"
	"github.com/authkit-go/authkit/core/recovery"
	"github.com/authkit-go/authkit/core/secretbox"
	"github.com/authkit-go/authkit/core/totp"
)

// BenchmarkTOTPVerify checks a valid code with the default window (the
// current step and one on each side, all computed, as authkit always
// does): authkit's totp.Verify against pquerna/otp's ValidateCustom with
// the same settings (the library authkit builds on; it tries the current
// step first and stops at the match, so it computes one code to authkit's
// three).
func BenchmarkTOTPVerify(b *testing.B) {
	at := time.Date(2026, 11, 21, 12, 0, 15, 0, time.UTC)
	t, err := totp.New(totp.Config{Now: func() time.Time { return at }})
	if err != nil {
		b.Fatal(err)
	}
	secret, err := t.GenerateSecret()
	if err != nil {
		b.Fatal(err)
	}
	code, err := t.Code(secret, at)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("impl=authkit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !t.Verify(code, secret) {
				b.Fatal("valid code refused")
			}
		}
	})
	opts := pqtotp.ValidateOpts{Period: 30, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}
	b.Run("impl=pquerna", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ok, err := pqtotp.ValidateCustom(code, secret, at, opts); !ok || err != nil {
				b.Fatalf("valid code refused: %v", err)
			}
		}
	})
}

// BenchmarkSecretbox encrypts and decrypts a TOTP secret bound to its row
// (XChaCha20-Poly1305, as the flows store it).
func BenchmarkSecretbox(b *testing.B) {
	ring, err := secretbox.NewKeyring(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		b.Fatal(err)
	}
	const plain, ad = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", "totp:user-0123456789abcdef"
	b.Run("op=encrypt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ring.EncryptString(plain, ad); err != nil {
				b.Fatal(err)
			}
		}
	})
	ct, err := ring.EncryptString(plain, ad)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("op=decrypt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got, err := ring.DecryptString(ct, ad); err != nil || got != plain {
				b.Fatalf("DecryptString = %q, %v", got, err)
			}
		}
	})
}

// BenchmarkRecoveryVerify is the worst case of a recovery-code check: a
// well-formed code that matches none of the 8 stored hashes, so every hash
// is checked (recovery.NewHasher: bcrypt at cost 4, in parallel up to
// GOMAXPROCS).
func BenchmarkRecoveryVerify(b *testing.B) {
	ctx := context.Background()
	h := recovery.NewHasher()
	_, hashes, err := recovery.Generate(ctx, h, recovery.DefaultCount)
	if err != nil {
		b.Fatal(err)
	}
	const wrong = "00000000-00000000"
	b.Run("case=no-match", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ok, _, err := recovery.Verify(ctx, wrong, hashes, h); ok || err != nil {
				b.Fatalf("Verify = %v, %v", ok, err)
			}
		}
	})
}

// BenchmarkPassword hashes and verifies a password at the default cost
// (bcrypt, cost 12).
func BenchmarkPassword(b *testing.B) {
	ctx := context.Background()
	h, err := password.New(password.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("op=hash/cost=12", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.Hash(ctx, server.Password); err != nil {
				b.Fatal(err)
			}
		}
	})
	hash, err := h.Hash(ctx, server.Password)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("op=verify/cost=12", func(b *testing.B) { verifyLoop(b, h, hash) })
}

// verifyLoop checks server.Password against hash with h, b.N times.
func verifyLoop(b *testing.B, h password.Hasher, hash string) {
	ctx := context.Background()
	for b.Loop() {
		if ok, err := h.Verify(ctx, server.Password, hash); !ok || err != nil {
			b.Fatalf("Verify = %v, %v", ok, err)
		}
	}
}

// BenchmarkLogin compares a whole successful login, POST /api/login on
// net/http in process (rate limits off, default hasher), with the one
// password check inside it (path=hash). Serial, so 1/(ns/op) is per core:
// the hash alone sets the limit, and login's ratio to it is how close the
// route comes.
func BenchmarkLogin(b *testing.B) {
	env := newEnv(b, nil) // the default hasher
	b.Run("path=hash", func(b *testing.B) { verifyLoop(b, env.Hasher, env.User.PasswordHash) })
	handler := server.NetHTTP(env)
	b.Run("path=login", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/api/login", strings.NewReader(env.LoginBody))
			if err != nil {
				b.Fatal(err)
			}
			r.Header.Set("Content-Type", "application/json")
			r.RemoteAddr = "127.0.0.1:40000"
			w := &discardWriter{h: http.Header{}}
			handler.ServeHTTP(w, r)
			if w.status != http.StatusOK {
				b.Fatalf("POST /api/login: status %d", w.status)
			}
		}
	})
}
