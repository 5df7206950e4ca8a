package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
)

// Index files (see doc.go for the layout). Both start with the same 32-byte
// header; entries follow. An index is valid only for the log file size and
// next offset recorded in its header, so a stale index is detected and
// rebuilt instead of trusted.

const (
	indexHeaderLen = 32
	idxEntryLen    = 8
	tidxEntryLen   = 16
	indexVersion   = 1
)

var (
	offsetIndexMagic = [4]byte{'M', 'K', 'O', 'I'}
	timeIndexMagic   = [4]byte{'M', 'K', 'T', 'I'}
	castagnoli       = crc32.MakeTable(crc32.Castagnoli)
	errBadIndex      = errors.New("logstore: bad index file")
)

// idxEntry maps the base offset of a batch (relative to the segment base)
// to its byte position.
type idxEntry struct {
	rel uint32
	pos uint32
}

// tidxEntry: ts is the largest batch max-timestamp in the segment up to and
// including the batch at pos, whose base offset is base+rel. Entries are
// added when that maximum grows (at most one per index interval), so ts is
// strictly increasing.
type tidxEntry struct {
	ts  int64
	rel uint32
	pos uint32
}

type indexHeader struct {
	logSize int64
	next    int64
	count   int
	// snapshot marks index files written for the active segment (a
	// recovery checkpoint, Close): they prove that the bytes they describe
	// were fsynced, not that the segment was sealed. Only files without it
	// (written by a seal, by recovery for a sealed segment, by
	// compaction) prove a finished seal (see Recovery in doc.go).
	snapshot bool
}

// idxFlagSnapshot is header byte 5's bit for indexHeader.snapshot. Files
// written before it existed have byte 5 zero: a sealed segment's files then
// were always written by its seal.
const idxFlagSnapshot = 1

func encodeIndexHeader(dst []byte, magic [4]byte, h indexHeader) {
	copy(dst[0:4], magic[:])
	dst[4] = indexVersion
	dst[5], dst[6], dst[7] = 0, 0, 0
	if h.snapshot {
		dst[5] = idxFlagSnapshot
	}
	binary.BigEndian.PutUint64(dst[8:], uint64(h.logSize))
	binary.BigEndian.PutUint64(dst[16:], uint64(h.next))
	binary.BigEndian.PutUint32(dst[24:], uint32(h.count))
}

func sealIndex(buf []byte) {
	crc := crc32.Checksum(buf[:28], castagnoli)
	crc = crc32.Update(crc, castagnoli, buf[indexHeaderLen:])
	binary.BigEndian.PutUint32(buf[28:], crc)
}

func encodeOffsetIndex(h indexHeader, entries []idxEntry) []byte {
	h.count = len(entries)
	buf := make([]byte, indexHeaderLen+len(entries)*idxEntryLen)
	encodeIndexHeader(buf, offsetIndexMagic, h)
	p := buf[indexHeaderLen:]
	for i, e := range entries {
		binary.BigEndian.PutUint32(p[i*8:], e.rel)
		binary.BigEndian.PutUint32(p[i*8+4:], e.pos)
	}
	sealIndex(buf)
	return buf
}

func encodeTimeIndex(h indexHeader, entries []tidxEntry) []byte {
	h.count = len(entries)
	buf := make([]byte, indexHeaderLen+len(entries)*tidxEntryLen)
	encodeIndexHeader(buf, timeIndexMagic, h)
	p := buf[indexHeaderLen:]
	for i, e := range entries {
		binary.BigEndian.PutUint64(p[i*16:], uint64(e.ts))
		binary.BigEndian.PutUint32(p[i*16+8:], e.rel)
		binary.BigEndian.PutUint32(p[i*16+12:], e.pos)
	}
	sealIndex(buf)
	return buf
}

