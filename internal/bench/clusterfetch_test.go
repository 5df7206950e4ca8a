package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchTarget is a broker holding one partition of 1 KiB records, and the
// address of the node leading it.
type fetchTarget struct {
	b      *minikafka.Broker
	dir    string
	leader string
	end    int64 // the partition's end offset
	bytes  int64 // record bytes in the log
}

var (
	fetchTargetsMu sync.Mutex
	fetchTargets   = map[int]*fetchTarget{}
)

// clusterFetchTarget starts (once per node count, for every -count round)
// a broker of the given nodes with a data dir, a topic of replication
// factor nodes and 64 MiB of 1 KiB records in its one partition.
func clusterFetchTarget(tb testing.TB, nodes int) *fetchTarget {
	fetchTargetsMu.Lock()
	defer fetchTargetsMu.Unlock()
	if t := fetchTargets[nodes]; t != nil {
		return t
	}
	dir, err := os.MkdirTemp("", "clusterfetch")
	if err != nil {
		tb.Fatal(err)
	}
	b, err := minikafka.Start(context.Background(), minikafka.WithNodes(nodes), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithDataDir(dir), minikafka.WithDurability("never"), minikafka.WithLogger(nil))
	if err != nil {
		tb.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.DefaultProduceTopic("f"), kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		tb.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "f", 1, int16(nodes)
	create.Topics = append(create.Topics, ct)
	if resp, err := create.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		tb.Fatalf("create: %v %+v", err, resp)
	}
	val := make([]byte, 1024)
	rand.Read(val)
	const fill = 64 << 20
	var wg sync.WaitGroup
	var perr error
	var mu sync.Mutex
	for n := 0; n < fill/len(val); n++ {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Value: val}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				perr = err
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	if perr != nil {
		tb.Fatal(perr)
	}
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		tb.Fatal(err)
	}
	t := &fetchTarget{b: b, dir: dir, end: fill / int64(len(val)), bytes: fill}
	lead := md.Topics[0].Partitions[0].Leader
	for _, br := range md.Brokers {
		if br.NodeID == lead {
			t.leader = net.JoinHostPort(br.Host, fmt.Sprint(br.Port))
		}
	}
	if t.leader == "" {
		tb.Fatalf("no address for leader %d", lead)
	}
	fetchTargets[nodes] = t
	return t
}

// closeFetchTargets stops the brokers clusterFetchTarget started and
// removes their data.
func closeFetchTargets() {
	fetchTargetsMu.Lock()
	defer fetchTargetsMu.Unlock()
	for n, t := range fetchTargets {
		t.b.Close()
		os.RemoveAll(t.dir)
		delete(fetchTargets, n)
	}
}

// BenchmarkClusterFetch reads the whole partition with raw Fetch requests
// (v12, 1 MiB each) sent to its leader on one node and on three, the
// records left undecoded, so what it measures is the broker's fetch path,
// the routing checks of a cluster included, plus the client's socket reads.
// Run it with -count to alternate the two:
//
//	go test -run '^$' -bench ClusterFetch -count 10 ./internal/bench
func BenchmarkClusterFetch(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			t := clusterFetchTarget(b, nodes)
			conn, err := net.Dial("tcp", t.leader)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			r := bufio.NewReaderSize(conn, 1<<20)
			var buf []byte
			b.SetBytes(t.bytes)
			b.ResetTimer()
			cpu0 := processCPU()
			corr := int32(0)
			for i := 0; i < b.N; i++ {
				for off := int64(0); off < t.end; {
					req := kmsg.NewPtrFetchRequest()
					req.Version = 12
					req.MaxWaitMillis, req.MaxBytes = 0, 1<<20
					ft := kmsg.NewFetchRequestTopic()
					ft.Topic = "f"
					fp := kmsg.NewFetchRequestTopicPartition()
					fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = off, 1<<20, -1
					ft.Partitions = append(ft.Partitions, fp)
					req.Topics = append(req.Topics, ft)
					corr++
					buf = appendRequest(buf[:0], req, corr)
					if _, err := conn.Write(buf); err != nil {
						b.Fatal(err)
					}
					next, err := readFetch(r, req.Version, &buf)
					if err != nil {
						b.Fatal(err)
					}
					off = next
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/float64(int64(b.N)*t.bytes), "cpu-ns/B")
		})
	}
}

// appendRequest frames req with a flexible request header (v2): size,
// key, version, correlation ID, a null client ID, no tags.
func appendRequest(dst []byte, req kmsg.Request, corr int32) []byte {
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.Key()))
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.GetVersion()))
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	dst = append(dst, 0xff, 0xff, 0)
	dst = req.AppendTo(dst)
	binary.BigEndian.PutUint32(dst, uint32(len(dst)-4))
	return dst
}

// readFetch reads one Fetch response and returns the offset after its
// last batch; the records are not decoded.
func readFetch(r *bufio.Reader, version int16, buf *[]byte) (int64, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return 0, err
	}
	n := int(binary.BigEndian.Uint32(size[:]))
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	body := (*buf)[:n]
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	// The correlation ID, then the flexible header's empty tag section.
	if err := resp.ReadFrom(body[5:]); err != nil {
		return 0, err
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return 0, fmt.Errorf("fetch: error %d", p.ErrorCode)
	}
	recs, next := p.RecordBatches, int64(-1)
	for {
		h, err := records.ParseHeader(recs)
		if err != nil || h.Size() > len(recs) {
			break // the end, or a batch the response cut short
		}
		next = h.LastOffset() + 1
		recs = recs[h.Size():]
	}
	if next < 0 {
		return 0, fmt.Errorf("fetch returned no whole batch (%d bytes)", len(p.RecordBatches))
	}
	return next, nil
}

// processCPU is this process's user and system time, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
