package minikafka_test

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

func ExampleStart() {
	ctx := context.Background()
	b, err := minikafka.Start(ctx, minikafka.WithInMemory(), minikafka.WithTopic("orders", 1))
	if err != nil {
		panic(err)
	}
	defer b.Close()

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.ConsumeTopics("orders"))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, kgo.StringRecord("hello")).FirstErr(); err != nil {
		panic(err)
	}
	fs := cl.PollFetches(ctx)
	fs.EachRecord(func(r *kgo.Record) { fmt.Println(string(r.Value)) })
	// Output: hello
}
