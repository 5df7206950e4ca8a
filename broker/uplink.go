package broker

// The uplink: store-and-forward of chosen topics to an upstream Kafka
// cluster (see doc.go, "Forwarding").
//
// A partition of a topic matching a ForwardRule keeps its records in a
// spool (DataDir/spool/<topic-id-hex>/<partition>) instead of its partition
// log; spool sequence numbers are the partition's Kafka offsets. A
// forwarder goroutine per partition (forward.go) ships the spooled batches
// upstream with one shared kgo client and acknowledges them in the spool
// as the upstream confirms them, which moves the partition's log start
// offset.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/spool"
)

// UplinkConfig configures forwarding to an upstream cluster.
type UplinkConfig struct {
	// Brokers are the upstream seed brokers (host:port).
	Brokers []string
	// TLS, when non-nil, is used for every upstream connection.
	TLS *tls.Config
	// SASLMechanism is "", "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512"
	// (case-insensitive), with SASLUser and SASLPassword.
	SASLMechanism, SASLUser, SASLPassword string
	// Forward lists the topics to forward; the first matching rule wins.
	Forward []ForwardRule
	// SpoolMaxBytes bounds each partition's spool (default 1 GiB). At 90 %
	// produce responses carry throttle_time_ms; when full, produce fails
	// with the retriable KAFKA_STORAGE_ERROR.
	SpoolMaxBytes int64
	// SyncGroupOffsets commits local groups' offsets on forwarded topics,
	// translated, to the same groups upstream every
	// SyncGroupOffsetsInterval (default 60 s, MM2's
	// sync.group.offsets.interval.seconds); see uplink_groups.go.
	SyncGroupOffsets         bool
	SyncGroupOffsetsInterval time.Duration
	// CheckpointsAlias, when set, makes each sync pass (every
	// SyncGroupOffsetsInterval, with or without SyncGroupOffsets) write
	// MirrorMaker 2 checkpoints of those offsets to the upstream topic
	// <CheckpointsAlias>.checkpoints.internal (uplink_checkpoints.go).
	CheckpointsAlias string
	// Cipher, when non-nil, encrypts spool segments (spool.AESGCM, or a
	// spool.KeyRing during a key rotation); EncryptionKeyID names its
	// current key (spool.KeyID) for forward-status and /metrics.
	Cipher          spool.Cipher
	EncryptionKeyID string
	// ClientOpts are appended to the upstream kgo client's options
	// (tests, tuning).
	ClientOpts []kgo.Opt
}

// ForwardRule selects topics by name. Pattern is a glob (path.Match
// syntax: * ? [a-z]) unless written /regexp/ (anchored: the whole name
// must match). Prefix is prepended to the topic name upstream.
type ForwardRule struct {
	Pattern string
	Prefix  string

	re   *regexp.Regexp
	glob string
}

// ParseForwardRule parses the --forward syntax PATTERN[=PREFIX]: a glob
// such as "edge-*", or a regexp between slashes such as "/^logs\.(a|b)$/",
// optionally followed by "=prefix" naming upstream topics prefix+name.
// Topic names cannot contain '=', so the last '=' splits.
func ParseForwardRule(s string) (ForwardRule, error) {
	r := ForwardRule{Pattern: s}
	if i := strings.LastIndexByte(s, '='); i >= 0 {
		r.Pattern, r.Prefix = s[:i], s[i+1:]
		if r.Prefix != "" {
			if err := validateTopicName(r.Prefix); err != nil {
				return ForwardRule{}, fmt.Errorf("forward %q: prefix: %v", s, err)
			}
		}
	}
	if err := r.compile(); err != nil {
		return ForwardRule{}, fmt.Errorf("forward %q: %v", s, err)
	}
	return r, nil
}

func (r *ForwardRule) compile() error {
	p := r.Pattern
	if p == "" {
		return errors.New("empty pattern")
	}
	if len(p) >= 2 && p[0] == '/' && p[len(p)-1] == '/' {
		re, err := regexp.Compile(`^(?:` + p[1:len(p)-1] + `)$`)
		if err != nil {
			return err
		}
		r.re = re
		return nil
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("bad glob: %v", err)
	}
	r.glob = p
	return nil
}

// Match reports whether topic name matches the rule.
func (r *ForwardRule) Match(name string) bool {
	if r.re != nil {
		return r.re.MatchString(name)
	}
	ok, _ := path.Match(r.glob, name)
	return ok
}

