package broker

// The share coordinator's settings and the broker as it sees it. The
// coordinator itself is broker/internal/share; the 76–79 and 90–92 files
// hand it the decoded requests.

import (
	"encoding/binary"
	"path"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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
	t := v.b.lookupTopic(topic, [16]byte{})
	if t == nil {
		return 0, 0, false
	}
	pp := t.partition(p)
	if pp == nil {
		return 0, 0, false
	}
	st := v.b.storeOf(pp)
	return st.logStart(), st.highWatermark(), true
}

func (v shareView) LastStable(topic string, p int32) int64 {
	t := v.b.lookupTopic(topic, [16]byte{})
	if t == nil {
		return 0
	}
	pp := t.partition(p)
	if pp == nil {
		return 0
	}
	return v.b.storeOf(pp).lastStable()
}

// Leads reports whether node leads the partition (cluster.go); node -1, a
// request no node was asked (embedded, console), is served anywhere.
func (v shareView) Leads(node int32, topic string, p int32) bool {
	if node < 0 || !v.b.cl.Multi() {
		return true
	}
	t := v.b.lookupTopic(topic, [16]byte{})
	if t == nil {
		return true // the caller reports the unknown partition
	}
	pp := t.partition(p)
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

// readShareRecords reads the batches holding offsets first..last of a
// partition. It reads on past a byte limit until last is covered, since a
// share consumer counts an acquired offset missing from the bytes as a
// gap (and acknowledges it so). It returns the bytes and the offset after
// the last one they cover. With pooled non-nil the bytes are read into
// pooled buffers, each added to *pooled for the response to give back
// (shareFetchBody.Release); with nil they are a buffer of their own.
func (b *Broker) readShareRecords(p *partition, first, last int64, pooled *[]*[]byte) ([]byte, int64, error) {
	st := b.storeOf(p)
	var out []byte
	next := first
	// Read about what the acquired records need: a first small read,
	// then the rest at the bytes per record it showed (reading a fixed
	// large chunk costs a copy of much that is cut away).
	want := 64 << 10
	for next <= last {
		res, err := st.read(readOptions(next, want, true))
		if err != nil {
			return out, next, err
		}
		start := len(out)
		switch {
		case len(res.data) > 0:
			out = append(out, res.data...)
		case res.rr != nil && res.rr.Size > 0:
			out, err = readRanges(out, res.rr, pooled)
			res.rr.Release()
			if err != nil {
				return out[:start], next, err
			}
		case res.rr != nil:
			res.rr.Release()
		}
		data := batchesThrough(out[start:], last)
		out = out[:start+len(data)]
		end := batchesEnd(data)
		if end <= next {
			break
		}
		if end <= last {
			perRec := len(out)/int(end-first) + 1
			want = min(perRec*int(last-end+1)+perRec*16, 64<<20)
		}
		next = end
	}
	return out, next, nil
}

// readRanges appends rr's bytes to dst: into a pooled buffer when pooled
// is non-nil and dst lacks the room (dst's bytes move there), else as
// logstore's AppendTo grows it.
func readRanges(dst []byte, rr *logstore.ReadResult, pooled *[]*[]byte) ([]byte, error) {
	if need := len(dst) + int(rr.Size); pooled != nil && cap(dst) < need {
		bp := getShareBuf(need)
		*pooled = append(*pooled, bp)
		dst = append(*bp, dst...)
	}
	return rr.AppendTo(dst)
}

// batchesEnd is the offset after the last whole v2 batch in data.
func batchesEnd(data []byte) int64 {
	end := int64(-1)
	for len(data) >= 27 {
		n := int(binary.BigEndian.Uint32(data[8:12])) + 12
		if n > len(data) || n < 27 {
			break
		}
		end = int64(binary.BigEndian.Uint64(data[0:8])) + int64(int32(binary.BigEndian.Uint32(data[23:27]))) + 1
		data = data[n:]
	}
	return end
}

// shareGroupOffsetCommit answers an OffsetCommit to a share group's ID:
// GROUP_ID_NOT_FOUND on every partition, as Kafka.
func shareGroupOffsetCommit(r *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.GroupIDNotFound.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// batchesThrough cuts data after the last whole batch that starts at or
// before offset last: what follows was not acquired.
func batchesThrough(data []byte, last int64) []byte {
	pos := 0
	for len(data)-pos >= 27 {
		n := int(binary.BigEndian.Uint32(data[pos+8:pos+12])) + 12
		if n > len(data)-pos || n < 27 || int64(binary.BigEndian.Uint64(data[pos:pos+8])) > last {
			break
		}
		pos += n
	}
	return data[:pos]
}

// shareSyncEvery is the share state's fsync interval under durability
// interval=D (D, at most every sweep of 200 ms), else 0.
func shareSyncEvery(p logstore.SyncPolicy) time.Duration {
	if p.Mode == logstore.SyncInterval {
		return p.Interval
	}
	return 0
}
