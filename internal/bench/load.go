package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// sample is one timed run against one broker.
type sample struct {
	secs     float64 // wall time of the timed part
	bytes    int64   // record value bytes moved
	records  int64
	cpu      float64 // broker CPU-seconds over the timed part
	p50, p99 float64 // latency, ms (latency runs only)
	p999     float64
}

func (s sample) mibps() float64     { return float64(s.bytes) / (1 << 20) / s.secs }
func (s sample) recps() float64     { return float64(s.records) / s.secs }
func (s sample) cpuPerGiB() float64 { return s.cpu / (float64(s.bytes) / (1 << 30)) }

func createTopic(ctx context.Context, addr, topic string, parts int32) error {
	return createTopicRF(ctx, addr, topic, parts, 1)
}

func createTopicRF(ctx context.Context, addr, topic string, parts int32, rf int16) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, parts, max(rf, 1), nil, topic)
	if err != nil {
		return err
	}
	if resp.Err != nil {
		return resp.Err
	}
	// Apache Kafka answers CreateTopics before it has elected the leaders
	// (seconds for 1000 partitions); wait for them, so that the time is
	// not charged to the measured run. minikafka and kfake pass at once.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return err
		}
		ready := len(td[topic].Partitions) == int(parts)
		for _, p := range td[topic].Partitions {
			ready = ready && p.Leader >= 0 && p.Err == nil
		}
		if ready {
			return nil
		}
	}
	return fmt.Errorf("topic %s: partitions without a leader after 60 s", topic)
}

// payload returns a value of n bytes: random (incompressible) or, with
// compressible, words from a small vocabulary (about 3:1 with lz4/zstd,
// like text or JSON).
func payload(n int, compressible bool, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	if !compressible {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
		"india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", `"id":`, `"ts":`, "{", "}", ",", " "}
	for i := 0; i < n; {
		var w string
		if r.IntN(4) == 0 {
			w = fmt.Sprint(r.IntN(100000))
		} else {
			w = words[r.IntN(len(words))]
		}
		i += copy(b[i:], w)
	}
	return b
}

type produceSpec struct {
	recSize      int
	parts        int32
	producers    int
	bytes        int64 // total payload per run
	codec        kgo.CompressionCodec
	compressible bool
	rf           int16 // replication factor of the topic (0: 1)
	deleteAfter  bool  // delete the topic once the run is measured (Config.DeleteTopics)
}

// runProduce produces spec.bytes of records with acks=all (kgo's default,
// idempotent) to a new topic and times it.
func runProduce(ctx context.Context, p *proc, topic string, spec produceSpec) (sample, error) {
	if err := createTopicRF(ctx, p.addr, topic, spec.parts, spec.rf); err != nil {
		return sample{}, err
	}
	n := spec.bytes / int64(spec.recSize)
	if n < int64(spec.producers) {
		n = int64(spec.producers)
	}
	// Distinct values, enough that no batch repeats one (identical records
	// would make compressed batches unrealistically small).
	values := make([][]byte, max(64, min(1024, (16<<20)/spec.recSize)))
	for i := range values {
		values[i] = payload(spec.recSize, spec.compressible, uint64(i))
	}
	clients := make([]*kgo.Client, spec.producers)
	for i := range clients {
		cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(topic),
			kgo.ProducerBatchCompression(spec.codec), kgo.MaxBufferedBytes(64<<20))
		if err != nil {
			return sample{}, err
		}
		defer cl.Close()
		// Warm up: metadata, producer ID, connections.
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
			return sample{}, fmt.Errorf("warm-up produce: %w", err)
		}
		clients[i] = cl
	}
	var failed atomic.Int64
	var firstErr atomic.Value
	cpu0, err := p.cpu()
	if err != nil {
		return sample{}, err
	}
	t0 := time.Now()
	var wg sync.WaitGroup
	for i, cl := range clients {
		k := n / int64(spec.producers)
		if i == 0 {
			k += n % int64(spec.producers)
		}
		wg.Add(int(k))
		go func() {
			for j := int64(0); j < k; j++ {
				cl.Produce(ctx, &kgo.Record{Value: values[j%int64(len(values))]}, func(_ *kgo.Record, err error) {
					if err != nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err)
					}
					wg.Done()
				})
			}
		}()
	}
	wg.Wait()
	secs := time.Since(t0).Seconds()
	cpu1, err := p.cpu()
	if err != nil {
		return sample{}, err
	}
	if f := failed.Load(); f > 0 {
		return sample{}, fmt.Errorf("%d of %d records failed: %v", f, n, firstErr.Load())
	}
	if spec.deleteAfter {
		if err := deleteTopic(ctx, p.addr, topic); err != nil {
			return sample{}, fmt.Errorf("deleting %s after the run: %w", topic, err)
		}
	}
	return sample{secs: secs, bytes: n * int64(spec.recSize), records: n, cpu: (cpu1 - cpu0).Seconds()}, nil
}

