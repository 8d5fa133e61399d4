package password

import (
	"context"
	"strconv"
	"testing"
)

func BenchmarkHashBcrypt(b *testing.B) {
	for _, cost := range []int{10, DefaultBcryptCost} {
		b.Run("cost="+strconv.Itoa(cost), func(b *testing.B) {
			benchHash(b, Config{BcryptCost: cost})
		})
	}
}

func BenchmarkVerifyBcrypt(b *testing.B) {
	benchVerify(b, Config{})
}

func BenchmarkHashArgon2id(b *testing.B) {
	benchHash(b, Config{Algorithm: Argon2id})
}

func BenchmarkVerifyArgon2id(b *testing.B) {
	benchVerify(b, Config{Algorithm: Argon2id})
}

// benchPassword is the password every benchmark hashes and verifies.
const benchPassword = "correct horse battery staple"

// benchHasher is the hasher of cfg, reporting allocations from here on.
func benchHasher(b *testing.B, cfg Config) *Standard {
	b.Helper()
	h, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	return h
}

// benchHash measures Hash under cfg.
func benchHash(b *testing.B, cfg Config) {
	h := benchHasher(b, cfg)
	for b.Loop() {
		if _, err := h.Hash(context.Background(), benchPassword); err != nil {
			b.Fatal(err)
		}
	}
}

// benchVerify measures Verify of the right password under cfg.
func benchVerify(b *testing.B, cfg Config) {
	h := benchHasher(b, cfg)
	hash := mustHash(b, h, benchPassword)
	for b.Loop() {
		if ok, err := h.Verify(context.Background(), benchPassword, hash); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
