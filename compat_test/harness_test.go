package compat_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// installHint is what a test says when a client is missing: the one command
// that installs every non-Go client (CI runs it from scripts/test).
const installHint = "run: bash compat_test/install.sh"

// rec is one record as the scenarios see it, and the JSON the client scripts
// read and print. Nil K/V mean a null key/value.
type rec struct {
	P  int32   `json:"p"`
	K  *string `json:"k"`
	V  *string `json:"v"`
	H  []hdr   `json:"h"`
	TS int64   `json:"ts"` // ms; on the produce side <0 means "the client cannot set it"
	O  int64   `json:"o"`  // offset; on the produce side <0 means "the client cannot tell"
}

type hdr struct {
	K string `json:"k"`
	V string `json:"v"`
}

func sp(s string) *string { return &s }

func (r rec) String() string {
	s := func(p *string) string {
		if p == nil {
			return "<null>"
		}
		return fmt.Sprintf("%q", *p)
	}
	return fmt.Sprintf("p%d@%d k=%s v=%s h=%v ts=%d", r.P, r.O, s(r.K), s(r.V), r.H, r.TS)
}

type produceOpts struct {
	Codec      string `json:"codec"` // none gzip snappy lz4 zstd
	Idempotent bool   `json:"idempotent"`
}

// client is what every scenario needs from a client under test.
type client interface {
	// produce sends recs in order, each to its partition, and returns them
	// with O set to the offset the client was told (or -1).
	produce(t *testing.T, topic string, recs []rec, o produceOpts) ([]rec, error)
	// consume reads partitions [0,parts) from their earliest offset until
	// want records have arrived.
	consume(t *testing.T, topic string, parts int32, want int) ([]rec, error)
	// listOffset asks for a partition's offset by spec: -2 earliest, -1
	// latest, >=0 the first offset whose timestamp is >= spec.
	listOffset(t *testing.T, topic string, part int32, spec int64) (int64, error)
}

// admin is the admin API a client offers; a method answers errNotOffered
// when the client library has no such operation.
type admin interface {
	createTopic(t *testing.T, topic string, parts int32, configs map[string]string) error
	deleteTopic(t *testing.T, topic string) error
	// metadata returns the partition count of each listed topic that exists.
	metadata(t *testing.T, topics ...string) (map[string]int32, error)
	createPartitions(t *testing.T, topic string, total int32) error
	describeConfig(t *testing.T, topic, key string) (string, error)
	alterConfig(t *testing.T, topic, key, value string) error
	// deleteRecords deletes below offset before and returns the new low watermark.
	deleteRecords(t *testing.T, topic string, part int32, before int64) (int64, error)
	listGroups(t *testing.T) ([]string, error)
	// describeGroup returns the group's state (e.g. "Empty", "Stable").
	describeGroup(t *testing.T, group string) (string, error)
}

var errNotOffered = errors.New("the client library does not offer this operation")

// caps says what a client supports beyond the basics; scenarios a client does
// not support are not run, and show as "—" in the matrix.
type caps struct {
	codecs         []string
	timestamps     bool // can set a record's timestamp
	idempotent     bool // offers the idempotent producer
	nonIdempotent  bool // offers a plain (non-idempotent) producer
	consumeNoGroup bool // can consume without joining a group
	groups         bool // consumes as a group member (groupConsumer)
	// consumerProtocol: offers KIP-848 consumer groups, group.protocol=consumer
	// (consumerProtocolClient).
	consumerProtocol bool
	txn              bool // transactional producer (txnProducer)
	autoCreate       bool // topic creation by producing is the client's way
	reportsOffsets   bool // producer reports each record's offset
	admin            admin
	adminOps         []string // of topics, partitions, configs, delete-records, groups
	// timeAfterAllIsEnd: the client answers a by-timestamp lookup past the
	// last record with the end offset (Kafka's wire answer is -1; kafkajs
	// rewrites it).
	timeAfterAllIsEnd bool
	version           string
}

var allCodecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// lookPath fails the test, naming the install command, when a tool is missing.
func lookPath(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Fatalf("%s is not installed (%v); %s", tool, err, installHint)
	}
	return p
}

// testRecords builds perPart records for each of parts partitions, covering
// keys, null keys, null values, headers (none, one with an empty value, two)
// and explicit timestamps one second apart starting at base.
func testRecords(tag string, parts int32, perPart int, base int64, withTS bool) []rec {
	var out []rec
	for i := 0; i < perPart; i++ {
		for p := int32(0); p < parts; p++ {
			n := i*int(parts) + int(p)
			r := rec{P: p, O: int64(i), TS: -1}
			if n%4 != 3 {
				r.K = sp(fmt.Sprintf("key-%s-%d", tag, n))
			}
			if n%5 != 4 {
				r.V = sp(fmt.Sprintf("value-%s-%d-%s", tag, n, strings.Repeat("x", n%7*10)))
			}
			switch n % 3 {
			case 0:
				r.H = []hdr{{"h1", "a"}, {"h2", fmt.Sprintf("b-%d", n)}}
			case 2:
				r.H = []hdr{{"only", ""}}
			}
			if withTS {
				r.TS = base + int64(i)*1000
			}
			out = append(out, r)
		}
	}
	return out
}