// uplink is the broker's forwarding state.
type uplink struct {
	b      *Broker
	cfg    UplinkConfig
	client *kgo.Client
	ctx    context.Context
	cancel context.CancelFunc

	// matches caches the rule (or nil) per topic; topics never change name.
	matches sync.Map // *topic → *ForwardRule (nil: not forwarded)

	// ready is closed by start, once the broker is up: forwarders ship
	// only then (what they may ship depends on the transaction
	// coordinator, which starts after the spools are open).
	ready     chan struct{}
	startOnce sync.Once

	mu     sync.Mutex // guards parts and closed; taken under nothing else
	parts  map[*partition]*forwarder
	closed bool
	wg     sync.WaitGroup

	// groupSync is the last group offset sync pass (uplink_groups.go).
	groupSyncMu sync.Mutex
	groupSync   []GroupOffsetSync
	// checkpoints is the last MM2 checkpoint written per group partition,
	// and checkpointsTopicReady whether its topic exists upstream (both
	// the sync loop's own, uplink_checkpoints.go).
	checkpoints           map[checkpointKey]checkpointed
	checkpointsTopicReady bool

	// txs ships committed transactions (uplink_txn.go).
	txs *txnShipper
}

func (c *UplinkConfig) clientOpts() ([]kgo.Opt, error) {
	if len(c.Brokers) == 0 {
		return nil, errors.New("uplink: no upstream brokers")
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		// The upstream may be down for hours: never give up on a
		// record (the spool holds it anyway) nor on a topic the
		// forwarder is creating.
		kgo.UnknownTopicRetries(-1),
		kgo.RecordRetries(1 << 30),
		// The forwarders send raw produce requests (uplink_ship.go);
		// these shape a kgo producer built from the same options
		// (the benchmark's, for a like-for-like comparison).
		kgo.MaxBufferedRecords(1 << 30),
		kgo.ProducerBatchMaxBytes(1 << 20),
	}
	if c.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(c.TLS))
	}
	switch strings.ToUpper(c.SASLMechanism) {
	case "":
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: c.SASLUser, Pass: c.SASLPassword}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.SASLUser, Pass: c.SASLPassword}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.SASLUser, Pass: c.SASLPassword}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("uplink: unknown SASL mechanism %q", c.SASLMechanism)
	}
	return append(opts, c.ClientOpts...), nil
}

// UpstreamClientOpts returns the kgo options the uplink uses for its
// upstream client (benchmarks compare against a client built the same way).
func UpstreamClientOpts(c UplinkConfig) ([]kgo.Opt, error) { return c.clientOpts() }

// startUplink validates cfg, creates the upstream client and opens a
// forwarder for every existing partition of a forwarded topic, so spooled
// records left by the previous run resume shipping at once.
func startUplink(b *Broker, cfg UplinkConfig) (*uplink, error) {
	for i := range cfg.Forward {
		if err := cfg.Forward[i].compile(); err != nil {
			return nil, fmt.Errorf("uplink: forward %q: %v", cfg.Forward[i].Pattern, err)
		}
	}
	if cfg.SpoolMaxBytes <= 0 {
		cfg.SpoolMaxBytes = 1 << 30
	}
	if cfg.CheckpointsAlias != "" {
		if err := ValidateCheckpointsAlias(cfg.CheckpointsAlias); err != nil {
			return nil, fmt.Errorf("uplink: %w", err)
		}
	}
	opts, err := cfg.clientOpts()
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("uplink: %w", err)
	}
	u := &uplink{b: b, cfg: cfg, client: cl, parts: map[*partition]*forwarder{}, ready: make(chan struct{}),
		checkpoints: map[checkpointKey]checkpointed{}}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	u.txs = newTxnShipper(u)
	u.wg.Add(1)
	go u.txs.run()
	if cfg.Cipher != nil {
		b.log.Info("spool encrypted at rest", "cipher", "AES-256-GCM", "key_id", cfg.EncryptionKeyID)
	}
	for _, t := range b.topics.Load().byName {
		if u.rule(t) == nil {
			continue
		}
		for _, p := range t.partitions() {
			if _, err := u.forwarderFor(p); err != nil {
				u.close()
				return nil, err
			}
		}
	}
	b.OnTopicDeleted(u.topicDeleted)
	if cfg.SyncGroupOffsets || cfg.CheckpointsAlias != "" {
		if u.cfg.SyncGroupOffsetsInterval <= 0 {
			u.cfg.SyncGroupOffsetsInterval = time.Minute
		}
		u.wg.Add(1)
		go u.groupSyncLoop()
	}
	return u, nil
}

// start lets the forwarders ship.
func (u *uplink) start() { u.startOnce.Do(func() { close(u.ready) }) }

// rule returns the rule forwarding t, or nil.
func (u *uplink) rule(t *topic) *ForwardRule {
	if v, ok := u.matches.Load(t); ok {
		return v.(*ForwardRule)
	}
	var r *ForwardRule
	if !isInternalTopic(t.name) {
		for i := range u.cfg.Forward {
			if u.cfg.Forward[i].Match(t.name) {
				r = &u.cfg.Forward[i]
				break
			}
		}
	}
	u.matches.Store(t, r)
	return r
}

