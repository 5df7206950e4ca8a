package logstore

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// Benchmark sizes: LOGSTORE_BENCH_MB sets the log size for the read and open
// benchmarks (default 256 MiB; the figure is 1024).
func benchBytes() int64 {
	if s := os.Getenv("LOGSTORE_BENCH_MB"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return int64(n) << 20
		}
	}
	return 256 << 20
}

// benchBatch is 64 records of 256-byte values: a ~16.9 KiB batch.
func benchBatch(b testing.TB) []byte {
	recs := make([]records.Record, 64)
	val := make([]byte, 256)
	for i := range val {
		val[i] = byte(i * 7)
	}
	for i := range recs {
		recs[i] = records.Record{TimestampDelta: int64(i), Value: val}
	}
	buf, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		b.Fatal(err)
	}
	return buf
}

// pageCacheWrite measures plain os.File.Write of chunk-sized writes of total
// bytes into a fresh file in dir (the speed ceiling for appends), then syncs
// and removes the file so its dirty pages do not slow what runs next.
func pageCacheWrite(b *testing.B, dir string, chunk []byte, total int64) float64 {
	f, err := os.Create(filepath.Join(dir, "raw"))
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	start := time.Now()
	for n := int64(0); n < total; n += int64(len(chunk)) {
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	f.Sync()
	return float64(total) / el.Seconds()
}

func benchAppend(b *testing.B, fsys vfs.FS, dir string) {
	buf := benchBatch(b)
	total := int64(b.N) * int64(len(buf))
	// Both sides run in the same conditions. Files: the baseline runs first
	// and its file is synced and removed, so neither side is throttled by
	// the other's dirty pages. Memory: first touch of never-used pages
	// dominates on this VM (~35 us per 4 KiB page, host side), so the heap
	// is first grown to hold both sides and freed; the log and then the
	// baseline both reuse warm memory, as a long-running broker does.
	_, isOS := fsys.(vfs.OS)
	var raw float64
	if isOS {
		raw = pageCacheWrite(b, b.TempDir(), buf, total)
	} else {
		_, warm := freshMemWrite(buf, 2*total+4<<20)
		runtime.KeepAlive(warm)
		warm = nil
		runtime.GC()
	}
	l, _, err := Open(Options{FS: fsys, Dir: dir, Config: DefaultConfig()})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := l.Append(buf); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	b.StopTimer()
	if !isOS {
		raw, _ = freshMemWrite(buf, total) // while the log still holds its memory
	}
	got := float64(total) / el.Seconds()
	b.ReportMetric(float64(b.N*64)/el.Seconds(), "records/s")
	if isOS {
		b.ReportMetric(raw/1e6, "pagecache-MB/s")
		b.ReportMetric(got/raw, "ratio-vs-pagecache")
	} else {
		b.ReportMetric(raw/1e6, "freshmem-MB/s")
		b.ReportMetric(got/raw, "ratio-vs-freshmem")
	}
}

// BenchmarkAppend: 256-byte records in ~16 KiB batches, policy never.
func BenchmarkAppend(b *testing.B) {
	b.Run("files", func(b *testing.B) { benchAppend(b, vfs.Default, filepath.Join(b.TempDir(), "p")) })
	b.Run("mem", func(b *testing.B) { benchAppend(b, vfs.NewMem(), "/p") })
}

// freshMemWrite copies chunk-sized writes of total bytes into newly
// allocated 256 KiB blocks, as the memory FS does: the floor cost of any
// in-memory store (first touch of new pages is expensive on VMs).
func freshMemWrite(chunk []byte, total int64) (float64, [][]byte) {
	var blocks [][]byte
	start := time.Now()
	var cur []byte
	for n := int64(0); n < total; n += int64(len(chunk)) {
		p := chunk
		for len(p) > 0 {
			if len(cur) == 0 {
				cur = make([]byte, 256<<10)
				blocks = append(blocks, cur)
			}
			m := copy(cur, p)
			cur, p = cur[m:], p[m:]
		}
	}
	return float64(total) / time.Since(start).Seconds(), blocks
}

// BenchmarkAppendAlways: 8 concurrent appenders of 16 KiB batches under
// SyncAlways, against write+fdatasync of 1 MiB chunks of the same total
// volume measured in the same run. inflight=1: each appender waits for its
// fsync before the next append (Append then WaitDurable). inflight=4: each
// appender keeps up to 4 acknowledgements outstanding, as a producer
// connection pipelining acks=all requests does.
func BenchmarkAppendAlways(b *testing.B) {
	for _, inflight := range []int{1, 4} {
		b.Run("inflight="+strconv.Itoa(inflight), func(b *testing.B) { benchAlways(b, inflight) })
	}
}

func benchAlways(b *testing.B, inflight int) {
	dir := b.TempDir()
	l, _, err := Open(Options{Dir: filepath.Join(dir, "p"), Config: DefaultConfig(), Sync: SyncPolicy{Mode: SyncAlways}})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	const writers = 8
	bufs := make([][]byte, writers)
	for i := range bufs {
		bufs[i] = benchBatch(b)
	}
	b.SetBytes(int64(len(bufs[0])))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	per := (b.N + writers - 1) / writers
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem := make(chan struct{}, inflight) // appends not yet acknowledged
			acks := make(chan int64, inflight)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for end := range acks {
					if err := l.WaitDurable(context.Background(), end); err != nil {
						b.Error(err)
					}
					<-sem
				}
			}()
			for i := 0; i < per; i++ {
				sem <- struct{}{}
				res, err := l.Append(bufs[w])
				if err != nil {
					b.Error(err)
					break
				}
				acks <- res.LastOffset + 1
			}
			close(acks)
			<-done
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	total := int64(per*writers) * int64(len(bufs[0]))
	got := float64(total) / el.Seconds()
	raw := fdatasyncWrite(b, dir, total, 1<<20)
	// The ceiling when every fsync carries at most writers*inflight
	// batches, as here: write+fdatasync of chunks that size.
	ceil := fdatasyncWrite(b, dir, total, writers*inflight*len(bufs[0]))
	b.ReportMetric(ceil/1e6, "fdatasync-group-size-MB/s")
	b.ReportMetric(float64(per*writers*64)/el.Seconds(), "records/s")
	b.ReportMetric(raw/1e6, "fdatasync-1MiB-MB/s")
	b.ReportMetric(got/raw, "ratio-vs-fdatasync")
	b.ReportMetric(float64(per*writers)/float64(l.fsyncs.Load()), "appends/fsync")
}

