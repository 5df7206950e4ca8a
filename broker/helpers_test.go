package broker

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/protocol"
)

var testRemote = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}

// newTestBroker starts a broker in memory (or on dir when cfg.DataDir is
// set) and closes it in t.Cleanup.
func newTestBroker(t testing.TB, mod ...func(*Config)) *Broker {
	t.Helper()
	cfg := Config{DataDir: "/data", FS: vfs.NewMem(), NodeID: 1, AutoCreateTopics: false, DefaultPartitions: 1}
	for _, m := range mod {
		m(&cfg)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// serve calls the handler directly, as protocol would, and resolves Wait.
func serve(t testing.TB, b *Broker, req kmsg.Request) kmsg.Response {
	t.Helper()
	rep := serveReply(b, req)
	if rep.Err != nil {
		t.Fatalf("%s v%d: connection would be closed: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), rep.Err)
	}
	resp := rep.Response
	if rep.Wait != nil {
		var err error
		if resp, err = rep.Wait(); err != nil {
			t.Fatalf("wait: %v", err)
		}
	}
	if fb, ok := resp.(*fetchBody); ok {
		return fb.materialize()
	}
	return resp
}

func serveReply(b *Broker, req kmsg.Request) protocol.Reply {
	return b.Serve(context.Background(), &protocol.Request{
		Key: req.Key(), Version: req.GetVersion(), Body: req,
		Conn: &protocol.ConnInfo{ID: 1, Remote: testRemote},
	})
}

func createTopic(t testing.TB, b *Broker, name string, parts int32, configs ...string) [16]byte {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, parts, 1
	for i := 0; i+1 < len(configs); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = configs[i], kmsg.StringPtr(configs[i+1])
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp := serve(t, b, req).(*kmsg.CreateTopicsResponse)
	if c := resp.Topics[0].ErrorCode; c != 0 {
		t.Fatalf("create %s: code %d: %v", name, c, deref(resp.Topics[0].ErrorMessage))
	}
	return resp.Topics[0].TopicID
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

type testRec struct {
	key, value []byte
	tsDelta    int64
	headers    []records.Header
}

// makeBatch builds a v2 batch; pid < 0 makes it non-idempotent.
func makeBatch(t testing.TB, codec records.Codec, pid int64, epoch int16, seq int32, recs ...testRec) []byte {
	t.Helper()
	rs := make([]records.Record, len(recs))
	for i, r := range recs {
		rs[i] = records.Record{Key: r.key, Value: r.value, TimestampDelta: r.tsDelta, Headers: r.headers}
	}
	if pid < 0 {
		epoch, seq = -1, -1
	}
	b, err := records.AppendBatch(nil, records.BatchSpec{
		Codec: codec, FirstTimestamp: time.Now().UnixMilli(), ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq,
	}, rs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func produceReq(version int16, acks int16, topic string, id [16]byte, part int32, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, acks, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = part, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// txnProduce sends one transactional batch for transactional ID id, as a
// transactional producer does, with acks=-1 at v11.
func txnProduce(t testing.TB, b *Broker, id, topic string, part int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := produceReq(11, -1, topic, [16]byte{}, part, batch)
	req.TransactionID = kmsg.StringPtr(id)
	return serve(t, b, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

// produce sends one batch with acks=-1 at v11 and returns the partition result.
func produce(t testing.TB, b *Broker, topic string, part int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	resp := serve(t, b, produceReq(11, -1, topic, [16]byte{}, part, batch)).(*kmsg.ProduceResponse)
	return resp.Topics[0].Partitions[0]
}

func fetchReq(version int16, topic string, id [16]byte, part int32, offset int64, maxWait time.Duration, minBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = version
	req.MaxWaitMillis = int32(maxWait / time.Millisecond)
	req.MinBytes, req.MaxBytes = minBytes, 50<<20
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = part, offset, 10<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// listen serves b on a real TCP listener on a free loopback port until
// cleanup and returns its address, advertised to clients.
func listen(t testing.TB, b *Broker) string {
	t.Helper()
	return listenOn(t, b, "127.0.0.1:0")
}

// listenOn serves b on addr until cleanup and returns the bound address,
// advertised to clients.
func listenOn(t testing.TB, b *Broker, addr string) string {
	t.Helper()
	return listenWith(t, b, protocol.Config{Addr: addr})
}

// listenWith is listenOn with a whole server configuration (TLS, SASL
// frame caps, logger).
func listenWith(t testing.TB, b *Broker, pc protocol.Config) string {
	t.Helper()
	srv, err := protocol.Listen(pc, b)
	if err != nil {
		t.Fatal(err)
	}
	a := srv.Addr().(*net.TCPAddr)
	b.SetAdvertised("127.0.0.1", int32(a.Port))
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
		<-done
	})
	return a.String()
}

func newClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func newAdmin(t testing.TB, addr string) *kadm.Client {
	return kadm.NewClient(newClient(t, addr))
}
