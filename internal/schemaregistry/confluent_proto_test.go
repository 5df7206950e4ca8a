package schemaregistry_test

import (
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestConfluentGoProtobuf: confluent-kafka-go's Protobuf serializer
// registers a message's .proto (a well-known type's here: generated Go
// code is all it needs) and its deserializer reads the record back with a
// fresh client, through the message indexes of the framing.
func TestConfluentGoProtobuf(t *testing.T) {
	_, u := start(t)
	client, err := schemaregistry.NewClient(schemaregistry.NewConfig(u))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ser, err := protobuf.NewSerializer(client, serde.ValueSerde, protobuf.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	// Value is the second message of struct.proto: the framing carries
	// its index.
	in := structpb.NewStringValue("hello")
	payload, err := ser.Serialize("things", in)
	if err != nil {
		t.Fatalf("Serialize: %v", err)
	}
	meta, err := client.GetLatestSchemaMetadata("things-value")
	if err != nil || meta.SchemaType != "PROTOBUF" {
		t.Fatalf("registered: %+v, %v", meta, err)
	}
	client2, err := schemaregistry.NewClient(schemaregistry.NewConfig(u))
	if err != nil {
		t.Fatal(err)
	}
	defer client2.Close()
	deser, err := protobuf.NewDeserializer(client2, serde.ValueSerde, protobuf.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := deser.ProtoRegistry.RegisterMessage(in.ProtoReflect().Type()); err != nil {
		t.Fatal(err)
	}
	out, err := deser.Deserialize("things", payload)
	if err != nil {
		t.Fatalf("Deserialize: %v", err)
	}
	if got, ok := out.(proto.Message); !ok || !proto.Equal(got, in) {
		t.Fatalf("read back %v, want %v", out, in)
	}
}
