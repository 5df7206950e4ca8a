package broker

import (
	"context"
	"crypto/tls"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkProduceSecurity: the 1 KiB / 8 partitions / 2 producers
// produce scenario (acks=all, durability never) over plaintext, TLS and
// SASL_SSL (SCRAM-SHA-256), client and broker in one process over real TCP:
// the cost of TLS on the produce path (both ends' encryption counts).
func BenchmarkProduceSecurity(b *testing.B) {
	cs := mustCerts(b)
	for _, c := range []struct {
		name string
		sasl *SASLConfig
		tls  *tls.Config
	}{
		{"plaintext", nil, nil},
		{"tls", nil, cs.ServerConfig(false)},
		{"sasl_ssl", &SASLConfig{Users: saslTestUsers, Mechanisms: []string{SASLScramSHA256}}, cs.ServerConfig(false)},
	} {
		b.Run(c.name, func(b *testing.B) {
			brk, addr, _ := secureBroker(b, c.sasl, c.tls)
			const topic, recSize = "bench", 1024
			createTopic(b, brk, topic, 8)
			opts := []kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression())}
			if c.tls != nil {
				opts = append(opts, kgo.DialTLSConfig(cs.ClientConfig(false)))
			}
			if c.sasl != nil {
				opts = append(opts, kgo.SASL(mechanism(SASLScramSHA256, "alice", saslTestPass)))
			}
			clients := make([]*kgo.Client, 2)
			for i := range clients {
				clients[i] = newClient(b, addr, opts...)
				if err := clients[i].ProduceSync(context.Background(), &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
			value := make([]byte, recSize)
			b.SetBytes(recSize)
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			produceSpread(b, clients, b.N, value)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rec/s")
			reportCPU(b, cpu0, int64(b.N)*recSize)
		})
	}
}
