package broker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/quota"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/protocol"
)

func qname(s string) *string { return &s }

func alterQuota(t *testing.T, adm *kadm.Client, ent kadm.ClientQuotaEntity, ops ...kadm.AlterClientQuotaOp) {
	t.Helper()
	res, err := adm.AlterClientQuotas(testCtx(t), []kadm.AlterClientQuotaEntry{{Entity: ent, Ops: ops}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("alter %v: %v", r.Entity, r.Err)
		}
	}
}

// kadm manages quotas over TCP: validation errors per entry as Kafka
// answers them, validate_only changes nothing, describe filters, and the
// quotas survive a restart from the data dir.
func TestClientQuotasAdmin(t *testing.T) {
	dir := t.TempDir()
	b := newTestBroker(t, func(c *Config) { c.DataDir, c.FS = dir, vfs.Default })
	addr := listen(t, b)
	kcl := newClient(t, addr)
	adm := kadm.NewClient(kcl)
	ctx := testCtx(t)

	alice := kadm.ClientQuotaEntity{{Type: "user", Name: qname("alice")}}
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: alice, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1024}}},
		{Entity: alice, Ops: []kadm.AlterClientQuotaOp{{Key: "bogus", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: qname("bob")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: 1.5}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "group", Name: qname("g")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user"}, {Type: "client-id"}}, Ops: []kadm.AlterClientQuotaOp{{Key: "request_percentage", Value: 50}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantErr := []error{nil, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest, nil}
	for i, r := range res {
		if !errors.Is(r.Err, wantErr[i]) || (wantErr[i] == nil) != (r.Err == nil) {
			t.Errorf("entry %d (%v): %v, want %v", i, r.Entity, r.Err, wantErr[i])
		}
	}
	if !strings.Contains(res[1].ErrMessage, "Invalid configuration key bogus") {
		t.Errorf("unknown key message %q", res[1].ErrMessage)
	}
	if _, err := adm.ValidateAlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: qname("x")}},
		Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 5}}}}); err != nil {
		t.Fatal(err)
	}

	describe := func(adm *kadm.Client, strict bool, comps ...kadm.DescribeClientQuotaComponent) []string {
		t.Helper()
		d, err := adm.DescribeClientQuotas(ctx, strict, comps)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, q := range d {
			s := q.Entity.String()
			for _, v := range q.Values {
				s += " " + v.String()
			}
			out = append(out, s)
		}
		return out
	}
	all := strings.Join(describe(adm, false), "; ")
	want := "{client-id=<default>, user=<default>} request_percentage=50.000000; {user=alice} producer_byte_rate=1024.000000"
	if all != want {
		t.Fatalf("describe all:\n got %s\nwant %s", all, want)
	}
	if got := describe(adm, true, kadm.DescribeClientQuotaComponent{Type: "user", MatchType: 1}); len(got) != 0 {
		t.Fatalf("strict default user: %v", got)
	}
	if got := describe(adm, false, kadm.DescribeClientQuotaComponent{Type: "user", MatchType: 0, MatchName: qname("alice")}); len(got) != 1 {
		t.Fatalf("exact alice: %v", got)
	}
	// A filter naming a type twice is INVALID_REQUEST for the whole request.
	dup := kmsg.NewPtrDescribeClientQuotasRequest()
	dup.Components = []kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 1}, {EntityType: "user", MatchType: 2}}
	dr, err := dup.RequestWith(ctx, kcl)
	if err != nil {
		t.Fatal(err)
	}
	if dr.ErrorCode != kerr.InvalidRequest.Code || dr.Entries != nil {
		t.Fatalf("duplicate filter type: %+v", dr)
	}

	// Remove one key; the entity goes when its last key does.
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "user"}, {Type: "client-id"}}, kadm.AlterClientQuotaOp{Key: "request_percentage", Remove: true})
	if got := describe(adm, false); len(got) != 1 {
		t.Fatalf("after remove: %v", got)
	}

	// Restart from the same directory.
	b2, err := New(Config{DataDir: dir, FS: vfs.Default, NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if got := strings.Join(describe(newAdmin(t, listen(t, b2)), false), "; "); got != "{user=alice} producer_byte_rate=1024.000000" {
		t.Fatalf("after restart: %s", got)
	}
}

// A damaged quota file stops the start, naming the file.
func TestClientQuotasDamagedFile(t *testing.T) {
	dir := t.TempDir()
	b := newTestBroker(t, func(c *Config) { c.DataDir, c.FS = dir, vfs.Default })
	adm := newAdmin(t, listen(t, b))
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "user", Name: qname("alice")}}, kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: 1024})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, quota.FileName)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-3] ^= 0x20
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = New(Config{DataDir: dir, FS: vfs.Default, NodeID: 1})
	if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("start with a damaged quota file: %v", err)
	}
}

