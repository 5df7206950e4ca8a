package compat_test

import (
	"context"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/minikafka/minikafka/minikafkatest"
)

// TestConfluentGroupConfigs is what confluent-kafka-go's own
// TestAdminConfig does in consumer-protocol mode: a KIP-848 group config
// set with IncrementalAlterConfigs on the GROUP resource and read back with
// DescribeConfigs; and an out-of-bounds value refused.
func TestConfluentGroupConfigs(t *testing.T) {
	addr := minikafkatest.New(t).Addr()
	a, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": addr})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := func(name, value string) kafka.ConfigResourceResult {
		t.Helper()
		res, err := a.IncrementalAlterConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceGroup, Name: "test-group",
			Config: kafka.StringMapToIncrementalConfigEntries(map[string]string{name: value},
				map[string]kafka.AlterConfigOpType{name: kafka.AlterConfigOpTypeSet})}})
		if err != nil || len(res) != 1 {
			t.Fatalf("IncrementalAlterConfigs: %v %v", res, err)
		}
		return res[0]
	}
	if r := set("consumer.session.timeout.ms", "50000"); r.Error.Code() != kafka.ErrNoError {
		t.Fatalf("consumer.session.timeout.ms=50000: %v", r.Error)
	}
	res, err := a.DescribeConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceGroup, Name: "test-group"}})
	if err != nil || len(res) != 1 || res[0].Error.Code() != kafka.ErrNoError {
		t.Fatalf("DescribeConfigs: %v %v", res, err)
	}
	if e := res[0].Config["consumer.session.timeout.ms"]; e.Value != "50000" || e.Source != kafka.ConfigSourceGroup {
		t.Errorf("described consumer.session.timeout.ms: %+v, want 50000 from the group", e)
	}
	if e := res[0].Config["consumer.heartbeat.interval.ms"]; e.Value != "5000" || !e.IsDefault {
		t.Errorf("described consumer.heartbeat.interval.ms: %+v, want the default 5000", e)
	}
	// Kafka's bound: group.consumer.max.session.timeout.ms, 60 s.
	if r := set("consumer.session.timeout.ms", "60001"); r.Error.Code() != kafka.ErrInvalidConfig {
		t.Errorf("consumer.session.timeout.ms=60001: %v, want INVALID_CONFIG", r.Error)
	}
}
