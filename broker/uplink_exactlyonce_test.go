package broker_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/minikafkatest"
)

// The local broker loses power while a forwarded batch is in flight: the
// upstream wrote it but its answer never arrived. The restarted broker
// resends that batch as the same idempotent producer (its ID, epoch and
// sequence journaled before the send), the upstream recognizes the
// duplicate, and every record is upstream exactly once.
func TestUplinkExactlyOnceAcrossLocalCrash(t *testing.T) {
	up := newUpstream(t)
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("eo"), minikafka.WithTopic("eo", 1))
	ctx := context.Background()
	produce := func(from, to int) {
		t.Helper()
		cl := minikafkatest.Client(t, local.b, kgo.DefaultProduceTopic("eo"))
		defer cl.Close()
		for i := from; i < to; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	upEnd := func() int64 {
		cl, err := kgo.NewClient(kgo.SeedBrokers(up.addr))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, "eo")
		if err != nil {
			return -1
		}
		e, _ := ends.Lookup("eo", 0)
		return e.Offset
	}

	produce(0, 10)
	waitFor(t, 20*time.Second, "first 10 forwarded", lagZero(local.b, 1))
	before := local.b.ForwardStats()[0]
	if before.ProducerID < 0 {
		t.Fatalf("no upstream producer: %+v", before)
	}

	// The upstream writes the next produce but holds its answer.
	id, err := up.b.AddFault(minikafka.Fault{Keys: []int16{0}, Topic: "eo", Hold: true, Times: 1})
	if err != nil {
		t.Fatal(err)
	}
	produce(10, 15)
	waitFor(t, 20*time.Second, "the held batch written upstream", func() bool { return upEnd() > 10 })
	local.Crash()
	if err := up.b.ReleaseFault(id); err != nil {
		t.Logf("release: %v", err)
	}

	waitFor(t, 20*time.Second, "forwarding after the crash", lagZero(local.b, 1))
	after := local.b.ForwardStats()[0]
	if after.ProducerID != before.ProducerID || after.ProducerEpoch != before.ProducerEpoch || after.ProducerResets != 0 {
		t.Fatalf("producer identity before the crash %d/%d, after %d/%d with %d resets", before.ProducerID, before.ProducerEpoch, after.ProducerID, after.ProducerEpoch, after.ProducerResets)
	}
	checkUpstream(t, up.addr, "eo", 1, 15, true)

	// An upstream that no longer knows the producer (it expired it): the
	// forwarder takes a new producer ID and says so.
	if _, err := up.b.AddFault(minikafka.Fault{Keys: []int16{0}, Topic: "eo", ErrorCode: 59, Times: 1}); err != nil { // UNKNOWN_PRODUCER_ID
		t.Fatal(err)
	}
	produce(15, 16)
	waitFor(t, 20*time.Second, "forwarding after the producer reset", lagZero(local.b, 1))
	if st := local.b.ForwardStats()[0]; st.ProducerResets != 1 || st.ProducerID == after.ProducerID {
		t.Fatalf("after UNKNOWN_PRODUCER_ID: producer %d, resets %d", st.ProducerID, st.ProducerResets)
	}
	checkUpstream(t, up.addr, "eo", 1, 16, true)
}

// A failed fsync of the upstream producer journal stops nothing and
// duplicates nothing: that batch waits, the journal is made anew, and the
// upstream holds every record once.
func TestUplinkJournalFsyncFails(t *testing.T) {
	up := newUpstream(t)
	var syncs, failed atomic.Int64
	inj := vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
		if op == vfs.OpSync && strings.HasSuffix(path, ".upstream-producer") {
			if s := syncs.Add(1); s == 3 || s == 4 {
				failed.Add(1)
				return 0, syscall.EIO
			}
		}
		return n, nil
	})
	local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("j"), minikafka.WithTopic("j", 1),
		minikafka.WithFS(vfs.NewFaultFS(vfs.NewMem(), inj)), minikafka.WithDataDir("/data"), minikafka.WithDurability("always"))
	cl := minikafkatest.Client(t, local, kgo.DefaultProduceTopic("j"))
	ctx := context.Background()
	// One shipment per record (each waits for the one before), so the
	// journal is written in place often enough to reach the failing fsyncs.
	for i := range 20 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "record shipped", lagZero(local, 1))
	}
	if failed.Load() == 0 {
		t.Fatalf("no journal fsync failed (%d fsyncs): the test did not test", syncs.Load())
	}
	checkUpstream(t, up.addr, "j", 1, 20, true)
}