// A producer limited to a rate is held to it within 10 % over a measured
// window, and kgo sees throttle_time_ms in its answers. The quota window
// is shortened (11 × 20 ms): Kafka's windowed rate lets a client send a
// window's worth at once and then holds it back, so the measured rate
// swings by up to one window's bytes; with a short window 4 s measure it
// well within 10 %. The rate computation is Kafka's either way.
func TestProduceQuotaKgo(t *testing.T) {
	t.Parallel() // 21 s of mostly waiting, beside the librdkafka twin
	const limit = 1 << 20
	b := newTestBroker(t, func(c *Config) {
		c.AutoCreateTopics = true
		c.QuotaWindowSamples, c.QuotaWindowSize = 11, 20*time.Millisecond
	})
	addr := listen(t, b)
	createTopic(t, b, "quota", 1)
	adm := newAdmin(t, addr)
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: qname("limited")}}, kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: limit})
	var throttles atomic.Int64
	cl := newClient(t, addr, kgo.ClientID("limited"), kgo.DefaultProduceTopic("quota"),
		kgo.ProducerLinger(0), kgo.ProducerBatchMaxBytes(20<<10), kgo.WithHooks(throttleHook{&throttles}))
	measureProduceRate(t, limit, func(value []byte, done func(error)) {
		cl.Produce(context.Background(), &kgo.Record{Value: value}, func(_ *kgo.Record, err error) { done(err) })
	})
	if throttles.Load() == 0 {
		t.Fatal("no answer carried throttle_time_ms")
	}
	t.Logf("%d throttled answers", throttles.Load())
}

type throttleHook struct{ n *atomic.Int64 }

func (h throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, after bool) {
	if d > 0 && after {
		h.n.Add(1)
	}
}

// measureProduceRate produces 16 KiB records as fast as send allows (at
// most 4 MiB unacknowledged) for 21 s and checks the acknowledged bytes per
// second over the last 20 s are within 10 % of limit (the first second
// holds the burst a fresh sensor allows).
func measureProduceRate(t *testing.T, limit float64, send func(value []byte, done func(error))) {
	t.Helper()
	const (
		recSize = 16 << 10
		from    = time.Second
		until   = from + 20*time.Second // the 20 s of measurement
	)
	// Random bytes, fresh for each record: clients compress, and the
	// quota counts wire bytes.
	pool := make([]byte, 64<<20)
	rand.Read(pool)
	var (
		mu     sync.Mutex
		acked  int64
		atFrom int64 = -1
		failed error
	)
	sem := make(chan struct{}, 256)
	start := time.Now()
	go func() {
		time.Sleep(from)
		mu.Lock()
		atFrom = acked
		mu.Unlock()
	}()
	for i := 0; time.Since(start) < until; i++ {
		sem <- struct{}{}
		off := (i * recSize) % (len(pool) - recSize)
		send(pool[off:off+recSize], func(err error) {
			mu.Lock()
			defer mu.Unlock()
			<-sem
			if err != nil && failed == nil {
				failed = err
			}
			acked += recSize
		})
	}
	mu.Lock()
	defer mu.Unlock()
	elapsed := time.Since(start) - from
	if failed != nil {
		t.Fatal(failed)
	}
	rate := float64(acked-atFrom) / elapsed.Seconds()
	t.Logf("produce rate %.0f B/s over %v, limit %.0f (%.1f%%)", rate, elapsed, limit, 100*rate/limit)
	if atFrom < 0 || rate < 0.9*limit || rate > 1.1*limit {
		t.Fatalf("produce rate %.0f B/s is not within 10%% of %.0f", rate, limit)
	}
}

