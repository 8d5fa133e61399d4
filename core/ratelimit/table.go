package ratelimit

import (
	"hash/maphash"
	"sync/atomic"
)

// table is the open-addressing hash table of one shard: a slot per entry,
// holding the caller's key and the entry inline, found by linear probing
// from the key's home slot. It exists so that counting a key already held
// hashes the key once (the hash that also picked the shard) and updates the
// entry where it lies, where a Go map hashes the key again for the lookup
// and once more to write the entry back; and so that it can be read without
// a lock.
//
// ctrl has one byte per slot, four to a word: ctrlEmpty, ctrlDeleted (a
// removed entry that probes for other keys go past), or ctrlFull with 7 bits
// of the key's hash, so that a probe compares a key only when those bits
// match. At most 7/8 of the slots are in use (full or deleted), so a probe
// ends at an empty slot.
//
// Concurrency: the shard's mutex serialises every change (writers); readers
// take no lock. A reader counting a key held in its window loads the
// table, probes ctrl, compares the key, loads resetAt and adds one to the
// count: a single atomic write, so that CPUs counting one key (the
// brute-force case) move only the count's cache line between them, once per
// attempt. This is safe because of what writers never do:
//   - A slot's key is written before its ctrl byte publishes it (an atomic
//     store) and never changes while the table is in use: removing an entry
//     marks its slot deleted and leaves the key; slots are reclaimed only by
//     rehash, which builds a new table and publishes it whole (the shard's
//     atomic pointer), so readers still on the old one read valid memory.
//   - Before a writer retires a count (removing its entry, starting a new
//     window in its slot, moving it to a new table), it sets countFrozen in
//     it (atomic Or) and keeps the value it had. A reader's add that lands
//     on a frozen count sees the bit in the result and takes the slow path,
//     under the mutex, so no attempt is counted into a retired count.
//
// One race is left on purpose: a reader that loaded resetAt just before a
// writer started a new window in the slot (the writer's clock had passed
// resetAt, the reader's had not) adds to the new window's count and
// reports the old resetAt. An attempt at the boundary then counts against
// the new window: the limiter errs towards refusing, never towards
// allowing more than MaxAttempts per window.
//
// A writer changing a live count in place (bump, or taking one back) does
// it with a compare-and-swap loop under the mutex, since readers may be
// adding to it meanwhile. Taking back the last one (refund) retires the
// count like any other removal, but freezes it only if it is still exactly
// one (a compare-and-swap to 1|countFrozen), so an add that came first is
// taken back instead of lost.
type table struct {
	ctrl   []atomic.Uint32 // len(slots)/4 words
	slots  []slot          // a power of two, at least minTableSize
	counts []atomic.Int64  // counts[i] is slot i's count
	live   int             // full slots; writers only
	used   int             // full and deleted slots; writers only
}

// slot is a key and when its window ends.
type slot struct {
	key     string       // immutable once published
	resetAt atomic.Int64 // Unix nanoseconds; the entry is live while now < resetAt
}

const (
	ctrlEmpty   = 0x00
	ctrlDeleted = 0x01
	ctrlFull    = 0x80 // | the top 7 bits of the key's hash

	// minTableSize is the number of slots of a shard's first table.
	minTableSize = 8

	// countFrozen marks a count a writer has retired (see table). Counts
	// saturate below it, at maxCount.
	countFrozen = 1 << 62
	maxCount    = countFrozen - 1
)

func tagOf(h uint64) uint8 { return ctrlFull | uint8(h>>57) }

func newTable(n int) *table {
	return &table{ctrl: make([]atomic.Uint32, n/4), slots: make([]slot, n), counts: make([]atomic.Int64, n)}
}

// ctrlAt returns slot i's control byte.
func (t *table) ctrlAt(i uint64) uint8 {
	return uint8(t.ctrl[i/4].Load() >> (i % 4 * 8))
}

// setCtrl sets slot i's control byte; writers only.
func (t *table) setCtrl(i uint64, c uint8) {
	w := &t.ctrl[i/4]
	shift := i % 4 * 8
	w.Store(w.Load()&^(0xff<<shift) | uint32(c)<<shift)
}

// find returns the index of key's slot, or -1 when key is not held (or t
// is nil). h is maphash.String of key with the store's seed. A reader may
// miss a key being inserted or moved; it then takes the slow path.
func (t *table) find(h uint64, key string) int {
	if t == nil {
		return -1
	}
	mask := uint64(len(t.slots) - 1)
	tag := tagOf(h)
	i := h >> shardBits & mask
	for range len(t.slots) {
		switch t.ctrlAt(i) {
		case tag:
			if t.slots[i].key == key {
				return int(i)
			}
		case ctrlEmpty:
			return -1
		}
		i = (i + 1) & mask
	}
	return -1
}

