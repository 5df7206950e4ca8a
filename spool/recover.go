package spool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// RecoveryReport says what Open found and changed. Nothing is dropped
// without appearing here.
type RecoveryReport struct {
	Segments int   // live segments after recovery
	Records  int64 // records in them
	Bytes    int64 // their total size
	Head     int64 // first unacknowledged sequence
	NextSeq  int64 // sequence of the next append

	RemovedTmp   []string         // *.tmp debris from interrupted flushes
	RemovedAcked []string         // segments at or below the ack marker whose removal had not reached disk
	Corrupt      []CorruptSegment // segments set aside (renamed *.corrupt) by this Open
	SetAside     []string         // *.corrupt files left by earlier runs, still awaiting an operator
	Unknown      []string         // files recovery does not recognise (left alone)
}

// CorruptSegment describes a segment set aside: the sequences it claimed
// are missing from the spool.
type CorruptSegment struct {
	Name        string
	First, Last int64
	Err         error
}

// parseSegName parses "<first>-<last>.seg" with 20-digit numbers.
func parseSegName(name string) (first, last int64, ok bool) {
	base, found := strings.CutSuffix(name, ".seg")
	if !found || len(base) != 41 || base[20] != '-' {
		return 0, 0, false
	}
	f, err1 := strconv.ParseInt(base[:20], 10, 64)
	l, err2 := strconv.ParseInt(base[21:], 10, 64)
	if err1 != nil || err2 != nil || f < 0 || l < f {
		return 0, 0, false
	}
	return f, l, true
}

// recover rebuilds state from the directory listing: delete *.tmp debris,
// take the newest ack marker, parse segment names, verify each header
// against its name and file size, set aside what fails. It reads only
// headers, except that with encrypted segments one is decrypted to fail fast
// on a wrong key.
func (s *Spool) recover() (*RecoveryReport, error) {
	rep := &RecoveryReport{}
	if err := s.fs.MkdirAll(s.dir, 0o755); err != nil {
		return rep, err
	}
	names, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return rep, err
	}
	acked := int64(-1)
	var markers []int64
	var segs []segment
	changed := false
	for _, name := range names {
		switch {
		case strings.HasSuffix(name, ".tmp"):
			if err := s.fs.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return rep, err
			}
			rep.RemovedTmp = append(rep.RemovedTmp, name)
			changed = true
		case strings.HasSuffix(name, ".corrupt"):
			rep.SetAside = append(rep.SetAside, name)
		case strings.HasPrefix(name, "acked-"):
			v, err := strconv.ParseInt(strings.TrimPrefix(name, "acked-"), 10, 64)
			if err != nil || v < 0 {
				rep.Unknown = append(rep.Unknown, name)
				continue
			}
			markers = append(markers, v)
			acked = max(acked, v)
		default:
			first, last, ok := parseSegName(name)
			if !ok {
				rep.Unknown = append(rep.Unknown, name)
				continue
			}
			segs = append(segs, segment{first: first, last: last, name: name})
		}
	}
	for _, m := range markers {
		if m < acked {
			_ = s.fs.Remove(filepath.Join(s.dir, markerName(m)))
		}
	}
	s.markerSeq = acked

	sort.Slice(segs, func(i, j int) bool { return segs[i].first < segs[j].first })
	var live []segment
	for _, seg := range segs {
		if seg.last <= acked {
			// Acknowledged; DeleteAcked's removal did not reach disk.
			if err := s.fs.Remove(filepath.Join(s.dir, seg.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return rep, err
			}
			rep.RemovedAcked = append(rep.RemovedAcked, seg.name)
			changed = true
			continue
		}
		h, size, err := s.readHeader(seg.name)
		if err == nil && (h.First != seg.first || h.Last != seg.last) {
			err = corruptf("header range [%d..%d] does not match file name", h.First, h.Last)
		}
		if err == nil && size != h.fileSize() {
			err = corruptf("file is %d bytes, header says %d (torn)", size, h.fileSize())
		}
		if err == nil && len(live) > 0 && seg.first <= live[len(live)-1].last {
			err = corruptf("overlaps %s", live[len(live)-1].name)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				return rep, &SegmentError{Path: filepath.Join(s.dir, seg.name), First: seg.first, Last: seg.last, Err: err}
			}
			if err := s.fs.Rename(filepath.Join(s.dir, seg.name), filepath.Join(s.dir, seg.name+".corrupt")); err != nil {
				return rep, err
			}
			changed = true
			c := CorruptSegment{Name: seg.name, First: seg.first, Last: seg.last, Err: err}
			rep.Corrupt = append(rep.Corrupt, c)
			s.log.Error("spool: corrupt segment set aside", "file", filepath.Join(s.dir, seg.name), "first", seg.first, "last", seg.last, "err", err)
			continue
		}
		seg.count, seg.size, seg.encrypted = int64(h.Count), size, h.encrypted()
		live = append(live, seg)
	}
	if changed {
		if err := s.fs.SyncDir(s.dir); err != nil {
			return rep, err
		}
	}

	// Fail fast on a key problem rather than setting every segment aside or
	// erroring on every read later: the oldest encrypted segment and the
	// newest, which after a key rotation are sealed under different keys.
	if live, err = s.checkKey(live, rep, false); err != nil {
		return rep, err
	}
	if live, err = s.checkKey(live, rep, true); err != nil {
		return rep, err
	}

	s.segs = live
	for _, seg := range live {
		s.disk += seg.size
		s.diskRecs += seg.count
	}
	s.used = s.disk
	s.corrupt = append(s.corrupt, rep.Corrupt...)
	// Sequences never go backwards: past every segment ever seen (corrupt
	// ones included), past the ack marker, at least StartSeq.
	next := s.opts.StartSeq
	next = max(next, acked+1)
	for _, seg := range segs {
		next = max(next, seg.last+1)
	}
	for _, name := range rep.SetAside {
		if first, last, ok := parseSegName(strings.TrimSuffix(name, ".corrupt")); ok && first <= last {
			next = max(next, last+1)
		}
	}
	s.nextSeq, s.durable = next, next
	switch {
	case acked >= 0:
		s.acked = acked
	case len(live) > 0:
		s.acked = live[0].first - 1
	default:
		s.acked = next - 1
	}
	rep.Segments, rep.Records, rep.Bytes = len(live), s.diskRecs, s.disk
	rep.Head, rep.NextSeq = s.acked+1, s.nextSeq
	return rep, nil
}

