package minikafka_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka"
)

// Two produce answers NOT_LEADER_OR_FOLLOWER: the client retries through
// them, and the refused batches were never written.
func ExampleBroker_AddFault() {
	ctx := context.Background()
	b, err := minikafka.Start(ctx, minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"), minikafka.WithTopic("orders", 1))
	if err != nil {
		panic(err)
	}
	defer b.Close()
	id, err := b.AddFault(minikafka.Fault{Keys: []int16{0}, Topic: "orders", ErrorCode: 6, Times: 2})
	if err != nil {
		panic(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("a")}).FirstErr(); err != nil {
		panic(err)
	}
	for _, f := range b.Faults() {
		fmt.Println("fault", f.ID == id, "fired", f.Fired, "done", f.Done)
	}
	// Output: fault true fired 2 done true
}

// A callback sees every Metadata request decoded and changes the answer.
func ExampleFault_callback() {
	ctx := context.Background()
	b, err := minikafka.Start(ctx, minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"))
	if err != nil {
		panic(err)
	}
	defer b.Close()
	_, err = b.AddFault(minikafka.Fault{Keys: []int16{3}, Callback: func(req kmsg.Request, next func() (kmsg.Response, error)) (kmsg.Response, error) {
		resp, err := next()
		if err == nil {
			resp.(*kmsg.MetadataResponse).ClusterID = kmsg.StringPtr("rewritten")
		}
		return resp, err
	}})
	if err != nil {
		panic(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		panic(err)
	}
	fmt.Println(*resp.ClusterID)
	// Output: rewritten
}

// Down closes every connection and resets new ones; Up serves again on
// the same port.
func ExampleBroker_Down() {
	ctx := context.Background()
	b, err := minikafka.Start(ctx, minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"), minikafka.WithTopic("orders", 1))
	if err != nil {
		panic(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RequestRetries(0))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	b.Down()
	short, cancel := context.WithTimeout(ctx, time.Second)
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(short, cl)
	cancel()
	fmt.Println("down:", err != nil)
	b.Up()
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	fmt.Println("up:", err == nil)
	// Output:
	// down: true
	// up: true
}
