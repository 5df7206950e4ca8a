package share

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"

	"github.com/minikafka/minikafka/internal/vfs"
)

// The state file; see doc.go for its layout.
const (
	stateFile    = "share-state.log"
	frameHdrLen  = 8
	maxFrame     = 8 << 20
	kindPart     = 1 // a share-partition's whole state
	kindPartDel  = 2 // a share-partition's state removed
	kindConfig   = 3 // a group's configs (the whole set)
	kindGroupDel = 4 // a group and all its state removed

	fileMagic   = "MKSH"
	fileVersion = 1
	headerLen   = 8
)

// fileHeader: magic, version u16, flags u16 (none yet).
func fileHeader() []byte { return append([]byte(fileMagic), 0, fileVersion, 0, 0) }

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// run is consecutive in-flight offsets with the same state and delivery
// count; a partition's in-flight window is stored as runs.
type run struct {
	n     uint32
	state recState
	count int16
}

// frame is one decoded record of the state file.
type frame struct {
	kind    byte
	group   string
	topicID [16]byte
	part    int32
	spso    int64
	runs    []run
	configs map[string]string
}

func putStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// encode appends f's payload to b.
func (f *frame) encode(b []byte) []byte {
	b = append(b, f.kind)
	b = putStr(b, f.group)
	switch f.kind {
	case kindPart, kindPartDel:
		b = append(b, f.topicID[:]...)
		b = binary.BigEndian.AppendUint32(b, uint32(f.part))
		if f.kind == kindPart {
			b = binary.BigEndian.AppendUint64(b, uint64(f.spso))
			b = binary.AppendUvarint(b, uint64(len(f.runs)))
			for _, r := range f.runs {
				b = binary.AppendUvarint(b, uint64(r.n))
				b = append(b, byte(r.state))
				b = binary.BigEndian.AppendUint16(b, uint16(r.count))
			}
		}
	case kindConfig:
		b = binary.AppendUvarint(b, uint64(len(f.configs)))
		for k, v := range f.configs {
			b = putStr(b, k)
			b = putStr(b, v)
		}
	}
	return b
}

var errCorrupt = errors.New("share state: corrupt frame")

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint(limit uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > limit {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = errCorrupt
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	n := r.uvarint(1 << 16)
	return string(r.bytes(int(n)))
}

// decodeFrame decodes one payload; it never panics on bad input (fuzzed).
func decodeFrame(p []byte) (frame, error) {
	r := &reader{b: p}
	var f frame
	k := r.bytes(1)
	if r.err != nil {
		return f, r.err
	}
	f.kind = k[0]
	f.group = r.str()
	switch f.kind {
	case kindPart, kindPartDel:
		copy(f.topicID[:], r.bytes(16))
		if b := r.bytes(4); b != nil {
			f.part = int32(binary.BigEndian.Uint32(b))
		}
		if f.kind == kindPart {
			if b := r.bytes(8); b != nil {
				f.spso = int64(binary.BigEndian.Uint64(b))
			}
			n := r.uvarint(uint64(len(r.b)))
			var total uint64
			for i := uint64(0); i < n && r.err == nil; i++ {
				rn := r.uvarint(maxInFlightWindow)
				sc := r.bytes(3)
				if r.err != nil {
					break
				}
				st := recState(sc[0])
				if st > stateArchived || rn == 0 {
					return f, errCorrupt
				}
				total += rn
				if total > maxInFlightWindow {
					return f, errCorrupt
				}
				f.runs = append(f.runs, run{n: uint32(rn), state: st, count: int16(binary.BigEndian.Uint16(sc[1:]))})
			}
			if f.spso < 0 {
				return f, errCorrupt
			}
		}
	case kindConfig:
		n := r.uvarint(uint64(len(r.b)))
		f.configs = make(map[string]string, min(n, 64))
		for i := uint64(0); i < n && r.err == nil; i++ {
			k := r.str()
			f.configs[k] = r.str()
		}
	case kindGroupDel:
	default:
		return f, errCorrupt
	}
	if r.err == nil && len(r.b) != 0 {
		return f, errCorrupt
	}
	return f, r.err
}

// appendFrame frames payload p: [len u32][crc32c u32][p].
func appendFrame(dst, p []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(p)))
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(p, crcTable))
	return append(dst, p...)
}

// decodeFrames decodes every whole, valid frame of data and returns the
// length of that valid prefix; what follows it is a torn tail.
func decodeFrames(data []byte) ([]frame, int) {
	var out []frame
	off := 0
	for len(data)-off >= frameHdrLen {
		n := int(binary.BigEndian.Uint32(data[off:]))
		sum := binary.BigEndian.Uint32(data[off+4:])
		if n > maxFrame || len(data)-off-frameHdrLen < n {
			break
		}
		p := data[off+frameHdrLen : off+frameHdrLen+n]
		if crc32.Checksum(p, crcTable) != sum {
			break
		}
		f, err := decodeFrame(p)
		if err != nil {
			break
		}
		out = append(out, f)
		off += frameHdrLen + n
	}
	return out, off
}

