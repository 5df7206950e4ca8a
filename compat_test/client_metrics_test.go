package compat_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// A client-metrics subscription (KIP-714's CLIENT_METRICS resource)
// decides what librdkafka (confluent-kafka-go v2, librdkafka 2.x) pushes:
// a producer the subscription matches by client.id and software name
// pushes the metrics under the prefix it names, every 500 ms, and nothing
// outside it; the broker's own default subscription (all metrics) no
// longer applies to it.
func TestLibrdkafkaClientMetricsSubscription(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithMetricsAddr("127.0.0.1:0"), minikafka.WithAutoCreateTopics(true))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const prefix = "org.apache.kafka.producer.node."
	r := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeClientMetrics, "rdkafka-producers"
	for _, kv := range [][2]string{{"metrics", prefix}, {"interval.ms", "500"}, {"match", "client_id=cm-rdk-.*,client_software_name=confluent-kafka-go"}} {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kv[0], kmsg.StringPtr(kv[1])
		res.Configs = append(res.Configs, c)
	}
	r.Resources = append(r.Resources, res)
	resp, err := r.RequestWith(ctx, cl)
	if err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("creating the subscription: %v %+v", err, resp)
	}

	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": b.Addr(), "client.id": "cm-rdk-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	topic := "cm-topic"
	for i := 0; i < 10; i++ {
		if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny}, Value: []byte("v")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	p.Flush(10_000)

	url := "http://" + b.MetricsAddr().String() + "/metrics"
	for {
		var ours, outside []string
		hr, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(hr.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "minikafka_client_metric{") || !strings.Contains(line, `client_id="cm-rdk-1"`) {
				continue
			}
			if strings.Contains(line, `metric="`+prefix) {
				ours = append(ours, line)
			} else {
				outside = append(outside, line)
			}
		}
		hr.Body.Close()
		if len(outside) > 0 {
			t.Fatalf("pushed outside the subscription's %s: %v", prefix, outside)
		}
		if len(ours) > 0 {
			t.Logf("pushed: %d series, e.g. %s", len(ours), ours[0])
			return
		}
		if ctx.Err() != nil {
			t.Fatal("librdkafka pushed nothing under the subscription in 60 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
