package spool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// TestCodecCipherMatrix round-trips records with spans through every
// codec × cipher combination, across a reopen, on real files.
func TestCodecCipherMatrix(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		for _, encrypt := range []bool{false, true} {
			name := fmt.Sprintf("codec=%d/encrypt=%v", codec, encrypt)
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				o := Options{FS: vfs.Default, Dir: dir, Compression: codec, BatchRecords: 50, FlushInterval: -1}
				if encrypt {
					o.Cipher = testCipher(t)
				}
				s, _ := openT(t, o)
				var want []Record
				for i := range 120 {
					span := 1 + i%3
					data := rec(int64(i), 100+i)
					seq, err := s.AppendSpan(data, span)
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, Record{Seq: seq, Span: span, Data: data})
				}
				// Readable before any flush (20 in memory), then durable.
				checkRecords(t, readAllRecords(t, s, 0), want)
				if err := s.Flush(); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				segs := filesWithSuffix(t, vfs.Default, dir, ".seg")
				if len(segs) != 3 {
					t.Fatalf("segments %v, want 3", segs)
				}
				for _, n := range segs {
					h, err := parseHeader(readAll(t, vfs.Default, filepath.Join(dir, n)))
					if err != nil {
						t.Fatal(err)
					}
					wantCodec := uint8(codecNone)
					if codec == CodecZstd {
						wantCodec = codecZstd
					}
					if h.codec() != wantCodec || h.encrypted() != encrypt {
						t.Fatalf("%s: header %v, want codec %d encrypted %v", n, h, wantCodec, encrypt)
					}
				}
				s2, rep := openT(t, o)
				if rep.Segments != 3 || rep.Records != 120 || rep.NextSeq != want[len(want)-1].Last()+1 || rep.Head != 0 {
					t.Fatalf("report %+v", rep)
				}
				checkRecords(t, readAllRecords(t, s2, 0), want)
				// Reading from the middle of a span returns the record holding it.
				mid := want[10] // span 2
				got, err := s2.ReadFrom(mid.Seq+1, 1)
				if err != nil || len(got) != 1 || got[0].Seq != mid.Seq || mid.Span != 2 {
					t.Fatalf("ReadFrom mid-span: %v %v", got, err)
				}
			})
		}
	}
}

func checkRecords(t testing.TB, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || got[i].Span != want[i].Span || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("record %d: got seq %d span %d %q, want seq %d span %d %q", i,
				got[i].Seq, got[i].Span, trunc(got[i].Data), want[i].Seq, want[i].Span, trunc(want[i].Data))
		}
	}
}

func trunc(b []byte) string {
	if len(b) > 24 {
		return string(b[:24]) + "…"
	}
	return string(b)
}

