package logstore

import "hash/maphash"

// offsetMap maps a key to the highest offset seen for it, as Kafka's
// SkimpyOffsetMap does: keys are stored as 128-bit hashes (two independent
// 64-bit maphash values), so an entry is 24 bytes whatever the key size and
// the memory bound is exact. A false match needs a 128-bit collision.
// Open addressing with linear probing; the table starts small and doubles
// up to the slot count the byte budget allows, filling up to 90% at that
// size (Kafka's dedupe.buffer.load.factor).
type offsetMap struct {
	s1, s2   maphash.Seed
	h1, h2   []uint64 // h1 == 0: empty slot
	off      []int64
	n        int
	maxSlots int
}

const (
	mapEntryBytes   = 24
	mapInitialSlots = 1 << 12
)

// newOffsetMap returns a map using at most budget bytes of table.
func newOffsetMap(budget int) *offsetMap {
	maxSlots := mapInitialSlots
	for maxSlots*2*mapEntryBytes <= budget {
		maxSlots *= 2
	}
	m := &offsetMap{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), maxSlots: maxSlots}
	m.alloc(min(mapInitialSlots, maxSlots))
	return m
}

func (m *offsetMap) alloc(slots int) {
	m.h1, m.h2, m.off = make([]uint64, slots), make([]uint64, slots), make([]int64, slots)
}

// capacity is how many entries the map may hold at its largest.
func (m *offsetMap) capacity() int { return m.maxSlots * 9 / 10 }

// fits reports whether n more entries (at worst all new keys) fit.
func (m *offsetMap) fits(n int) bool { return m.n+n <= m.capacity() }

func (m *offsetMap) hash(key []byte) (uint64, uint64) {
	a := maphash.Bytes(m.s1, key)
	if a == 0 {
		a = 1
	}
	return a, maphash.Bytes(m.s2, key)
}

// put records off for key, keeping the larger offset if key is present.
// The caller checks fits first.
func (m *offsetMap) put(key []byte, off int64) {
	if len(m.h1) < m.maxSlots && m.n+1 > len(m.h1)*3/4 {
		m.grow()
	}
	a, b := m.hash(key)
	mask := len(m.h1) - 1
	for i := int(a) & mask; ; i = (i + 1) & mask {
		switch {
		case m.h1[i] == 0:
			m.h1[i], m.h2[i], m.off[i] = a, b, off
			m.n++
			return
		case m.h1[i] == a && m.h2[i] == b:
			if off > m.off[i] {
				m.off[i] = off
			}
			return
		}
	}
}

// get returns the highest offset recorded for key.
func (m *offsetMap) get(key []byte) (int64, bool) {
	a, b := m.hash(key)
	mask := len(m.h1) - 1
	for i := int(a) & mask; ; i = (i + 1) & mask {
		switch {
		case m.h1[i] == 0:
			return 0, false
		case m.h1[i] == a && m.h2[i] == b:
			return m.off[i], true
		}
	}
}

func (m *offsetMap) grow() {
	h1, h2, off := m.h1, m.h2, m.off
	m.alloc(len(h1) * 2)
	mask := len(m.h1) - 1
	for j, a := range h1 {
		if a == 0 {
			continue
		}
		i := int(a) & mask
		for m.h1[i] != 0 {
			i = (i + 1) & mask
		}
		m.h1[i], m.h2[i], m.off[i] = a, h2[j], off[j]
	}
}
