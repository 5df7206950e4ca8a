package groupstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// On-disk layout; doc.go is the specification.
const (
	fileMagic      = "MKGS"
	formatVersion  = 1
	fileHeaderLen  = 20 // magic(4) version(2) flags(2) generation(8) crc(4)
	frameHeaderLen = 12 // len(4) payloadCRC(4) headerCRC(4)
	// maxFrame caps a payload before anything is allocated for it; larger
	// commits are split into several frames.
	maxFrame = 8 << 20
)

// Frame payload types.
const (
	opCommit        byte = 1 // group, [topic partition offset epoch metadata commitMs expireMs]
	opDeleteOffsets byte = 2 // group, [topic partition]
	opDeleteGroup   byte = 3 // group
	opDeleteTopic   byte = 4 // topic
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func encodeFileHeader(gen uint64) []byte {
	b := make([]byte, fileHeaderLen)
	copy(b, fileMagic)
	binary.BigEndian.PutUint16(b[4:], formatVersion)
	binary.BigEndian.PutUint64(b[8:], gen)
	binary.BigEndian.PutUint32(b[16:], crc(b[:16]))
	return b
}

var (
	errBadMagic   = errors.New("bad magic")
	errBadVersion = errors.New("unsupported format version")
	errHeaderCRC  = errors.New("file header checksum mismatch")
	errShort      = errors.New("truncated")
)

func decodeFileHeader(b []byte) (gen uint64, err error) {
	if len(b) < fileHeaderLen {
		return 0, errShort
	}
	if string(b[:4]) != fileMagic {
		return 0, errBadMagic
	}
	if binary.BigEndian.Uint32(b[16:]) != crc(b[:16]) {
		return 0, errHeaderCRC
	}
	if v := binary.BigEndian.Uint16(b[4:]); v != formatVersion {
		return 0, fmt.Errorf("%w %d", errBadVersion, v)
	}
	return binary.BigEndian.Uint64(b[8:]), nil
}

// appendFrame frames payload (which starts at dst[start+frameHeaderLen:]).
// The caller reserved frameHeaderLen bytes at start and appended the payload.
func sealFrame(dst []byte, start int) {
	payload := dst[start+frameHeaderLen:]
	h := dst[start : start+frameHeaderLen]
	binary.BigEndian.PutUint32(h[0:], uint32(len(payload)))
	binary.BigEndian.PutUint32(h[4:], crc(payload))
	binary.BigEndian.PutUint32(h[8:], crc(h[:8]))
}

// frameAt checks whether a whole valid frame starts at b[0]. It returns the
// payload and the frame's total length, or ok=false. The header checksum is
// verified before the length is trusted, so scanning garbage for the next
// frame costs one 8-byte CRC per position, not a payload CRC.
func frameAt(b []byte) (payload []byte, n int, ok bool) {
	if len(b) < frameHeaderLen {
		return nil, 0, false
	}
	if binary.BigEndian.Uint32(b[8:]) != crc(b[:8]) {
		return nil, 0, false
	}
	l := binary.BigEndian.Uint32(b[0:])
	if l == 0 || l > maxFrame || int(l) > len(b)-frameHeaderLen {
		return nil, 0, false
	}
	payload = b[frameHeaderLen : frameHeaderLen+int(l)]
	if binary.BigEndian.Uint32(b[4:]) != crc(payload) {
		return nil, 0, false
	}
	if _, err := decodeOp(payload); err != nil {
		return nil, 0, false
	}
	return payload, frameHeaderLen + int(l), true
}

// frameLen returns the payload length of a frame whose header checksum is
// valid, whether or not its payload is.
func frameLen(b []byte) (int, bool) {
	if len(b) < frameHeaderLen || binary.BigEndian.Uint32(b[8:]) != crc(b[:8]) {
		return 0, false
	}
	l := binary.BigEndian.Uint32(b[0:])
	if l == 0 || l > maxFrame {
		return 0, false
	}
	return int(l), true
}

// op is one decoded frame.
type op struct {
	kind    byte
	group   string // commit, deleteOffsets, deleteGroup
	topic   string // deleteTopic
	commits []Commit
	parts   []TopicPartition
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendCommit(b []byte, c *Commit) []byte {
	b = appendString(b, c.Topic)
	b = binary.AppendVarint(b, int64(c.Partition))
	b = binary.AppendVarint(b, c.Offset.Offset)
	b = binary.AppendVarint(b, int64(c.Offset.LeaderEpoch))
	b = appendString(b, c.Offset.Metadata)
	b = binary.AppendVarint(b, c.Offset.CommitMs)
	b = binary.AppendVarint(b, c.Offset.ExpireMs)
	return b
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) int32() int32 {
	v := r.varint()
	if v != int64(int32(v)) && r.err == nil {
		r.err = errors.New("int32 out of range")
	}
	return int32(v)
}

func (r *reader) string() string {
	l := r.uvarint()
	if r.err != nil {
		return ""
	}
	if l > uint64(len(r.b)) {
		r.err = errShort
		return ""
	}
	s := string(r.b[:l])
	r.b = r.b[l:]
	return s
}

// count reads an element count and rejects counts that cannot fit in the
// remaining bytes (each element needs at least min bytes), so a corrupt count
// never drives a large allocation.
func (r *reader) count(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.err = errShort
		return 0
	}
	return int(n)
}

// decodeOp decodes one frame payload. It never panics and never allocates
// more than a small multiple of len(p).
func decodeOp(p []byte) (op, error) {
	if len(p) == 0 {
		return op{}, errShort
	}
	r := &reader{b: p[1:]}
	o := op{kind: p[0]}
	switch o.kind {
	case opCommit:
		o.group = r.string()
		n := r.count(7)
		o.commits = make([]Commit, 0, n)
		for i := 0; i < n && r.err == nil; i++ {
			var c Commit
			c.Topic = r.string()
			c.Partition = r.int32()
			c.Offset.Offset = r.varint()
			c.Offset.LeaderEpoch = r.int32()
			c.Offset.Metadata = r.string()
			c.Offset.CommitMs = r.varint()
			c.Offset.ExpireMs = r.varint()
			o.commits = append(o.commits, c)
		}
	case opDeleteOffsets:
		o.group = r.string()
		n := r.count(2)
		o.parts = make([]TopicPartition, 0, n)
		for i := 0; i < n && r.err == nil; i++ {
			var tp TopicPartition
			tp.Topic = r.string()
			tp.Partition = r.int32()
			o.parts = append(o.parts, tp)
		}
	case opDeleteGroup:
		o.group = r.string()
	case opDeleteTopic:
		o.topic = r.string()
	default:
		return op{}, fmt.Errorf("unknown frame type %d", o.kind)
	}
	if r.err != nil {
		return op{}, r.err
	}
	if len(r.b) != 0 {
		return op{}, errors.New("trailing bytes in frame")
	}
	return o, nil
}

func binaryAppendUvarint(b []byte, n int) []byte  { return binary.AppendUvarint(b, uint64(n)) }
func binaryAppendVarint(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }
