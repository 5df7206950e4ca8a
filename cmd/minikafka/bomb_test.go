package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
)

// bombPeakBound is the documented bound (README, "Memory") on the broker's
// peak RSS under hostile input with default settings.
const bombPeakBound = 256 << 20

// bombBatch is a batch of one keyed record whose value is n zero bytes,
// compressed with c: about 2 KiB on the wire for 60 MiB inflated.
func bombBatch(t testing.TB, c records.Codec, n int64) []byte {
	t.Helper()
	rec := []byte{0, 0, 0, 2, 'k'} // attributes, ts delta, offset delta, key "k"
	rec = binary.AppendVarint(rec, n)
	plainLen := int64(len(rec)) + n + 1 // + header count
	var out bytes.Buffer
	var w io.WriteCloser
	switch c {
	case records.CodecGzip:
		w, _ = gzip.NewWriterLevel(&out, gzip.BestCompression)
	case records.CodecZstd:
		w, _ = zstd.NewWriter(&out, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	}
	w.Write(binary.AppendVarint(nil, plainLen))
	w.Write(rec)
	io.CopyN(w, zeroReader{}, n)
	w.Write([]byte{0})
	w.Close()
	b, err := records.AppendBatch(nil, records.BatchSpec{Codec: records.CodecNone, FirstTimestamp: time.Now().UnixMilli(),
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, []records.Record{{Key: []byte("k")}})
	if err != nil {
		t.Fatal(err)
	}
	b = append(b[:records.BatchHeaderLen], out.Bytes()...)
	b[22] |= byte(c)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], records.Checksum(b))
	return b
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// rawProduce sends one Produce v7 request with batch on c and returns the
// partition's error code.
func rawProduce(c net.Conn, corr int32, topic string, batch []byte) (int16, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 7, 1, 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	f := binary.BigEndian.AppendUint32(nil, 0)
	f = binary.BigEndian.AppendUint16(f, 0)
	f = binary.BigEndian.AppendUint16(f, 7)
	f = binary.BigEndian.AppendUint32(f, uint32(corr))
	f = binary.BigEndian.AppendUint16(f, 0xffff)
	f = req.AppendTo(f)
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.Write(f); err != nil {
		return 0, err
	}
	var hdr [8]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return 0, err
	}
	body := make([]byte, binary.BigEndian.Uint32(hdr[:])-4)
	if _, err := io.ReadFull(c, body); err != nil {
		return 0, err
	}
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 7
	if err := resp.ReadFrom(body); err != nil {
		return 0, err
	}
	return resp.Topics[0].Partitions[0].ErrorCode, nil
}

// TestBombPeakMemory: decompression bombs (2 KiB zstd and gzip batches
// inflating to 60 MiB, to a compacted topic so that even the passthrough
// opt-out must decode them) from 8 connections × 3 requests, 8 lying
// 100 MiB length prefixes held open and 8 prefixes over the frame cap, all
// while a kgo producer and consumer keep working: the broker process's
// peak RSS (VmHWM) stays under bombPeakBound. MINIKAFKA_TEST_BINARY runs
// it against another build (how BENCHMARKS.md measured main's).
func TestBombPeakMemory(t *testing.T) {
	p := serve(t, nil, "-listen", "127.0.0.1:0", "-data", filepath.Join(t.TempDir(), "data"), "-fsync", "never")
	pid := p.cmd.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic("normal"),
		kgo.ConsumeTopics("normal"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, "bomb"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "normal"); err != nil {
		t.Fatal(err)
	}
	base, _ := statusKiB(pid, "VmHWM:")
	bombs := []([]byte){bombBatch(t, records.CodecZstd, 60<<20), bombBatch(t, records.CodecGzip, 60<<20)}
	t.Logf("bomb batches: zstd %d bytes, gzip %d bytes; broker VmHWM before %d KiB", len(bombs[0]), len(bombs[1]), base)

	var wg sync.WaitGroup
	var accepted atomic.Int32
	errs := make(chan error, 64)
	// conn runs fn on a new connection in its own goroutine.
	conn := func(fn func(c net.Conn)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", p.addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			fn(c)
		}()
	}
	for i := range 8 {
		conn(func(c net.Conn) { // bombs
			for j := range 3 {
				code, err := rawProduce(c, int32(j), "bomb", bombs[(i+j)%2])
				if err != nil {
					errs <- fmt.Errorf("bomb conn %d: %v", i, err)
					return
				}
				if code == 0 {
					accepted.Add(1)
				}
				if code != 0 && code != kerr.MessageTooLarge.Code && code != kerr.CorruptMessage.Code {
					errs <- fmt.Errorf("bomb conn %d: %v", i, kerr.ErrorForCode(code))
				}
			}
		})
		conn(func(c net.Conn) { // a lying prefix: 100 MiB claimed, 10 bytes sent, held open
			c.Write(append(binary.BigEndian.AppendUint32(nil, 100<<20), make([]byte, 10)...))
			<-ctx.Done()
		})
		conn(func(c net.Conn) { // a prefix over the cap: the broker closes the connection
			c.Write(binary.BigEndian.AppendUint32(nil, 1<<31-1))
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			io.Copy(io.Discard, c)
		})
	}
	// The well-behaved pair, meanwhile.
	const normal = 200
	for i := range normal {
		if err := cl.ProduceSync(ctx, kgo.StringRecord("r-"+strconv.Itoa(i))).FirstErr(); err != nil {
			t.Fatalf("normal produce %d: %v", i, err)
		}
	}
	got := 0
	for got < normal {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d", got, normal)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		got += len(fs.Records())
	}
	cancel() // release the lying connections
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	hwm, err := statusKiB(pid, "VmHWM:")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of 24 bombs accepted (valid batches); broker VmHWM after: %d KiB (%.1f MiB); bound %d MiB",
		accepted.Load(), hwm, float64(hwm)/1024, bombPeakBound>>20)
	if os.Getenv("MINIKAFKA_TEST_BINARY") == "" && hwm<<10 > bombPeakBound {
		t.Fatalf("peak RSS %d KiB over the %d MiB bound", hwm, bombPeakBound>>20)
	}
	if err := apiVersions(p.addr); err != nil {
		t.Fatalf("broker not serving after the bombs: %v", err)
	}
}
