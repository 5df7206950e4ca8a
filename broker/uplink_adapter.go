package broker

// The broker's side of the uplink (package broker/uplink, which forwards
// chosen topics to an upstream cluster; see its doc.go).
//
// The uplink sees the broker through uplink.Env (storage, durability,
// logging, the cluster ID, the group coordinator's offsets) and
// uplink.Partition, which fwdPartition implements below: a forwarded
// partition's names and partition count, the transaction coordinator's
// state of it, and its idempotent-producer state, which the uplink saves
// beside the spool. The broker sees the uplink through uplinkLink: start,
// close, the forwarded partitions' stores (forwarder, a partitionStore
// over uplink.Forwarder), their state for forward-status, DescribeConfigs,
// the console and /metrics, and the commits the transaction coordinator
// announces (txn.go calls b.uplink.txs.noteCommit).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/configs"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// uplinkLink is the broker's handle on its uplink.
type uplinkLink struct {
	u *uplink.Uplink
	// txs takes the transaction coordinator's commits (noteCommit).
	txs uplinkTxns
}

// startUplink creates the uplink and opens a forwarder for every existing
// partition of a forwarded topic, so spooled records left by the previous
// run resume shipping once the broker starts it.
func startUplink(b *Broker, cfg uplink.Config) (*uplinkLink, error) {
	u, err := uplink.New(cfg, uplink.Env{
		FS:            b.fs,
		DataDir:       b.cfg.DataDir,
		Log:           b.log,
		Sync:          b.cfg.Sync.Mode,
		ClusterID:     b.clusterID,
		MaxBatchBytes: maxDecompressedBatch,
		Groups:        b.groups,
	})
	if err != nil {
		return nil, err
	}
	l := &uplinkLink{u: u, txs: uplinkTxns{b: b, u: u}}
	for _, t := range b.topics.Load().byName {
		if l.rule(t) == nil {
			continue
		}
		for _, p := range t.partitions() {
			if _, err := l.open(b, p); err != nil {
				u.Close()
				return nil, err
			}
		}
	}
	b.OnTopicDeleted(u.TopicDeleted)
	return l, nil
}

// start lets the forwarders ship.
func (l *uplinkLink) start() { l.u.Start() }

// close stops the forwarders and closes their spools.
func (l *uplinkLink) close() error { return l.u.Close() }

// rule returns the rule forwarding t, or nil; internal topics are never
// forwarded.
func (l *uplinkLink) rule(t *topic) *uplink.ForwardRule {
	if isInternalTopic(t.name) {
		return nil
	}
	return l.u.Rule(t.name)
}

// open returns p's store when p is forwarded, opening its forwarder (which
// makes itself p's store through fwdPartition.UseSpool) on first use; nil
// when p's topic is not forwarded.
func (l *uplinkLink) open(b *Broker, p *partition) (*forwarder, error) {
	if l.rule(p.topic) == nil {
		return nil, nil
	}
	if _, err := l.u.Open(fwdPartition{b, p}); err != nil {
		return nil, err
	}
	return p.fwd.Load(), nil
}

// forwardOf returns p's forwarder, or nil when p is not forwarded (or its
// spool cannot be opened: logged, and the partition then uses its log).
func (b *Broker) forwardOf(p *partition) *forwarder {
	if f := p.fwd.Load(); f != nil {
		return f
	}
	if b.uplink == nil {
		return nil
	}
	f, err := b.uplink.open(b, p)
	if err != nil {
		b.log.Error("forwarding", "topic", p.topic.name, "partition", p.index, "err", err)
		return nil
	}
	return f
}

// ForwardStats returns the state of every forwarded partition, sorted by
// topic and partition; nil when no uplink is configured.
func (b *Broker) ForwardStats() []uplink.ForwardStat {
	if b.uplink == nil {
		return nil
	}
	return b.uplink.u.Stats()
}

// ForwardGroupOffsets is the last group offset sync pass: one row per
// group and forwarded partition it committed; nil when the sync is off or
// has not run yet.
func (b *Broker) ForwardGroupOffsets() []uplink.GroupOffsetSync {
	if b.uplink == nil {
		return nil
	}
	return b.uplink.u.GroupOffsets()
}

// throttleAbove is the spool pressure from which produce responses ask
// clients to slow down.
const throttleAbove = 0.9

// produceThrottle is the throttle_time_ms for a produce request: while a
// forwarded partition it writes to is at least 90 % full, scaled from 0 at
// 90 % to 1 s at 100 %, so clients slow down before produce starts failing.
func (b *Broker) produceThrottle(r *kmsg.ProduceRequest) int32 {
	if b.uplink == nil {
		return 0
	}
	worst := 0.0
	for ti := range r.Topics {
		t := b.lookupTopic(r.Topics[ti].Topic, r.Topics[ti].TopicID)
		if t == nil {
			continue
		}
		for pi := range r.Topics[ti].Partitions {
			if p := t.partition(r.Topics[ti].Partitions[pi].Partition); p != nil {
				worst = max(worst, p.store().pressure())
			}
		}
	}
	if worst < throttleAbove {
		return 0
	}
	return int32(100 + 900*(worst-throttleAbove)/(1-throttleAbove))
}

