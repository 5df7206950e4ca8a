package compat_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// env is what one client's scenarios share: its broker and the client.
type env struct {
	addrs []string
	cl    client
	caps  caps
	name  string
	n     int // topic counter
}

func (e *env) topic(what string) string {
	e.n++
	return fmt.Sprintf("%s-%s-%d", strings.ReplaceAll(e.name, "/", "-"), what, e.n)
}

// scenario is one row of the matrix; run returns without running anything
// (and the matrix shows "—") when applies says the client lacks the feature.
type scenario struct {
	name    string
	applies func(c caps) bool
	run     func(t *testing.T, e *env)
}

// clientCase builds a client against a broker; it fails the test (naming
// the install command) when the client is not installed.
type clientCase struct {
	name string
	new  func(t *testing.T, addrs []string) (client, caps)
}

// clients and scenarios are appended to by each client's file and by the
// build-tagged group/transaction files.
var (
	clients   []clientCase
	scenarios []scenario
)

func always(caps) bool { return true }

func init() {
	for _, codec := range allCodecs {
		codec := codec
		scenarios = append(scenarios, scenario{
			name:    "produce-consume/" + codec,
			applies: func(c caps) bool { return contains(c.codecs, codec) },
			run: func(t *testing.T, e *env) {
				produceConsume(t, e, codec, e.caps.idempotent)
			},
		})
	}
	scenarios = append(scenarios,
		scenario{"producer/idempotent", func(c caps) bool { return c.idempotent }, func(t *testing.T, e *env) { produceConsume(t, e, "none", true) }},
		scenario{"producer/plain", func(c caps) bool { return c.nonIdempotent }, func(t *testing.T, e *env) { produceConsume(t, e, "none", false) }},
		scenario{"metadata+create-topic", always, scenarioMetadata},
		scenario{"list-offsets", always, scenarioListOffsets},
		scenario{"admin/create-delete-topics", adminOffers("topics"), scenarioAdminTopics},
		scenario{"admin/create-partitions", adminOffers("partitions"), scenarioAdminPartitions},
		scenario{"admin/configs", adminOffers("configs"), scenarioAdminConfigs},
		scenario{"admin/delete-records", adminOffers("delete-records"), scenarioDeleteRecords},
		scenario{"topic-compression", always, scenarioTopicCompression},
	)
}

