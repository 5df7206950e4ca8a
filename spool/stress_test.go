package spool

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// TestMPMCStress: writers append concurrently (some waiting for
// durability), readers tail the spool and check that they see every
// sequence exactly once, in order, with the right bytes, while an acker
// deletes what every reader has passed. Run it under -race.
func TestMPMCStress(t *testing.T) {
	const writers, perWriter, readers = 4, 1500, 3
	fs := vfs.NewMem()
	s, _ := openT(t, Options{FS: fs, BatchRecords: 64, BatchBytes: 8 << 10, FlushInterval: time.Millisecond})

	var appendWG sync.WaitGroup
	for w := range writers {
		appendWG.Go(func() {
			lastSeq := int64(-1)
			for i := range perWriter {
				span, data := stressRecord(w, i)
				seq, err := s.AppendSpan(data, span)
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				if seq <= lastSeq {
					t.Errorf("writer %d: sequence went from %d to %d", w, lastSeq, seq)
				}
				lastSeq = seq
				if i%100 == 0 {
					if err := s.WaitDurable(context.Background(), seq); err != nil {
						t.Errorf("writer %d: WaitDurable: %v", w, err)
						return
					}
				}
			}
		})
	}
	var total atomic.Int64 // number of records appended in all, once writers finish
	total.Store(-1)
	progress := make([]atomic.Int64, readers) // next sequence each reader wants
	var readWG sync.WaitGroup
	for r := range readers {
		readWG.Go(func() {
			next, seen := int64(0), int64(0)
			lastI := make([]int, writers) // per writer, the last record index seen
			for w := range lastI {
				lastI[w] = -1
			}
			for {
				if n := total.Load(); n >= 0 && seen == n {
					return
				}
				recs, err := s.Read(next, 1+r*50, 1<<20)
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				for _, got := range recs {
					if got.Seq != next {
						t.Errorf("reader %d: got seq %d, want %d", r, got.Seq, next)
						return
					}
					var w, i int
					if _, err := fmt.Sscanf(string(got.Data), "w%d-i%d-", &w, &i); err != nil || w < 0 || w >= writers {
						t.Errorf("reader %d: seq %d: unparsable %q", r, got.Seq, trunc(got.Data))
						return
					}
					// Each writer's records appear in its append order, none
					// missing, none twice, with the bytes and span it appended.
					wantSpan, wantData := stressRecord(w, i)
					if i != lastI[w]+1 || got.Span != wantSpan || string(got.Data) != string(wantData) {
						t.Errorf("reader %d: seq %d: writer %d record %d (after %d), span %d", r, got.Seq, w, i, lastI[w], got.Span)
						return
					}
					lastI[w] = i
					next = got.Last() + 1
					seen++
				}
				progress[r].Store(next)
				if len(recs) == 0 {
					time.Sleep(50 * time.Microsecond)
				}
			}
		})
	}
	stopAck := make(chan struct{})
	var ackWG sync.WaitGroup
	ackWG.Go(func() {
		for {
			select {
			case <-stopAck:
				return
			case <-time.After(time.Millisecond):
			}
			low := progress[0].Load()
			for r := range readers {
				low = min(low, progress[r].Load())
			}
			if _, err := s.DeleteAcked(low - 1); err != nil {
				t.Errorf("DeleteAcked: %v", err)
				return
			}
		}
	})
	appendWG.Wait()
	total.Store(writers * perWriter)
	readWG.Wait()
	close(stopAck)
	ackWG.Wait()
	if t.Failed() {
		return
	}
	next := s.NextSeq()
	if _, err := s.DeleteAcked(next - 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.DiskBytes != 0 || st.DiskSegments != 0 || st.UsedBytes != 0 || st.Head != next {
		t.Fatalf("after acking everything: %+v", st)
	}
	if segs := filesWithSuffix(t, fs, "spool", ".seg"); len(segs) != 0 {
		t.Fatalf("segments left: %v", segs)
	}
}

// stressRecord is writer w's i-th record: deterministic, so readers can
// check it without shared state.
func stressRecord(w, i int) (span int, data []byte) {
	data = fmt.Appendf(nil, "w%d-i%d-", w, i)
	for range (w*31 + i*7) % 200 {
		data = append(data, byte('a'+i%26))
	}
	return 1 + (w+i)%3, data
}