// forwarder is a forwarded partition's store: its uplink.Forwarder, which
// holds the spool, seen through partitionStore. Transactions stay the
// coordinator's, as for a log.
type forwarder struct {
	f *uplink.Forwarder
	b *Broker
	p *partition
}

func (s *forwarder) logStart() int64      { return s.f.LogStart() }
func (s *forwarder) logEnd() int64        { return s.f.LogEnd() }
func (s *forwarder) highWatermark() int64 { return s.f.HighWatermark() }
func (s *forwarder) pressure() float64    { return s.f.Pressure() }

func (s *forwarder) changed() <-chan struct{} { return s.f.Changed() }

// lastStable: only what is below it is shipped, too.
func (s *forwarder) lastStable() int64 { return s.b.txns.lastStable(s.p, s.f.HighWatermark()) }

func (s *forwarder) beginTxn(h records.BatchHeader, version int16) (func(), int16, error) {
	return s.b.txns.beginProduce(s.p, &h, version)
}

// decodesBatches: the forwarder decodes small batches to merge them, and
// any batch the upstream calls corrupt; one that does not decode then is
// dropped, so it must be refused before it is acknowledged.
func (s *forwarder) decodesBatches() bool { return true }

// keepsAborted: a spool is never compacted, so every entry above its head
// is needed, by the shipper as by read_committed fetches.
func (s *forwarder) keepsAborted(abortedTxn) bool { return true }

// append stamps the batch with the append time when the topic asks for
// LogAppendTime; a full spool is an error errCode maps to the retriable
// KAFKA_STORAGE_ERROR.
func (s *forwarder) append(batch []byte, count int, now time.Time) (logstore.AppendResult, error) {
	ts := int64(-1)
	if s.p.topic.cfg.Load().LogAppendTimestamps {
		ts = now.UnixMilli()
	}
	return s.f.Append(batch, count, ts)
}

func (s *forwarder) appendMarker(batch []byte) (logstore.AppendResult, error) {
	return s.f.AppendMarker(batch)
}

func (s *forwarder) waitDurable(ctx context.Context, end int64) error {
	return s.f.WaitDurable(ctx, end)
}

func (s *forwarder) read(o logstore.ReadOptions) (storeRead, error) {
	data, hw, start, err := s.f.Read(o)
	return storeRead{data: data, highWatermark: hw, logStart: start}, err
}

func (s *forwarder) listOffset(target int64) (offset, ts int64, found bool, err error) {
	return s.f.ListOffset(target)
}

func (s *forwarder) eachBatchHeader(from int64, fn func(*records.BatchHeader) bool) error {
	return s.f.EachBatchHeader(from, fn)
}

// cleanState: a spool is shipped, not compacted; the cleaner never finds
// it due.
func (s *forwarder) cleanState(time.Time, time.Duration, int64) logstore.CleanState {
	return logstore.CleanState{}
}

func (s *forwarder) compact(logstore.CompactOptions) (logstore.CompactResult, error) {
	return logstore.CompactResult{}, errors.New("broker: a forwarded partition's spool is not compacted")
}

// fwdPartition is a partition as the uplink sees it (uplink.Partition).
type fwdPartition struct {
	b *Broker
	p *partition
}

func (fp fwdPartition) Topic() string          { return fp.p.topic.name }
func (fp fwdPartition) TopicID() [16]byte      { return fp.p.topic.id }
func (fp fwdPartition) Index() int32           { return fp.p.index }
func (fp fwdPartition) TopicPartitions() int32 { return int32(len(fp.p.topic.partitions())) }
func (fp fwdPartition) LogEnd() int64          { return fp.p.log.LogEndOffset() }

func (fp fwdPartition) LastStable(hw int64) int64 { return fp.b.txns.lastStable(fp.p, hw) }

func (fp fwdPartition) AbortedHolds(pid, offset int64) bool {
	return fp.b.txns.abortedHolds(fp.p, pid, offset)
}

func (fp fwdPartition) HoldsOpen(pid int64) bool { return fp.b.txns.holdsOpen(fp.p, pid) }

// UseSpool makes f p's store, loads the saved producer state, then
// rebuilds the rest from the spool's tail, all under p.mu so no batch is
// judged against a partial state. Called under the uplink's mutex.
func (fp fwdPartition) UseSpool(f *uplink.Forwarder, producers []byte) (uint64, error) {
	p := fp.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fwd.Store(&forwarder{f: f, b: fp.b, p: p})
	var err error
	if producers != nil {
		err = p.producers.Restore(producers)
	}
	gen := p.producers.Gen()
	p.loadProducerState(fp.b.log, fp.b.now())
	return gen, err
}

