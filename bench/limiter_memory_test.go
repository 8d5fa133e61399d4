package bench_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/authkit-go/authkit/bench/internal/keys"
	"github.com/authkit-go/authkit/bench/internal/limiters"
	"github.com/authkit-go/authkit/core/ratelimit"
)

// memDists are the key distributions of the in-memory comparison, made
// once per process.
var memDists = sync.OnceValue(func() []keys.Dist {
	return []keys.Dist{keys.Hot(), keys.Uniform(10_000), keys.Zipf(100_000), keys.Churn()}
})

// memImpls returns the implementations compared on d. authkit comes first
// (benchstat's base column). Where d's key space exceeds the spec's
// default capacity (zipf over 100,000 keys, churn), authkit's capacity is
// raised so that it holds every key as the peers do, and "authkit-cap10k"
// shows the default: at capacity, new keys are refused (docs/api.md, Rate limits).
func memImpls(d keys.Dist) []limiters.Memory {
	if !d.Churn() && d.Space() <= ratelimit.DefaultMemoryCapacity {
		return []limiters.Memory{limiters.Authkit("authkit", 0), limiters.Ulule(), limiters.Sethvargo()}
	}
	capacity := math.MaxInt
	if !d.Churn() {
		capacity = d.Space()
	}
	return []limiters.Memory{
		limiters.Authkit("authkit", capacity),
		limiters.Ulule(),
		limiters.Sethvargo(),
		limiters.Authkit("authkit-cap10k", 0),
	}
}

// BenchmarkLimiterMemory is one attempt on an in-memory limiter, per key
// distribution (dist), mode (allowed: the limit is never reached; denied:
// every key is already over a limit of 1, the brute-force path), serial or
// on GOMAXPROCS goroutines (run, see runParallel), and implementation
// (impl). Run it with -cpu 1,2.
//
// Keys are made and, for denied, exhausted before the timer starts; churn
// keys are made per run, b.N per goroutine, never seen before. Every attempt's answer is
// checked, except for authkit-cap10k, whose share of attempts refused by
// the full store is reported as refused/op.
//
// cpu-ns/op is the CPU time the process used per attempt (all its threads,
// so up to twice sec/op in a 2-CPU parallel run). Unlike sec/op it does not
// grow when other processes take the CPUs of a shared machine, but it
// misses time a goroutine spends asleep waiting for a lock.
func BenchmarkLimiterMemory(b *testing.B) {
	for _, d := range memDists() {
		for _, mode := range []string{"allowed", "denied"} {
			if d.Churn() && mode == "denied" {
				continue // a key seen for the first time is never over its limit
			}
			for _, run := range []string{"serial", "parallel"} {
				for _, impl := range memImpls(d) {
					name := fmt.Sprintf("dist=%s/mode=%s/run=%s/impl=%s", d.Name, mode, run, impl.Name)
					// One limiter per cell, made and warmed up on the
					// cell's first call and kept across its later ones:
					// those that size b.N and the runs of -count and
					// -cpu, which call the same function again.
					c := &memCell{impl: impl, d: d, allowed: mode == "allowed", parallel: run == "parallel"}
					b.Run(name, c.bench)
					c.close()
				}
			}
		}
	}
}

// memCell is one cell of BenchmarkLimiterMemory.
type memCell struct {
	impl              limiters.Memory
	d                 keys.Dist
	allowed, parallel bool
	l                 limiters.Limiter
	runs              int // churn keys of each run are new
}

func (c *memCell) close() {
	if c.l != nil {
		_ = c.l.Close()
	}
}

func (c *memCell) capped() bool { return c.impl.Name == "authkit-cap10k" }

// setup makes the limiter and gives every key of the space its entry; for
// denied, a second attempt puts each key over the limit of 1.
func (c *memCell) setup(b *testing.B) {
	limit := 1
	if c.allowed {
		limit = limiters.Unlimited
	}
	l, err := c.impl.New(limit)
	if err != nil {
		b.Fatal(err)
	}
	c.l = l
	ctx := context.Background()
	for _, k := range c.d.Keys {
		for i := range 2 {
			if i == 1 && c.allowed {
				break
			}
			ok, err := l.Attempt(ctx, k)
			if err != nil {
				b.Fatal(err)
			}
			if !c.capped() && ok != (i == 0) {
				b.Fatalf("warm-up attempt %d on %s: allowed=%v", i+1, k, ok)
			}
		}
	}
}

