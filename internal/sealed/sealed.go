// Package sealed frames one small payload with a magic, a version, its
// length and a CRC32C, so that a file rewritten whole (vfs.WriteFileAtomic)
// can tell a damaged copy from a good one. The broker keeps its client
// quotas and its ACLs this way.
//
// # Format
//
//	magic (8 bytes) | version u8 | length u32 | crc32c u32 | payload
//
// Integers are big-endian; the CRC (Castagnoli) covers the payload.
package sealed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// MagicLen is the length every magic must have.
const MagicLen = 8

// HeaderLen is the bytes before the payload.
const HeaderLen = MagicLen + 1 + 4 + 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors of Open; each is wrapped with detail.
var (
	ErrBadMagic   = errors.New("sealed: bad magic")
	ErrBadVersion = errors.New("sealed: unsupported version")
	ErrTruncated  = errors.New("sealed: truncated")
	ErrChecksum   = errors.New("sealed: checksum mismatch")
	ErrContent    = errors.New("sealed: invalid content")
)

// Seal returns payload framed under magic and version.
func Seal(magic string, version byte, payload []byte) []byte {
	if len(magic) != MagicLen {
		panic("sealed: magic must be 8 bytes")
	}
	out := make([]byte, HeaderLen, HeaderLen+len(payload))
	copy(out, magic)
	out[MagicLen] = version
	binary.BigEndian.PutUint32(out[MagicLen+1:], uint32(len(payload)))
	binary.BigEndian.PutUint32(out[MagicLen+5:], crc32.Checksum(payload, castagnoli))
	return append(out, payload...)
}

// Open checks data's frame and returns its payload; max bounds the length
// it accepts before looking further, so a lying length costs nothing.
func Open(magic string, version byte, max uint32, data []byte) ([]byte, error) {
	if len(data) < MagicLen || string(data[:MagicLen]) != magic {
		return nil, ErrBadMagic
	}
	if len(data) < HeaderLen {
		return nil, fmt.Errorf("%w: %d header bytes of %d", ErrTruncated, len(data), HeaderLen)
	}
	if v := data[MagicLen]; v != version {
		return nil, fmt.Errorf("%w: %d", ErrBadVersion, v)
	}
	n := binary.BigEndian.Uint32(data[MagicLen+1:])
	sum := binary.BigEndian.Uint32(data[MagicLen+5:])
	if n > max {
		return nil, fmt.Errorf("%w: payload length %d over %d", ErrContent, n, max)
	}
	payload := data[HeaderLen:]
	if uint32(len(payload)) < n {
		return nil, fmt.Errorf("%w: %d payload bytes of %d", ErrTruncated, len(payload), n)
	}
	if uint32(len(payload)) > n {
		return nil, fmt.Errorf("%w: %d bytes after the payload", ErrContent, uint32(len(payload))-n)
	}
	if crc32.Checksum(payload, castagnoli) != sum {
		return nil, ErrChecksum
	}
	return payload, nil
}
