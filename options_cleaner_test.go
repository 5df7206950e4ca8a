package minikafka_test

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// WithLogCleanerBackoff reaches the cleaner: with 20 ms instead of Kafka's
// 15 s a compacted topic is cleaned within the test's few seconds.
func TestLogCleanerBackoffOption(t *testing.T) {
	b, err := minikafka.Start(ctxT(t), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithLogCleanerBackoff(20*time.Millisecond), minikafka.WithLogCleanerDedupeBufferSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl := client(t, b)
	ctx := ctxT(t)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy":            kadm.StringPtr("compact"),
		"segment.bytes":             kadm.StringPtr("1024"),
		"segment.ms":                kadm.StringPtr("100"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
	}, "c"); err != nil {
		t.Fatal(err)
	}
	val := strings.Repeat("v", 600)
	for i := 0; i < 20; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "c", Key: []byte("k"), Value: []byte(val)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(150 * time.Millisecond) // past segment.ms: the next record rolls
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "c", Key: []byte("end"), Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(8 * time.Second)
	for {
		// Count the records of key k from the start: 1 once cleaned.
		cons, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.ConsumeTopics("c"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		ks, done := 0, false
		for !done {
			fs := cons.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				t.Fatal(err)
			}
			fs.EachRecord(func(r *kgo.Record) {
				if string(r.Key) == "k" {
					ks++
				}
				done = done || string(r.Key) == "end"
			})
		}
		cons.Close()
		if ks == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("key k still has %d records: the cleaner did not run", ks)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestLogCleanerOptionErrors(t *testing.T) {
	for _, opt := range []minikafka.Option{minikafka.WithLogCleanerBackoff(-time.Second), minikafka.WithLogCleanerDedupeBufferSize(-1)} {
		if b, err := minikafka.Start(ctxT(t), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"), opt); err == nil {
			b.Close()
			t.Fatal("negative cleaner setting accepted")
		}
	}
}
