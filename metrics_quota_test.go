package minikafka_test

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// Quota use shows in /metrics: the sensor of a client-id quota with its
// limit, what it recorded, and the throttled answers.
func TestMetricsQuotas(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithMetricsAddr("127.0.0.1:0"),
		minikafka.WithTopic("q", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.ClientID("metered"), kgo.DefaultProduceTopic("q"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	name := "metered"
	ctx := context.Background()
	res, err := kadm.NewClient(cl).AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &name}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 100}},
	}})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	val := make([]byte, 5000)
	rand.Read(val) // incompressible: the quota counts wire bytes
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: val}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	m := scrape(t, b.MetricsAddr().String())
	const tags = `{quota="producer_byte_rate",user="",client_id="metered"}`
	if m["minikafka_quota_limit"+tags] != 100 || m["minikafka_quota_recorded_total"+tags] < 5000 {
		t.Fatalf("quota samples: limit %v recorded %v", m["minikafka_quota_limit"+tags], m["minikafka_quota_recorded_total"+tags])
	}
	if m["minikafka_quota_throttled_responses_total"] < 1 || m["minikafka_quota_throttle_seconds_total"+tags] <= 0 {
		t.Fatalf("throttle samples: %v %v", m["minikafka_quota_throttled_responses_total"], m["minikafka_quota_throttle_seconds_total"+tags])
	}
}
