package minikafkatest_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNewAndClient(t *testing.T) {
	var addr string
	t.Run("use", func(t *testing.T) {
		b := minikafkatest.New(t, minikafka.WithTopic("orders", 2))
		addr = b.ListenAddr().String()
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Fatalf("listening on %s", addr)
		}
		if fi, err := os.Stat(b.DataDir()); err != nil || !fi.IsDir() {
			t.Fatalf("data dir %q: %v", b.DataDir(), err)
		}
		cl := minikafkatest.Client(t, b, kgo.DefaultProduceTopic("orders"),
			kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := cl.ProduceSync(ctx, kgo.StringRecord("a"), kgo.StringRecord("b")).FirstErr(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for n < 2 {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("consumed %d of 2", n)
			}
			n += fs.NumRecords()
		}
		td, err := kadm.NewClient(cl).ListTopics(ctx)
		if err != nil || len(td["orders"].Partitions) != 2 {
			t.Fatalf("topics %+v, %v", td, err)
		}
	})
	// The subtest's cleanup closed the broker.
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("broker still accepting after its test ended")
	}
}

// Options given to New override its defaults.
func TestNewOverrides(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"))
	if b.DataDir() != "" {
		t.Fatalf("WithInMemory did not override the temp dir: %q", b.DataDir())
	}
}

// With durability always, every record acknowledged before a power loss
// is there after it, and a client reconnects to the same address.
func TestCrashableKeepsAcked(t *testing.T) {
	b := minikafkatest.NewCrashable(t, minikafka.WithTopic("t", 2))
	addr := b.Addr()
	cl := minikafkatest.Client(t, b.Broker, kgo.DefaultProduceTopic("t"), kgo.RequiredAcks(kgo.AllISRAcks()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for i := range 50 {
		rs = append(rs, kgo.StringRecord(strconv.Itoa(i)))
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b.Crash()
	if b.Addr() != addr {
		t.Fatalf("restarted on %s, was %s", b.Addr(), addr)
	}
	// The old client reconnects and keeps producing.
	if err := cl.ProduceSync(ctx, kgo.StringRecord("after")).FirstErr(); err != nil {
		t.Fatalf("produce after crash: %v", err)
	}
	cons := minikafkatest.Client(t, b.Broker, kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[string]bool{}
	for len(got) < 51 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 51 after crash", len(got))
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
	}
}

// With durability never, unsynced data is gone after a crash: the model
// really drops it (so the test above proves something).
func TestCrashableDropsUnsynced(t *testing.T) {
	b := minikafkatest.NewCrashable(t, minikafka.WithTopic("t", 1), minikafka.WithDurability("never"))
	cl := minikafkatest.Client(t, b.Broker, kgo.DefaultProduceTopic("t"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, kgo.StringRecord("x")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b.Crash()
	offs, err := kadm.NewClient(cl).ListEndOffsets(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("t", 0); o.Offset != 0 {
		t.Fatalf("end offset %d after losing unsynced data, want 0", o.Offset)
	}
}

// recordingTB collects cleanups and errors, to test what New's cleanup
// reports.
type recordingTB struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (r *recordingTB) Helper()          {}
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// A data dir that does not reopen after Close fails the test.
func TestCleanupVerifiesReopen(t *testing.T) {
	rec := &recordingTB{TB: t}
	b := minikafkatest.New(rec)
	if len(rec.cleanups) != 2 {
		t.Fatalf("%d cleanups registered", len(rec.cleanups))
	}
	rec.cleanups[1]() // Close
	if len(rec.errs) != 0 {
		t.Fatalf("Close reported %q", rec.errs)
	}
	// Break the closed data dir: its topics directory becomes a file,
	// which the next start cannot use.
	topics := filepath.Join(b.DataDir(), "topics")
	if err := os.RemoveAll(topics); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(topics, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec.cleanups[0]() // the reopen check
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "does not reopen") {
		t.Fatalf("cleanup reported %q", rec.errs)
	}
}

// Group members may ask for session timeouts far below Kafka's 6 s floor
// (minikafkatest lowers it); with the floor they could not join at all.
func TestShortSessionTimeouts(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("jobs", 2))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts := []kgo.Opt{kgo.ConsumerGroup("g"), kgo.ConsumeTopics("jobs"),
		kgo.SessionTimeout(500 * time.Millisecond), kgo.HeartbeatInterval(100 * time.Millisecond)}
	first := minikafkatest.Client(t, b, opts...) // kgo joins in the background
	second := minikafkatest.Client(t, b, opts...)
	adm := kadm.NewClient(minikafkatest.Client(t, b))
	// settled waits until the group is stable with members members that
	// own both partitions between them.
	settled := func(members int) {
		t.Helper()
		var last kadm.DescribedGroup
		for ctx.Err() == nil {
			described, err := adm.DescribeGroups(ctx, "g")
			if err == nil {
				last = described["g"]
				owned := 0
				for _, m := range last.Members {
					if a, _ := m.Assigned.AsConsumer(); a != nil {
						for _, at := range a.Topics {
							owned += len(at.Partitions)
						}
					}
				}
				if last.State == "Stable" && len(last.Members) == members && owned == 2 {
					return
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("group never stable with %d members: state %q, %d members", members, last.State, len(last.Members))
	}
	settled(2)
	first.Close()
	settled(1)
	_ = second
}
