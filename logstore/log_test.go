package logstore

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

func TestAppendReadReopen(t *testing.T) {
	for name, mk := range map[string]func(testing.TB) *testEnv{"mem": memEnv, "os": osEnv} {
		t.Run(name, func(t *testing.T) {
			e := mk(t)
			e.opts.Config.SegmentBytes = 1000
			l, rep := e.open(t)
			if rep.Segments != 1 || l.LogEndOffset() != 0 || l.HighWatermark() != 0 {
				t.Fatalf("fresh log: %+v", rep)
			}
			var want []byte
			for i := 0; i < 30; i++ {
				b := batch(t, 1+i%4, int64(1000+i), "v")
				res, err := l.Append(b)
				if err != nil {
					t.Fatal(err)
				}
				if res.BaseOffset != int64(len(offsetsOf(t, want))) && i == 0 {
					t.Fatal(res)
				}
				want = append(want, b...)
			}
			leo := l.LogEndOffset()
			got := readAll(t, l, 0)
			if !bytes.Equal(got, want) {
				t.Fatalf("read back %d bytes, want %d", len(got), len(want))
			}
			if n := len(l.segments()); n < 3 {
				t.Fatalf("expected rolls, have %d segments", n)
			}
			// The seal goroutine may be releasing a handle into the
			// cache right now: look at its list under its lock.
			l.files.mu.Lock()
			noHandles := l.files.head == nil
			l.files.mu.Unlock()
			if noHandles || l.files.Open() == 0 {
				t.Fatal("no cached handles")
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l2, rep := e.open(t)
			defer l2.Close()
			if len(rep.Rescanned) != 0 || l2.LogEndOffset() != leo {
				t.Fatalf("clean reopen rescanned %v, leo %d want %d", rep.Rescanned, l2.LogEndOffset(), leo)
			}
			if got := readAll(t, l2, 0); !bytes.Equal(got, want) {
				t.Fatal("data differs after reopen")
			}
			// Reading from the middle of a batch returns the whole batch.
			r, err := l2.Read(ReadOptions{Offset: 2, MaxBytes: 1})
			if err != nil {
				t.Fatal(err)
			}
			if r.Size != 0 {
				t.Fatalf("MaxBytes 1 without MinOneBatch returned %d bytes", r.Size)
			}
			r.Release()
			r, _ = l2.Read(ReadOptions{Offset: 2, MaxBytes: 1, MinOneBatch: true})
			b, _ := r.AppendTo(nil)
			r.Release()
			if offs := offsetsOf(t, b); len(offs) != 1 || offs[0][0] > 2 || offs[0][1] < 2 {
				t.Fatalf("batch for offset 2: %v", offs)
			}
			if _, err := l2.Read(ReadOptions{Offset: leo + 1, MaxBytes: 100}); !errors.Is(err, ErrOffsetOutOfRange) {
				t.Fatal(err)
			}
			if _, isOS := e.fs.(vfs.OS); isOS {
				r, _ := l2.Read(ReadOptions{Offset: 0, MaxBytes: 100, MinOneBatch: true})
				if _, ok := r.Ranges[0].File.(vfs.OSFile); !ok {
					t.Fatal("OS ranges are not vfs.OSFile")
				}
				r.Release()
			}
		})
	}
}

func TestAppendRejectsBadBatches(t *testing.T) {
	e := memEnv(t)
	l, _ := e.open(t)
	defer l.Close()
	good := batch(t, 3, 1, "a")
	bad := append([]byte(nil), good...)
	bad[len(bad)-1] ^= 0xff
	_, err := l.Append(append(append([]byte(nil), good...), bad...))
	var be *BatchError
	if !errors.As(err, &be) || be.Index != 1 || !errors.Is(err, records.ErrCorrupt) {
		t.Fatalf("got %v", err)
	}
	if l.LogEndOffset() != 0 || l.Size() != 0 {
		t.Fatal("something was written")
	}
	if _, err := l.Append(nil); !errors.Is(err, ErrEmptyAppend) {
		t.Fatal(err)
	}
	if _, err := l.Append(good[:len(good)-1]); !errors.Is(err, records.ErrCorrupt) {
		t.Fatal(err)
	}
}

func TestSyncAlwaysHighWatermark(t *testing.T) {
	mem := vfs.NewMem()
	gate := make(chan struct{})
	entered := make(chan struct{}, 10)
	var once sync.Once
	// fsyncs block until the gate opens, so the test sees the state
	// between the write and its fsync.
	inj := vfs.InjectorFunc(func(op vfs.Op, _ string, n int) (int, error) {
		if op == vfs.OpSync {
			entered <- struct{}{}
			<-gate
		}
		return n, nil
	})
	l, _, err := Open(Options{FS: vfs.NewFaultFS(mem, inj), Dir: "/d", Config: DefaultConfig(), Sync: SyncPolicy{Mode: SyncAlways}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { once.Do(func() { close(gate) }); l.Close() }()
	res, err := l.Append(batch(t, 5, 1, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if l.HighWatermark() != 0 || l.LogEndOffset() != 5 {
		t.Fatalf("hw %d before fsync", l.HighWatermark())
	}
	if r, _ := l.Read(ReadOptions{Offset: 0, MaxBytes: 1 << 20}); r.Size != 0 {
		t.Fatal("unsynced data visible")
	}
	// The background round (no one waits yet) is stuck in its fsync; a
	// waiter joins it and gives up with its context.
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.WaitDurable(ctx, res.LastOffset+1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitDurable returned %v before the fsync", err)
	}
	ch := l.Changed()
	once.Do(func() { close(gate) })
	if err := l.WaitDurable(context.Background(), res.LastOffset+1); err != nil {
		t.Fatal(err)
	}
	<-ch
	if l.HighWatermark() != 5 {
		t.Fatal(l.HighWatermark())
	}
	// The data is in the crash image.
	l2, _, err := Open(Options{FS: mem.CrashClone(), Dir: "/d", Config: DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	if l2.LogEndOffset() != 5 {
		t.Fatal(l2.LogEndOffset())
	}
	l2.Close()
}

// AppendValidated (the broker's path, after its own records.Validate)
// assigns offsets, persists and reads back exactly like Append.
func TestAppendValidatedMatchesAppend(t *testing.T) {
	e := memEnv(t)
	l, _ := e.open(t)
	var want []byte
	for i := 0; i < 10; i++ {
		b := batch(t, 1+i%3, int64(100+i), "v")
		if _, err := records.Validate(b); err != nil {
			t.Fatal(err)
		}
		appendFn := l.Append
		if i%2 == 1 {
			appendFn = l.AppendValidated
		}
		leo := l.LogEndOffset()
		res, err := appendFn(b)
		if err != nil {
			t.Fatal(err)
		}
		if res.BaseOffset != leo || res.LastOffset != leo+int64(1+i%3)-1 {
			t.Fatalf("batch %d: offsets %d-%d, want from %d", i, res.BaseOffset, res.LastOffset, leo)
		}
		want = append(want, b...)
	}
	if _, err := l.AppendValidated(nil); !errors.Is(err, ErrEmptyAppend) {
		t.Fatalf("empty AppendValidated: %v", err)
	}
	if got := readAll(t, l, 0); !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, want %d", len(got), len(want))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, rep := e.open(t)
	defer l2.Close()
	if len(rep.Truncated) != 0 || !bytes.Equal(readAll(t, l2, 0), want) {
		t.Fatalf("reopen: %+v", rep)
	}
}