// adminOffers: the client has an admin API offering op (see caps.adminOps).
func adminOffers(op string) func(caps) bool {
	return func(c caps) bool { return c.admin != nil && contains(c.adminOps, op) }
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestCompat runs every client through every scenario, each client against
// its own broker.
func TestCompat(t *testing.T) {
	sort.SliceStable(clients, func(i, j int) bool { return clientRank(clients[i].name) < clientRank(clients[j].name) })
	sort.SliceStable(scenarios, func(i, j int) bool { return scenarioRank(scenarios[i].name) < scenarioRank(scenarios[j].name) })
	for _, cc := range clients {
		cc := cc
		t.Run(cc.name, func(t *testing.T) {
			addrs := startBroker(t)
			cl, c := cc.new(t, addrs)
			e := &env{addrs: addrs, cl: cl, caps: c, name: cc.name}
			recordVersion(cc.name, c.version)
			for _, sc := range scenarios {
				if !sc.applies(c) {
					recordResult(cc.name, sc.name, resultNA)
					continue
				}
				if why, ok := pending[cc.name+"/"+sc.name]; ok {
					t.Logf("%s/%s pending (run with -tags compatpending): %s", cc.name, sc.name, why)
					recordResult(cc.name, sc.name, resultPending)
					continue
				}
				sc := sc
				t.Run(sc.name, func(t *testing.T) {
					t.Cleanup(func() {
						if t.Failed() {
							recordResult(cc.name, sc.name, resultFail)
						} else {
							recordResult(cc.name, sc.name, resultPass)
						}
					})
					sc.run(t, e)
				})
			}
		})
	}
}

// clientOrder is the matrix's column order.
var clientOrder = []string{"kgo", "sarama", "kafka-go", "confluent-kafka-go", "kcat", "confluent-kafka-python", "kafka-python", "kafkajs"}

// scenarioRank puts the build-tagged group and transaction rows last
// (their files' init functions run first, by file name).
func scenarioRank(name string) int {
	switch {
	case strings.HasPrefix(name, "txn/"):
		return 2
	case strings.HasPrefix(name, "group/"), strings.HasSuffix(name, "-groups"):
		return 1
	}
	return 0
}

func clientRank(name string) int {
	for i, n := range clientOrder {
		if n == name {
			return i
		}
	}
	return len(clientOrder)
}

// refAdmin is a kadm client on the test's broker: the reference used to
// create topics for clients with no admin API and to check their effects.
func refAdmin(t *testing.T, addrs []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// makeTopic creates a topic with the client's own admin API when it has one,
// else with the reference kadm.
func makeTopic(t *testing.T, e *env, topic string, parts int32) {
	t.Helper()
	if e.caps.admin != nil {
		if err := e.caps.admin.createTopic(t, topic, parts, nil); err == nil {
			return
		} else if !errors.Is(err, errNotOffered) {
			t.Fatalf("%s: create topic %s: %v", e.name, topic, err)
		}
	}
	resp, err := refAdmin(t, e.addrs).CreateTopic(ctxT(t), parts, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("kadm create topic %s: %v", topic, err)
	}
}

// produceConsume produces a spread of records with one codec, checks the
// offsets the producer was told, and reads them back with the client itself
// (when it can consume without a group) and with kgo.
func produceConsume(t *testing.T, e *env, codec string, idempotent bool) {
	const parts = 2
	topic := e.topic("pc-" + codec)
	makeTopic(t, e, topic, parts)
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	want := expectOffsets(testRecords(codec, parts, 6, base, e.caps.timestamps), map[int32]int64{})
	acked, err := e.cl.produce(t, topic, want, produceOpts{Codec: codec, Idempotent: idempotent})
	if err != nil {
		t.Fatalf("%s produce: %v", e.name, err)
	}
	checkProduced(t, e.name, want, acked, e.caps.reportsOffsets)
	if e.caps.consumeNoGroup {
		got, err := e.cl.consume(t, topic, parts, len(want))
		if err != nil {
			t.Fatalf("%s consume: %v", e.name, err)
		}
		verifyRecords(t, e.name+" consumer", want, got)
	}
	verifyRecords(t, "kgo reference consumer", want, refConsume(t, e.addrs, topic, parts, len(want)))
}

// scenarioTopicCompression: topics whose compression.type names a codec
// store what the client sends uncompressed in that codec (the broker
// recompresses, as Kafka does), and the client's own decoder reads it.
func scenarioTopicCompression(t *testing.T, e *env) {
	const parts = 2
	for _, codec := range []string{"gzip", "snappy", "lz4", "zstd"} {
		topic := e.topic("tc-" + codec)
		// Created the client's way (its metadata then knows the topic),
		// the codec set with kadm before anything is produced.
		makeTopic(t, e, topic, parts)
		alt, err := refAdmin(t, e.addrs).AlterTopicConfigs(ctxT(t), []kadm.AlterConfig{{Name: "compression.type", Value: &codec}}, topic)
		if err == nil {
			err = alt[0].Err
		}
		if err != nil {
			t.Fatalf("kadm set compression.type=%s on %s: %v", codec, topic, err)
		}
		base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
		want := expectOffsets(testRecords("tc-"+codec, parts, 6, base, e.caps.timestamps), map[int32]int64{})
		acked, err := e.cl.produce(t, topic, want, produceOpts{Codec: "none", Idempotent: e.caps.idempotent})
		if err != nil {
			t.Fatalf("%s produce to a %s topic: %v", e.name, codec, err)
		}
		checkProduced(t, e.name, want, acked, e.caps.reportsOffsets)
		if e.caps.consumeNoGroup {
			got, err := e.cl.consume(t, topic, parts, len(want))
			if err != nil {
				t.Fatalf("%s consume of a %s topic: %v", e.name, codec, err)
			}
			verifyRecords(t, e.name+" consumer of a "+codec+" topic", want, got)
		}
		verifyRecords(t, "kgo reference consumer", want, refConsume(t, e.addrs, topic, parts, len(want)))
	}
}

// scenarioMetadata creates a topic (by the admin API, or for clients whose
// way is auto-creation, by producing to it) and checks the client's metadata.
func scenarioMetadata(t *testing.T, e *env) {
	topic := e.topic("meta")
	parts := int32(3)
	if e.caps.autoCreate {
		// The broker's default partition count decides; ask kadm for it.
		if _, err := e.cl.produce(t, topic, []rec{{P: 0, V: sp("auto"), TS: -1, O: -1}}, produceOpts{Codec: "none"}); err != nil {
			t.Fatalf("%s produce to a new topic (auto-creation): %v", e.name, err)
		}
		td, err := refAdmin(t, e.addrs).ListTopics(ctxT(t), topic)
		if err != nil || td[topic].Err != nil {
			t.Fatalf("kadm: auto-created topic %s: %v %v", topic, err, td[topic].Err)
		}
		parts = int32(len(td[topic].Partitions))
	} else {
		makeTopic(t, e, topic, parts)
	}
	if e.caps.admin == nil {
		return
	}
	md, err := e.caps.admin.metadata(t, topic)
	if err != nil {
		t.Fatalf("%s metadata: %v", e.name, err)
	}
	if md[topic] != parts {
		t.Fatalf("%s metadata: topic %s has %d partitions, want %d (all: %v)", e.name, topic, md[topic], parts, md)
	}
}

// scenarioListOffsets checks earliest, latest and by-timestamp answers on a
// partition whose records kgo wrote with known timestamps.
func scenarioListOffsets(t *testing.T, e *env) {
	topic := e.topic("lo")
	makeTopic(t, e, topic, 1)
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	recs := testRecords("lo", 1, 6, base, true)
	kgoProduce(t, e.addrs, topic, recs)
	afterAll := int64(-1)
	if e.caps.timeAfterAllIsEnd {
		afterAll = 6
	}
	for _, c := range []struct {
		name string
		spec int64
		want int64
	}{
		{"earliest", -2, 0},
		{"latest", -1, 6},
		{"timestamp exact", base + 2000, 2},
		{"timestamp between", base + 2500, 3},
		{"timestamp before all", base - 5000, 0},
		{"timestamp after all", base + 60000, afterAll},
	} {
		got, err := e.cl.listOffset(t, topic, 0, c.spec)
		if err != nil {
			t.Errorf("%s list offsets %s: %v", e.name, c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s list offsets %s (%d): got %d, want %d", e.name, c.name, c.spec, got, c.want)
		}
	}
}

// kgoProduce writes recs synchronously with kgo (reference producer).
func kgoProduce(t *testing.T, addrs []string, topic string, recs []rec) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var krs []*kgo.Record
	for _, r := range recs {
		krs = append(krs, toKgo(topic, r))
	}
	if err := cl.ProduceSync(ctxT(t), krs...).FirstErr(); err != nil {
		t.Fatalf("kgo reference produce: %v", err)
	}
}

func toKgo(topic string, r rec) *kgo.Record {
	kr := &kgo.Record{Topic: topic, Partition: r.P}
	if r.K != nil {
		kr.Key = []byte(*r.K)
	}
	if r.V != nil {
		kr.Value = []byte(*r.V)
	}
	for _, h := range r.H {
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.K, Value: []byte(h.V)})
	}
	if r.TS >= 0 {
		kr.Timestamp = time.UnixMilli(r.TS)
	}
	return kr
}