// forwarderFor returns p's forwarder, opening its spool and starting it on
// first use; nil (and no error) when p's topic is not forwarded.
func (u *uplink) forwarderFor(p *partition) (*forwarder, error) {
	if f := p.fwd.Load(); f != nil {
		return f, nil
	}
	r := u.rule(p.topic)
	if r == nil {
		return nil, nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if f := u.parts[p]; f != nil {
		return f, nil
	}
	if u.closed {
		return nil, errors.New("uplink closed")
	}
	dir := path.Join(u.b.cfg.DataDir, "spool", fmt.Sprintf("%x", p.topic.id), strconv.Itoa(int(p.index)))
	sp, rep, err := spool.Open(spool.Options{
		FS:               u.b.fs,
		Dir:              dir,
		MaxBytes:         u.cfg.SpoolMaxBytes,
		BatchBytes:       1 << 20,
		MaxBufferedBytes: 4 << 20,
		FlushInterval:    50 * time.Millisecond,
		MaxRecordBytes:   maxDecompressedBatch,
		Cipher:           u.cfg.Cipher,
		// Batches their producer compressed are not compressed again.
		Precompressed: func(batch []byte) bool {
			h, err := records.ParseHeader(batch)
			return err == nil && h.Compression() != records.CodecNone
		},
		// A topic that becomes forwarded continues its offsets.
		StartSeq: p.log.LogEndOffset(),
		Logger:   u.b.log.With("spool", p.topic.name, "partition", p.index),
	})
	if err != nil {
		return nil, fmt.Errorf("uplink: opening spool of %s-%d: %w", p.topic.name, p.index, err)
	}
	if len(rep.Corrupt) > 0 {
		u.b.log.Error("spool segments set aside as corrupt", "topic", p.topic.name, "partition", p.index, "segments", len(rep.Corrupt))
	}
	f := newForwarder(u, p, sp, r.Prefix+p.topic.name)
	f.journal = producerJournalPath(dir)
	f.syncsPath = offsetSyncsPath(dir)
	f.loadSyncs()
	if j := f.loadInFlight(); j != nil {
		f.resume(j)
	}
	u.parts[p] = f
	// The spool becomes p's store, and producer state is rebuilt from its
	// tail before any batch can be judged against it.
	f.producersPath = producersPath(dir)
	p.mu.Lock()
	p.fwd.Store(f)
	f.loadProducers()
	p.loadProducerState(u.b.log, u.b.now())
	p.mu.Unlock()
	u.wg.Add(1)
	go f.run()
	return f, nil
}

// topicDeleted stops the topic's forwarders and removes their spools.
func (u *uplink) topicDeleted(name string, id [16]byte) {
	u.mu.Lock()
	var victims []*forwarder
	for p, f := range u.parts {
		if p.topic.id == id {
			victims = append(victims, f)
			delete(u.parts, p)
		}
	}
	u.mu.Unlock()
	u.txs.forgetTopic(id)
	for _, f := range victims {
		f.stop()
		if err := f.sp.Destroy(); err != nil {
			u.b.log.Warn("removing spool of deleted topic", "topic", name, "err", err)
		}
		for _, file := range []string{f.journal, f.syncsPath, f.producersPath} {
			if err := removeJournal(u.b.fs, file); err != nil {
				u.b.log.Warn("removing forwarding state of deleted topic", "topic", name, "file", file, "err", err)
			}
		}
	}
}

// close stops every forwarder, commits what the upstream acknowledged and
// closes the spools.
func (u *uplink) close() error {
	u.mu.Lock()
	u.closed = true
	parts := u.parts
	u.parts = map[*partition]*forwarder{}
	u.mu.Unlock()
	// Forwarders stop taking work at once; requests in flight get
	// stopGrace to be answered (see forwarder.stop) before they are
	// canceled.
	for _, f := range parts {
		f.signalStop()
	}
	t := time.AfterFunc(stopGrace, u.cancel)
	for _, f := range parts {
		<-f.done
	}
	t.Stop()
	u.cancel()
	u.wg.Wait()
	u.client.Close() // fails records still buffered; they stay spooled
	var errs []error
	for _, f := range parts {
		f.commit()
		if err := f.sp.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing spool of %s-%d: %w", f.p.topic.name, f.p.index, err))
		}
	}
	return errors.Join(errs...)
}

