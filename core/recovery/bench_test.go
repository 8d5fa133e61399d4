package recovery

import (
	"context"
	"testing"
)

func BenchmarkGenerate(b *testing.B) {
	h := NewHasher()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Generate(context.Background(), h, DefaultCount); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyWorstCase checks a code that matches none of 8 stored
// hashes, so all 8 are checked: "parallel" is Verify, "serial" is the same
// 8 checks one after another (what Verify would cost without parallelism).
func BenchmarkVerifyWorstCase(b *testing.B) {
	ctx := context.Background()
	h := NewHasher()
	_, hashes, err := Generate(ctx, h, DefaultCount)
	if err != nil {
		b.Fatal(err)
	}
	const wrong = "00000000-00000000"
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if valid, _, err := Verify(ctx, wrong, hashes, h); valid || err != nil {
				b.Fatal(valid, err)
			}
		}
	})
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, hash := range hashes {
				if ok, err := h.Verify(ctx, wrong, hash); ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		}
	})
}
