package token

import (
	"bytes"
	"testing"
	"time"
)

// FuzzVerify feeds arbitrary strings to Verify. It must never panic, must
// answer one of the four sentinels on failure, and whatever verifies must be
// exactly the token that Create makes for its claims: one spelling per token,
// nothing ignored, nothing left over.
func FuzzVerify(f *testing.F) {
	clk := &clock{t0}
	v := newVerifier(f, clk, "session", time.Hour, secretB, secretA)
	old := newVerifier(f, clk, "session", time.Hour, secretA)
	for _, tok := range []string{
		mustCreate(f, v, "u1", nil),
		mustCreate(f, v, "abcd", []byte{1, 2, 3}),
		mustCreate(f, old, "3q2-7w_AAAAAAAAAAAAAAA", []byte{0, 7}),
		mustCreate(f, newVerifier(f, clk, "2fa_pending", time.Hour, secretA), "u1", nil),
		"", "A", "====", "\n\r",
	} {
		f.Add(tok)
	}
	remake := &clock{}
	signer := newVerifier(f, remake, "session", time.Hour, secretB)
	oldSigner := newVerifier(f, remake, "session", time.Hour, secretA)
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := v.Verify(tok)
		if err != nil {
			switch err {
			case ErrMalformed, ErrSignature, ErrExpired, ErrNotYetValid:
			default:
				t.Fatalf("Verify(%q): unexpected error %v", tok, err)
			}
			if c.UserID != "" || c.Data != nil || !c.IssuedAt.IsZero() {
				t.Fatalf("Verify(%q) failed with non-zero claims %+v", tok, c)
			}
			return
		}
		if len(c.UserID) == 0 || len(c.UserID) > MaxUserIDLen || len(c.Data) > MaxDataLen {
			t.Fatalf("Verify(%q) returned out-of-range claims %+v", tok, c)
		}
		remake.t = c.IssuedAt
		again, err := signer.CreateWith(c.UserID, c.Data)
		if err != nil {
			t.Fatalf("CreateWith(%+v): %v", c, err)
		}
		if again != tok {
			again, _ = oldSigner.CreateWith(c.UserID, c.Data)
		}
		if again != tok {
			t.Fatalf("Verify accepted %q, but its claims encode as %q", tok, again)
		}
		c2, err := v.Verify(again)
		if err != nil || c2.UserID != c.UserID || !c2.IssuedAt.Equal(c.IssuedAt) || !bytes.Equal(c2.Data, c.Data) {
			t.Fatalf("round trip of %+v gave %+v, %v", c, c2, err)
		}
	})
}