// The connection is not read while muted: after a throttled produce, a
// request sent at once is answered only after the throttle time.
func TestQuotaMutesConnection(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.AutoCreateTopics = true })
	addr := listen(t, b)
	createTopic(t, b, "m", 1)
	adm := newAdmin(t, addr)
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: qname("slow")}}, kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: 1000})

	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	batch := makeBatch(t, 0, -1, -1, 0, testRec{value: bytes.Repeat([]byte("x"), 13000)})
	pr := produceReq(9, 1, "m", [16]byte{}, 0, batch)
	writeReq(t, nc, "slow", 1, pr)
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 9
	readResp(t, nc, resp, 1)
	thr := time.Duration(resp.ThrottleMillis) * time.Millisecond
	if thr < time.Second {
		t.Fatalf("throttle_time_ms %d: 20 kB over a 1000 B/s quota with an 11 s window should throttle about 1 s", resp.ThrottleMillis)
	}
	sent := time.Now()
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	writeReq(t, nc, "slow", 2, md)
	mresp := kmsg.NewPtrMetadataResponse()
	mresp.Version = 9
	readResp(t, nc, mresp, 2)
	// The mute began before the produce answer was read, so allow what
	// passed between the two.
	if waited := time.Since(sent); waited < thr-200*time.Millisecond {
		t.Fatalf("request on a muted connection answered after %v, throttle %v", waited, thr)
	}
}

func writeReq(t *testing.T, nc net.Conn, client string, corr int32, r kmsg.Request) {
	t.Helper()
	body := r.AppendTo(nil)
	h := binary.BigEndian.AppendUint16(nil, uint16(r.Key()))
	h = binary.BigEndian.AppendUint16(h, uint16(r.GetVersion()))
	h = binary.BigEndian.AppendUint32(h, uint32(corr))
	h = binary.BigEndian.AppendUint16(h, uint16(len(client)))
	h = append(h, client...)
	if r.IsFlexible() {
		h = append(h, 0)
	}
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(h)+len(body)))
	frame = append(append(frame, h...), body...)
	nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write(frame); err != nil {
		t.Fatal(err)
	}
}

func readResp(t *testing.T, nc net.Conn, r kmsg.Response, corr int32) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	var sz [4]byte
	if _, err := io.ReadFull(nc, sz[:]); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, binary.BigEndian.Uint32(sz[:]))
	if _, err := io.ReadFull(nc, buf); err != nil {
		t.Fatal(err)
	}
	if got := int32(binary.BigEndian.Uint32(buf)); got != corr {
		t.Fatalf("correlation id %d, want %d", got, corr)
	}
	buf = buf[4:]
	if r.IsFlexible() {
		buf = buf[1:]
	}
	if err := r.ReadFrom(buf); err != nil {
		t.Fatal(err)
	}
}

// controller_mutation_rate: CreateTopics v6+ gets THROTTLING_QUOTA_EXCEEDED
// for topics once the bucket is empty, with a throttle; older versions
// create and are only throttled.
func TestControllerMutationQuota(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: qname("ops")}}, kadm.AlterClientQuotaOp{Key: "controller_mutation_rate", Value: 1})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	create := func(corr int32, version int16, parts int32, names ...string) *kmsg.CreateTopicsResponse {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = version
		req.TimeoutMillis = 5000
		for _, n := range names {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = n, parts, 1
			req.Topics = append(req.Topics, rt)
		}
		writeReq(t, nc, "ops", corr, req)
		resp := kmsg.NewPtrCreateTopicsResponse()
		resp.Version = version
		readResp(t, nc, resp, corr)
		return resp
	}
	// Burst 11 tokens at 1/s: 20 partitions empty the bucket, the next
	// topic in the same request is refused.
	r := create(1, 7, 20, "a", "b")
	if r.Topics[0].ErrorCode != 0 || r.Topics[1].ErrorCode != kerr.ThrottlingQuotaExceeded.Code || r.ThrottleMillis < 5000 {
		t.Fatalf("strict: %v %v throttle %d", kerr.ErrorForCode(r.Topics[0].ErrorCode), kerr.ErrorForCode(r.Topics[1].ErrorCode), r.ThrottleMillis)
	}
	if !b.TopicExists("a") || b.TopicExists("b") {
		t.Fatal("wrong topics created")
	}
	// v5 (permissive) creates even with the bucket empty. It is read
	// only after the mute, which the throttle above set.
	r = create(2, 5, 1, "c")
	if r.Topics[0].ErrorCode != 0 || r.ThrottleMillis <= 0 || !b.TopicExists("c") {
		t.Fatalf("permissive: %v throttle %d", kerr.ErrorForCode(r.Topics[0].ErrorCode), r.ThrottleMillis)
	}
}