// add adds one to slot i's count and returns the new count; false when the
// count was retired (frozen) or reached maxCount, for the slow path to
// sort out under the mutex.
func (t *table) add(i int) (int64, bool) {
	n := t.counts[i].Add(1)
	return n, n <= maxCount
}

// entry returns slot i's count and resetAt; writers only.
func (t *table) entry(i int) entry {
	return entry{count: t.counts[i].Load(), resetAt: t.slots[i].resetAt.Load()}
}

// renew sets slot i's count and resetAt, retiring the count it replaces;
// writers only.
func (t *table) renew(i int, e entry) {
	t.counts[i].Or(countFrozen)
	t.slots[i].resetAt.Store(e.resetAt)
	t.counts[i].Store(e.count)
}

// bump adds one to slot i's count, up to maxCount, and returns it; writers
// only. It also repairs a count that readers' adds took past maxCount.
func (t *table) bump(i int) int64 {
	for {
		n := t.counts[i].Load()
		next := min(n+1, maxCount)
		if n < 0 || n > maxCount {
			next = maxCount
		}
		if t.counts[i].CompareAndSwap(n, next) {
			return next
		}
	}
}

// refund takes one off slot i's count, which must be live (full, in the
// current table, under the mutex), and reports whether the count was one;
// writers only. Readers may be adding to the count meanwhile, so it is a
// compare-and-swap loop, like bump: an add that lands between the load and
// the swap makes the swap fail and is kept. A count of one is not set to
// zero but frozen, by a swap from exactly 1 to 1|countFrozen, and the caller
// must then remove the slot: an add that lands after the freeze sees the
// frozen count and counts again under the mutex, after the removal. A count
// of zero is left alone; one that readers' adds took past maxCount counts
// as maxCount (see bump).
func (t *table) refund(i int) bool {
	for {
		n := t.counts[i].Load()
		switch {
		case n == 0:
			return false
		case n == 1:
			if t.counts[i].CompareAndSwap(1, 1|countFrozen) {
				return true
			}
		default:
			next := n - 1
			if n < 0 || n > maxCount {
				next = maxCount - 1
			}
			if t.counts[i].CompareAndSwap(n, next) {
				return false
			}
		}
	}
}

// full reports whether inserting one more entry would take the table past
// 7/8 of its slots in use; the writer then rehashes first.
func (t *table) full() bool {
	n := len(t.slots)
	return t.used >= n-n/8
}

// insert adds key, which the table does not hold, with entry e, in an empty
// slot; writers only, after checking full. The slot is published last.
func (t *table) insert(h uint64, key string, e entry) {
	mask := uint64(len(t.slots) - 1)
	i := h >> shardBits & mask
	for t.ctrlAt(i) != ctrlEmpty {
		i = (i + 1) & mask
	}
	t.slots[i].key = key
	t.slots[i].resetAt.Store(e.resetAt)
	t.counts[i].Store(e.count)
	t.setCtrl(i, tagOf(h))
	t.used++
	t.live++
}

// remove retires the full slot i's count and marks the slot deleted;
// writers only. The key stays until the next rehash (see table).
func (t *table) remove(i int) {
	t.counts[i].Or(countFrozen)
	t.setCtrl(uint64(i), ctrlDeleted)
	t.live--
}

// sparse reports whether the table holds so few entries for its size, or
// so many deleted slots, that a rehash should shrink or clean it.
func (t *table) sparse() bool {
	n := len(t.slots)
	return n > minTableSize && t.live < n/16 || t.used-t.live > n/4
}

// rehash returns a new table holding t's entries, without deleted slots, of
// the smallest size (at least minTableSize) that one more entry leaves at
// most 7/16 full: twice as large when a full table grows, the same size when
// deleted slots filled it, smaller when most entries were removed. It
// retires every count of t; writers only, and the caller publishes the new
// table.
// t may be nil, for a shard's first table.
func (t *table) rehash(seed maphash.Seed) *table {
	if t == nil {
		return newTable(minTableSize)
	}
	n := minTableSize
	for t.live+1 > n*7/16 {
		n *= 2
	}
	nt := newTable(n)
	for i := range t.slots {
		c := t.ctrlAt(uint64(i))
		if c < ctrlFull {
			continue
		}
		count := t.counts[i].Or(countFrozen)
		if count > maxCount {
			count = maxCount // readers' adds past maxCount
		}
		key := t.slots[i].key
		nt.insert(maphash.String(seed, key), key, entry{count: count, resetAt: t.slots[i].resetAt.Load()})
	}
	return nt
}