// runConsume reads records records (bytes payload bytes) of topic from
// offset 0 with one new consumer and times it.
func runConsume(ctx context.Context, p *proc, topic string, records, bytes int64) (sample, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(50<<20), kgo.FetchMaxPartitionBytes(10<<20))
	if err != nil {
		return sample{}, err
	}
	defer cl.Close()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cpu0, err := p.cpu()
	if err != nil {
		return sample{}, err
	}
	t0 := time.Now()
	var got, gotBytes int64
	for got < records {
		fs := cl.PollFetches(cctx)
		if cctx.Err() != nil {
			return sample{}, fmt.Errorf("consumed %d of %d records: %w", got, records, cctx.Err())
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return sample{}, fmt.Errorf("fetch: %v", errs[0].Err)
		}
		fs.EachRecord(func(r *kgo.Record) { got++; gotBytes += int64(len(r.Value)) })
	}
	secs := time.Since(t0).Seconds()
	cpu1, err := p.cpu()
	if err != nil {
		return sample{}, err
	}
	_ = bytes
	return sample{secs: secs, bytes: gotBytes, records: got, cpu: (cpu1 - cpu0).Seconds()}, nil
}

// fill produces n records of size bytes to one partition of topic (untimed
// set-up for the consume scenario).
func fill(ctx context.Context, p *proc, topic string, n int64, size int) error {
	_, err := runProduce(ctx, p, topic, produceSpec{recSize: size, parts: 1, producers: 1, bytes: n * int64(size), codec: kgo.NoCompression()})
	return err
}

// runLatency produces rate records/s of size bytes for dur to a new
// one-partition topic, each carrying its send time, while one consumer
// reads them; latency is receive time minus send time (one clock, one
// process).
func runLatency(ctx context.Context, p *proc, topic string, rate int, size int, dur time.Duration) (sample, error) {
	if err := createTopic(ctx, p.addr, topic, 1); err != nil {
		return sample{}, err
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0))
	if err != nil {
		return sample{}, err
	}
	defer prod.Close()
	cons, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(5*time.Second))
	if err != nil {
		return sample{}, err
	}
	defer cons.Close()
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: make([]byte, size)}).FirstErr(); err != nil {
		return sample{}, fmt.Errorf("warm-up produce: %w", err)
	}
	// Wait until the consumer has the warm-up record, so it is polling.
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	for n := 0; n == 0; {
		fs := cons.PollFetches(wctx)
		if wctx.Err() != nil {
			wcancel()
			return sample{}, errors.New("consumer did not receive the warm-up record")
		}
		n = fs.NumRecords()
	}
	wcancel()

	total := int(dur.Seconds() * float64(rate))
	lat := make([]float64, 0, total)
	done := make(chan error, 1)
	go func() {
		cctx, cancel := context.WithTimeout(ctx, dur+time.Minute)
		defer cancel()
		for len(lat) < total {
			fs := cons.PollFetches(cctx)
			now := time.Now().UnixNano()
			if cctx.Err() != nil {
				done <- fmt.Errorf("received %d of %d records", len(lat), total)
				return
			}
			if errs := fs.Errors(); len(errs) > 0 {
				done <- errs[0].Err
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				sent := int64(binary.BigEndian.Uint64(r.Value))
				lat = append(lat, float64(now-sent)/1e6)
			})
		}
		done <- nil
	}()
	var failed atomic.Int64
	cpu0, err := p.cpu()
	if err != nil {
		return sample{}, err
	}
	interval := time.Second / time.Duration(rate)
	t0 := time.Now()
	for i := 0; i < total; i++ {
		if d := time.Until(t0.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		v := make([]byte, size)
		binary.BigEndian.PutUint64(v, uint64(time.Now().UnixNano()))
		prod.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
			}
		})
	}
	if err := <-done; err != nil {
		return sample{}, err
	}
	secs := time.Since(t0).Seconds()
	cpu1, err := p.cpu()
	if err != nil {
		return sample{}, err
	}
	if f := failed.Load(); f > 0 {
		return sample{}, fmt.Errorf("%d records failed", f)
	}
	slices.Sort(lat)
	return sample{secs: secs, bytes: int64(total * size), records: int64(total), cpu: (cpu1 - cpu0).Seconds(),
		p50: pct(lat, 0.50), p99: pct(lat, 0.99), p999: pct(lat, 0.999)}, nil
}

// pct is the q quantile of sorted xs (nearest rank).
func pct(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs))+0.5) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
