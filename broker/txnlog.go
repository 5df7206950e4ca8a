package broker

// The transaction log: DataDir/transactions/txn-<generation>.log.
//
// Layout: a 20-byte file header (magic "MKTX", version u16, flags u16,
// generation u64, CRC32C of the first 16 bytes u32), then frames
// [payload length u32][CRC32C of payload u32][payload]. A payload is one
// JSON txnRecord: either the whole state of one transactional ID (the
// newest record for an ID wins) or entries of the per-partition aborted
// transaction index (they accumulate). Replay stops at the first frame that
// is short or fails its CRC: that is a torn tail, truncated away and
// reported. When the file has grown to several times its live content it
// is compacted: the live state is written as generation+1 to a .tmp file,
// fsynced, renamed, the directory fsynced, and the old generation removed;
// opening takes the highest complete generation and sweeps the rest.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/minikafka/minikafka/internal/vfs"
)

const (
	txnLogMagic     = "MKTX"
	txnLogVersion   = 1
	txnLogHeaderLen = 20
	txnFrameHdrLen  = 8
	txnMaxFrame     = 16 << 20
)

var txnCRC = crc32.MakeTable(crc32.Castagnoli)

// txnRecord is one frame's payload.
type txnRecord struct {
	Txn     *txnSnapshot    `json:"txn,omitempty"`
	Aborted []abortedRecord `json:"aborted,omitempty"`
	// Removed names a transactional ID whose state was expired.
	Removed string `json:"removed,omitempty"`
}

// txnSnapshot is the persisted state of one transactional ID.
type txnSnapshot struct {
	ID        string          `json:"id"`
	PID       int64           `json:"pid"`
	Epoch     int16           `json:"epoch"`
	LastEpoch int16           `json:"last_epoch"`
	TimeoutMs int64           `json:"timeout_ms"`
	State     txnStateKind    `json:"state"`
	StartMs   int64           `json:"start_ms"`
	UpdateMs  int64           `json:"update_ms"`
	Parts     []partRecord    `json:"parts,omitempty"`
	Groups    []string        `json:"groups,omitempty"`
	Offsets   []offsetsRecord `json:"offsets,omitempty"`
}

type partRecord struct {
	Topic     string `json:"topic"` // topic ID, hex
	Partition int32  `json:"p"`
	Start     int64  `json:"start"` // log end offset when added: the txn's data is at or after it
}

