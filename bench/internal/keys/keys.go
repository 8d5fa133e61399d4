// Package keys makes the rate-limit key sequences of the limiter
// comparisons before any timer starts: one hot key, uniform over 10,000
// keys, zipf over 100,000 keys, and churn (a key never seen before on every
// call). A sequence is read round-robin; each goroutine of a parallel
// benchmark starts at its own offset.
package keys

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// SeqLen is the length of the uniform and zipf sequences: long enough that
// a benchmark never sees a short repeating pattern, small enough (8 MiB of
// string headers) to build in a few milliseconds.
const SeqLen = 1 << 19

// ZipfS is the zipf exponent (s > 1): a few keys take most attempts, a long
// tail is seen rarely, as with client addresses hitting a login route.
const ZipfS = 1.1

// Dist is one key distribution.
type Dist struct {
	// Name is the benchmark label: hot, uniform10k, zipf100k, churn.
	Name string
	// Keys is the key space (nil for churn, whose keys are made per run).
	Keys []string
	// Seq is the sequence of keys the attempts use, read round-robin (nil
	// for churn).
	Seq []string
}

// Churn reports whether d makes a new key on every call.
func (d Dist) Churn() bool { return d.Keys == nil }

// Space returns the number of distinct keys d uses; 0 for churn (unbounded).
func (d Dist) Space() int { return len(d.Keys) }

// Key returns the i-th limiter key of a key space: the shape of authkit's
// own keys, "login:ip:" and an IPv4 address.
func Key(i int) string {
	return fmt.Sprintf("login:ip:10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
}

// ChurnKey returns the j-th key of goroutine g in churn run r: distinct
// for every (r, g, j), and distinct from every Key.
func ChurnKey(r, g, j int) string {
	return fmt.Sprintf("login:ip:c%d.%d.%d", r, g, j)
}

func space(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = Key(i)
	}
	return ks
}

// Hot is one key, always the same.
func Hot() Dist {
	ks := space(1)
	return Dist{Name: "hot", Keys: ks, Seq: ks}
}

// Uniform is n keys, each attempt picking one uniformly at random (seeded,
// so every implementation sees the same sequence).
func Uniform(n int) Dist {
	ks := space(n)
	r := rand.New(rand.NewPCG(1, 2))
	seq := make([]string, SeqLen)
	for i := range seq {
		seq[i] = ks[r.IntN(n)]
	}
	return Dist{Name: fmt.Sprintf("uniform%dk", n/1000), Keys: ks, Seq: seq}
}

// Zipf is n keys drawn with a zipf distribution of exponent ZipfS: key 0 is
// the most frequent. Seeded like Uniform.
func Zipf(n int) Dist {
	ks := space(n)
	z := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), ZipfS, 1, uint64(n-1))
	seq := make([]string, SeqLen)
	for i := range seq {
		seq[i] = ks[z.Uint64()]
	}
	return Dist{Name: fmt.Sprintf("zipf%dk", n/1000), Keys: ks, Seq: seq}
}

// Churn is a new key on every call; the keys are made by ChurnKeys before
// each run's timer starts.
func Churn() Dist { return Dist{Name: "churn"} }

// ChurnKeys returns, for each of procs goroutines, n keys of its own,
// distinct from those of any other run r: ChurnKey(r, g, j) for j < n. The
// keys of a goroutine are slices of one string, made in one allocation, so
// that a run of a million keys is ready in milliseconds.
func ChurnKeys(r, procs, n int) [][]string {
	out := make([][]string, procs)
	for g := range out {
		prefix := fmt.Sprintf("login:ip:c%d.%d.", r, g)
		buf := make([]byte, 0, n*(len(prefix)+8))
		ends := make([]int, n)
		for j := range n {
			buf = append(buf, prefix...)
			buf = strconv.AppendInt(buf, int64(j), 10)
			ends[j] = len(buf)
		}
		all := string(buf)
		out[g] = make([]string, n)
		start := 0
		for j, end := range ends {
			out[g][j] = all[start:end]
			start = end
		}
	}
	return out
}

// Offset returns where goroutine g starts in a sequence of length n: spread
// evenly over 64 starting points, so that two goroutines do not walk the
// same keys in lockstep.
func Offset(g, n int) int {
	if n == 0 {
		return 0
	}
	return int(uint64(g) * uint64(n) / 64 % uint64(n))
}
