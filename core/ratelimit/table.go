package ratelimit

import "hash/maphash"

// table is the open-addressing hash table of one shard: a slot per entry,
// holding the caller's key and the entry inline, found by linear probing
// from the key's home slot. It exists so that counting a key already held
// hashes the key once (the hash that also picked the shard, computed before
// the shard is locked) and updates the entry where it lies, where a Go map
// hashes the key again for the lookup and once more to write the entry back.
//
// ctrl has one byte per slot, read before the slot itself: ctrlEmpty,
// ctrlDeleted (a removed entry that probes for other keys go past), or
// ctrlFull with 7 bits of the key's hash, so that a probe compares a key
// only when those bits match. At most 7/8 of the slots are in use (full or
// deleted), so every probe ends at an empty slot. Not safe for concurrent
// use: its shard's mutex guards it.
type table struct {
	ctrl  []uint8 // len(ctrl) == len(slots), a power of two, or 0
	slots []slot
	live  int // full slots
	used  int // full and deleted slots
}

// slot is one key and its entry.
type slot struct {
	key string
	entry
}

const (
	ctrlEmpty   = 0x00
	ctrlDeleted = 0x01
	ctrlFull    = 0x80 // | the top 7 bits of the key's hash

	// minTableSize is the number of slots of a shard's first table.
	minTableSize = 8
)

func tagOf(h uint64) uint8 { return ctrlFull | uint8(h>>57) }

// find returns the index of key's slot, or -1 when key is not held. h is
// maphash.String of key with the store's seed.
func (t *table) find(h uint64, key string) int {
	if len(t.ctrl) == 0 {
		return -1
	}
	mask := uint64(len(t.ctrl) - 1)
	tag := tagOf(h)
	for i := h >> shardBits & mask; ; i = (i + 1) & mask {
		switch t.ctrl[i] {
		case tag:
			if t.slots[i].key == key {
				return int(i)
			}
		case ctrlEmpty:
			return -1
		}
	}
}

// insert adds key, which the table does not hold, with entry e and returns
// its slot's index. It grows the table, or rebuilds it without its deleted
// slots, first when the new entry would take it past 7/8 of its slots in
// use; seed rehashes the keys it moves.
func (t *table) insert(seed maphash.Seed, h uint64, key string, e entry) int {
	if n := len(t.ctrl); t.used >= n-n/8 {
		t.rehash(seed)
	}
	mask := uint64(len(t.ctrl) - 1)
	i := h >> shardBits & mask
	for t.ctrl[i] >= ctrlFull {
		i = (i + 1) & mask
	}
	if t.ctrl[i] == ctrlEmpty {
		t.used++
	}
	t.ctrl[i] = tagOf(h)
	t.slots[i] = slot{key: key, entry: e}
	t.live++
	return int(i)
}

// sparse reports whether the table holds so few entries for its size that
// a rehash should shrink it.
func (t *table) sparse() bool {
	return len(t.ctrl) > minTableSize && t.live < len(t.ctrl)/16
}

// remove empties the full slot i. The slot becomes empty again, rather than
// deleted, when the next one is empty: no probe goes past it then.
func (t *table) remove(i int) {
	t.slots[i] = slot{} // drop the key for the garbage collector
	t.live--
	if t.ctrl[(i+1)&(len(t.ctrl)-1)] == ctrlEmpty {
		t.ctrl[i] = ctrlEmpty
		t.used--
	} else {
		t.ctrl[i] = ctrlDeleted
	}
}

// rehash moves the entries into a new table without deleted slots, of the
// smallest size (at least minTableSize) that one more entry leaves at most
// 7/16 full: twice as large when a full table grows, the same size when
// deleted slots filled it, smaller when most entries were removed.
func (t *table) rehash(seed maphash.Seed) {
	n := minTableSize
	for t.live+1 > n*7/16 {
		n *= 2
	}
	old := *t
	*t = table{ctrl: make([]uint8, n), slots: make([]slot, n)}
	mask := uint64(n - 1)
	for i, c := range old.ctrl {
		if c < ctrlFull {
			continue
		}
		s := &old.slots[i]
		h := maphash.String(seed, s.key)
		j := h >> shardBits & mask
		for t.ctrl[j] != ctrlEmpty {
			j = (j + 1) & mask
		}
		t.ctrl[j] = c
		t.slots[j] = *s
	}
	t.live = old.live
	t.used = old.live
}