// ForwardStat describes one forwarded partition. The JSON names are those
// of the minikafka.forward.partitions config entry (forward-status).
type ForwardStat struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	UpstreamTopic string `json:"upstream_topic"`
	// LogStartOffset is the partition's local log start: the spool's
	// first record not yet deleted as acknowledged (it trails
	// UpstreamAcked by at most a commit). LogEndOffset is the next offset
	// to be assigned, HighWatermark what local consumers can read.
	LogStartOffset int64 `json:"log_start_offset"`
	LogEndOffset   int64 `json:"log_end_offset"`
	HighWatermark  int64 `json:"high_watermark"`
	// UpstreamAcked is the first offset the upstream has not acknowledged;
	// Lag = LogEndOffset - UpstreamAcked, records still to ship.
	UpstreamAcked int64 `json:"upstream_acked"`
	Lag           int64 `json:"lag"`
	// Forwarded counts records (ForwardedBytes their batch bytes)
	// acknowledged upstream since start; Errors failed upstream attempts.
	Forwarded      int64 `json:"forwarded"`
	ForwardedBytes int64 `json:"forwarded_bytes"`
	Errors         int64 `json:"errors"`
	// SpoolBytes is what the spool uses against SpoolMaxBytes; Pressure
	// their ratio in [0, 1].
	SpoolBytes    int64   `json:"spool_bytes"`
	SpoolMaxBytes int64   `json:"spool_max_bytes"`
	Pressure      float64 `json:"pressure"`
	// State is starting (upstream topic not yet ensured), idle, shipping,
	// retrying (backing off after a failure) or stopped.
	State string `json:"state"`
	// LastError is the last upstream error, "" after a success.
	LastError string `json:"last_error"`
	// Encryption is the spool's encryption at rest, "" when off, else
	// "AES-256-GCM"; KeyID names the key new segments are sealed with.
	Encryption string `json:"encryption,omitempty"`
	KeyID      string `json:"key_id,omitempty"`
	// ProducerID and ProducerEpoch are the forwarder's idempotent producer
	// upstream (-1 before it has one), kept across restarts;
	// ProducerResets counts the new producer IDs it had to take since
	// start because the upstream had expired the old one (records in
	// flight then may be duplicated upstream).
	ProducerID     int64 `json:"producer_id"`
	ProducerEpoch  int16 `json:"producer_epoch"`
	ProducerResets int64 `json:"producer_resets"`
	// TransactionalID is the uplink's transactional producer upstream,
	// which ships committed transactions (uplink_txn.go);
	// TransactionalProducerID its producer ID (-1 before it has one) and
	// TransactionRounds the upstream transactions it committed since
	// start. The same for every partition of the uplink.
	TransactionalID         string `json:"transactional_id"`
	TransactionalProducerID int64  `json:"transactional_producer_id"`
	TransactionRounds       int64  `json:"transaction_rounds"`
}

// ForwardStats returns the state of every forwarded partition, sorted by
// topic and partition; nil when no uplink is configured.
func (b *Broker) ForwardStats() []ForwardStat {
	u := b.uplink
	if u == nil {
		return nil
	}
	u.mu.Lock()
	fs := make([]*forwarder, 0, len(u.parts))
	for _, f := range u.parts {
		fs = append(fs, f)
	}
	u.mu.Unlock()
	out := make([]ForwardStat, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.stat())
	}
	sortStats(out)
	return out
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
//	minikafka.forward.partitions      JSON array of ForwardStat, by partition
//	minikafka.forward.group.offsets   JSON array of GroupOffsetSync of the topic
//	                                  (last group offset sync pass; [] when none)
func (b *Broker) describeForwarding(t *topic, names []string, r *kmsg.DescribeConfigsRequest) []kmsg.DescribeConfigsResponseResourceConfig {
	if b.uplink == nil || b.uplink.rule(t) == nil {
		return nil
	}
	var lag, bytes, fwd int64
	var pressure float64
	var upstream, lastErr string
	var stats []ForwardStat
	for _, p := range t.partitions() {
		f := b.forwardOf(p)
		if f == nil {
			continue
		}
		s := f.stat()
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
	want := wanted(names)
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
		rows := []GroupOffsetSync{}
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
		c.Name, c.Value = kv[0], strPtr(kv[1])
		c.ReadOnly = true
		// Set by the broker's -forward flag at start: static, read-only.
		c.Source = kmsg.ConfigSource(srcStaticBroker)
		c.ConfigType = kmsg.ConfigType(cfgTypeString)
		if r.IncludeDocumentation {
			c.Documentation = strPtr("minikafka forwarding state (read-only)")
		}
		out = append(out, c)
	}
	return out
}

// forwardPartitionsConfig names the per-partition forwarding state entry.
const forwardPartitionsConfig = "minikafka.forward.partitions"

// forwardGroupOffsetsConfig names the group offset sync state entry.
const forwardGroupOffsetsConfig = "minikafka.forward.group.offsets"