type offsetsRecord struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"p"`
	Offset    int64  `json:"offset"`
	Epoch     int32  `json:"epoch"`
	Metadata  string `json:"md,omitempty"`
}

type abortedRecord struct {
	Topic     string `json:"topic"` // topic ID, hex
	Partition int32  `json:"p"`
	PID       int64  `json:"pid"`
	First     int64  `json:"first"`
	Last      int64  `json:"last"` // the abort marker's offset
}

// txnLog appends records and compacts. All methods are safe for concurrent
// use; txnLog.mu is a leaf lock.
type txnLog struct {
	fs   vfs.FS
	dir  string
	sync bool
	log  *slog.Logger

	mu    sync.Mutex
	f     vfs.File
	gen   uint64
	size  int64
	err   error // sticky: after a failed write (a full disk's is undone) or fsync nothing more is written
	dirty bool  // written since the last fsync

	// The live content, what a compaction writes: the newest state of
	// each transactional ID and the aborted index.
	live    map[string]txnSnapshot
	aborted []abortedRecord
}

// track folds r into the live content. The caller holds mu (or has
// exclusive access).
func (tl *txnLog) track(r *txnRecord) {
	if tl.live == nil {
		tl.live = map[string]txnSnapshot{}
	}
	if r.Txn != nil {
		tl.live[r.Txn.ID] = *r.Txn
	}
	if r.Removed != "" {
		delete(tl.live, r.Removed)
	}
	tl.aborted = append(tl.aborted, r.Aborted...)
}

func txnLogName(gen uint64) string { return fmt.Sprintf("txn-%020d.log", gen) }

// openTxnLog opens the newest generation and returns its records in order.
func openTxnLog(fsys vfs.FS, dir string, sync bool, log *slog.Logger) (*txnLog, []txnRecord, error) {
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("broker: txn log: %w", err)
	}
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("broker: txn log: %w", err)
	}
	var gens []uint64
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") {
			fsys.Remove(path.Join(dir, n)) // an interrupted compaction
			continue
		}
		if !strings.HasPrefix(n, "txn-") || !strings.HasSuffix(n, ".log") {
			continue
		}
		g, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(n, "txn-"), ".log"), 10, 64)
		if err == nil {
			gens = append(gens, g)
		}
	}
	sort.Slice(gens, func(i, j int) bool { return gens[i] < gens[j] })
	tl := &txnLog{fs: fsys, dir: dir, sync: sync, log: log}
	if len(gens) == 0 {
		if err := tl.create(1, nil); err != nil {
			return nil, nil, err
		}
		return tl, nil, nil
	}
	gen := gens[len(gens)-1]
	for _, g := range gens[:len(gens)-1] {
		fsys.Remove(path.Join(dir, txnLogName(g))) // superseded by a finished compaction
	}
	name := path.Join(dir, txnLogName(gen))
	data, err := readFile(fsys, name)
	if err != nil {
		return nil, nil, fmt.Errorf("broker: txn log: %w", err)
	}
	if len(data) < txnLogHeaderLen || string(data[:4]) != txnLogMagic ||
		binary.BigEndian.Uint32(data[16:]) != crc32.Checksum(data[:16], txnCRC) {
		return nil, nil, fmt.Errorf("broker: txn log %s: bad file header", name)
	}
	if v := binary.BigEndian.Uint16(data[4:]); v != txnLogVersion {
		return nil, nil, fmt.Errorf("broker: txn log %s: unsupported version %d", name, v)
	}
	recs, good := decodeTxnFrames(data[txnLogHeaderLen:])
	end := int64(txnLogHeaderLen + good)
	f, err := fsys.OpenFile(name, os.O_RDWR, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("broker: txn log: %w", err)
	}
	if end < int64(len(data)) {
		log.Warn("txn log: truncating torn tail", "file", name, "bytes", int64(len(data))-end)
		if err := f.Truncate(end); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("broker: txn log: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("broker: txn log: %w", err)
		}
	}
	tl.f, tl.gen, tl.size = f, gen, end
	for i := range recs {
		tl.track(&recs[i])
	}
	return tl, recs, nil
}

// decodeTxnFrames returns the records of the valid prefix and its length.
func decodeTxnFrames(b []byte) ([]txnRecord, int) {
	var recs []txnRecord
	pos := 0
	for len(b)-pos >= txnFrameHdrLen {
		n := int(binary.BigEndian.Uint32(b[pos:]))
		if n <= 0 || n > txnMaxFrame || len(b)-pos-txnFrameHdrLen < n {
			break
		}
		payload := b[pos+txnFrameHdrLen : pos+txnFrameHdrLen+n]
		if crc32.Checksum(payload, txnCRC) != binary.BigEndian.Uint32(b[pos+4:]) {
			break
		}
		var r txnRecord
		if json.Unmarshal(payload, &r) != nil {
			break
		}
		recs = append(recs, r)
		pos += txnFrameHdrLen + n
	}
	return recs, pos
}

func appendTxnFrame(dst []byte, r *txnRecord) ([]byte, error) {
	payload, err := json.Marshal(r)
	if err != nil {
		return dst, err
	}
	if len(payload) > txnMaxFrame {
		return dst, fmt.Errorf("broker: txn log record of %d bytes", len(payload))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(payload, txnCRC))
	return append(dst, payload...), nil
}

// create writes generation gen holding recs atomically and makes it the
// current file. The caller holds mu (or has exclusive access).
func (tl *txnLog) create(gen uint64, recs []txnRecord) error {
	hdr := make([]byte, txnLogHeaderLen, 4096)
	copy(hdr, txnLogMagic)
	binary.BigEndian.PutUint16(hdr[4:], txnLogVersion)
	binary.BigEndian.PutUint64(hdr[8:], gen)
	binary.BigEndian.PutUint32(hdr[16:], crc32.Checksum(hdr[:16], txnCRC))
	buf := hdr
	var err error
	for i := range recs {
		if buf, err = appendTxnFrame(buf, &recs[i]); err != nil {
			return err
		}
	}
	name := path.Join(tl.dir, txnLogName(gen))
	if err := vfs.WriteFileAtomic(tl.fs, name, buf, 0o644); err != nil {
		return fmt.Errorf("broker: txn log: %w", err)
	}
	f, err := tl.fs.OpenFile(name, os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("broker: txn log: %w", err)
	}
	if tl.f != nil {
		tl.f.Close()
		tl.fs.Remove(path.Join(tl.dir, txnLogName(tl.gen)))
	}
	tl.f, tl.gen, tl.size = f, gen, int64(len(buf))
	return nil
}

// append writes records; with durable set (and the sync policy "always")
// it returns once they are fsynced.
func (tl *txnLog) append(durable bool, recs ...txnRecord) error {
	var buf []byte
	var err error
	for i := range recs {
		if buf, err = appendTxnFrame(buf, &recs[i]); err != nil {
			return err
		}
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.err != nil {
		return tl.err
	}
	if _, err := tl.f.WriteAt(buf, tl.size); err != nil {
		werr := fmt.Errorf("broker: txn log write: %w", err)
		// A full disk is undone rather than sticky: cut off whatever
		// part of buf reached the file; the next append tries again.
		if vfs.IsNoSpace(err) && tl.f.Truncate(tl.size) == nil {
			return werr
		}
		tl.err = werr
		return tl.err
	}
	tl.size += int64(len(buf))
	tl.dirty = true
	for i := range recs {
		tl.track(&recs[i])
	}
	if durable && tl.sync {
		if err := tl.f.Sync(); err != nil {
			tl.err = fmt.Errorf("broker: txn log fsync: %w", err)
			return tl.err
		}
		tl.dirty = false
	}
	return nil
}

// maybeCompact rewrites the log as its live content once it has grown
// past max(1 MiB, 4x that content). keep says which aborted-index entries
// still matter (their topic exists and the data is not deleted yet); it
// must take no lock that is held while appending.
func (tl *txnLog) maybeCompact(keep func(abortedRecord) bool) error {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.err != nil || tl.size < 1<<20 {
		return tl.err
	}
	kept := tl.aborted[:0]
	for _, a := range tl.aborted {
		if keep(a) {
			kept = append(kept, a)
		}
	}
	tl.aborted = kept
	recs := make([]txnRecord, 0, len(tl.live)+1)
	ids := make([]string, 0, len(tl.live))
	for id := range tl.live {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var n int64
	for _, id := range ids {
		s := tl.live[id]
		recs = append(recs, txnRecord{Txn: &s})
		n += 256 + int64(len(s.Parts)+len(s.Offsets))*64
	}
	for i := 0; i < len(kept); i += 1024 {
		recs = append(recs, txnRecord{Aborted: kept[i:min(i+1024, len(kept))]})
	}
	n += int64(len(kept)) * 80
	if tl.size < 4*n {
		return nil
	}
	return tl.create(tl.gen+1, recs)
}

func (tl *txnLog) close() error {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.f == nil {
		return nil
	}
	var err error
	if tl.dirty && tl.err == nil {
		err = tl.f.Sync()
	}
	err = errors.Join(err, tl.f.Close())
	tl.f = nil
	return err
}
