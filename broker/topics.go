package broker

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/minikafka/minikafka/broker/internal/cleanstop"
	"github.com/minikafka/minikafka/broker/internal/producers"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/broker/internal/topics"
	"github.com/minikafka/minikafka/internal/topicname"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// The files of a topic, its on-disk layout and the rules of creating
// one are broker/internal/topics'; the table, partitions and logs are here.

// Internal topics. __consumer_offsets is created, as Kafka creates it, when
// groups are first used (FindCoordinator for a group, or a Metadata or
// CreateTopics naming it), so that clients and tools that look for it —
// regex consumers skip internal topics, admin tools list it — find it with
// IsInternal set. Not creating it at start saves a fresh data directory
// five fsyncs, which every minikafkatest.New pays. Committed offsets are
// kept by groupstore, not in this log, so it stays empty. Clients may not
// produce to internal topics (INVALID_TOPIC_EXCEPTION) nor delete them.
const offsetsTopic = topics.OffsetsTopic

func isInternalTopic(name string) bool { return topics.IsInternal(name) }

// ensureOffsetsTopic creates __consumer_offsets (one partition, compacted,
// as Kafka's) if it does not exist yet.
func (b *Broker) ensureOffsetsTopic() error {
	if b.lookupTopic(offsetsTopic, [16]byte{}) != nil {
		return nil // the usual case, without taking adminMu
	}
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	return b.ensureOffsetsTopicLocked()
}

// ensureOffsetsTopicLocked is ensureOffsetsTopic with adminMu held.
func (b *Broker) ensureOffsetsTopicLocked() error {
	if b.lookupTopic(offsetsTopic, [16]byte{}) != nil {
		return nil
	}
	set := map[string]string{"cleanup.policy": "compact"}
	cfg, err := topicconfig.Parse(set)
	if err != nil {
		return err
	}
	if _, err = b.createTopic(offsetsTopic, 1, cfg.Set, cfg, nil); err == nil {
		b.log.Info("created internal topic", "topic", offsetsTopic)
	}
	return err
}

type topicTable struct {
	byName map[string]*topic
	byID   map[[16]byte]*topic
}

func (tt *topicTable) clone() *topicTable {
	n := &topicTable{byName: make(map[string]*topic, len(tt.byName)+1), byID: make(map[[16]byte]*topic, len(tt.byID)+1)}
	for k, v := range tt.byName {
		n.byName[k] = v
	}
	for k, v := range tt.byID {
		n.byID[k] = v
	}
	return n
}

type topic struct {
	name string
	id   [16]byte
	dir  string
	// parts grows under adminMu (CreatePartitions); readers load it.
	parts atomic.Pointer[[]*partition]
	// cfg is replaced whole by AlterConfigs.
	cfg atomic.Pointer[topicconfig.Config]
}

func (t *topic) partitions() []*partition { return *t.parts.Load() }

func (t *topic) partition(i int32) *partition {
	ps := t.partitions()
	if i < 0 || int(i) >= len(ps) {
		return nil
	}
	return ps[i]
}

type partition struct {
	topic *topic
	index int32
	log   *logstore.Log

	// mu serializes the idempotence check, the append and the update of
	// producer state, so that a sequence is judged against the log it
	// lands in.
	mu        sync.Mutex
	producers producers.State
	// place is where the partition is in the cluster (cluster.go):
	// replaced whole, under adminMu and, when the leader changes, mu.
	place atomic.Pointer[placement]

	// local is the store over log; fwd is set, once, when the partition
	// is forwarded upstream: its records then live in the forwarder's
	// spool, not in log (partition_store.go, uplink_adapter.go).
	local logStore
	fwd   atomic.Pointer[forwarder]
}

func (b *Broker) topicsDir() string { return path.Join(b.cfg.DataDir, "topics") }

// validateTopicName applies Kafka's Topic.validate rules.
func validateTopicName(name string) error { return topicname.Validate(name) }

// uuidString is Kafka's printed form of a UUID: unpadded base64url.
func uuidString(u [16]byte) string { return topics.UUIDString(u) }

