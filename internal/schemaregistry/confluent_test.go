package schemaregistry_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// order is serialized by confluent-kafka-go's Avro serializer, which
// derives its schema from the struct and registers it.
type order struct {
	ID     string `avro:"id"`
	Amount int64  `avro:"amount"`
}

// TestConfluentGoClient drives the registry with confluent-kafka-go's
// schemaregistry client and its Avro serde (the pure-Go parts; the Kafka
// side goes through kgo): auto-registration by the serializer, produce to
// the broker, consume and deserialize with a fresh client, evolution.
func TestConfluentGoClient(t *testing.T) {
	b, u := start(t, minikafka.WithTopic("orders", 1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := schemaregistry.NewClient(schemaregistry.NewConfig(u))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ser, err := avrov2.NewSerializer(client, serde.ValueSerde, avrov2.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	kc := minikafkatest.Client(t, b, kgo.ConsumeTopics("orders"), kgo.DefaultProduceTopic("orders"))
	want := []order{{"o-1", 1250}, {"o-2", 99}}
	for _, o := range want {
		v, err := ser.Serialize("orders", &o)
		if err != nil {
			t.Fatalf("Serialize: %v", err)
		}
		if err := kc.ProduceSync(ctx, &kgo.Record{Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	meta, err := client.GetLatestSchemaMetadata("orders-value")
	if err != nil || meta.Version != 1 || meta.ID != 1 {
		t.Fatalf("GetLatestSchemaMetadata = %+v, %v", meta, err)
	}

	// A consumer with its own client (an empty cache) reads them back.
	client2, err := schemaregistry.NewClient(schemaregistry.NewConfig(u))
	if err != nil {
		t.Fatal(err)
	}
	defer client2.Close()
	deser, err := avrov2.NewDeserializer(client2, serde.ValueSerde, avrov2.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	var got []order
	for len(got) < len(want) {
		fs := kc.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var o order
			if err := deser.DeserializeInto("orders", r.Value, &o); err != nil {
				t.Fatalf("DeserializeInto: %v", err)
			}
			got = append(got, o)
		})
	}
	if got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("consumed %v, want %v", got, want)
	}

	// Evolution: a field without a default is refused (409), one with a
	// default goes in as version 2.
	// The serializer registered the struct's schema; add to its fields.
	if !strings.HasSuffix(meta.Schema, "}]}") {
		t.Fatalf("registered schema: %s", meta.Schema)
	}
	withField := func(f string) schemaregistry.SchemaInfo {
		return schemaregistry.SchemaInfo{Schema: strings.TrimSuffix(meta.Schema, "]}") + "," + f + "]}"}
	}
	bad := withField(`{"name":"currency","type":"string"}`)
	if ok, err := client.TestCompatibility("orders-value", 1, bad); err != nil || ok {
		t.Errorf("TestCompatibility of a field without a default = %v, %v", ok, err)
	}
	if _, err := client.Register("orders-value", bad, false); err == nil || !strings.Contains(err.Error(), "409") || !strings.Contains(err.Error(), "READER_FIELD_MISSING_DEFAULT_VALUE") {
		t.Errorf("registering an incompatible schema: %v, want a 409", err)
	}
	good := withField(`{"name":"currency","type":"string","default":"EUR"}`)
	id, err := client.Register("orders-value", good, false)
	if err != nil || id != 2 {
		t.Fatalf("registering a compatible schema: %d, %v (schema %s)", id, err, good.Schema)
	}
	if vs, err := client.GetAllVersions("orders-value"); err != nil || len(vs) != 2 {
		t.Errorf("GetAllVersions = %v, %v", vs, err)
	}
	if c, err := client.GetDefaultCompatibility(); err != nil || c != schemaregistry.Backward {
		t.Errorf("GetDefaultCompatibility = %v, %v", c, err)
	}
	if vs, err := client.DeleteSubject("orders-value", false); err != nil || len(vs) != 2 {
		t.Errorf("DeleteSubject = %v, %v", vs, err)
	}
}
