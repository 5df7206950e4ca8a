package broker

// The transaction coordinator's wiring. The coordinator itself is
// broker/internal/txn; the NN_*.go files for the transactional APIs hand it
// the decoded requests. Here the broker implements what the coordinator
// depends on: partitions (txn.Partition, by *partition), their lookup,
// producer IDs, the group coordinator and the uplink.

import (
	"context"
	"path"
	"time"

	"github.com/minikafka/minikafka/broker/internal/groups"
	"github.com/minikafka/minikafka/broker/internal/txn"
	"github.com/minikafka/minikafka/groupstore"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnCoordinator is the transaction coordinator, with the calls the
// partition path and the uplink make spelled in the broker's own types.
type txnCoordinator struct{ *txn.Coordinator }

// abortedTxn is one aborted transaction of a partition's index.
type abortedTxn = txn.Aborted

// openTxnLog opens the transaction log under the broker's data dir.
func openTxnLog(b *Broker) (*txn.Log, error) {
	return txn.OpenLog(b.fs, path.Join(b.cfg.DataDir, "transactions"), b.cfg.Sync.Mode == logstore.SyncAlways, b.log)
}

// newTxnCoordinator replays the opened transaction log tl against the
// loaded topics. On error the caller still owns tl.
func newTxnCoordinator(b *Broker, tl *txn.Log) (*txnCoordinator, error) {
	cfg := txn.Config{
		Log: tl, Partitions: txnPartitions{b}, ProducerIDs: b.producers, Groups: txnGroups{b},
		Now: b.now, Logger: b.log,
	}
	if b.uplink != nil {
		cfg.Uplink = txnUplink{b}
	}
	c, err := txn.New(cfg)
	if err != nil {
		return nil, err
	}
	return &txnCoordinator{c}, nil
}

func (c *txnCoordinator) close() error { return c.Close() }

func (c *txnCoordinator) lastStable(p *partition, hw int64) int64 { return c.LastStable(p, hw) }

func (c *txnCoordinator) abortedIn(p *partition, from, to int64) []abortedTxn {
	return c.AbortedIn(p, from, to)
}

func (c *txnCoordinator) abortedHolds(p *partition, pid, off int64) bool {
	return c.AbortedHolds(p, pid, off)
}

func (c *txnCoordinator) holdsOpen(p *partition, pid int64) bool { return c.HoldsOpen(p, pid) }

func (c *txnCoordinator) beginProduce(p *partition, h *records.BatchHeader, version int16) (func(), int16, error) {
	return c.BeginProduce(p, h.ProducerID, h.ProducerEpoch, version)
}

func (c *txnCoordinator) offsetPending(group, topic string, part int32) bool {
	return c.OffsetPending(group, topic, part)
}

// txnPartitions is the broker's topics as the coordinator finds
// partitions (txn.Partitions).
type txnPartitions struct{ b *Broker }

func (v txnPartitions) ByID(id [16]byte, index int32) txn.Partition {
	t := v.b.topics.Load().byID[id]
	if t == nil {
		return nil
	}
	if p := t.partition(index); p != nil {
		return p
	}
	return nil
}

func (v txnPartitions) ByName(topic string, index int32) txn.Partition {
	t := v.b.lookupTopic(topic, [16]byte{})
	if t == nil {
		return nil
	}
	if p := t.partition(index); p != nil {
		return p
	}
	return nil
}

func (v txnPartitions) TopicName(id [16]byte) (string, bool) { return v.b.TopicName(id) }
func (v txnPartitions) Internal(topic string) bool           { return isInternalTopic(topic) }

// The partition as the transaction coordinator sees it (txn.Partition).
// Handlers' stores: storeOf opens a forwarded partition's spool on first
// use; CurrentLogStart does not.

func (p *partition) TopicID() [16]byte      { return p.topic.id }
func (p *partition) Topic() string          { return p.topic.name }
func (p *partition) Index() int32           { return p.index }
func (p *partition) LogStart() int64        { return p.local.b.storeOf(p).logStart() }
func (p *partition) LogEnd() int64          { return p.local.b.storeOf(p).logEnd() }
func (p *partition) CurrentLogStart() int64 { return p.store().logStart() }
func (p *partition) Forwarded() bool        { return p.local.b.forwardOf(p) != nil }

func (p *partition) EachBatchHeader(from int64, fn func(*records.BatchHeader) bool) error {
	return p.local.b.storeOf(p).eachBatchHeader(from, fn)
}

func (p *partition) WaitDurable(ctx context.Context, end int64) error {
	return p.local.b.storeOf(p).waitDurable(ctx, end)
}

func (p *partition) KeepsAborted(a txn.Aborted) bool { return p.local.b.storeOf(p).keepsAborted(a) }

// AppendMarker appends a control batch under p.mu, judged against and
// updating p's producer state as a produced batch is (txn.Partition).
func (p *partition) AppendMarker(batch []byte, pid int64, epoch int16, coordinatorEpoch int32, check func(txn.MarkerProducer) error, written func(marker int64)) (int64, error) {
	b := p.local.b
	now := b.now()
	st := b.storeOf(p) // before p.mu: opening a spool takes it
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.producers.Loaded() {
		p.loadProducerState(b.log, now)
	}
	ps := p.producers.Get(pid)
	if check != nil {
		mp := txn.MarkerProducer{CoordinatorEpoch: -1}
		if ps != nil {
			mp = txn.MarkerProducer{Known: true, Epoch: ps.Epoch, CoordinatorEpoch: ps.CoordinatorEpoch()}
		}
		if err := check(mp); err != nil {
			return 0, err
		}
	}
	// A marker carries the leader epoch it is appended in, as batches do
	// (00_produce.go): a consumer takes its epoch from the last batch.
	records.SetPartitionLeaderEpoch(batch, p.place.Load().Epoch)
	res, err := st.appendMarker(batch)
	if err != nil {
		return 0, err
	}
	// A WriteTxnMarkers marker (checked) creates the state of a producer
	// the partition had not seen (producers.State.Marker).
	p.producers.Marker(pid, epoch, coordinatorEpoch, check != nil, now)
	written(res.BaseOffset)
	return res.LastOffset + 1, nil
}

// txnGroups is the group coordinator as the transaction coordinator sees
// it (txn.Groups).
type txnGroups struct{ b *Broker }

func (v txnGroups) ValidateTxnCommit(r *kmsg.TxnOffsetCommitRequest, version int16) int16 {
	return v.b.groups.ValidateTxnCommit(r, version)
}

func (v txnGroups) CommitTopic(byID bool, name string, id [16]byte) txn.CommitTopic {
	return txnCommitTopic{v.b.groups.CommitTopic(byID, name, id)}
}

func (v txnGroups) CommitTransactionalOffsets(group string, commits []groupstore.Commit) error {
	return v.b.groups.CommitTransactionalOffsets(group, commits)
}

type txnCommitTopic struct{ ct groups.CommitTopic }

func (t txnCommitTopic) Name() string { return t.ct.Name }
func (t txnCommitTopic) PartitionError(code int16, partition int32, metadata *string) int16 {
	return t.ct.PartitionError(code, partition, metadata)
}

// txnUplink tells the uplink which forwarded partitions a committing
// transaction holds data in (txn.Uplink).
type txnUplink struct{ b *Broker }

func (v txnUplink) NoteCommit(pid int64, at time.Time, forwarded []txn.Partition) {
	ps := make([]*partition, len(forwarded))
	for i, p := range forwarded {
		ps[i] = p.(*partition)
	}
	v.b.uplink.txs.noteCommit(txnKey{pid, at.UnixMilli()}, ps)
}
