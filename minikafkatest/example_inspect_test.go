package minikafkatest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// Check what a producer wrote without a Kafka consumer: wait for the high
// watermark, then read the partition's offsets and a group's lag. In a
// test, minikafkatest.New(t) gives the same *minikafka.Broker.
func Example_inspect() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := minikafka.Start(ctx)
	if err != nil {
		panic(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		panic(err)
	}
	cl.Produce(ctx, &kgo.Record{Topic: "orders", Value: []byte("o1")}, nil)
	cl.Produce(ctx, &kgo.Record{Topic: "orders", Value: []byte("o2")}, nil)

	if err := b.WaitHighWatermark(ctx, "orders", 0, 2); err != nil {
		panic(err)
	}
	po, _ := b.PartitionOffsets("orders", 0)
	fmt.Println("high watermark:", po.HighWatermark)
	lags, _ := b.GroupLag("billing", "orders")
	fmt.Println("billing lag:", lags[0].Lag)
	// Output:
	// high watermark: 2
	// billing lag: 2
}