// verifyRecords checks got (what a consumer read) against want (what was
// produced, with the offsets the producer was told): same count, same order
// per partition, same keys, values, headers, timestamps and offsets.
func verifyRecords(t *testing.T, who string, want, got []rec) {
	t.Helper()
	byPart := func(rs []rec) map[int32][]rec {
		m := map[int32][]rec{}
		for _, r := range rs {
			m[r.P] = append(m[r.P], r)
		}
		return m
	}
	if len(got) != len(want) {
		t.Errorf("%s: got %d records, want %d", who, len(got), len(want))
	}
	w, g := byPart(want), byPart(got)
	var parts []int32
	for p := range w {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	bad := 0
	for _, p := range parts {
		wp, gp := w[p], g[p]
		if len(wp) != len(gp) {
			t.Errorf("%s: partition %d: got %d records, want %d", who, p, len(gp), len(wp))
		}
		for i := 0; i < len(wp) && i < len(gp); i++ {
			if d := diffRec(wp[i], gp[i]); d != "" && bad < 10 {
				bad++
				t.Errorf("%s: partition %d record %d: %s\n  want %v\n  got  %v", who, p, i, d, wp[i], gp[i])
			}
		}
	}
	for p := range g {
		if _, ok := w[p]; !ok {
			t.Errorf("%s: %d records on partition %d that nobody produced to", who, len(g[p]), p)
		}
	}
}

func diffRec(w, g rec) string {
	var d []string
	eq := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	if !eq(w.K, g.K) {
		d = append(d, "key")
	}
	if !eq(w.V, g.V) {
		d = append(d, "value")
	}
	if len(w.H) != len(g.H) {
		d = append(d, "headers")
	} else {
		for i := range w.H {
			if w.H[i] != g.H[i] {
				d = append(d, "headers")
				break
			}
		}
	}
	if w.TS >= 0 && w.TS != g.TS {
		d = append(d, "timestamp")
	}
	if w.TS < 0 && g.TS <= 0 {
		d = append(d, "timestamp (none set by broker or client)")
	}
	if w.O >= 0 && w.O != g.O {
		d = append(d, "offset")
	}
	return strings.Join(d, ", ")
}

// expectOffsets sets each record's expected offset to its index within its
// partition, starting at start[p]: the producer's acknowledged offsets must
// match it, and so must the consumer's.
func expectOffsets(recs []rec, start map[int32]int64) []rec {
	out := append([]rec(nil), recs...)
	next := map[int32]int64{}
	for p, s := range start {
		next[p] = s
	}
	for i := range out {
		out[i].O = next[out[i].P]
		next[out[i].P]++
	}
	return out
}

// checkProduced compares the offsets a producer reported with the expected ones.
func checkProduced(t *testing.T, who string, want, acked []rec, reports bool) {
	t.Helper()
	if len(acked) != len(want) {
		t.Fatalf("%s: producer returned %d records, sent %d", who, len(acked), len(want))
	}
	if !reports {
		return
	}
	for i := range want {
		if acked[i].P != want[i].P || acked[i].O != want[i].O {
			t.Errorf("%s: record %d acknowledged at p%d@%d, want p%d@%d", who, i, acked[i].P, acked[i].O, want[i].P, want[i].O)
		}
	}
}

// refConsume reads a topic with kgo, the reference client, so every other
// client's produce is checked by a second reader.
func refConsume(t *testing.T, addrs []string, topic string, parts int32, want int) []rec {
	t.Helper()
	offs := map[string]map[int32]kgo.Offset{topic: {}}
	for p := int32(0); p < parts; p++ {
		offs[topic][p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumePartitions(offs))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []rec
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Errorf("kgo reference consumer: got %d of %d records before timeout", len(out), want)
			break
		}
		for _, e := range fs.Errors() {
			t.Errorf("kgo reference consumer: %v", e.Err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, fromKgo(r)) })
	}
	return out
}

func fromKgo(r *kgo.Record) rec {
	out := rec{P: r.Partition, O: r.Offset, TS: r.Timestamp.UnixMilli()}
	if r.Key != nil {
		out.K = sp(string(r.Key))
	}
	if r.Value != nil {
		out.V = sp(string(r.Value))
	}
	for _, h := range r.Headers {
		out.H = append(out.H, hdr{h.Key, string(h.Value)})
	}
	return out
}
