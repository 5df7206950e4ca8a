package minikafka_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// smallFS mounts a tmpfs of size bytes for the test, or skips it where the
// machine does not allow mounting (not root, no CAP_SYS_ADMIN).
func smallFS(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v): the full-disk test needs root or CAP_SYS_ADMIN; the fault-filesystem tests in logstore, groupstore and broker cover the logic", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// On a real filesystem that fills up: produce until the broker answers
// KAFKA_STORAGE_ERROR, free space through Kafka's own APIs (DeleteRecords
// on the full partition, then deleting another topic) and produce again
// without a restart; after a restart every acknowledged record above the
// log start is there.
func TestDiskFullRealFilesystem(t *testing.T) {
	dir := smallFS(t, 6<<20)
	start := func() *minikafka.Broker {
		b, err := minikafka.Start(context.Background(), minikafka.WithDataDir(dir), minikafka.WithListenAddr("127.0.0.1:0"),
			minikafka.WithDurability("always"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() }) // before the unmount
		return b
	}
	b := start()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordRetries(2), kgo.MetadataMinAge(50*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
		kgo.ProducerLinger(0), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	small := map[string]*string{"segment.bytes": kgoStr("262144")}
	for _, topic := range []string{"fill", "spare"} {
		if _, err := adm.CreateTopic(ctx, 1, 1, small, topic); err != nil {
			t.Fatal(err)
		}
	}
	value := make([]byte, 16<<10)
	rand.Read(value)            // incompressible: kgo compresses batches
	acked := map[int64]string{} // offset in "fill" -> value tag
	n := 0
	// fillUntilFull produces to topic until a record is refused.
	fillUntilFull := func(topic string) error {
		for i := 0; i < 10000; i++ {
			n++
			tag := fmt.Sprint("r", n)
			copy(value, tag+"|")
			r := &kgo.Record{Topic: topic, Value: append([]byte(nil), value...)}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				return err
			}
			if topic == "fill" {
				acked[r.Offset] = tag
			}
		}
		t.Fatalf("%s: 10000 records of 16 KiB fit in a 6 MiB filesystem", topic)
		return nil
	}
	for i := 0; i < 40; i++ { // something to delete later
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "spare", Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := fillUntilFull("fill"); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("producing to a full disk: %v, want KAFKA_STORAGE_ERROR", err)
	}

	// Free space on the full partition itself.
	offs, err := adm.ListEndOffsets(ctx, "fill")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := offs.Lookup("fill", 0)
	half := kadm.Offsets{}
	half.Add(kadm.Offset{Topic: "fill", Partition: 0, At: end.Offset / 2})
	dr, err := adm.DeleteRecords(ctx, half)
	if err == nil {
		err = dr.Error()
	}
	if err != nil {
		t.Fatalf("DeleteRecords on the full partition: %v", err)
	}
	logStart := end.Offset / 2
	if err := fillUntilFull("fill"); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("after DeleteRecords: %v, want records accepted until full again", err)
	}

	// Free space by deleting another topic.
	if _, err := adm.DeleteTopics(ctx, "spare"); err != nil {
		t.Fatal(err)
	}
	before := len(acked)
	var ferr error
	for i := 0; i < 100 && len(acked) == before; i++ { // the deletion is asynchronous in Kafka too
		ferr = fillUntilFull("fill")
		time.Sleep(50 * time.Millisecond)
	}
	if len(acked) == before {
		t.Fatalf("nothing accepted after deleting a topic: %v", ferr)
	}
	cl.Close()
	if err := b.Close(); err != nil {
		t.Logf("close on a full disk: %v", err)
	}

	// Every acknowledged record at or above the log start survives.
	b = start()
	cons, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumeTopics("fill"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	want := 0
	for off := range acked {
		if off >= logStart {
			want++
		}
	}
	got := 0
	for got < want {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consuming after restart (%d of %d): %v", got, want, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			tag, ok := acked[r.Offset]
			if !ok {
				return // refused, yet written: allowed (an error is "unknown")
			}
			if r.Offset < logStart {
				t.Fatalf("offset %d below the log start %d came back", r.Offset, logStart)
			}
			if string(r.Value[:len(tag)]) != tag {
				t.Fatalf("offset %d holds %q, acknowledged as %s", r.Offset, r.Value[:16], tag)
			}
			got++
		})
	}
}

func kgoStr(s string) *string { return &s }