// fdatasyncWrite writes total bytes in chunks of size bytes, fdatasync
// after each.
func fdatasyncWrite(b *testing.B, dir string, total int64, size int) float64 {
	f, err := os.Create(filepath.Join(dir, "raw"))
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	chunk := make([]byte, size)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	total = max(total, 8<<20)
	start := time.Now()
	for n := int64(0); n < total; n += int64(len(chunk)) {
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
	}
	return float64(total) / time.Since(start).Seconds()
}

// buildLog writes size bytes of benchmark batches into dir.
func buildLog(b *testing.B, dir string, size int64, close bool) *Log {
	l, _, err := Open(Options{Dir: dir, Config: DefaultConfig()})
	if err != nil {
		b.Fatal(err)
	}
	buf := benchBatch(b)
	for n := int64(0); n < size; n += int64(len(buf)) {
		if _, err := l.Append(buf); err != nil {
			b.Fatal(err)
		}
	}
	if close {
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		return nil
	}
	return l
}

// BenchmarkSequentialRead reads the whole log in 1 MiB fetches, copying the
// file ranges into a buffer (what a non-sendfile fetch does).
func BenchmarkSequentialRead(b *testing.B) {
	size := benchBytes()
	dir := filepath.Join(b.TempDir(), "p")
	buildLog(b, dir, size, true)
	l, _, err := Open(Options{Dir: dir, Config: DefaultConfig()})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	buf := make([]byte, 2<<20)
	b.SetBytes(l.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off := int64(0)
		for off < l.HighWatermark() {
			r, err := l.Read(ReadOptions{Offset: off, MaxBytes: 1 << 20, MinOneBatch: true})
			if err != nil {
				b.Fatal(err)
			}
			for _, rg := range r.Ranges {
				if _, err := rg.File.ReadAt(buf[:rg.Len], rg.Pos); err != nil {
					b.Fatal(err)
				}
			}
			// The last batch's header says where to continue.
			last := r.Ranges[len(r.Ranges)-1]
			h, err := lastBatchHeader(buf[:last.Len])
			if err != nil {
				b.Fatal(err)
			}
			off = h.LastOffset() + 1
			r.Release()
		}
	}
	el := b.Elapsed()
	b.StopTimer()
	// Same run: plain 1 MiB preads of the segment files, the ceiling for a
	// copying reader.
	start := time.Now()
	for _, s := range l.segments() {
		f, err := os.Open(l.path(s.base, ".log"))
		if err != nil {
			b.Fatal(err)
		}
		for pos := int64(0); pos < s.size.Load(); pos += 1 << 20 {
			f.ReadAt(buf[:1<<20], pos)
		}
		f.Close()
	}
	raw := float64(l.Size()) / time.Since(start).Seconds()
	got := float64(l.Size()) * float64(b.N) / el.Seconds()
	b.ReportMetric(raw/1e6, "pread-MB/s")
	b.ReportMetric(got/raw, "ratio-vs-pread")
}

// lastBatchHeader walks the batches in p and returns the last header.
func lastBatchHeader(p []byte) (records.BatchHeader, error) {
	var h records.BatchHeader
	for len(p) > 0 {
		var err error
		h, err = records.ParseHeader(p)
		if err != nil {
			return h, err
		}
		p = p[h.Size():]
	}
	return h, nil
}

// BenchmarkOpen: opening a log of LOGSTORE_BENCH_MB after a clean close (no
// rescan) and after a crash (the active segment is rescanned with CRC
// checks, then fsynced).
func BenchmarkOpen(b *testing.B) {
	size := benchBytes()
	b.Run("clean", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "p")
		buildLog(b, dir, size, true)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			l, rep, err := Open(Options{Dir: dir, Config: DefaultConfig()})
			if err != nil || len(rep.Rescanned) != 0 {
				b.Fatal(err, rep)
			}
			b.StopTimer()
			l.Close()
			b.StartTimer()
		}
	})
	b.Run("crash", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "p")
		l := buildLog(b, dir, size, false)
		l.Sync()
		// Abandon l without Close: no index for the active segment. Its
		// open file is harmless for the benchmark.
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			l, rep, err := Open(Options{Dir: dir, Config: DefaultConfig()})
			if err != nil || len(rep.Rescanned) != 1 {
				b.Fatal(err, rep)
			}
			b.StopTimer()
			l.Close()
			os.Remove(filepath.Join(dir, segName(0, ".index")))
			os.Remove(filepath.Join(dir, segName(0, ".timeindex")))
			b.StartTimer()
		}
	})
}
