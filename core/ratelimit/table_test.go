package ratelimit

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"sync"
	"testing"
)

// checkTable compares tab with want, the entries it should hold, and checks
// its bookkeeping: live and used match ctrl, at most 7/8 of the slots are
// in use, every removed entry's count is retired, and every key is found
// from its home slot.
func checkTable(t *testing.T, seed maphash.Seed, tab *table, want map[string]entry) {
	t.Helper()
	live, used := 0, 0
	for i := range tab.slots {
		switch c := tab.ctrlAt(uint64(i)); {
		case c >= ctrlFull:
			live++
			used++
			key := tab.slots[i].key
			if c != tagOf(maphash.String(seed, key)) {
				t.Fatalf("slot %d (%q): ctrl %#x is not the key's tag", i, key, c)
			}
			if w, ok := want[key]; !ok || w != tab.entry(i) {
				t.Fatalf("slot %d holds %q = %+v; want %+v (held: %v)", i, key, tab.entry(i), w, ok)
			}
		case c == ctrlDeleted:
			used++
			if tab.counts[i].Load()&countFrozen == 0 {
				t.Fatalf("deleted slot %d: count %#x not retired", i, tab.counts[i].Load())
			}
		case c != ctrlEmpty:
			t.Fatalf("slot %d: ctrl %#x", i, c)
		}
	}
	if live != tab.live || used != tab.used || live != len(want) {
		t.Fatalf("live %d, used %d; table says %d, %d; want %d live", live, used, tab.live, tab.used, len(want))
	}
	if n := len(tab.slots); used > n-n/8 {
		t.Fatalf("%d of %d slots in use, more than 7/8", used, n)
	}
	for k, w := range want {
		i := tab.find(maphash.String(seed, k), k)
		if i < 0 || tab.entry(i) != w {
			t.Fatalf("find(%q) = %d; want the slot of %+v", k, i, w)
		}
	}
}

// insert is a writer's insert: rehash first when the table is full.
func insert(seed maphash.Seed, tab *table, k string, e entry) *table {
	if tab == nil || tab.full() {
		tab = tab.rehash(seed)
	}
	tab.insert(maphash.String(seed, k), k, e)
	return tab
}

// TestTableModel applies random inserts, counts, new windows and removals
// to a table and to a Go map, and checks after every step that the table
// holds what the map does, through growth, deleted slots and same-size
// rebuilds.
func TestTableModel(t *testing.T) {
	for _, universe := range []int{1, 7, 100, 3000} {
		t.Run(fmt.Sprintf("keys=%d", universe), func(t *testing.T) {
			seed := maphash.MakeSeed()
			r := rand.New(rand.NewPCG(uint64(universe), 1))
			var tab *table
			want := map[string]entry{}
			for step := range max(20*universe, 200) {
				k := fmt.Sprint("k", r.IntN(universe))
				h := maphash.String(seed, k)
				i := -1
				if tab != nil {
					i = tab.find(h, k)
				}
				if _, held := want[k]; held != (i >= 0) {
					t.Fatalf("step %d: find(%q) = %d, held %v", step, k, i, held)
				}
				switch op := r.IntN(4); {
				case i < 0:
					e := entry{count: 1, resetAt: int64(step)}
					tab = insert(seed, tab, k, e)
					want[k] = e
				case op == 0:
					tab.remove(i)
					delete(want, k)
				case op == 1:
					e := entry{count: 1, resetAt: int64(step)}
					tab.renew(i, e)
					want[k] = e
				case op == 2:
					if n, ok := tab.add(i); !ok || n != want[k].count+1 {
						t.Fatalf("step %d: add = %d, %v; want %d", step, n, ok, want[k].count+1)
					}
					want[k] = tab.entry(i)
				default:
					tab.bump(i)
					want[k] = tab.entry(i)
				}
				if step%97 == 0 || universe < 10 {
					checkTable(t, seed, tab, want)
				}
			}
			checkTable(t, seed, tab, want)
			for k := range want { // remove everything: the table is empty again
				tab.remove(tab.find(maphash.String(seed, k), k))
				delete(want, k)
			}
			checkTable(t, seed, tab, want)
		})
	}
}

