package keys

import (
	"slices"
	"testing"
)

func TestHot(t *testing.T) {
	d := Hot()
	if d.Name != "hot" || d.Space() != 1 || len(d.Seq) != 1 || d.Seq[0] != d.Keys[0] || d.Churn() {
		t.Fatalf("Hot() = %s, %d keys, seq %v", d.Name, d.Space(), d.Seq)
	}
}

// draws fails t unless d has the name and key space given and a sequence
// of SeqLen keys, and returns how often the sequence draws each key.
func draws(t *testing.T, d Dist, name string, space int) map[string]int {
	t.Helper()
	if d.Name != name || d.Space() != space || len(d.Seq) != SeqLen {
		t.Fatalf("%s, %d keys, %d long; want %s, %d keys, %d long", d.Name, d.Space(), len(d.Seq), name, space, SeqLen)
	}
	n := map[string]int{}
	for _, k := range d.Seq {
		n[k]++
	}
	return n
}

func TestUniform(t *testing.T) {
	d := Uniform(10_000)
	seen := draws(t, d, "uniform10k", 10_000)
	if len(seen) != 10_000 {
		t.Errorf("the sequence uses %d distinct keys, want all 10000", len(seen))
	}
	// 52 draws per key on average: no key should be far off.
	for k, n := range seen {
		if n < 10 || n > 120 {
			t.Errorf("key %s drawn %d times, want about %d", k, n, SeqLen/10_000)
		}
	}
	if !slices.Equal(Uniform(10_000).Seq, d.Seq) {
		t.Error("two Uniform(10000) sequences differ: every implementation must see the same one")
	}
}

func TestZipf(t *testing.T) {
	d := Zipf(100_000)
	count := draws(t, d, "zipf100k", 100_000)
	hot, tail := count[d.Keys[0]], count[d.Keys[99_999]]
	if hot < SeqLen/20 || hot <= count[d.Keys[1]] || tail > 10 {
		t.Errorf("key 0 drawn %d times, key 1 %d, key 99999 %d: not a zipf with s=%v", hot, count[d.Keys[1]], tail, ZipfS)
	}
	if len(count) <= 10_000 {
		t.Errorf("only %d distinct keys: the sequence must exceed the 10,000-key default capacity", len(count))
	}
}

func TestChurnKeys(t *testing.T) {
	if !Churn().Churn() || Churn().Space() != 0 {
		t.Fatal("Churn() is not a churn distribution")
	}
	seen := map[string]bool{Key(0): true, Key(1): true}
	for _, g := range append(ChurnKeys(0, 2, 1000), ChurnKeys(1, 2, 1000)...) {
		if len(g) != 1000 {
			t.Fatalf("%d keys per goroutine, want 1000", len(g))
		}
		for j, k := range g {
			if k != ChurnKey(0, 0, j) && k != ChurnKey(0, 1, j) && k != ChurnKey(1, 0, j) && k != ChurnKey(1, 1, j) {
				t.Fatalf("key %d is %s, not a ChurnKey", j, k)
			}
			if seen[k] {
				t.Fatalf("key %s made twice (or equal to a Key)", k)
			}
			seen[k] = true
		}
	}
}

func TestOffset(t *testing.T) {
	seen := map[int]bool{}
	for g := range 64 {
		o := Offset(g, SeqLen)
		if o < 0 || o >= SeqLen || seen[o] {
			t.Fatalf("Offset(%d) = %d: out of range or repeated", g, o)
		}
		seen[o] = true
	}
	if Offset(3, 1) != 0 || Offset(5, 0) != 0 {
		t.Error("Offset on a sequence of 0 or 1 keys must be 0")
	}
}
