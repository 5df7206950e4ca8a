package uplink

// The uplink: its configuration, its forwarders and their life (doc.go).

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/topicname"
	"github.com/minikafka/minikafka/spool"
)

// Config configures forwarding to an upstream cluster.
type Config struct {
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
	// sync.group.offsets.interval.seconds); see groups.go.
	SyncGroupOffsets         bool
	SyncGroupOffsetsInterval time.Duration
	// CheckpointsAlias, when set, makes each sync pass (every
	// SyncGroupOffsetsInterval, with or without SyncGroupOffsets) write
	// MirrorMaker 2 checkpoints of those offsets to the upstream topic
	// <CheckpointsAlias>.checkpoints.internal (checkpoints.go).
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
			if err := topicname.Validate(r.Prefix); err != nil {
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

// Uplink is the broker's forwarding state: the upstream client, a
// Forwarder per forwarded partition, the transaction shipper and the group
// offset sync.
type Uplink struct {
	env    Env
	log    *slog.Logger
	cfg    Config
	client *kgo.Client
	ctx    context.Context
	cancel context.CancelFunc

	// matches caches the rule (or nil) per topic name.
	matches sync.Map // string → *ForwardRule (nil: not forwarded)

	// ready is closed by Start, once the broker is up: forwarders ship
	// only then (what they may ship depends on the transaction
	// coordinator, which starts after the spools are open).
	ready     chan struct{}
	startOnce sync.Once

	mu     sync.Mutex // guards parts and closed; taken under nothing else
	parts  map[partKey]*Forwarder
	closed bool
	wg     sync.WaitGroup

	// groupSync is the last group offset sync pass (groups.go).
	groupSyncMu sync.Mutex
	groupSync   []GroupOffsetSync
	// checkpoints is the last MM2 checkpoint written per group partition,
	// and checkpointsTopicReady whether its topic exists upstream (both
	// the sync loop's own, checkpoints.go).
	checkpoints           map[checkpointKey]checkpointed
	checkpointsTopicReady bool

	// txs ships committed transactions (txn.go).
	txs *txnShipper
}

func (c *Config) clientOpts() ([]kgo.Opt, error) {
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
		// The forwarders send raw produce requests (ship.go);
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

// ClientOpts returns the kgo options the uplink uses for its upstream
// client (benchmarks compare against a client built the same way).
func ClientOpts(c Config) ([]kgo.Opt, error) { return c.clientOpts() }

// New validates cfg and creates the upstream client. The broker then opens
// a forwarder (Open) for every existing partition of a forwarded topic, so
// spooled records left by the previous run resume shipping once Start is
// called.
func New(cfg Config, env Env) (*Uplink, error) {
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
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	opts, err := cfg.clientOpts()
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("uplink: %w", err)
	}
	u := &Uplink{env: env, log: env.Log, cfg: cfg, client: cl, parts: map[partKey]*Forwarder{}, ready: make(chan struct{}),
		checkpoints: map[checkpointKey]checkpointed{}}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	u.txs = newTxnShipper(u)
	u.wg.Add(1)
	go u.txs.run()
	if cfg.Cipher != nil {
		u.log.Info("spool encrypted at rest", "cipher", "AES-256-GCM", "key_id", cfg.EncryptionKeyID)
	}
	if (cfg.SyncGroupOffsets || cfg.CheckpointsAlias != "") && env.Groups != nil {
		if u.cfg.SyncGroupOffsetsInterval <= 0 {
			u.cfg.SyncGroupOffsetsInterval = time.Minute
		}
		u.wg.Add(1)
		go u.groupSyncLoop()
	}
	return u, nil
}

// Start lets the forwarders ship.
func (u *Uplink) Start() { u.startOnce.Do(func() { close(u.ready) }) }

// Rule returns the rule forwarding the topic named name, or nil. The
// broker asks only about topics it may forward (not its internal ones).
func (u *Uplink) Rule(name string) *ForwardRule {
	if v, ok := u.matches.Load(name); ok {
		return v.(*ForwardRule)
	}
	var r *ForwardRule
	for i := range u.cfg.Forward {
		if u.cfg.Forward[i].Match(name) {
			r = &u.cfg.Forward[i]
			break
		}
	}
	u.matches.Store(name, r)
	return r
}

// Open returns p's forwarder, opening its spool, making it p's store
// (Partition.UseSpool) and starting it on first use; nil (and no error)
// when p's topic is not forwarded.
func (u *Uplink) Open(p Partition) (*Forwarder, error) {
	r := u.Rule(p.Topic())
	if r == nil {
		return nil, nil
	}
	key := keyOf(p)
	u.mu.Lock()
	defer u.mu.Unlock()
	if f := u.parts[key]; f != nil {
		return f, nil
	}
	if u.closed {
		return nil, errors.New("uplink closed")
	}
	name := p.Topic()
	dir := path.Join(u.env.DataDir, "spool", fmt.Sprintf("%x", key.topicID), strconv.Itoa(int(key.index)))
	sp, rep, err := spool.Open(spool.Options{
		FS:               u.env.FS,
		Dir:              dir,
		MaxBytes:         u.cfg.SpoolMaxBytes,
		BatchBytes:       1 << 20,
		MaxBufferedBytes: 4 << 20,
		FlushInterval:    50 * time.Millisecond,
		MaxRecordBytes:   u.env.MaxBatchBytes,
		Cipher:           u.cfg.Cipher,
		// Batches their producer compressed are not compressed again.
		Precompressed: func(batch []byte) bool {
			h, err := records.ParseHeader(batch)
			return err == nil && h.Compression() != records.CodecNone
		},
		// A topic that becomes forwarded continues its offsets.
		StartSeq: p.LogEnd(),
		Logger:   u.log.With("spool", name, "partition", key.index),
	})
	if err != nil {
		return nil, fmt.Errorf("uplink: opening spool of %s-%d: %w", name, key.index, err)
	}
	if len(rep.Corrupt) > 0 {
		u.log.Error("spool segments set aside as corrupt", "topic", name, "partition", key.index, "segments", len(rep.Corrupt))
	}
	f := newForwarder(u, p, sp, r.Prefix+name)
	f.journal = producerJournalPath(dir)
	f.syncsPath = offsetSyncsPath(dir)
	f.loadSyncs()
	if j := f.loadInFlight(); j != nil {
		f.resume(j)
	}
	u.parts[key] = f
	// The spool becomes p's store, and producer state is rebuilt from its
	// tail before any batch can be judged against it.
	f.producersPath = producersPath(dir)
	f.useSpool()
	u.wg.Add(1)
	go f.run()
	return f, nil
}

// TopicDeleted stops the topic's forwarders and removes their spools.
func (u *Uplink) TopicDeleted(name string, id [16]byte) {
	u.mu.Lock()
	var victims []*Forwarder
	for k, f := range u.parts {
		if k.topicID == id {
			victims = append(victims, f)
			delete(u.parts, k)
		}
	}
	u.mu.Unlock()
	u.txs.forgetTopic(id)
	for _, f := range victims {
		f.stop()
		if err := f.sp.Destroy(); err != nil {
			u.log.Warn("removing spool of deleted topic", "topic", name, "err", err)
		}
		for _, file := range []string{f.journal, f.syncsPath, f.producersPath} {
			if err := removeJournal(u.env.FS, file); err != nil {
				u.log.Warn("removing forwarding state of deleted topic", "topic", name, "file", file, "err", err)
			}
		}
	}
}

// Close stops every forwarder, commits what the upstream acknowledged and
// closes the spools.
func (u *Uplink) Close() error {
	u.mu.Lock()
	u.closed = true
	parts := u.parts
	u.parts = map[partKey]*Forwarder{}
	u.mu.Unlock()
	// Forwarders stop taking work at once; requests in flight get
	// stopGrace to be answered (see Forwarder.stop) before they are
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
			errs = append(errs, fmt.Errorf("closing spool of %s-%d: %w", f.topic, f.index, err))
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
	// which ships committed transactions (txn.go);
	// TransactionalProducerID its producer ID (-1 before it has one) and
	// TransactionRounds the upstream transactions it committed since
	// start. The same for every partition of the uplink.
	TransactionalID         string `json:"transactional_id"`
	TransactionalProducerID int64  `json:"transactional_producer_id"`
	TransactionRounds       int64  `json:"transaction_rounds"`
}

// Stats returns the state of every forwarded partition, sorted by topic
// and partition.
func (u *Uplink) Stats() []ForwardStat {
	fs := u.forwarders()
	out := make([]ForwardStat, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.Stat())
	}
	sortStats(out)
	return out
}