// A TLS client's quotas are those of its certificate's principal (the
// subject DN, or what ssl.principal.mapping.rules make of it), as Kafka's
// quotas key users by principal name.
func TestQuotaTLSPrincipal(t *testing.T) {
	cs := mustCerts(t)
	b, addr, _ := secureBroker(t, nil, cs.ServerConfig(true))
	createTopic(t, b, "q", 1)
	adm := kadm.NewClient(newClient(t, addr, kgo.DialTLSConfig(cs.ClientConfig(true))))
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "user", Name: qname("CN=minikafka test client")}}, kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: 1000})

	pr := produceReq(9, 1, "q", [16]byte{}, 0, makeBatch(t, 0, -1, -1, 0, testRec{value: bytes.Repeat([]byte("x"), 13000)}))
	resp, err := pr.RequestWith(testCtx(t), newClient(t, addr, kgo.DialTLSConfig(cs.ClientConfig(true))).Broker(1))
	if err != nil {
		t.Fatal(err)
	}
	if resp.ThrottleMillis < 1000 {
		t.Fatalf("throttle_time_ms %d for 13 kB over the certificate user's 1000 B/s", resp.ThrottleMillis)
	}
}

// connection_creation_rate (KIP-612): connections from an IP beyond its
// rate are closed unserved after the throttle time; other IPs' quota and
// the default apply as Kafka resolves them, and a refused connection does
// not count against the next.
func TestConnectionCreationRate(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.QuotaWindowSamples, c.QuotaWindowSize = 2, time.Second })
	pc := protocol.Config{Addr: "127.0.0.1:0", ConnThrottle: b.ConnectionThrottle}
	addr := listenWith(t, b, pc)
	adm := newAdmin(t, addr)
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "ip", Name: qname("127.0.0.1")}}, kadm.AlterClientQuotaOp{Key: "connection_creation_rate", Value: 2})

	served, refused := 0, 0
	start := time.Now()
	for i := range 12 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 9
		writeReq(t, nc, "conn", int32(i), md)
		_ = nc.SetReadDeadline(time.Now().Add(3 * time.Second))
		var size [4]byte
		if _, err := io.ReadFull(nc, size[:]); err == nil {
			served++
		} else {
			refused++
		}
		nc.Close()
	}
	// 2/s over a 2 s window: a handful pass, the rest are refused. Each
	// refusal waits out its throttle time, so the rate allows more the
	// longer the loop ran (a loaded machine runs it slower): at most 2/s
	// of the elapsed time plus one window's worth.
	elapsed := time.Since(start).Seconds()
	if allowed := int(2*elapsed) + 4; served == 0 || refused == 0 || served > allowed {
		t.Fatalf("%d served, %d refused in %.1fs at 2 connections/s (at most %d may pass)", served, refused, elapsed, allowed)
	}
	stats, _ := b.QuotaStats()
	found := false
	for _, s := range stats {
		if s.Kind == "connection_creation_rate" && s.IP == "127.0.0.1" && s.Limit == 2 && s.Throttle > 0 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no throttled connection_creation_rate sensor for 127.0.0.1 in %+v", stats)
	}
}