// waitFor polls cond (metadata propagation is asynchronous in Kafka, so
// clients are allowed a moment) for up to 20 s.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, detail)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func scenarioAdminTopics(t *testing.T, e *env) {
	a := e.caps.admin
	topic := e.topic("adm")
	if err := a.createTopic(t, topic, 3, map[string]string{"retention.ms": "86400000"}); err != nil {
		t.Fatalf("%s create topic: %v", e.name, err)
	}
	waitFor(t, e.name+" metadata after create", func() (bool, string) {
		md, err := a.metadata(t, topic)
		return err == nil && md[topic] == 3, fmt.Sprintf("%v %v", md, err)
	})
	if !contains(e.caps.adminOps, "configs") {
		// nothing to read the config back with
	} else if v, err := a.describeConfig(t, topic, "retention.ms"); err != nil {
		t.Errorf("%s describe config: %v", e.name, err)
	} else if v != "86400000" {
		t.Errorf("%s: retention.ms set at creation reads %q", e.name, v)
	}
	if err := a.createTopic(t, topic, 3, nil); err == nil {
		t.Errorf("%s: creating %s twice succeeded", e.name, topic)
	}
	if err := a.deleteTopic(t, topic); err != nil {
		t.Fatalf("%s delete topic: %v", e.name, err)
	}
	waitFor(t, e.name+" metadata after delete", func() (bool, string) {
		md, err := a.metadata(t)
		_, still := md[topic]
		return err == nil && !still, fmt.Sprintf("%v %v", md, err)
	})
	td, err := refAdmin(t, e.addrs).ListTopics(ctxT(t))
	if err != nil || td.Has(topic) {
		t.Errorf("kadm still lists deleted topic %s (%v)", topic, err)
	}
}

