package password

import (
	"context"
	"strconv"
	"testing"
)

func BenchmarkHashBcrypt(b *testing.B) {
	for _, cost := range []int{10, DefaultBcryptCost} {
		b.Run("cost="+strconv.Itoa(cost), func(b *testing.B) {
			h, err := New(Config{BcryptCost: cost})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.Hash(context.Background(), "correct horse battery staple"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerifyBcrypt(b *testing.B) {
	h, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	hash := mustHash(b, h, "correct horse battery staple")
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := h.Verify(context.Background(), "correct horse battery staple", hash); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkHashArgon2id(b *testing.B) {
	h, err := New(Config{Algorithm: Argon2id})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Hash(context.Background(), "correct horse battery staple"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyArgon2id(b *testing.B) {
	h, err := New(Config{Algorithm: Argon2id})
	if err != nil {
		b.Fatal(err)
	}
	hash := mustHash(b, h, "correct horse battery staple")
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := h.Verify(context.Background(), "correct horse battery staple", hash); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