// TestTableRebuildsInPlace fills a table and empties it again and again: the
// deleted slots are reclaimed by same-size rebuilds, so it does not grow.
func TestTableRebuildsInPlace(t *testing.T) {
	seed := maphash.MakeSeed()
	var tab *table
	want := map[string]entry{}
	sizes := map[int]bool{}
	for round := range 50 {
		for i := range 100 {
			k := fmt.Sprint(round, ".", i)
			tab = insert(seed, tab, k, entry{count: 1})
			want[k] = entry{count: 1}
		}
		for k := range want {
			tab.remove(tab.find(maphash.String(seed, k), k))
			delete(want, k)
		}
		checkTable(t, seed, tab, want)
		sizes[len(tab.slots)] = true
	}
	if len(tab.slots) > 512 || len(sizes) > 2 {
		t.Fatalf("%d slots for at most 100 keys, sizes %v", len(tab.slots), sizes)
	}
}

// TestTableShrinks checks that a rehash of a table whose entries were mostly
// removed makes it small again.
func TestTableShrinks(t *testing.T) {
	seed := maphash.MakeSeed()
	var tab *table
	want := map[string]entry{}
	for i := range 10_000 {
		k := fmt.Sprint(i)
		tab = insert(seed, tab, k, entry{count: 1})
		want[k] = entry{count: 1}
	}
	for k := range want {
		if k != "7" {
			tab.remove(tab.find(maphash.String(seed, k), k))
			delete(want, k)
		}
	}
	if !tab.sparse() {
		t.Fatalf("1 entry in %d slots is not sparse", len(tab.slots))
	}
	tab = tab.rehash(seed)
	checkTable(t, seed, tab, want)
	if len(tab.slots) != minTableSize {
		t.Fatalf("%d slots for 1 entry; want %d", len(tab.slots), minTableSize)
	}
}

// TestTableRetiredCounts checks that a reader's add on a count a writer has
// retired (removed, renewed or moved by a rehash) reports failure, so the
// attempt goes to the slow path instead of into a count no one reads.
func TestTableRetiredCounts(t *testing.T) {
	seed := maphash.MakeSeed()
	tab := insert(seed, nil, "a", entry{count: 3, resetAt: 10})
	tab = insert(seed, tab, "b", entry{count: 5, resetAt: 10})
	a := tab.find(maphash.String(seed, "a"), "a")

	moved := tab.rehash(seed) // the old table's counts are all retired
	if _, ok := tab.add(a); ok {
		t.Fatal("add on a table replaced by rehash succeeded")
	}
	if e := moved.entry(moved.find(maphash.String(seed, "a"), "a")); e != (entry{count: 3, resetAt: 10}) {
		t.Fatalf("a after rehash: %+v", e)
	}

	tab = moved
	b := tab.find(maphash.String(seed, "b"), "b")
	tab.remove(b)
	if _, ok := tab.add(b); ok {
		t.Fatal("add on a removed entry succeeded")
	}
	a = tab.find(maphash.String(seed, "a"), "a")
	tab.renew(a, entry{count: 1, resetAt: 20})
	if n, ok := tab.add(a); !ok || n != 2 {
		t.Fatalf("add after renew = %d, %v; want 2, true", n, ok)
	}
}

// TestTableConcurrentAdds counts one key from several goroutines without a
// lock while a writer keeps moving it to new tables: no attempt is lost or
// counted twice (run with -race).
func TestTableConcurrentAdds(t *testing.T) {
	seed := maphash.MakeSeed()
	h := maphash.String(seed, "hot")
	var (
		mu  sync.Mutex
		cur = insert(seed, nil, "hot", entry{count: 0, resetAt: 1})
		ptr = &cur
	)
	load := func() *table { mu.Lock(); defer mu.Unlock(); return *ptr }
	const goroutines, attempts = 4, 2000
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range attempts {
				t := load()
				if _, ok := t.add(t.find(h, "hot")); !ok {
					// The slow path: under the writers' lock, on the
					// current table.
					mu.Lock()
					t := *ptr
					t.bump(t.find(h, "hot"))
					mu.Unlock()
				}
			}
		})
	}
	wg.Go(func() {
		for range 200 {
			mu.Lock()
			*ptr = (*ptr).rehash(seed)
			mu.Unlock()
		}
	})
	wg.Wait()
	t0 := load()
	if n := t0.entry(t0.find(h, "hot")).count; n != goroutines*attempts {
		t.Fatalf("count %d after %d attempts", n, goroutines*attempts)
	}
}
