package password

import (
	"context"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// FuzzVerify checks that no (password, hash) pair makes Verify or
// NeedsRehash panic, and that Verify never reports a match with an error.
func FuzzVerify(f *testing.F) {
	h := newLowBcrypt(f, bcrypt.MinCost)
	plain := mustHash(f, h, "pw")
	long := mustHash(f, h, strings.Repeat("l", 80))
	seeds := []struct{ pw, hash string }{
		{"pw", plain},
		{"pw", "$2y" + plain[3:]},
		{strings.Repeat("l", 80), long},
		{"password", argon2RefP1},
		{"password", argon2RefP2},
		{"", ""},
		{"pw", "$argon2id$v=19$m=4294967295,t=0,p=0$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"},
		{"pw", "$authkit-bcrypt-sha256$v=1$"},
		{"pw", "$2a$04$"},
	}
	for _, s := range seeds {
		f.Add(s.pw, s.hash)
	}
	f.Fuzz(func(t *testing.T, pw, hash string) {
		ok, err := h.Verify(context.Background(), pw, hash)
		if ok && err != nil {
			t.Fatalf("Verify = (true, %v)", err)
		}
		if err != nil && !errors.Is(err, ErrUnknownFormat) && !errors.Is(err, ErrMalformedHash) {
			t.Fatalf("Verify error %v wraps neither ErrUnknownFormat nor ErrMalformedHash", err)
		}
		if err != nil && !h.NeedsRehash(hash) {
			t.Fatalf("NeedsRehash = false for a hash Verify rejects (%v)", err)
		}
	})
}