func TestFlushByCount(t *testing.T) {
	fs := vfs.NewMem()
	s, _ := openT(t, Options{FS: fs, BatchRecords: 10, FlushInterval: -1})
	for i := range 25 {
		if _, err := s.Append(rec(int64(i), 10)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "two segments", func() bool { return s.Stats().DiskSegments == 2 })
	time.Sleep(20 * time.Millisecond) // a third segment would be a bug; give it a chance to appear
	st := s.Stats()
	if st.DiskSegments != 2 || st.PendingRecords != 5 || st.DurableSeq != 20 {
		t.Fatalf("stats %+v", st)
	}
	want := []string{segName(0, 9), segName(10, 19)}
	if got := filesWithSuffix(t, fs, "spool", ".seg"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("files %v, want %v", got, want)
	}
}

func TestFlushBySize(t *testing.T) {
	fs := vfs.NewMem()
	s, _ := openT(t, Options{FS: fs, BatchBytes: 1000, FlushInterval: -1, Compression: CodecNone})
	// Each frame is 1+1+100 = 102 bytes: 9 fit in 1000, the 10th starts a new batch.
	for i := range 30 {
		if _, err := s.Append(bytes.Repeat([]byte{'x'}, 100)); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	eventually(t, "three segments", func() bool { return s.Stats().DiskSegments == 3 })
	want := []string{segName(0, 8), segName(9, 17), segName(18, 26)}
	if got := filesWithSuffix(t, fs, "spool", ".seg"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	if st := s.Stats(); st.PendingRecords != 3 {
		t.Fatalf("pending %d, want 3", st.PendingRecords)
	}
	// A record larger than BatchBytes still goes, alone in its segment.
	seq, err := s.Append(bytes.Repeat([]byte{'y'}, 3000))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WaitDurable(context.Background(), seq); err != nil {
		t.Fatal(err)
	}
	if got := filesWithSuffix(t, fs, "spool", ".seg"); got[len(got)-1] != segName(30, 30) {
		t.Fatalf("files %v, want the big record alone in %s", got, segName(30, 30))
	}
}

// TestFlushByInterval runs on a fake clock: nothing is flushed before the
// interval, the batch is flushed once it passes.
func TestFlushByInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := vfs.NewMem()
		s, _, err := Open(Options{FS: fs, Dir: "spool", FlushInterval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Append([]byte("a")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		if st := s.Stats(); st.DiskSegments != 0 || st.PendingRecords != 1 {
			t.Fatalf("before the interval: %+v", st)
		}
		if _, err := s.Append([]byte("b")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if st := s.Stats(); st.DiskSegments != 1 || st.PendingRecords != 0 || st.DurableSeq != 2 {
			t.Fatalf("after the interval: %+v", st)
		}
		// The interval counts from a batch's first record.
		if _, err := s.Append([]byte("c")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1001 * time.Millisecond)
		synctest.Wait()
		if st := s.Stats(); st.DiskSegments != 2 {
			t.Fatalf("second interval: %+v", st)
		}
	})
}

func TestWaitDurableFlushesOnDemand(t *testing.T) {
	fs := vfs.NewMem()
	s, _ := openT(t, Options{FS: fs, FlushInterval: time.Hour})
	seq, err := s.Append([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.WaitDurable(ctx, seq); err != nil {
		t.Fatal(err)
	}
	// Durable means it survives a crash right now.
	s2, _ := openT(t, Options{FS: fs.CrashClone()})
	if got := readAllRecords(t, s2, 0); len(got) != 1 || string(got[0].Data) != "x" {
		t.Fatalf("after crash: %v", got)
	}
	if err := s.WaitDurable(ctx, seq+1); err == nil {
		t.Fatal("WaitDurable of an unassigned sequence succeeded")
	}
}

func TestFullAndPressure(t *testing.T) {
	fs := vfs.NewMem()
	const maxBytes = 10_000
	s, _ := openT(t, Options{FS: fs, MaxBytes: maxBytes, BatchRecords: 10, FlushInterval: -1, Compression: CodecNone, Cipher: testCipher(t)})
	if _, err := s.Append(make([]byte, maxBytes)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversize record: %v, want ErrTooLarge", err)
	}
	var last int64
	for i := 0; ; i++ {
		seq, err := s.Append(rec(int64(i), 200))
		if err != nil {
			mustErrIs(t, err, ErrFull)
			var fe *FullError
			if !errors.As(err, &fe) || fe.Max != maxBytes || fe.Used+fe.Need <= maxBytes {
				t.Fatalf("FullError %+v", fe)
			}
			break
		}
		last = seq
		if st := s.Stats(); st.UsedBytes > maxBytes {
			t.Fatalf("used %d > max", st.UsedBytes)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	var onDisk int64
	for _, n := range filesWithSuffix(t, fs, "spool", ".seg") {
		onDisk += int64(len(readAll(t, fs, filepath.Join("spool", n))))
	}
	st := s.Stats()
	if onDisk > maxBytes || onDisk != st.DiskBytes {
		t.Fatalf("on disk %d, stats %d, max %d", onDisk, st.DiskBytes, maxBytes)
	}
	if p := s.Pressure(); p < 0.9 || p > 1 || !s.IsOverloaded() {
		t.Fatalf("pressure %v when full", p)
	}
	// Acknowledging frees space.
	if _, err := s.DeleteAcked(last / 2); err != nil {
		t.Fatal(err)
	}
	if p := s.Pressure(); p > 0.7 {
		t.Fatalf("pressure %v after acking half", p)
	}
	if _, err := s.Append([]byte("fits again")); err != nil {
		t.Fatal(err)
	}
}

func TestDeleteAckedAndRestart(t *testing.T) {
	fs := vfs.NewMem()
	o := Options{FS: fs, BatchRecords: 10, FlushInterval: -1, StartSeq: 1000}
	s, _ := openT(t, o)
	for i := range 35 {
		seq, err := s.Append(rec(int64(i), 20))
		if err != nil || seq != int64(1000+i) {
			t.Fatalf("append: %d %v", seq, err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	n, err := s.DeleteAcked(1014) // removes [1000..1009]; [1010..1019] partly acked
	if err != nil || n != 1 {
		t.Fatalf("DeleteAcked: %d %v", n, err)
	}
	if s.Head() != 1015 {
		t.Fatalf("head %d", s.Head())
	}
	got := readAllRecords(t, s, 0)
	if len(got) != 20 || got[0].Seq != 1015 {
		t.Fatalf("after ack read %d records from %d", len(got), got[0].Seq)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, rep := openT(t, o)
	if rep.Head != 1015 || rep.NextSeq != 1035 || rep.Segments != 3 {
		t.Fatalf("report after restart %+v", rep)
	}
	// Acknowledge everything, including records still in memory.
	if _, err := s.Append([]byte("tail")); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteAcked(1_000_000); err != nil || n != 3 {
		t.Fatalf("DeleteAcked all: %d %v", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if segs := filesWithSuffix(t, fs, "spool", ".seg"); len(segs) != 0 {
		t.Fatalf("segments left %v (the acked tail must not be written)", segs)
	}
	// Empty spool: sequence numbers continue, never restart.
	s, rep = openT(t, o)
	if rep.NextSeq != 1036 || rep.Head != 1036 {
		t.Fatalf("empty spool report %+v", rep)
	}
	if seq, err := s.Append([]byte("next")); err != nil || seq != 1036 {
		t.Fatalf("append after restart: %d %v", seq, err)
	}
	if got := filesWithSuffix(t, fs, "spool", ""); len(got) != 1 || !strings.HasPrefix(got[0], "acked-") {
		t.Fatalf("files %v, want just one marker", got)
	}
}

func TestClosed(t *testing.T) {
	s, _ := openT(t, Options{FS: vfs.NewMem()})
	if _, err := s.Append([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append([]byte("y")); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if s.Stats().DurableSeq != 1 {
		t.Fatal("Close did not flush")
	}
}

func TestStickyWriteError(t *testing.T) {
	mem := vfs.NewMem()
	inj := &vfs.FailNth{Op: vfs.OpSync, N: 2}
	s, _ := openT(t, Options{FS: vfs.NewFaultFS(mem, inj), FlushInterval: -1})
	a, _ := s.Append([]byte("a"))
	if err := s.WaitDurable(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	b, _ := s.Append([]byte("b"))
	err := s.WaitDurable(context.Background(), b)
	mustErrIs(t, err, vfs.ErrInjected)
	if _, err := s.Append([]byte("c")); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("append after failed flush: %v", err)
	}
	// Still readable from memory, in order.
	if got := readAllRecords(t, s, 0); len(got) != 2 || string(got[1].Data) != "b" {
		t.Fatalf("read after failure: %v", got)
	}
	mustErrIs(t, s.Close(), vfs.ErrInjected)
	// Reopen: a is there, b was never reported durable, debris is gone.
	s2, rep := openT(t, Options{FS: mem.CrashClone()})
	if got := readAllRecords(t, s2, 0); len(got) != 1 || string(got[0].Data) != "a" {
		t.Fatalf("after reopen: %v (report %+v)", got, rep)
	}
}

// TestAppendWaitsForSlowDisk: when sealed batches waiting for the disk reach
// MaxBufferedBytes, Append waits for the flusher instead of buffering
// without bound, and proceeds as soon as a segment is committed.
func TestAppendWaitsForSlowDisk(t *testing.T) {
	release := make(chan struct{})
	slow := vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
		if op == vfs.OpSync {
			<-release
		}
		return n, nil
	})
	s, _ := openT(t, Options{FS: vfs.NewFaultFS(vfs.NewMem(), slow), BatchBytes: 1000, MaxBufferedBytes: 3000, FlushInterval: -1, Compression: CodecNone})
	appended := make(chan int64, 100)
	go func() {
		defer close(appended)
		for range 60 { // 60 × 102 bytes: 6 batches
			seq, err := s.Append(bytes.Repeat([]byte{'x'}, 100))
			if err != nil {
				t.Error(err)
				return
			}
			appended <- seq
		}
	}()
	// One batch is stuck in fsync; three more fill MaxBufferedBytes; the
	// next append must wait.
	time.Sleep(100 * time.Millisecond)
	if n := len(appended); n >= 60 || s.Stats().PendingBytes > 5000 {
		t.Fatalf("appended %d records with the disk stalled (pending %d bytes)", n, s.Stats().PendingBytes)
	}
	close(release)
	count := 0
	for range appended {
		count++
	}
	if count != 60 {
		t.Fatalf("appended %d", count)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestGroupCommit: many producers each waiting for durability after every
// append share segment writes: with a slow fsync, far fewer segments than
// waits.
func TestGroupCommit(t *testing.T) {
	slow := vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
		if op == vfs.OpSync {
			time.Sleep(2 * time.Millisecond)
		}
		return n, nil
	})
	s, _ := openT(t, Options{FS: vfs.NewFaultFS(vfs.NewMem(), slow), FlushInterval: time.Hour})
	const producers, each = 32, 20
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				seq, err := s.Append(rec(int64(p*1000+i), 30))
				if err == nil {
					err = s.WaitDurable(context.Background(), seq)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	if st.DurableSeq != producers*each || st.DiskRecords != producers*each {
		t.Fatalf("stats %+v", st)
	}
	if st.DiskSegments > producers*each/4 {
		t.Fatalf("%d waits took %d segments: no group commit", producers*each, st.DiskSegments)
	}
	t.Logf("%d durable appends in %d segments", producers*each, st.DiskSegments)
}

// TestAckedWhileWriting: a segment acknowledged while its write is in
// flight (DeleteAcked cannot see it yet) is removed once it lands.
func TestAckedWhileWriting(t *testing.T) {
	inSync, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	block := vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
		if op == vfs.OpSync && strings.HasSuffix(path, ".tmp") {
			once.Do(func() { close(inSync); <-release })
		}
		return n, nil
	})
	mem := vfs.NewMem()
	s, _ := openT(t, Options{FS: vfs.NewFaultFS(mem, block), FlushInterval: -1})
	for range 5 {
		if _, err := s.Append([]byte("r")); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error)
	go func() { done <- s.Flush() }()
	<-inSync
	if _, err := s.DeleteAcked(4); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	eventually(t, "acknowledged segment removed", func() bool {
		return len(filesWithSuffix(t, mem, "spool", ".seg")) == 0 && s.Stats().DiskBytes == 0
	})
}

func TestChanged(t *testing.T) {
	s, _ := openT(t, Options{FS: vfs.NewMem()})
	ch := s.Changed()
	select {
	case <-ch:
		t.Fatal("closed before any append")
	default:
	}
	if _, err := s.Append([]byte("x")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("not closed by an append")
	}
	ch = s.Changed()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("not closed by Close")
	}
}

func TestDestroy(t *testing.T) {
	fs := vfs.NewMem()
	s, _ := openT(t, Options{FS: fs})
	if _, err := s.Append([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat("spool"); err == nil {
		t.Fatal("directory still there")
	}
}

// Segments of records the Precompressed hook reports as already
// compressed are stored without zstd; others are still compressed, and both
// read back the same.
func TestPrecompressedSkipsZstd(t *testing.T) {
	fs := vfs.NewMem()
	s, _ := openT(t, Options{FS: fs, FlushInterval: -1,
		Precompressed: func(r []byte) bool { return r[0] == 'P' }})
	value := func(c byte, i int) []byte { return append([]byte{c}, bytes.Repeat([]byte{'a' + byte(i)}, 999)...) }
	for _, c := range []byte{'P', 'x'} {
		for i := range 10 {
			if _, err := s.Append(value(c, i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	names := filesWithSuffix(t, fs, "spool", ".seg")
	if len(names) != 2 {
		t.Fatalf("segments %v", names)
	}
	for i, want := range []uint8{codecNone, codecZstd} {
		f, err := fs.OpenFile("spool/"+names[i], os.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		h, err := parseHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		if h.codec() != want {
			t.Errorf("segment %s: codec %d, want %d", names[i], h.codec(), want)
		}
	}
	recs, err := s.Read(0, 100, 1<<20)
	if err != nil || len(recs) != 20 {
		t.Fatalf("read %d records, %v", len(recs), err)
	}
	for i, r := range recs {
		c := byte('P')
		if i >= 10 {
			c = 'x'
		}
		if !bytes.Equal(r.Data, value(c, i%10)) {
			t.Fatalf("record %d differs", i)
		}
	}
}

// A full spool refuses Append but takes AppendPastLimit's small record,
// which is readable and durable as any other; Append stays refused.
func TestAppendPastLimit(t *testing.T) {
	const maxBytes = 4_000
	s, _ := openT(t, Options{FS: vfs.NewMem(), MaxBytes: maxBytes, BatchRecords: 10, FlushInterval: -1, Compression: CodecNone})
	for i := 0; ; i++ {
		if _, err := s.Append(rec(int64(i), 200)); err != nil {
			mustErrIs(t, err, ErrFull)
			break
		}
	}
	seq, err := s.AppendPastLimit([]byte("marker"))
	if err != nil {
		t.Fatalf("AppendPastLimit on a full spool: %v", err)
	}
	if _, err := s.Append(rec(0, 200)); !errors.Is(err, ErrFull) {
		t.Fatalf("Append after AppendPastLimit: %v, want ErrFull", err)
	}
	if err := s.WaitDurable(context.Background(), seq); err != nil {
		t.Fatal(err)
	}
	recs, err := s.Read(seq, 1, 1<<20)
	if err != nil || len(recs) != 1 || string(recs[0].Data) != "marker" {
		t.Fatalf("read back %v %v", recs, err)
	}
	// Past the limit is not past a closed spool.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendPastLimit([]byte("marker")); !errors.Is(err, ErrClosed) {
		t.Fatalf("AppendPastLimit on a closed spool: %v, want ErrClosed", err)
	}
}