// store is the append-only state file.
type store struct {
	fs    vfs.FS
	dir   string
	sync  bool
	f     vfs.File
	size  int64
	live  int64 // bytes of the frames the latest compaction wrote
	nbuf  []byte
	dirty bool // written since the last fsync
	fsErr error
}

// openStore reads the state file, truncates a torn tail and opens it for
// appending. It returns the frames in order (later ones win).
func openStore(fsys vfs.FS, dir string, sync bool) (*store, []frame, int64, error) {
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, 0, err
	}
	name := path.Join(dir, stateFile)
	f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, 0, err
	}
	// The file and its directory must survive a power cut from the
	// first write on: make their directory entries durable.
	if err := fsys.SyncDir(dir); err != nil {
		f.Close()
		return nil, nil, 0, err
	}
	if err := fsys.SyncDir(path.Dir(dir)); err != nil {
		f.Close()
		return nil, nil, 0, err
	}
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<62))
	if err != nil {
		f.Close()
		return nil, nil, 0, err
	}
	if len(data) < headerLen {
		// New (or torn before its header was synced): start it.
		data = fileHeader()
		err = f.Truncate(0)
		if err == nil {
			_, err = f.WriteAt(data, 0)
		}
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Close()
			return nil, nil, 0, err
		}
	}
	if string(data[:4]) != fileMagic || binary.BigEndian.Uint16(data[4:6]) != fileVersion {
		f.Close()
		return nil, nil, 0, fmt.Errorf("%s: not a share state file of version %d (header %x)", name, fileVersion, data[:headerLen])
	}
	frames, n := decodeFrames(data[headerLen:])
	valid := headerLen + n
	dropped := int64(len(data) - valid)
	if dropped > 0 {
		if err := f.Truncate(int64(valid)); err != nil {
			f.Close()
			return nil, nil, 0, err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, nil, 0, err
		}
	}
	return &store{fs: fsys, dir: dir, sync: sync, f: f, size: int64(valid), live: int64(valid)}, frames, dropped, nil
}

// write appends frames and, under durability "always", fsyncs before
// returning: a state change is answered only once it is durable.
func (s *store) write(fr ...*frame) error {
	if s.fsErr != nil {
		return s.fsErr
	}
	buf := s.nbuf[:0]
	var p []byte
	for _, f := range fr {
		p = f.encode(p[:0])
		if len(p) > maxFrame {
			return fmt.Errorf("share state frame of %d bytes exceeds %d", len(p), maxFrame)
		}
		buf = appendFrame(buf, p)
	}
	s.nbuf = buf
	if _, err := s.f.WriteAt(buf, s.size); err != nil {
		s.fsErr = err
		return err
	}
	s.size += int64(len(buf))
	s.dirty = true
	if s.sync {
		if err := s.f.Sync(); err != nil {
			s.fsErr = err
			return err
		}
		s.dirty = false
	}
	return nil
}

// needsCompaction: the file holds mostly superseded frames.
func (s *store) needsCompaction() bool {
	return s.size > 1<<20 && s.size > 4*s.live
}

// compact replaces the file with the live frames, atomically (tmp, fsync,
// rename, fsync dir), and reopens it for appending.
func (s *store) compact(live []*frame) error {
	buf := fileHeader()
	var p []byte
	for _, f := range live {
		p = f.encode(p[:0])
		buf = appendFrame(buf, p)
	}
	name := path.Join(s.dir, stateFile)
	if err := vfs.WriteFileAtomic(s.fs, name, buf, 0o644); err != nil {
		return err
	}
	s.f.Close()
	f, err := s.fs.OpenFile(name, os.O_RDWR, 0o644)
	if err != nil {
		s.fsErr = err
		return err
	}
	s.f, s.size, s.live = f, int64(len(buf)), int64(len(buf))
	return nil
}

// flush fsyncs what was written since the last fsync (durability
// interval).
func (s *store) flush() error {
	if s.fsErr != nil || !s.dirty {
		return s.fsErr
	}
	if err := s.f.Sync(); err != nil {
		s.fsErr = err
		return err
	}
	s.dirty = false
	return nil
}

// errStoreClosed: a state change arrived after Close (a connection's
// share session ending while the broker shuts down). Nothing is written;
// the records it held are released at the next start anyway (locks do not
// survive a restart).
var errStoreClosed = errors.New("share state: closed")

func (s *store) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Sync()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f = nil
	if s.fsErr == nil {
		s.fsErr = errStoreClosed
	}
	return err
}
