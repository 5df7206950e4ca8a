package minikafka_test

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// Seeding what the code under test should find, a committed and an
// aborted transaction included, and reading the partition back as a
// read_committed consumer would, all without a Kafka client.
func ExampleBroker_Seed() {
	ctx := context.Background()
	b, err := minikafka.Start(ctx, minikafka.WithInMemory())
	if err != nil {
		panic(err)
	}
	defer b.Close()
	if err := b.CreateTopic(ctx, "orders", 1, map[string]string{"cleanup.policy": "delete"}); err != nil {
		panic(err)
	}
	if _, err := b.Seed(ctx, &kgo.Record{Topic: "orders", Key: []byte("o-1"), Value: []byte("placed")}); err != nil {
		panic(err)
	}
	if _, err := b.SeedTransaction(ctx, false, &kgo.Record{Topic: "orders", Value: []byte("never happened")}); err != nil {
		panic(err)
	}
	if _, err := b.SeedTransaction(ctx, true, &kgo.Record{Topic: "orders", Key: []byte("o-1"), Value: []byte("paid")}); err != nil {
		panic(err)
	}
	recs, next, err := b.Records("orders", 0, 0, 100, true)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Printf("%d %s=%s\n", r.Offset, r.Key, r.Value)
	}
	fmt.Println("next offset", next)
	// Output:
	// 0 o-1=placed
	// 3 o-1=paid
	// next offset 5
}
