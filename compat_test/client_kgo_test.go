package compat_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() {
	clients = append(clients, clientCase{"kgo", newKgoClient})
}

// modVersion is a Go module's version as go.mod requires it (test binaries
// carry no dependency build info).
func modVersion(path string) string {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	return "?"
}

type kgoClient struct{ addrs []string }

func newKgoClient(t *testing.T, addrs []string) (client, caps) {
	c := &kgoClient{addrs}
	return c, caps{
		codecs: allCodecs, timestamps: true, idempotent: true, nonIdempotent: true,
		consumeNoGroup: true, reportsOffsets: true, groups: true, txn: true, consumerProtocol: true,
		admin: &kadmAdmin{addrs}, adminOps: []string{"topics", "partitions", "configs", "delete-records", "groups"},
		version: modVersion("github.com/twmb/franz-go"),
	}
}

func kgoCodec(name string) kgo.CompressionCodec {
	switch name {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}

func (c *kgoClient) produce(t *testing.T, topic string, recs []rec, o produceOpts) ([]rec, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(c.addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgoCodec(o.Codec))}
	if !o.Idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var krs []*kgo.Record
	for _, r := range recs {
		krs = append(krs, toKgo(topic, r))
	}
	// One ProduceSync of all records, so records share batches (compression
	// then covers many records per batch).
	res := cl.ProduceSync(ctxT(t), krs...)
	if err := res.FirstErr(); err != nil {
		return nil, err
	}
	// Results come in completion order, not input order.
	idx := map[*kgo.Record]int{}
	for i, kr := range krs {
		idx[kr] = i
	}
	out := make([]rec, len(recs))
	for _, r := range res {
		i := idx[r.Record]
		out[i] = recs[i]
		out[i].P, out[i].O = r.Record.Partition, r.Record.Offset
	}
	return out, nil
}

func (c *kgoClient) consume(t *testing.T, topic string, parts int32, want int) ([]rec, error) {
	return refConsume(t, c.addrs, topic, parts, want), nil
}

func (c *kgoClient) listOffset(t *testing.T, topic string, part int32, spec int64) (int64, error) {
	adm := refAdmin(t, c.addrs)
	var l kadm.ListedOffsets
	var err error
	switch spec {
	case -2:
		l, err = adm.ListStartOffsets(ctxT(t), topic)
	case -1:
		l, err = adm.ListEndOffsets(ctxT(t), topic)
	default:
		l, err = adm.ListOffsetsAfterMilli(ctxT(t), spec, topic)
	}
	if err != nil {
		return 0, err
	}
	o, ok := l.Lookup(topic, part)
	if !ok {
		return 0, fmt.Errorf("no answer for %s/%d", topic, part)
	}
	if o.Err != nil {
		return 0, o.Err
	}
	// kadm answers "after every record" with the end offset; Kafka's wire
	// answer is -1, which kadm rewrites. Return what the wire said.
	if spec >= 0 && o.Timestamp == -1 {
		return -1, nil
	}
	return o.Offset, nil
}

type kadmAdmin struct{ addrs []string }

func (a *kadmAdmin) adm(t *testing.T) *kadm.Client { return refAdmin(t, a.addrs) }

func (a *kadmAdmin) createTopic(t *testing.T, topic string, parts int32, configs map[string]string) error {
	cfg := map[string]*string{}
	for k, v := range configs {
		cfg[k] = sp(v)
	}
	r, err := a.adm(t).CreateTopic(ctxT(t), parts, 1, cfg, topic)
	if err != nil {
		return err
	}
	return r.Err
}

func (a *kadmAdmin) deleteTopic(t *testing.T, topic string) error {
	r, err := a.adm(t).DeleteTopic(ctxT(t), topic)
	if err != nil {
		return err
	}
	return r.Err
}

func (a *kadmAdmin) metadata(t *testing.T, topics ...string) (map[string]int32, error) {
	td, err := a.adm(t).ListTopics(ctxT(t), topics...)
	if err != nil {
		return nil, err
	}
	out := map[string]int32{}
	for _, d := range td {
		if d.Err == nil {
			out[d.Topic] = int32(len(d.Partitions))
		}
	}
	return out, nil
}

func (a *kadmAdmin) createPartitions(t *testing.T, topic string, total int32) error {
	r, err := a.adm(t).UpdatePartitions(ctxT(t), int(total), topic)
	if err != nil {
		return err
	}
	return r.Error()
}

func (a *kadmAdmin) describeConfig(t *testing.T, topic, key string) (string, error) {
	rc, err := a.adm(t).DescribeTopicConfigs(ctxT(t), topic)
	if err != nil {
		return "", err
	}
	r, err := rc.On(topic, nil)
	if err != nil {
		return "", err
	}
	if r.Err != nil {
		return "", r.Err
	}
	for _, c := range r.Configs {
		if c.Key == key {
			return c.MaybeValue(), nil
		}
	}
	return "", fmt.Errorf("config %s not described", key)
}

func (a *kadmAdmin) alterConfig(t *testing.T, topic, key, value string) error {
	r, err := a.adm(t).AlterTopicConfigs(ctxT(t), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: key, Value: sp(value)}}, topic)
	if err != nil {
		return err
	}
	for _, x := range r {
		if x.Err != nil {
			return x.Err
		}
	}
	return nil
}

func (a *kadmAdmin) deleteRecords(t *testing.T, topic string, part int32, before int64) (int64, error) {
	o := kadm.Offsets{}
	o.AddOffset(topic, part, before, -1)
	r, err := a.adm(t).DeleteRecords(ctxT(t), o)
	if err != nil {
		return 0, err
	}
	x, ok := r.Lookup(topic, part)
	if !ok {
		return 0, fmt.Errorf("no answer")
	}
	return x.LowWatermark, x.Err
}

func (a *kadmAdmin) listGroups(t *testing.T) ([]string, error) {
	l, err := a.adm(t).ListGroups(ctxT(t))
	if err != nil {
		return nil, err
	}
	return l.Groups(), nil
}

func (a *kadmAdmin) describeGroup(t *testing.T, group string) (string, error) {
	d, err := a.adm(t).DescribeGroups(ctxT(t), group)
	if err != nil {
		return "", err
	}
	g, ok := d[group]
	if !ok {
		return "", fmt.Errorf("group %s not described", group)
	}
	return g.State, g.Err
}