// loadTopics opens every persisted topic and its partition logs.
func (b *Broker) loadTopics() error {
	found, err := topics.Scan(b.fs, b.topicsDir(), b.log)
	if err != nil {
		return err
	}
	tt := b.topics.Load().clone()
	var loads []topicLoad
	for _, f := range found {
		t := &topic{name: f.Name, id: f.ID, dir: f.Dir}
		t.cfg.Store(f.Cfg)
		ps := make([]*partition, 0)
		t.parts.Store(&ps)
		tt.byName[t.name] = t
		tt.byID[t.id] = t
		loads = append(loads, topicLoad{t, make([]*partition, f.Partitions), f.Placement})
	}
	b.topics.Store(tt)
	if err := b.openPartitions(loads); err != nil {
		return err
	}
	for _, l := range loads {
		for i, p := range l.parts {
			var saved *placement
			if i < len(l.placed) {
				saved = l.placed[i]
			}
			p.place.Store(topics.Restore(b.cl, b.log, l.t.name, int32(i), saved, func() int64 { return p.store().logEnd() }))
		}
	}
	return nil
}

// topicLoad is a topic whose partitions loadTopics opens.
type topicLoad struct {
	t      *topic
	parts  []*partition
	placed []*placement // from topic.json
}

// openPartitions opens every partition of loads in parallel and installs
// them; if one fails, the ones opened are closed and the first error is
// returned.
func (b *Broker) openPartitions(loads []topicLoad) error {
	type job struct {
		l *topicLoad
		i int32
	}
	var jobs []job
	for li := range loads {
		for i := range loads[li].parts {
			jobs = append(jobs, job{&loads[li], int32(i)})
		}
	}
	if err := topics.Parallel(len(jobs), func(n int) error {
		p, err := b.openPartition(jobs[n].l.t, jobs[n].i)
		jobs[n].l.parts[jobs[n].i] = p // each slot written by one worker
		return err
	}); err != nil {
		for _, l := range loads {
			for _, p := range l.parts {
				if p != nil {
					_ = p.log.Close()
				}
			}
		}
		return err
	}
	for _, l := range loads {
		ps := l.parts
		l.t.parts.Store(&ps)
	}
	return nil
}