func (c *memCell) bench(b *testing.B) {
	if c.l == nil {
		c.setup(b)
	}
	ctx := context.Background()
	procs := 1
	if c.parallel {
		procs = runtime.GOMAXPROCS(0)
	}
	var churn [][]string
	if c.d.Churn() {
		churn = keys.ChurnKeys(c.runs, procs, b.N)
		c.runs++
	}

	var wrong, refused atomic.Int64
	// attempts runs the attempts of goroutine g while next says so, and
	// adds up the answers that were not the expected one.
	attempts := func(g int, next func() bool) {
		var w, r int64
		seq := c.d.Seq
		var i int
		if c.d.Churn() {
			seq = churn[g]
		} else {
			i = keys.Offset(g, len(seq))
		}
		for next() {
			ok, err := c.l.Attempt(ctx, seq[i])
			if err != nil || ok != c.allowed {
				if c.capped() && err == nil {
					r++
				} else {
					w++
				}
			}
			if i++; i == len(seq) {
				i = 0
			}
		}
		wrong.Add(w)
		refused.Add(r)
	}

	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuNanos()
	if c.parallel {
		runParallel(b, attempts)
	} else {
		n := 0
		attempts(0, func() bool { n++; return n <= b.N })
	}
	b.StopTimer()
	if cpu0 >= 0 {
		b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
	}
	if w := wrong.Load(); w > 0 {
		b.Fatalf("%d of %d attempts did not answer allowed=%v", w, b.N, c.allowed)
	}
	if c.capped() {
		b.ReportMetric(float64(refused.Load())/float64(b.N), "refused/op")
	}
}

// parallelGrain is how many iterations a goroutine of runParallel takes
// from the shared count at a time: about 100 µs of attempts, the chunk that
// b.RunParallel aims for.
const parallelGrain = 1000

// runParallel runs body on GOMAXPROCS goroutines, numbered from 0, which
// share b.N iterations: next reports whether the calling goroutine may run
// one more. It stands in for b.RunParallel, whose goroutines take their
// iterations from a shared counter in chunks sized by the previous run of
// the same benchmark (as many as took 100 µs there). With a fixed
// -benchtime Nx that previous run is the 1-iteration probe the testing
// package starts every benchmark with, timed with the start of its
// goroutines (18 to 94 µs in the runs that found this), so the chunks were 1 to 7
// iterations long and the CPUs wrote the counter's cache line every few
// attempts: 19.5% of the CPU samples of the zipf 100k allowed cell at 2
// CPUs, a cost of the harness, not of the limiter, that changed from run to
// run with the time of the probe. Here the chunk is fixed.
func runParallel(b *testing.B, body func(g int, next func() bool)) {
	n := int64(b.N)
	var taken atomic.Int64
	var wg sync.WaitGroup
	for g := range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var left int64 // iterations of the current chunk not yet run
			body(g, func() bool {
				if left == 0 {
					start := taken.Add(parallelGrain) - parallelGrain
					if start >= n {
						return false
					}
					left = min(parallelGrain, n-start)
				}
				left--
				return true
			})
		}()
	}
	wg.Wait()
}

// BenchmarkLimiterMemoryHeld reports the heap each in-memory limiter holds
// per key (B/key), after counting one attempt on each of 100,000 keys; an
// op is filling one limiter with the 100,000 keys. The keys themselves are
// made beforehand and kept alive outside the limiter, so a store that
// keeps the caller's string pays only for its header, and one that builds
// its own key (ulule prefixes every key) pays for the copy.
func BenchmarkLimiterMemoryHeld(b *testing.B) {
	ks := keys.Zipf(100_000).Keys
	for _, impl := range []limiters.Memory{limiters.Authkit("authkit", len(ks)), limiters.Ulule(), limiters.Sethvargo()} {
		b.Run("keys=100k/impl="+impl.Name, func(b *testing.B) {
			ctx := context.Background()
			var held uint64
			for range b.N {
				b.StopTimer()
				before := heapAlloc()
				b.StartTimer()
				l, err := impl.New(limiters.Unlimited)
				if err != nil {
					b.Fatal(err)
				}
				for _, k := range ks {
					if ok, err := l.Attempt(ctx, k); err != nil || !ok {
						b.Fatalf("Attempt(%s) = %v, %v", k, ok, err)
					}
				}
				b.StopTimer()
				after := heapAlloc()
				runtime.KeepAlive(l)
				held += after - min(before, after)
				_ = l.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(held)/float64(b.N)/float64(len(ks)), "B/key")
			runtime.KeepAlive(ks)
		})
	}
}

// heapAlloc returns the bytes of live heap objects after a full GC.
func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
