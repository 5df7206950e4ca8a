package schemaregistry_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// benchClients is how many clients run at once in the benchmarks.
const benchClients = 16

// latencies collects per-operation times from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// report adds p50 and p99 (µs) to b's results.
func (l *latencies) report(b *testing.B) {
	slices.Sort(l.d)
	if len(l.d) == 0 {
		return
	}
	at := func(q float64) float64 { return float64(l.d[int(q*float64(len(l.d)-1))].Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

func benchHTTP() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients}}
}

func post(b *testing.B, cl *http.Client, url, body string) {
	resp, err := cl.Post(url, "application/vnd.schemaregistry.v1+json", bytes.NewReader([]byte(body)))
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("%s: %d %s", url, resp.StatusCode, out)
	}
}

func recordSchema(n int64) string {
	return fmt.Sprintf(`{"schema":"{\"type\":\"record\",\"name\":\"R%d\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},{\"name\":\"b\",\"type\":\"string\",\"default\":\"\"}]}"}`, n)
}

// durabilities: the test default, and the binary's default (fsync per
// acknowledged write, shared by concurrent writers).
var durabilities = []string{"never", "always"}

// BenchmarkRegister: benchClients clients each register new schemas
// (each one a new subject and ID: one _schemas record per operation).
func BenchmarkRegister(b *testing.B) {
	for _, d := range durabilities {
		b.Run("durability="+d, func(b *testing.B) {
			_, u := start(b, minikafka.WithDurability(d))
			cl := benchHTTP()
			var n atomic.Int64
			var lat latencies
			b.SetParallelism((benchClients + 1) / 2) // 2 cores: 16 goroutines
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					t0 := time.Now()
					post(b, cl, fmt.Sprintf("%s/subjects/s-%d/versions", u, i), recordSchema(i))
					lat.add(time.Since(t0))
				}
			})
			lat.report(b)
		})
	}
}

// BenchmarkLookup: benchClients clients look registered schemas up by
// content (POST /subjects/{s}, which parses the schema) and by ID (GET
// /schemas/ids/{id}, a deserializer's cache miss).
func BenchmarkLookup(b *testing.B) {
	_, u := start(b)
	cl := benchHTTP()
	const registered = 100
	for i := int64(1); i <= registered; i++ {
		post(b, cl, fmt.Sprintf("%s/subjects/s-%d/versions", u, i), recordSchema(i))
	}
	for _, kind := range []string{"by-schema", "by-id"} {
		b.Run(kind, func(b *testing.B) {
			var n atomic.Int64
			var lat latencies
			b.SetParallelism((benchClients + 1) / 2)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)%registered + 1
					t0 := time.Now()
					if kind == "by-schema" {
						post(b, cl, fmt.Sprintf("%s/subjects/s-%d", u, i), recordSchema(i))
					} else {
						resp, err := cl.Get(fmt.Sprintf("%s/schemas/ids/%d", u, i))
						if err != nil {
							b.Fatal(err)
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 {
							b.Fatalf("id %d: %d", i, resp.StatusCode)
						}
					}
					lat.add(time.Since(t0))
				}
			})
			lat.report(b)
		})
	}
}

// BenchmarkProduceYardstick: the same clients each produce one small
// record synchronously (acks=all) with kgo, the write a registration
// makes, for scale in the same run.
func BenchmarkProduceYardstick(b *testing.B) {
	for _, d := range durabilities {
		b.Run("durability="+d, func(b *testing.B) {
			br := minikafkatest.New(b, minikafka.WithDurability(d), minikafka.WithTopic("y", 1))
			cl := minikafkatest.Client(b, br, kgo.ProducerLinger(0), kgo.DefaultProduceTopic("y"))
			ctx := context.Background()
			value := []byte(recordSchema(1))
			var lat latencies
			b.SetParallelism((benchClients + 1) / 2)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					t0 := time.Now()
					if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: value}).FirstErr(); err != nil {
						b.Fatal(err)
					}
					lat.add(time.Since(t0))
				}
			})
			lat.report(b)
		})
	}
}

// BenchmarkSerdeRoundTrip: franz-go's sr.Serde encoding and decoding an
// Avro record with the schema's ID cached (the registry is asked once,
// before the timer), as a serializer and a deserializer do per record.
func BenchmarkSerdeRoundTrip(b *testing.B) {
	_, u := start(b)
	cl, err := sr.NewClient(sr.URLs(u))
	if err != nil {
		b.Fatal(err)
	}
	ss, err := cl.CreateSchema(context.Background(), "users-value", sr.Schema{Schema: userV2})
	if err != nil {
		b.Fatal(err)
	}
	got, err := cl.SchemaByID(context.Background(), ss.ID)
	if err != nil {
		b.Fatal(err)
	}
	sch := avro.MustParse(got.Schema)
	var serde sr.Serde
	serde.Register(ss.ID, user{},
		sr.EncodeFn(func(v any) ([]byte, error) { return avro.Marshal(sch, v) }),
		sr.DecodeFn(func(b []byte, v any) error { return avro.Unmarshal(sch, b, v) }))
	in := user{Name: "ada", Age: 36}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf, err := serde.Encode(in)
		if err != nil {
			b.Fatal(err)
		}
		var out user
		if err := serde.Decode(buf, &out); err != nil || out != in {
			b.Fatalf("%v %+v", err, out)
		}
	}
}