func (b *Broker) openPartition(t *topic, i int32) (*partition, error) {
	dir := path.Join(t.dir, strconv.Itoa(int(i)))
	l, rep, err := logstore.Open(logstore.Options{
		FS:     b.fs,
		Dir:    dir,
		Config: t.cfg.Load().Log,
		Sync:   b.cfg.Sync,
		Logger: b.log.With("topic", t.name, "partition", i),
		Now:    b.now,
		Files:  b.files,

		CleanShutdown:    b.cleanStart,
		Listing:          b.cleanListings[cleanstop.Key(b.cfg.DataDir, dir)],
		SmallActiveBytes: cleanstop.SmallActiveBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("broker: opening %s-%d: %w", t.name, i, err)
	}
	_ = rep // logstore logs what recovery dropped
	p := &partition{topic: t, index: i, log: l}
	p.local = logStore{b: b, p: p}
	return p, nil
}

func (b *Broker) writeTopicMeta(t *topic, ps []*partition, configs map[string]string) error {
	places := make([]*placement, len(ps))
	for i, p := range ps {
		places[i] = p.place.Load()
	}
	return topics.WriteMeta(b.fs, t.dir, &topics.Meta{Version: 1, Name: t.name, ID: hex.EncodeToString(t.id[:]),
		Partitions: int32(len(ps)), Configs: configs, Placement: topics.Placements(b.cl.Multi(), places)})
}

// createTopic creates and registers a topic; the caller holds adminMu and
// has validated everything.
//
// replicas is each partition's replica list; nil places them with the
// default replication factor (replicationFactor).
func (b *Broker) createTopic(name string, nparts int32, configs map[string]string, cfg *topicconfig.Config, replicas [][]int32) (*topic, error) {
	if replicas == nil {
		replicas = b.cl.AssignReplicas(name, 0, nparts, b.topicSettings().ReplicationFactor(name))
	}
	b.metadataChanges.Add(1) // DescribeQuorum's high watermark
	id, err := topics.NewID()
	if err != nil {
		return nil, err
	}
	t := &topic{name: name, id: id, dir: topics.Dir(b.topicsDir(), id)}
	t.cfg.Store(cfg)
	if err := b.fs.MkdirAll(t.dir, 0o755); err != nil {
		return nil, fmt.Errorf("broker: creating %s: %w", t.dir, err)
	}
	ps := make([]*partition, 0, nparts)
	fail := func(err error) (*topic, error) {
		for _, p := range ps {
			_ = p.log.Close()
		}
		_ = b.fs.RemoveAll(t.dir)
		return nil, err
	}
	for i := int32(0); i < nparts; i++ {
		p, err := b.openPartition(t, i)
		if err != nil {
			return fail(err)
		}
		p.place.Store(b.cl.NewPlacement(replicas[i]))
		ps = append(ps, p)
	}
	t.parts.Store(&ps)
	// topic.json last: its presence is what makes the topic exist.
	if err := b.writeTopicMeta(t, ps, configs); err != nil {
		return fail(fmt.Errorf("broker: persisting topic %s: %w", name, err))
	}
	if err := b.fs.SyncDir(b.topicsDir()); err != nil {
		return fail(fmt.Errorf("broker: persisting topic %s: %w", name, err))
	}
	tt := b.topics.Load().clone()
	tt.byName[name] = t
	tt.byID[id] = t
	b.topics.Store(tt)
	return t, nil
}

// deleteTopic removes a topic; the caller holds adminMu. An error wrapping
// topics.ErrNotDeleted means the topic may come back at the next start; any
// other is leftover data, swept then.
func (b *Broker) deleteTopic(t *topic) error {
	b.metadataChanges.Add(1) // DescribeQuorum's high watermark
	tt := b.topics.Load().clone()
	delete(tt.byName, t.name)
	delete(tt.byID, t.id)
	b.topics.Store(tt)
	var errs []error
	for _, p := range t.partitions() {
		if err := p.log.Close(); err != nil && !errors.Is(err, logstore.ErrClosed) {
			errs = append(errs, err)
		}
	}
	freed, err := topics.RemoveDir(b.fs, b.topicsDir(), t.dir)
	if freed {
		b.spaceFreed()
	}
	errs = append(errs, err)
	b.topicDeleted(t.name, t.id)
	return errors.Join(errs...)
}

// spaceFreed ends the full-disk wait of every partition: a deleted
// topic's space is theirs to take now, not after their backoff.
func (b *Broker) spaceFreed() {
	for _, t := range b.topics.Load().byName {
		for _, p := range t.partitions() {
			p.log.SpaceFreed()
		}
	}
}

// addPartitions grows t to n partitions; the caller holds adminMu.
// replicas places the new ones (nil: with the topic's replication factor).
func (b *Broker) addPartitions(t *topic, n int32, replicas [][]int32) error {
	b.metadataChanges.Add(1) // DescribeQuorum's high watermark
	old := t.partitions()
	if replicas == nil {
		replicas = b.cl.AssignReplicas(t.name, int32(len(old)), n, len(old[0].place.Load().Replicas))
	}
	ps := append([]*partition(nil), old...)
	for i := int32(len(old)); i < n; i++ {
		p, err := b.openPartition(t, i)
		if err != nil {
			for _, p := range ps[len(old):] {
				_ = p.log.Destroy()
			}
			return err
		}
		p.place.Store(b.cl.NewPlacement(replicas[int(i)-len(old)]))
		ps = append(ps, p)
	}
	if err := b.writeTopicMeta(t, ps, t.cfg.Load().Set); err != nil {
		for _, p := range ps[len(old):] {
			_ = p.log.Destroy()
		}
		return err
	}
	t.parts.Store(&ps)
	return nil
}

// lookupTopic finds a topic by name, or by ID when the name is empty.
func (b *Broker) lookupTopic(name string, id [16]byte) *topic {
	tt := b.topics.Load()
	if name != "" {
		return tt.byName[name]
	}
	return tt.byID[id]
}

func readFile(fsys vfs.FS, name string) ([]byte, error) { return vfs.ReadFile(fsys, name) }
