package groupstore

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzReplay feeds arbitrary bytes to recovery as a log file. Invariants:
// no panic; the report accounts for every byte after the header; and the
// recovered state, written as a snapshot, replays to the same state cleanly.
func FuzzReplay(f *testing.F) {
	if golden, err := os.ReadFile(filepath.Join("testdata", "offsets-v1.golden")); err == nil {
		f.Add(golden)
		f.Add(golden[:len(golden)-3])
	}
	f.Add(encodeFileHeader(1))
	f.Add(append(encodeFileHeader(1), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < fileHeaderLen {
			return
		}
		s := &Store{groups: map[string]groupOffsets{}}
		rep := &RecoveryReport{}
		end, _ := s.replay("fuzz", data, rep, false)
		if end < fileHeaderLen || end > int64(len(data)) {
			t.Fatalf("valid end %d outside [%d,%d]", end, fileHeaderLen, len(data))
		}
		if rep.TornBytes != 0 && len(rep.Damaged) == 0 && end+rep.TornBytes != int64(len(data)) {
			t.Fatalf("torn %d + end %d != len %d", rep.TornBytes, end, len(data))
		}
		live := 0
		for _, g := range s.groups {
			live += len(g)
			if len(g) == 0 {
				t.Fatal("empty group kept in memory")
			}
		}
		if live != s.live {
			t.Fatalf("live count %d, map holds %d", s.live, live)
		}
		snap := s.snapshotLocked()
		s2 := &Store{groups: map[string]groupOffsets{}}
		rep2 := &RecoveryReport{}
		s2.replay("snap", snap, rep2, false)
		if !rep2.Clean() || !reflect.DeepEqual(state(s), state(s2)) {
			t.Fatalf("snapshot does not round-trip: %+v", rep2)
		}
	})
}

// FuzzDecodeOp checks the payload decoder alone: no panic, and whatever
// decodes re-encodes to a payload that decodes to the same change.
func FuzzDecodeOp(f *testing.F) {
	f.Add([]byte{opCommit, 1, 'g', 1, 1, 't', 2, 10, 0, 0, 0, 1})
	f.Add([]byte{opDeleteOffsets, 1, 'g', 1, 1, 't', 2})
	f.Add([]byte{opDeleteGroup, 1, 'g'})
	f.Add([]byte{opDeleteTopic, 1, 't'})
	f.Add([]byte{opCommit, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, p []byte) {
		o, err := decodeOp(p)
		if err != nil {
			return
		}
		s := &Store{groups: map[string]groupOffsets{}}
		s.appendFramesOnlyLocked(&o)
		payload, n, ok := frameAt(s.pending)
		if !ok || n != len(s.pending) {
			t.Fatalf("re-encoded frame invalid (ok=%v n=%d len=%d)", ok, n, len(s.pending))
		}
		o2, err := decodeOp(payload)
		if err != nil {
			t.Fatal(err)
		}
		if o.kind != o2.kind || o.group != o2.group || o.topic != o2.topic || len(o.commits) != len(o2.commits) || len(o.parts) != len(o2.parts) {
			t.Fatalf("round trip changed the op: %+v vs %+v", o, o2)
		}
		for i := range o.commits {
			if o.commits[i] != o2.commits[i] {
				t.Fatalf("commit %d: %+v vs %+v", i, o.commits[i], o2.commits[i])
			}
		}
		for i := range o.parts {
			if o.parts[i] != o2.parts[i] {
				t.Fatalf("part %d: %+v vs %+v", i, o.parts[i], o2.parts[i])
			}
		}
	})
}
