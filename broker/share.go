package broker

// The share coordinator's settings and the broker as it sees it. The
// coordinator itself is broker/internal/share; the 76–79 and 90–92 files
// hand it the decoded requests.

import (
	"path"
	"time"

	"github.com/minikafka/minikafka/broker/internal/share"
	"github.com/minikafka/minikafka/logstore"
)

func newShareCoordinator(b *Broker) (*share.Coordinator, error) {
	c, err := share.New(share.Config{
		FS: b.fs, Dir: path.Join(b.cfg.DataDir, "share_state"),
		SyncAlways: b.cfg.Sync.Mode == logstore.SyncAlways,
		SyncEvery:  shareSyncEvery(b.cfg.Sync),
		Logger:     b.log, Now: b.Now,
		MinRecordLockDuration: b.cfg.Groups.ShareMinRecordLockDuration,
	}, shareView{b})
	if err == nil {
		// A deleted topic's share-partitions go with it (a topic
		// created again under the name has a new ID).
		b.OnTopicDeleted(func(_ string, id [16]byte) { c.OnTopicDeleted(id) })
	}
	return c, err
}

// shareView is the broker as the share coordinator sees it (share.Broker).
type shareView struct{ b *Broker }

func (v shareView) TopicID(name string) ([16]byte, bool)     { return v.b.TopicID(name) }
func (v shareView) TopicName(id [16]byte) (string, bool)     { return v.b.TopicName(id) }
func (v shareView) PartitionCount(name string) (int32, bool) { return v.b.PartitionCount(name) }

func (v shareView) Offsets(topic string, p int32) (int64, int64, bool) {
	pp := v.b.partitionOf(topic, p)
	if pp == nil {
		return 0, 0, false
	}
	st := v.b.storeOf(pp)
	return st.logStart(), st.highWatermark(), true
}

func (v shareView) LastStable(topic string, p int32) int64 {
	if pp := v.b.partitionOf(topic, p); pp != nil {
		return v.b.storeOf(pp).lastStable()
	}
	return 0
}

// Leads reports whether node leads the partition (cluster.go); node -1, a
// request no node was asked (embedded, console), is served anywhere. An
// unknown partition is the caller's to report.
func (v shareView) Leads(node int32, topic string, p int32) bool {
	if node < 0 || !v.b.cl.Multi() {
		return true
	}
	pp := v.b.partitionOf(topic, p)
	return pp == nil || pp.place.Load().Leader == node
}

// OtherGroup: a classic or consumer group of that name is alive, or has
// committed offsets.
func (v shareView) OtherGroup(name string) bool {
	if _, ok := v.b.groups.Group(name); ok {
		return true
	}
	return len(v.b.groups.GroupOffsets(name)) > 0
}

// shareView is also the partitions as a ShareFetch reads them
// (share.Records).
func (v shareView) Read(topic string, p int32, offset int64, maxBytes int) ([]byte, *logstore.ReadResult, error) {
	pp := v.b.partitionOf(topic, p)
	if pp == nil {
		return nil, nil, share.ErrNoPartition
	}
	res, err := v.b.storeOf(pp).read(readOptions(offset, maxBytes, true))
	return res.data, res.rr, err
}

func (v shareView) AbortedIn(topic string, p int32, from, to int64) []share.Aborted {
	pp := v.b.partitionOf(topic, p)
	if pp == nil {
		return nil
	}
	var out []share.Aborted
	for _, a := range v.b.txns.abortedIn(pp, from, to) {
		out = append(out, share.Aborted{PID: a.PID, First: a.First, Last: a.Last})
	}
	return out
}

func (v shareView) Changed(topic string, p int32) <-chan struct{} {
	if pp := v.b.partitionOf(topic, p); pp != nil {
		return v.b.storeOf(pp).changed()
	}
	return nil
}

func (shareView) ErrorCode(err error) int16 { return errCode(err) }

// shareSyncEvery is the share state's fsync interval under durability
// interval=D (D, at most every sweep of 200 ms), else 0.
func shareSyncEvery(p logstore.SyncPolicy) time.Duration {
	if p.Mode == logstore.SyncInterval {
		return p.Interval
	}
	return 0
}