func scenarioAdminPartitions(t *testing.T, e *env) {
	a := e.caps.admin
	topic := e.topic("parts")
	if err := a.createTopic(t, topic, 1, nil); err != nil {
		t.Fatalf("%s create topic: %v", e.name, err)
	}
	if err := a.createPartitions(t, topic, 3); err != nil {
		t.Fatalf("%s create partitions: %v", e.name, err)
	}
	waitFor(t, e.name+" metadata after create partitions", func() (bool, string) {
		md, err := a.metadata(t, topic)
		return err == nil && md[topic] == 3, fmt.Sprintf("%v %v", md, err)
	})
	// The new partitions take records.
	recs := expectOffsets(testRecords("parts", 3, 2, 0, false), map[int32]int64{})
	kgoProduce(t, e.addrs, topic, recs)
	verifyRecords(t, "kgo reference consumer", recs, refConsume(t, e.addrs, topic, 3, len(recs)))
}

func scenarioAdminConfigs(t *testing.T, e *env) {
	a := e.caps.admin
	topic := e.topic("cfg")
	if err := a.createTopic(t, topic, 1, nil); err != nil {
		t.Fatalf("%s create topic: %v", e.name, err)
	}
	v, err := a.describeConfig(t, topic, "retention.ms")
	if err != nil {
		t.Fatalf("%s describe configs: %v", e.name, err)
	}
	if v != "604800000" {
		t.Errorf("%s: default retention.ms is %q, want Kafka's 604800000", e.name, v)
	}
	if err := a.alterConfig(t, topic, "retention.ms", "3600000"); err != nil {
		t.Fatalf("%s alter configs: %v", e.name, err)
	}
	if v, err := a.describeConfig(t, topic, "retention.ms"); err != nil || v != "3600000" {
		t.Errorf("%s: retention.ms after alter reads %q (%v), want 3600000", e.name, v, err)
	}
}

func scenarioDeleteRecords(t *testing.T, e *env) {
	a := e.caps.admin
	topic := e.topic("delrec")
	makeTopic(t, e, topic, 1)
	recs := expectOffsets(testRecords("dr", 1, 5, 0, false), map[int32]int64{})
	kgoProduce(t, e.addrs, topic, recs)
	low, err := a.deleteRecords(t, topic, 0, 3)
	if err != nil {
		t.Fatalf("%s delete records: %v", e.name, err)
	}
	if low != 3 {
		t.Errorf("%s delete records: low watermark %d, want 3", e.name, low)
	}
	if got, err := e.cl.listOffset(t, topic, 0, -2); err != nil || got != 3 {
		t.Errorf("%s earliest offset after delete records: %d (%v), want 3", e.name, got, err)
	}
	if e.caps.consumeNoGroup {
		got, err := e.cl.consume(t, topic, 1, 2)
		if err != nil {
			t.Fatalf("%s consume after delete records: %v", e.name, err)
		}
		verifyRecords(t, e.name+" consumer", recs[3:], got)
	}
	verifyRecords(t, "kgo reference consumer", recs[3:], refConsume(t, e.addrs, topic, 1, 2))
}