// readHeader reads a segment's header and its file size.
func (s *Spool) readHeader(name string) (segHeader, int64, error) {
	f, err := s.fs.OpenFile(filepath.Join(s.dir, name), os.O_RDONLY, 0)
	if err != nil {
		return segHeader{}, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return segHeader{}, 0, err
	}
	var b [headerLen]byte
	if _, err := f.ReadAt(b[:], 0); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return segHeader{}, fi.Size(), corruptf("file is %d bytes, shorter than a header", fi.Size())
		}
		return segHeader{}, 0, fmt.Errorf("spool: reading header: %w", err)
	}
	h, err := parseHeader(b[:])
	return h, fi.Size(), err
}

// checkKey decrypts the first encrypted segment of live (the last when
// fromEnd) that is not corrupt: a missing or wrong key fails Open naming
// that segment. Corrupt ones met on the way are set aside as in the
// header pass and dropped from the returned list.
func (s *Spool) checkKey(live []segment, rep *RecoveryReport, fromEnd bool) ([]segment, error) {
	for n := 0; n < len(live); n++ {
		i := n
		if fromEnd {
			i = len(live) - 1 - n
		}
		seg := live[i]
		if !seg.encrypted {
			continue
		}
		path := filepath.Join(s.dir, seg.name)
		if s.opts.Cipher == nil {
			return live, &SegmentError{Path: path, First: seg.first, Last: seg.last, Err: ErrNoCipher}
		}
		_, err := s.readSegment(seg)
		if err == nil {
			return live, nil
		}
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooBig) {
			return live, &SegmentError{Path: path, First: seg.first, Last: seg.last, Err: err}
		}
		if rerr := s.fs.Rename(path, path+".corrupt"); rerr != nil {
			return live, rerr
		}
		if rerr := s.fs.SyncDir(s.dir); rerr != nil {
			return live, rerr
		}
		rep.Corrupt = append(rep.Corrupt, CorruptSegment{Name: seg.name, First: seg.first, Last: seg.last, Err: err})
		live = append(live[:i:i], live[i+1:]...)
		n-- // the same n names the next candidate in the shorter list

	}
	return live, nil
}
