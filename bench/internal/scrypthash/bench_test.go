package scrypthash

import (
	"context"
	"testing"
)

// BenchmarkVerify is one password check at better-auth's parameters: what
// a login costs on authkit's side of the peer benchmark before any work
// around it (compare node:crypto's scrypt at the same parameters).
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		if ok, err := (Hasher{}).Verify(ctx, "pässwörd", nodeHash); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
