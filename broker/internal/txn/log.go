package txn

// The transaction log (its format is in doc.go).

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
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
	logMagic     = "MKTX"
	logVersion   = 1
	logHeaderLen = 20
	frameHdrLen  = 8
	maxFrame     = 16 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// record is one frame's payload.
type record struct {
	Txn     *snapshot       `json:"txn,omitempty"`
	Aborted []abortedRecord `json:"aborted,omitempty"`
	// Removed names a transactional ID whose state was expired.
	Removed string `json:"removed,omitempty"`
	// TxnVersion is the finalized transaction.version, set by
	// UpdateFeatures (absent: never set, the default applies).
	TxnVersion *int16 `json:"tv,omitempty"`
	// FeaturesEpoch goes with TxnVersion: the finalized features' epoch
	// after that change.
	FeaturesEpoch int64 `json:"features_epoch,omitempty"`
}

// snapshot is the persisted state of one transactional ID.
type snapshot struct {
	ID        string          `json:"id"`
	PID       int64           `json:"pid"`
	Epoch     int16           `json:"epoch"`
	LastEpoch int16           `json:"last_epoch"`
	TimeoutMs int64           `json:"timeout_ms"`
	State     State           `json:"state"`
	StartMs   int64           `json:"start_ms"`
	UpdateMs  int64           `json:"update_ms"`
	Parts     []partRecord    `json:"parts,omitempty"`
	Groups    []string        `json:"groups,omitempty"`
	Offsets   []offsetsRecord `json:"offsets,omitempty"`
	// PrevPID is the producer ID before an EndTxn v5 ran out of epochs
	// and issued a new one (a retry of that EndTxn names it).
	PrevPID *int64 `json:"prev_pid,omitempty"`
	// EndBumped: the last epoch bump was an EndTxn v5's (KIP-890), so
	// the previous epoch is no retry of an older EndTxn version.
	EndBumped bool `json:"end_bumped,omitempty"`
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

// Log is the transaction log: it appends records and compacts. All
// methods are safe for concurrent use; Log.mu is a leaf lock (but see
// maybeCompact).
type Log struct {
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
	live    map[string]snapshot
	aborted []abortedRecord
	// txnVersion is the last TxnVersion record's level, -1 if none, and
	// featuresEpoch its epoch.
	txnVersion    int16
	featuresEpoch int64
}

// track folds r into the live content. The caller holds mu (or has
// exclusive access).
func (tl *Log) track(r *record) {
	if tl.live == nil {
		tl.live = map[string]snapshot{}
	}
	if r.Txn != nil {
		tl.live[r.Txn.ID] = *r.Txn
	}
	if r.Removed != "" {
		delete(tl.live, r.Removed)
	}
	tl.aborted = append(tl.aborted, r.Aborted...)
	if r.TxnVersion != nil {
		tl.txnVersion, tl.featuresEpoch = *r.TxnVersion, r.FeaturesEpoch
	}
}

func logName(gen uint64) string { return fmt.Sprintf("txn-%020d.log", gen) }

// OpenLog opens (or, in an empty dir, creates) the transaction log in dir,
// replaying its newest generation; sync says whether durable appends
// fsync (the broker's sync policy "always"). Hand it to New, or Close it.
func OpenLog(fsys vfs.FS, dir string, sync bool, log *slog.Logger) (*Log, error) {
	tl, _, err := openLog(fsys, dir, sync, log)
	return tl, err
}

// openLog opens the newest generation and returns its records in order.
func openLog(fsys vfs.FS, dir string, sync bool, log *slog.Logger) (*Log, []record, error) {
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
	tl := &Log{fs: fsys, dir: dir, sync: sync, log: log, txnVersion: -1}
	if len(gens) == 0 {
		if err := tl.create(1, nil); err != nil {
			return nil, nil, err
		}
		return tl, nil, nil
	}
	gen := gens[len(gens)-1]
	for _, g := range gens[:len(gens)-1] {
		fsys.Remove(path.Join(dir, logName(g))) // superseded by a finished compaction
	}
	name := path.Join(dir, logName(gen))
	data, err := readAll(fsys, name)
	if err != nil {
		return nil, nil, fmt.Errorf("broker: txn log: %w", err)
	}
	if len(data) < logHeaderLen || string(data[:4]) != logMagic ||
		binary.BigEndian.Uint32(data[16:]) != crc32.Checksum(data[:16], crcTable) {
		return nil, nil, fmt.Errorf("broker: txn log %s: bad file header", name)
	}
	if v := binary.BigEndian.Uint16(data[4:]); v != logVersion {
		return nil, nil, fmt.Errorf("broker: txn log %s: unsupported version %d", name, v)
	}
	recs, good := decodeFrames(data[logHeaderLen:])
	end := int64(logHeaderLen + good)
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

// decodeFrames returns the records of the valid prefix and its length.
func decodeFrames(b []byte) ([]record, int) {
	var recs []record
	pos := 0
	for len(b)-pos >= frameHdrLen {
		n := int(binary.BigEndian.Uint32(b[pos:]))
		if n <= 0 || n > maxFrame || len(b)-pos-frameHdrLen < n {
			break
		}
		payload := b[pos+frameHdrLen : pos+frameHdrLen+n]
		if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(b[pos+4:]) {
			break
		}
		var r record
		if json.Unmarshal(payload, &r) != nil {
			break
		}
		recs = append(recs, r)
		pos += frameHdrLen + n
	}
	return recs, pos
}

func appendFrame(dst []byte, r *record) ([]byte, error) {
	payload, err := json.Marshal(r)
	if err != nil {
		return dst, err
	}
	if len(payload) > maxFrame {
		return dst, fmt.Errorf("broker: txn log record of %d bytes", len(payload))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(payload, crcTable))
	return append(dst, payload...), nil
}

// create writes generation gen holding recs atomically and makes it the
// current file. The caller holds mu (or has exclusive access).
func (tl *Log) create(gen uint64, recs []record) error {
	hdr := make([]byte, logHeaderLen, 4096)
	copy(hdr, logMagic)
	binary.BigEndian.PutUint16(hdr[4:], logVersion)
	binary.BigEndian.PutUint64(hdr[8:], gen)
	binary.BigEndian.PutUint32(hdr[16:], crc32.Checksum(hdr[:16], crcTable))
	buf := hdr
	var err error
	for i := range recs {
		if buf, err = appendFrame(buf, &recs[i]); err != nil {
			return err
		}
	}
	name := path.Join(tl.dir, logName(gen))
	if err := vfs.WriteFileAtomic(tl.fs, name, buf, 0o644); err != nil {
		return fmt.Errorf("broker: txn log: %w", err)
	}
	f, err := tl.fs.OpenFile(name, os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("broker: txn log: %w", err)
	}
	if tl.f != nil {
		tl.f.Close()
		tl.fs.Remove(path.Join(tl.dir, logName(tl.gen)))
	}
	tl.f, tl.gen, tl.size = f, gen, int64(len(buf))
	return nil
}

// append writes records; with durable set (and the sync policy "always")
// it returns once they are fsynced.
func (tl *Log) append(durable bool, recs ...record) error {
	var buf []byte
	var err error
	for i := range recs {
		if buf, err = appendFrame(buf, &recs[i]); err != nil {
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
func (tl *Log) maybeCompact(keep func(abortedRecord) bool) error {
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
	recs := make([]record, 0, len(tl.live)+1)
	ids := make([]string, 0, len(tl.live))
	for id := range tl.live {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var n int64
	for _, id := range ids {
		s := tl.live[id]
		recs = append(recs, record{Txn: &s})
		n += 256 + int64(len(s.Parts)+len(s.Offsets))*64
	}
	if tl.txnVersion >= 0 {
		tv := tl.txnVersion
		recs = append(recs, record{TxnVersion: &tv, FeaturesEpoch: tl.featuresEpoch})
	}
	for i := 0; i < len(kept); i += 1024 {
		recs = append(recs, record{Aborted: kept[i:min(i+1024, len(kept))]})
	}
	n += int64(len(kept)) * 80
	if tl.size < 4*n {
		return nil
	}
	return tl.create(tl.gen+1, recs)
}

// Close fsyncs what is not yet durable and closes the file.
func (tl *Log) Close() error {
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

func readAll(fsys vfs.FS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
