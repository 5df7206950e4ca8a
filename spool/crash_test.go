package spool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// TestCrashRandomPoints simulates power loss at random moments while
// writers append (some waiting for durability) and a consumer reads and
// acknowledges, optionally with an injected disk fault (failed write, torn
// write, failed fsync, failed directory fsync, failed rename) first. After
// each crash the spool recovers from what was fsynced and must hold every
// record that was reported durable and not acknowledged, byte for byte; must
// not have lost its place (Head never past what was acknowledged, sequence
// numbers never reused for durable records); and must find no corruption.
func TestCrashRandomPoints(t *testing.T) {
	iters := 40
	if testing.Short() {
		iters = 10
	}
	for it := range iters {
		t.Run(fmt.Sprint(it), func(t *testing.T) { crashOnce(t, uint64(it)) })
	}
}

func crashOnce(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	mem := vfs.NewMem()
	var fault *vfs.FailNth
	ops := []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpSyncDir, vfs.OpRename}
	if rng.IntN(3) > 0 {
		fault = &vfs.FailNth{Op: ops[rng.IntN(len(ops))], N: 1 + rng.IntN(12), Tear: rng.IntN(300), Sticky: rng.IntN(2) == 0}
	}

	var (
		durableMu sync.Mutex
		durable   = map[int64]Record{} // reported durable before the crash
		crashOnce sync.Once
		crashed   *vfs.MemFS
		want      map[int64]Record
		crashedCh = make(chan struct{})
	)
	// The crash: take what is on "disk" now, atomically with the set of
	// records reported durable so far.
	crash := func() {
		crashOnce.Do(func() {
			durableMu.Lock()
			crashed = mem.CrashClone()
			want = make(map[int64]Record, len(durable))
			for k, v := range durable {
				want[k] = v
			}
			durableMu.Unlock()
			close(crashedCh)
		})
	}
	// Half the runs crash just before the Nth filesystem operation (any
	// kind: mid-segment, between fsync and rename, inside a marker
	// write...), the others at a random moment.
	crashAt := int64(0)
	if rng.IntN(2) == 0 {
		crashAt = 1 + rng.Int64N(400)
	}
	var opCount atomic.Int64
	fsys := vfs.NewFaultFS(mem, vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
		if opCount.Add(1) == crashAt {
			crash()
		}
		if fault != nil {
			return fault.Inject(op, path, n)
		}
		return n, nil
	}))
	codec := Codec(rng.IntN(2))
	var cipher Cipher
	if rng.IntN(2) == 0 {
		cipher = testCipher(t)
	}
	o := Options{FS: fsys, Dir: "spool", BatchRecords: 1 + rng.IntN(40), BatchBytes: 512 + rng.IntN(8<<10),
		FlushInterval: time.Duration(1+rng.IntN(3)) * time.Millisecond, Compression: codec, Cipher: cipher}
	s, _, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}

	var (
		ackIssued atomic.Int64 // highest sequence passed to DeleteAcked
		stop      atomic.Bool
		wg        sync.WaitGroup
	)
	ackIssued.Store(-1)
	for w := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; !stop.Load(); i++ {
				span := 1 + r.IntN(4)
				data := fmt.Appendf(nil, "s%d-w%d-i%d-%s", seed, w, i, bytes.Repeat([]byte{byte(i)}, r.IntN(300)))
				seq, err := s.AppendSpan(data, span)
				if err != nil {
					if !errors.Is(err, vfs.ErrInjected) && !errors.Is(err, ErrFull) && !errors.Is(err, ErrClosed) {
						t.Errorf("append: %v", err)
					}
					return
				}
				if r.IntN(4) == 0 {
					if err := s.WaitDurable(context.Background(), seq); err != nil {
						if !errors.Is(err, vfs.ErrInjected) && !errors.Is(err, ErrClosed) {
							t.Errorf("WaitDurable: %v", err)
						}
						return
					}
					durableMu.Lock()
					durable[seq] = Record{Seq: seq, Span: span, Data: data}
					durableMu.Unlock()
				}
			}
		})
	}
	wg.Go(func() { // consumer: reads a while behind, acknowledges
		next := int64(0)
		for !stop.Load() {
			recs, err := s.ReadFrom(next, 50)
			if err != nil {
				t.Errorf("read: %v", err)
				return
			}
			if len(recs) > 0 && rand.IntN(3) == 0 {
				ack := recs[len(recs)/2].Last()
				ackIssued.Store(max(ackIssued.Load(), ack))
				if _, err := s.DeleteAcked(ack); err != nil && !errors.Is(err, vfs.ErrInjected) {
					t.Errorf("DeleteAcked: %v", err)
					return
				}
				next = ack + 1
			}
			time.Sleep(100 * time.Microsecond)
		}
	})

	if crashAt > 0 {
		select { // if the workload stalls (a sticky fault) before op N, crash anyway
		case <-crashedCh:
		case <-time.After(100 * time.Millisecond):
		}
	} else {
		time.Sleep(time.Duration(rng.IntN(15000)) * time.Microsecond)
	}
	crash()
	acked := ackIssued.Load()
	stop.Store(true)
	wg.Wait()
	s.Close() // may report the injected fault; the crashed copy is what counts

	s2, rep, err := Open(Options{FS: crashed, Dir: "spool", Cipher: cipher})
	if err != nil {
		t.Fatalf("recovery: %v", err)
	}
	defer s2.Close()
	if len(rep.Corrupt) > 0 || len(rep.SetAside) > 0 {
		t.Fatalf("crash produced corruption: %+v", rep.Corrupt)
	}
	if rep.Head-1 > acked {
		t.Fatalf("head %d is past the highest acknowledgement %d", rep.Head, acked)
	}
	got := map[int64]Record{}
	prevLast := int64(-1)
	for _, r := range readAllRecords(t, s2, 0) {
		if r.Seq <= prevLast {
			t.Fatalf("record %d overlaps previous ending %d", r.Seq, prevLast)
		}
		prevLast = r.Last()
		got[r.Seq] = r
	}
	lost := 0
	for seq, w := range want {
		if seq < rep.Head {
			continue // acknowledged before the crash
		}
		g, ok := got[seq]
		if !ok || g.Span != w.Span || !bytes.Equal(g.Data, w.Data) {
			lost++
			if lost < 5 {
				t.Errorf("durable record %d (span %d) missing or different after crash: got %v", seq, w.Span, ok)
			}
		}
		if seq >= rep.NextSeq {
			t.Errorf("durable record %d is at or past NextSeq %d", seq, rep.NextSeq)
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d durable records lost (fault %+v)", lost, len(want), fault)
	}
	t.Logf("crash at op %d of %d; durable %d, recovered %d records, head %d, next %d, removed tmp %d, removed acked %d, fault %v",
		crashAt, opCount.Load(), len(want), len(got), rep.Head, rep.NextSeq, len(rep.RemovedTmp), len(rep.RemovedAcked), fault != nil && fault.Fired())
	// The recovered spool keeps working.
	seq, err := s2.Append([]byte("after"))
	if err != nil || seq != rep.NextSeq {
		t.Fatalf("append after recovery: %d %v", seq, err)
	}
	if err := s2.Flush(); err != nil {
		t.Fatal(err)
	}
}
