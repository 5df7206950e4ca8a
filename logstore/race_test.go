package logstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
)

// TestConcurrentReadersAndWriter runs readers (Read, OffsetForTimestamp,
// MaxTimestamp) against a writer that appends, rolls, applies retention and
// DeleteRecords, under both policies. Readers check that what they get is
// whole valid batches with contiguous offsets starting at or before the
// offset asked for and never beyond the high watermark they were given.
func TestConcurrentReadersAndWriter(t *testing.T) {
	for _, mode := range []SyncMode{SyncNever, SyncAlways} {
		e := memEnv(t)
		e.opts.Sync = SyncPolicy{Mode: mode}
		e.opts.Config.SegmentBytes = 4000
		e.opts.Config.IndexIntervalBytes = 300
		e.opts.Config.RetentionBytes = 20000
		l, _ := e.open(t)
		var stop atomic.Bool
		var wg sync.WaitGroup
		var reads atomic.Int64
		for r := 0; r < 4; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				off := int64(0)
				for !stop.Load() {
					ch := l.Changed()
					res, err := l.Read(ReadOptions{Offset: off, MaxBytes: 1 + int(off%5000), MinOneBatch: true})
					if err != nil {
						off = l.LogStartOffset() // fell behind retention
						continue
					}
					b, err := res.AppendTo(nil)
					hw := res.HighWatermark
					res.Release()
					if err != nil {
						t.Error(err)
						return
					}
					reads.Add(1)
					if len(b) == 0 {
						if off < hw {
							t.Errorf("empty read at %d below hw %d", off, hw)
							return
						}
						<-ch
						continue
					}
					first := true
					next := off
					err = records.Split(b, func(_ int, h records.BatchHeader, _ []byte) error {
						if first && (h.BaseOffset > off || h.LastOffset() < off) || !first && h.BaseOffset != next || h.LastOffset() >= hw {
							t.Errorf("batch [%d,%d] for offset %d, expected %d, hw %d", h.BaseOffset, h.LastOffset(), off, next, hw)
						}
						first = false
						next = h.LastOffset() + 1
						return nil
					})
					if err != nil {
						t.Error(err)
						return
					}
					off = next
					l.OffsetForTimestamp(off)
					l.MaxTimestamp()
				}
			}()
		}
		ctx := context.Background()
		var wwg sync.WaitGroup
		for w := 0; w < 2; w++ {
			wwg.Add(1)
			go func() {
				defer wwg.Done()
				for i := 0; i < 400; i++ {
					res, err := l.Append(batch(t, 1+i%4, int64(i), "w"))
					if err != nil {
						t.Error(err)
						return
					}
					if err := l.WaitDurable(ctx, res.LastOffset+1); err != nil {
						t.Error(err)
						return
					}
					if w == 0 && i%50 == 0 {
						l.EnforceRetention(epoch)
					}
					if w == 1 && i%97 == 0 {
						l.DeleteRecords(res.BaseOffset)
					}
				}
			}()
		}
		wwg.Wait()
		// On a starved machine the writers may finish before the readers
		// ran much: give them a moment to catch up (they must, or fail).
		for deadline := time.Now().Add(5 * time.Second); reads.Load() < 10 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		stop.Store(true)
		// Wake readers parked on Changed.
		l.Append(batch(t, 1, 1, "end"))
		l.Sync()
		wg.Wait()
		if reads.Load() < 10 {
			t.Fatalf("readers made %d reads", reads.Load())
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
