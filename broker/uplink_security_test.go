package broker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/testcert"
	"github.com/minikafka/minikafka/minikafkatest"
)

// securedUpstream is a minikafka serving SASL_SSL with SCRAM users, as a
// central cluster would.
func securedUpstream(t *testing.T, cs *testcert.Set, users map[string]string) *minikafka.Broker {
	t.Helper()
	up, err := minikafka.Start(context.Background(), minikafka.WithDataDir(t.TempDir()),
		minikafka.WithDurability("never"),
		minikafka.WithTLS(cs.ServerConfig(false)),
		minikafka.WithSASL(users, "SCRAM-SHA-256", "SCRAM-SHA-512"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := up.Close(); err != nil {
			t.Errorf("closing upstream: %v", err)
		}
	})
	return up
}

// The uplink's TLS and SASL settings against an upstream that requires
// both: every record produced locally arrives upstream, in order per
// partition, read back by a client authenticating the same way.
func TestUplinkToSecuredUpstream(t *testing.T) {
	cs, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	up := securedUpstream(t, cs, map[string]string{"edge-site": "uplink-pw"})
	local := minikafkatest.New(t,
		minikafka.WithUpstream(up.Addr()), minikafka.WithForward("sec-*=central."),
		minikafka.WithUpstreamTLS(cs.ClientConfig(false)),
		minikafka.WithUpstreamSASL("SCRAM-SHA-512", "edge-site", "uplink-pw"),
		minikafka.WithTopic("sec-a", 3))
	cl := minikafkatest.Client(t, local, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	const n = 3000
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: "sec-a", Partition: int32(i % 3),
			Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("v%d", i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	offs := map[int32]kgo.Offset{0: kgo.NewOffset().AtStart(), 1: kgo.NewOffset().AtStart(), 2: kgo.NewOffset().AtStart()}
	reader, err := kgo.NewClient(kgo.SeedBrokers(up.Addr()),
		kgo.DialTLSConfig(cs.ClientConfig(false)),
		kgo.SASL(scram.Auth{User: "edge-site", Pass: "uplink-pw"}.AsSha256Mechanism()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"central.sec-a": offs}),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	got := map[int32][]*kgo.Record{}
	total := 0
	for total < n {
		fs := reader.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("upstream has %d of %d records; forwarders: %+v", total, n, local.ForwardStats())
		}
		fs.EachRecord(func(r *kgo.Record) { got[r.Partition] = append(got[r.Partition], r); total++ })
	}
	for p := int32(0); p < 3; p++ {
		for j, r := range got[p] {
			i := j*3 + int(p)
			if string(r.Key) != fmt.Sprint(i) || string(r.Value) != fmt.Sprintf("v%d", i) {
				t.Fatalf("partition %d record %d: key %q value %q, want %d", p, j, r.Key, r.Value, i)
			}
		}
	}
	if total != n {
		t.Fatalf("%d records upstream, want %d", total, n)
	}
}

// A wrong upstream password: nothing is lost, the forwarder reports the
// authentication error and keeps the records spooled.
func TestUplinkWrongUpstreamPassword(t *testing.T) {
	cs, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	up := securedUpstream(t, cs, map[string]string{"edge-site": "uplink-pw"})
	local := minikafkatest.New(t,
		minikafka.WithUpstream(up.Addr()), minikafka.WithForward("sec-*"),
		minikafka.WithUpstreamTLS(cs.ClientConfig(false)),
		minikafka.WithUpstreamSASL("SCRAM-SHA-256", "edge-site", "not-it"),
		minikafka.WithTopic("sec-b", 1))
	cl := minikafkatest.Client(t, local)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "sec-b", Value: []byte("kept")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the forwarder to report the SASL failure", func() bool {
		for _, s := range local.ForwardStats() {
			if s.Topic == "sec-b" && strings.Contains(s.LastError, "SASL_AUTHENTICATION_FAILED") {
				return s.Lag == 1
			}
		}
		return false
	})
}