func (fp fwdPartition) Producers(gen uint64, known bool) ([]byte, uint64) {
	p := fp.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if known && p.producers.Gen() == gen {
		return nil, gen
	}
	return p.producers.Snapshot(), p.producers.Gen()
}

// txnKey names a committed transaction: its producer ID and the timestamp
// of its markers (txn.go).
type txnKey struct {
	pid   int64
	stamp int64
}

// uplinkTxns hands the transaction coordinator's commits to the uplink.
type uplinkTxns struct {
	b *Broker
	u *uplink.Uplink
}

// noteCommit tells the uplink which forwarded partitions hold data of a
// transaction about to be committed, before any of its markers is written.
func (t uplinkTxns) noteCommit(k txnKey, parts []*partition) {
	ps := make([]uplink.Partition, len(parts))
	for i, p := range parts {
		ps[i] = fwdPartition{t.b, p}
	}
	t.u.NoteCommit(k.pid, k.stamp, ps)
}

// Forwarding state shown by DescribeConfigs on a forwarded topic, as
// read-only entries (kafka-configs --describe and UIs list them):
//
//	minikafka.forward.upstream.topic  the upstream topic name
//	minikafka.forward.lag             records not yet acknowledged upstream (all partitions)
//	minikafka.forward.spool.bytes     spool bytes in use (all partitions)
//	minikafka.forward.pressure        highest partition spool pressure, 0..1
//	minikafka.forward.forwarded       records acknowledged upstream since start
//	minikafka.forward.last.error      last upstream error of any partition, "" when none
//
// and, only when asked for by name (they are long):
//
//	minikafka.forward.partitions      JSON array of uplink.ForwardStat, by partition
//	minikafka.forward.group.offsets   JSON array of uplink.GroupOffsetSync of the topic
//	                                  (last group offset sync pass; [] when none)
func (b *Broker) describeForwarding(t *topic, names []string, r *kmsg.DescribeConfigsRequest) []kmsg.DescribeConfigsResponseResourceConfig {
	if b.uplink == nil || b.uplink.rule(t) == nil {
		return nil
	}
	var lag, bytes, fwd int64
	var pressure float64
	var upstream, lastErr string
	var stats []uplink.ForwardStat
	for _, p := range t.partitions() {
		f := b.forwardOf(p)
		if f == nil {
			continue
		}
		s := f.f.Stat()
		stats = append(stats, s)
		upstream = s.UpstreamTopic
		lag += s.Lag
		bytes += s.SpoolBytes
		fwd += s.Forwarded
		pressure = max(pressure, s.Pressure)
		if s.LastError != "" {
			lastErr = fmt.Sprintf("partition %d: %s", s.Partition, s.LastError)
		}
	}
	want := configs.Wanted(names)
	entries := [][2]string{
		{"minikafka.forward.upstream.topic", upstream},
		{"minikafka.forward.lag", strconv.FormatInt(lag, 10)},
		{"minikafka.forward.spool.bytes", strconv.FormatInt(bytes, 10)},
		{"minikafka.forward.pressure", strconv.FormatFloat(pressure, 'f', 4, 64)},
		{"minikafka.forward.forwarded", strconv.FormatInt(fwd, 10)},
		{"minikafka.forward.last.error", lastErr},
	}
	if slices.Contains(names, forwardPartitionsConfig) {
		js, err := json.Marshal(stats)
		if err != nil {
			js = []byte("[]")
		}
		entries = append(entries, [2]string{forwardPartitionsConfig, string(js)})
	}
	if slices.Contains(names, forwardGroupOffsetsConfig) {
		rows := []uplink.GroupOffsetSync{}
		for _, g := range b.ForwardGroupOffsets() {
			if g.Topic == t.name {
				rows = append(rows, g)
			}
		}
		js, err := json.Marshal(rows)
		if err != nil {
			js = []byte("[]")
		}
		entries = append(entries, [2]string{forwardGroupOffsetsConfig, string(js)})
	}
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, kv := range entries {
		if !want(kv[0]) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = kv[0], kmsg.StringPtr(kv[1])
		c.ReadOnly = true
		// Set by the broker's -forward flag at start: static, read-only.
		c.Source = kmsg.ConfigSource(topicconfig.SrcStaticBroker)
		c.ConfigType = kmsg.ConfigType(topicconfig.TypeString)
		if r.IncludeDocumentation {
			c.Documentation = kmsg.StringPtr("minikafka forwarding state (read-only)")
		}
		out = append(out, c)
	}
	return out
}

// forwardPartitionsConfig names the per-partition forwarding state entry.
const forwardPartitionsConfig = "minikafka.forward.partitions"

// forwardGroupOffsetsConfig names the group offset sync state entry.
const forwardGroupOffsetsConfig = "minikafka.forward.group.offsets"
