package ratelimit

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"testing"
)

// checkTable compares t with want, the entries it should hold, and checks
// its bookkeeping: live and used match ctrl, at most 7/8 of the slots are
// in use, and every key is found from its home slot.
func checkTable(t *testing.T, seed maphash.Seed, tab *table, want map[string]entry) {
	t.Helper()
	live, used := 0, 0
	for i, c := range tab.ctrl {
		switch {
		case c >= ctrlFull:
			live++
			used++
			s := tab.slots[i]
			if c != tagOf(maphash.String(seed, s.key)) {
				t.Fatalf("slot %d (%q): ctrl %#x is not the key's tag", i, s.key, c)
			}
			if w, ok := want[s.key]; !ok || w != s.entry {
				t.Fatalf("slot %d holds %q = %+v; want %+v (held: %v)", i, s.key, s.entry, w, ok)
			}
		case c == ctrlDeleted:
			used++
			fallthrough
		default:
			if tab.slots[i] != (slot{}) {
				t.Fatalf("slot %d is not full but holds %+v", i, tab.slots[i])
			}
		}
	}
	if live != tab.live || used != tab.used || live != len(want) {
		t.Fatalf("live %d, used %d; table says %d, %d; want %d live", live, used, tab.live, tab.used, len(want))
	}
	if n := len(tab.ctrl); n > 0 && used > n-n/8 {
		t.Fatalf("%d of %d slots in use, more than 7/8", used, n)
	}
	for k, w := range want {
		i := tab.find(maphash.String(seed, k), k)
		if i < 0 || tab.slots[i].entry != w {
			t.Fatalf("find(%q) = %d; want the slot of %+v", k, i, w)
		}
	}
}

// TestTableModel applies random inserts, updates and removals to a table
// and to a Go map, and checks after every step that the table holds what
// the map does, through growth, deleted slots and same-size rebuilds.
func TestTableModel(t *testing.T) {
	for _, universe := range []int{1, 7, 100, 3000} {
		t.Run(fmt.Sprintf("keys=%d", universe), func(t *testing.T) {
			seed := maphash.MakeSeed()
			r := rand.New(rand.NewPCG(uint64(universe), 1))
			var tab table
			want := map[string]entry{}
			steps := 20 * universe
			for step := range max(steps, 200) {
				k := fmt.Sprint("k", r.IntN(universe))
				h := maphash.String(seed, k)
				i := tab.find(h, k)
				if _, held := want[k]; held != (i >= 0) {
					t.Fatalf("step %d: find(%q) = %d, held %v", step, k, i, held)
				}
				switch {
				case i < 0:
					e := entry{count: 1, resetAt: int64(step)}
					j := tab.insert(seed, h, k, e)
					if tab.slots[j].key != k || tab.slots[j].entry != e {
						t.Fatalf("step %d: insert(%q) returned slot %d holding %+v", step, k, j, tab.slots[j])
					}
					want[k] = e
				case r.IntN(3) == 0:
					tab.remove(i)
					delete(want, k)
				default:
					tab.slots[i].count++
					want[k] = tab.slots[i].entry
				}
				if step%97 == 0 || universe < 10 {
					checkTable(t, seed, &tab, want)
				}
			}
			checkTable(t, seed, &tab, want)
			for k := range want { // remove everything: the table is empty again
				tab.remove(tab.find(maphash.String(seed, k), k))
				delete(want, k)
			}
			checkTable(t, seed, &tab, want)
		})
	}
}

// TestTableRebuildsInPlace fills a table and empties it again and again: the
// deleted slots are reclaimed by same-size rebuilds, so it does not grow.
func TestTableRebuildsInPlace(t *testing.T) {
	seed := maphash.MakeSeed()
	var tab table
	want := map[string]entry{}
	for round := range 50 {
		for i := range 100 {
			k := fmt.Sprint(round, ".", i)
			tab.insert(seed, maphash.String(seed, k), k, entry{count: 1})
			want[k] = entry{count: 1}
		}
		size := len(tab.ctrl)
		for k := range want {
			tab.remove(tab.find(maphash.String(seed, k), k))
			delete(want, k)
		}
		checkTable(t, seed, &tab, want)
		if round > 0 && len(tab.ctrl) != size {
			t.Fatalf("round %d: the table grew from %d to %d slots holding at most 100 keys", round, size, len(tab.ctrl))
		}
	}
	if len(tab.ctrl) > 512 {
		t.Fatalf("%d slots for at most 100 keys", len(tab.ctrl))
	}
}

// TestTableShrinks checks that a rehash of a table whose entries were mostly
// removed makes it small again.
func TestTableShrinks(t *testing.T) {
	seed := maphash.MakeSeed()
	var tab table
	want := map[string]entry{}
	for i := range 10_000 {
		k := fmt.Sprint(i)
		tab.insert(seed, maphash.String(seed, k), k, entry{count: 1})
		want[k] = entry{count: 1}
	}
	for k := range want {
		if k != "7" {
			tab.remove(tab.find(maphash.String(seed, k), k))
			delete(want, k)
		}
	}
	if !tab.sparse() {
		t.Fatalf("1 entry in %d slots is not sparse", len(tab.ctrl))
	}
	tab.rehash(seed)
	checkTable(t, seed, &tab, want)
	if len(tab.ctrl) != minTableSize {
		t.Fatalf("%d slots for 1 entry; want %d", len(tab.ctrl), minTableSize)
	}
}
