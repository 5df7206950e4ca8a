package broker

// Exactly-once consume-transform-produce through kgo's GroupTransactSession
// against a broker that is crashed (power loss: only fsynced bytes survive)
// and restarted mid-run, with consumer processes killed and restarted.
//
// The crash is modelled by vfs.MemFS.PowerCut: at the crash instant every
// later fsync fails, so the old broker cannot acknowledge anything the
// surviving image lacks (cloning the FS while the broker keeps serving
// would let it ack writes that the restarted broker never sees).

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
	"github.com/minikafka/minikafka/protocol"
)

// eosRecords is the input size; MINIKAFKA_EOS_RECORDS raises it (the
// issue's 100 000) outside CI.
func eosRecords() int {
	if s := os.Getenv("MINIKAFKA_EOS_RECORDS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 5000
}

func TestTxnExactlyOnceAcrossCrash(t *testing.T) {
	n := eosRecords()
	c := newPowerBroker(t)
	addr := c.addr
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	admCl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	for _, topic := range []string{"eos-in", "eos-out"} {
		if r, err := adm.CreateTopic(ctx, 4, 1, nil, topic); err != nil || r.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, r.Err)
		}
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("eos-in"))
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]*kgo.Record, 0, n)
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Key: []byte(strconv.Itoa(i % 97)), Value: []byte(strconv.Itoa(i))})
	}
	// Small produce calls make small batches, so that the run takes
	// many transactions.
	for len(recs) > 0 {
		k := min(40, len(recs))
		if err := prod.ProduceSync(ctx, recs[:k]...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		recs = recs[k:]
	}
	prod.Close()
	inEnds, err := adm.ListEndOffsets(ctx, "eos-in")
	if err != nil {
		t.Fatal(err)
	}

	var moved atomic.Int64 // records in committed transactions
	var wg sync.WaitGroup
	workerCtx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	kill := make([]chan struct{}, 2)
	for i := range kill {
		kill[i] = make(chan struct{}, 1)
		wg.Add(1)
		go func(slot int) {
			defer wg.Done()
			for incarnation := 0; workerCtx.Err() == nil; incarnation++ {
				err := eosWorker(workerCtx, addr, fmt.Sprintf("eos-tx-%d", slot), kill[slot], &moved)
				if err != nil && workerCtx.Err() == nil {
					t.Logf("worker %d incarnation %d ended: %v", slot, incarnation, err)
				}
			}
		}(i)
	}

	// Kill each consumer once and crash the broker twice, at points
	// spread over the run.
	waitMoved := func(frac float64) {
		for moved.Load() < int64(float64(n)*frac) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitMoved(0.15)
	kill[0] <- struct{}{}
	waitMoved(0.35)
	c.Crash()
	waitMoved(0.6)
	kill[1] <- struct{}{}
	waitMoved(0.8)
	c.Crash()

	// Done when the group's committed offsets reach the input's ends.
	for {
		if ctx.Err() != nil {
			t.Fatalf("timed out; %d of %d records moved", moved.Load(), n)
		}
		offs, err := adm.FetchOffsets(ctx, "eos")
		if err == nil {
			done := true
			inEnds.Each(func(lo kadm.ListedOffset) {
				if o, ok := offs.Lookup(lo.Topic, lo.Partition); !ok || o.At != lo.Offset {
					done = false
				}
			})
			if done {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	stopWorkers()
	wg.Wait()

	// read_committed: every input record exactly once.
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("eos-out"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	seen := make([]int, n)
	total := 0
	for total < n && ctx.Err() == nil {
		cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			i, err := strconv.Atoi(string(r.Value))
			if err != nil || i < 0 || i >= n {
				t.Fatalf("bad output record %q", r.Value)
			}
			seen[i]++
			total++
		})
	}
	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	cons.PollFetches(short).EachRecord(func(r *kgo.Record) {
		i, _ := strconv.Atoi(string(r.Value))
		seen[i]++
		total++
	})
	cancelShort()
	for i, s := range seen {
		if s != 1 {
			t.Fatalf("input record %d appears %d times in the read_committed output (%d total)", i, s, total)
		}
	}
	if total != n {
		t.Fatalf("%d output records, want %d", total, n)
	}
}

// eosWorker is one consumer process: it copies eos-in to eos-out in
// transactions until killed (returns nil) or a transaction fails.
func eosWorker(ctx context.Context, addr, txnID string, kill <-chan struct{}, moved *atomic.Int64) error {
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(addr),
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(10*time.Second),
		kgo.ConsumerGroup("eos"),
		kgo.ConsumeTopics("eos-in"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.FetchMaxWait(100*time.Millisecond),
		kgo.FetchMaxPartitionBytes(1), // one batch per partition and fetch: many transactions per run
		kgo.SessionTimeout(6*time.Second),
		kgo.RetryTimeout(30*time.Second),
	)
	if err != nil {
		return err
	}
	defer sess.Close()
	for {
		select {
		case <-kill:
			return nil // killed between polls; any open transaction is left to be fenced
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		fs := sess.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := sess.Begin(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		var produceErr atomic.Value
		var count int64
		fs.EachRecord(func(r *kgo.Record) {
			count++
			sess.Produce(ctx, &kgo.Record{Topic: "eos-out", Partition: r.Partition, Key: r.Key, Value: r.Value}, func(_ *kgo.Record, err error) {
				if err != nil {
					produceErr.Store(err)
				}
			})
		})
		select {
		case <-kill:
			return nil // killed mid-transaction
		default:
		}
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			return fmt.Errorf("end: %w", err)
		}
		if committed && produceErr.Load() == nil {
			moved.Add(count)
		}
	}
}

// powerBroker is a broker over a power-cuttable MemFS served on a fixed
// address.
type powerBroker struct {
	t    *testing.T
	fs   *vfs.MemFS
	b    *Broker
	srv  *protocol.Server
	addr string
}

func newPowerBroker(t *testing.T) *powerBroker {
	pb := &powerBroker{t: t, fs: vfs.NewMem()}
	pb.start("127.0.0.1:0")
	t.Cleanup(pb.stop)
	return pb
}

func (pb *powerBroker) start(addr string) {
	b, err := New(Config{DataDir: "/data", FS: pb.fs, NodeID: 1, Sync: logstore.SyncPolicy{Mode: logstore.SyncAlways}})
	if err != nil {
		pb.t.Fatalf("starting broker: %v", err)
	}
	var srv *protocol.Server
	for i := 0; ; i++ { // the old listener's port may take a moment to free
		if srv, err = protocol.Listen(protocol.Config{Addr: addr}, b); err == nil || i == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		b.Close()
		pb.t.Fatal(err)
	}
	a := srv.Addr().(*net.TCPAddr)
	b.SetAdvertised("127.0.0.1", int32(a.Port))
	go srv.Serve()
	pb.b, pb.srv, pb.addr = b, srv, a.String()
}

func (pb *powerBroker) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pb.srv.Close(ctx)
	pb.b.Close()
}

// Crash cuts the power, stops the old broker and starts a new one on the
// surviving image, on the same address.
func (pb *powerBroker) Crash() {
	image := pb.fs.PowerCut()
	pb.stop()
	pb.fs = image
	pb.start(pb.addr)
}