func checkIndex(buf []byte, magic [4]byte, entryLen int) (indexHeader, []byte, error) {
	var h indexHeader
	if len(buf) < indexHeaderLen {
		return h, nil, fmt.Errorf("%w: %d bytes", errBadIndex, len(buf))
	}
	if [4]byte(buf[0:4]) != magic || buf[4] != indexVersion {
		return h, nil, fmt.Errorf("%w: bad magic or version", errBadIndex)
	}
	h.logSize = int64(binary.BigEndian.Uint64(buf[8:]))
	h.next = int64(binary.BigEndian.Uint64(buf[16:]))
	h.count = int(binary.BigEndian.Uint32(buf[24:]))
	h.snapshot = buf[5]&idxFlagSnapshot != 0
	body := buf[indexHeaderLen:]
	if h.logSize < 0 || uint64(h.count)*uint64(entryLen) != uint64(len(body)) {
		return h, nil, fmt.Errorf("%w: %d entries in %d bytes", errBadIndex, h.count, len(body))
	}
	crc := crc32.Checksum(buf[:28], castagnoli)
	crc = crc32.Update(crc, castagnoli, body)
	if crc != binary.BigEndian.Uint32(buf[28:]) {
		return h, nil, fmt.Errorf("%w: checksum mismatch", errBadIndex)
	}
	return h, body, nil
}

// decodeOffsetIndex parses and sanity-checks an offset index: positions and
// relative offsets strictly increasing and inside the log.
func decodeOffsetIndex(buf []byte) (indexHeader, []idxEntry, error) {
	h, body, err := checkIndex(buf, offsetIndexMagic, idxEntryLen)
	if err != nil {
		return h, nil, err
	}
	entries := make([]idxEntry, h.count)
	for i := range entries {
		e := idxEntry{rel: binary.BigEndian.Uint32(body[i*8:]), pos: binary.BigEndian.Uint32(body[i*8+4:])}
		if int64(e.pos) >= h.logSize || (i > 0 && (e.rel <= entries[i-1].rel || e.pos <= entries[i-1].pos)) {
			return h, nil, fmt.Errorf("%w: entry %d out of order", errBadIndex, i)
		}
		entries[i] = e
	}
	return h, entries, nil
}

func decodeTimeIndex(buf []byte) (indexHeader, []tidxEntry, error) {
	h, body, err := checkIndex(buf, timeIndexMagic, tidxEntryLen)
	if err != nil {
		return h, nil, err
	}
	entries := make([]tidxEntry, h.count)
	for i := range entries {
		e := tidxEntry{ts: int64(binary.BigEndian.Uint64(body[i*16:])), rel: binary.BigEndian.Uint32(body[i*16+8:]), pos: binary.BigEndian.Uint32(body[i*16+12:])}
		if int64(e.pos) >= h.logSize || (i > 0 && (e.ts <= entries[i-1].ts || e.pos <= entries[i-1].pos)) {
			return h, nil, fmt.Errorf("%w: entry %d out of order", errBadIndex, i)
		}
		entries[i] = e
	}
	return h, entries, nil
}

// floorByRel returns the last entry with rel <= rel (ok false if none).
func floorByRel(idx []idxEntry, rel uint32) (idxEntry, bool) {
	i := sort.Search(len(idx), func(i int) bool { return idx[i].rel > rel })
	if i == 0 {
		return idxEntry{}, false
	}
	return idx[i-1], true
}

// floorByPos returns the last entry with pos <= pos.
func floorByPos(idx []idxEntry, pos int64) (idxEntry, bool) {
	i := sort.Search(len(idx), func(i int) bool { return int64(idx[i].pos) > pos })
	if i == 0 {
		return idxEntry{}, false
	}
	return idx[i-1], true
}

// lastBelowTs returns the last time entry with ts < t.
func lastBelowTs(tidx []tidxEntry, t int64) (tidxEntry, bool) {
	i := sort.Search(len(tidx), func(i int) bool { return tidx[i].ts >= t })
	if i == 0 {
		return tidxEntry{}, false
	}
	return tidx[i-1], true
}
