package scrypthash

import (
	"context"
	"errors"
	"testing"
)

// nodeHash is what better-auth's hashPassword stores for "pässwörd" with the
// salt 00112233445566778899aabbccddeeff (node:crypto scrypt, its parameters).
const nodeHash = "00112233445566778899aabbccddeeff:98019d8d367509640e45a459ea9b23f32452dd310114f46daee657ebe74a7fe5a2ba724b8382f9a2ef80cd44dd048eb79ff35d9db1d8dd22aeae2d681eb0962e"

func TestVerifyBetterAuthHash(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		pw   string
		want bool
	}{
		{"pässwörd", true},
		{"pa\u0308sswo\u0308rd", true}, // decomposed: the same after NFKC
		{"passwörd", false},
	} {
		ok, err := Hasher{}.Verify(ctx, tc.pw, nodeHash)
		if err != nil || ok != tc.want {
			t.Errorf("Verify(%q) = %v, %v; want %v, nil", tc.pw, ok, err, tc.want)
		}
	}
}

func TestHashRoundTrip(t *testing.T) {
	ctx := context.Background()
	h, err := Hasher{}.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 32+1+128 {
		t.Fatalf("hash %q: want 32 hex, ':', 128 hex", h)
	}
	if ok, err := (Hasher{}).Verify(ctx, "correct horse", h); !ok || err != nil {
		t.Fatalf("Verify(own hash) = %v, %v", ok, err)
	}
	if ok, err := (Hasher{}).Verify(ctx, "correct horsE", h); ok || err != nil {
		t.Fatalf("Verify(wrong password) = %v, %v", ok, err)
	}
}

func TestVerifyMalformed(t *testing.T) {
	for _, h := range []string{"", "nocolon", ":abcd", "salt:zz", "salt:abcd"} {
		if _, err := (Hasher{}).Verify(context.Background(), "x", h); !errors.Is(err, ErrMalformed) {
			t.Errorf("Verify(%q) error = %v; want ErrMalformed", h, err)
		}
	}
}
