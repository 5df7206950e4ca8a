package share

// Reading a ShareFetch's records: the batches holding the acquired
// offsets, cut to the request's MaxBytes, with the records of aborted
// transactions archived under read_committed. The log reads happen
// outside the coordinator's mutex, between Acquire and Response.

import (
	"encoding/binary"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/logstore"
)

// ErrNoPartition is what Records.Read returns for a topic or partition the
// broker does not have.
var ErrNoPartition = errors.New("share: unknown topic or partition")

// Aborted is an aborted transaction of a partition: its producer, its
// first offset and the offset of its abort marker.
type Aborted struct {
	PID         int64
	First, Last int64
}

// Records is the broker's partitions as a ShareFetch reads them.
type Records interface {
	// Read returns whole batches from the one holding offset on, about
	// maxBytes of them and at least one, below the high watermark:
	// bytes already copied (a spool) or file ranges pinned until the
	// caller releases them (a log). ErrNoPartition for an unknown one.
	Read(topic string, partition int32, offset int64, maxBytes int) ([]byte, *logstore.ReadResult, error)
	// AbortedIn lists the partition's aborted transactions that may
	// hold offsets in [from, to).
	AbortedIn(topic string, partition int32, from, to int64) []Aborted
	// Changed is closed on the partition's next append; nil for an
	// unknown partition.
	Changed(topic string, partition int32) <-chan struct{}
	// ErrorCode is the Kafka error code of a failed read.
	ErrorCode(err error) int16
}

// ReadRecords reads the batches holding offsets first..last of a
// partition. It reads on past a byte limit until last is covered, since a
// share consumer counts an acquired offset missing from the bytes as a
// gap (and acknowledges it so). It returns the bytes and the offset after
// the last one they cover. With pooled non-nil the bytes are read into
// pooled buffers, each added to *pooled for the response to give back
// (FetchBody.Release); with nil they are a buffer of their own.
func ReadRecords(rs Records, topic string, partition int32, first, last int64, pooled *[]*[]byte) ([]byte, int64, error) {
	var out []byte
	next := first
	// Read about what the acquired records need: a first small read,
	// then the rest at the bytes per record it showed (reading a fixed
	// large chunk costs a copy of much that is cut away).
	want := 64 << 10
	for next <= last {
		data, rr, err := rs.Read(topic, partition, next, want)
		if err != nil {
			return out, next, err
		}
		start := len(out)
		switch {
		case len(data) > 0:
			out = append(out, data...)
		case rr != nil && rr.Size > 0:
			out, err = readRanges(out, rr, pooled)
			rr.Release()
			if err != nil {
				return out[:start], next, err
			}
		case rr != nil:
			rr.Release()
		}
		got := batchesThrough(out[start:], last)
		out = out[:start+len(got)]
		end := BatchesEnd(got)
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
		bp := getBuf(need)
		*pooled = append(*pooled, bp)
		dst = append(*bp, dst...)
	}
	return rr.AppendTo(dst)
}

// BatchesEnd is the offset after the last whole v2 batch in data.
func BatchesEnd(data []byte) int64 {
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

// Changed appends to dst what may make records acquirable: appends to the
// fetch's partitions and releases in the coordinator.
func (f *Fetch) Changed(rs Records, dst []<-chan struct{}) []<-chan struct{} {
	dst = append(dst, f.c.Changed())
	for _, t := range f.Targets {
		if ch := rs.Changed(t.Topic, t.Partition); ch != nil {
			dst = append(dst, ch)
		}
	}
	return dst
}

// Read acquires and reads; true if any record was acquired. The
// response's record bytes stay within the request's MaxBytes except for
// its first batch (Kafka's log read returns at least one); records past
// what fits are given back unacquired. pooled is as for ReadRecords.
func (f *Fetch) Read(rs Records, pooled *[]*[]byte) bool {
	got := false
	for _, a := range f.Acquire() {
		data, next, err := ReadRecords(rs, a.Target.Topic, a.Target.Partition, a.First, a.Last, pooled)
		if err == ErrNoPartition && len(data) == 0 {
			f.GiveBack(a, a.First)
			a.Out.ErrorCode = kerr.UnknownTopicOrPartition.Code
			continue
		}
		if fit := batchesWithin(data, f.BytesLeft, !f.Sent); len(fit) < len(data) {
			data = fit
			next = a.First
			if len(fit) > 0 {
				next = BatchesEnd(fit)
			}
		}
		if next <= a.Last {
			f.GiveBack(a, next)
		}
		if err != nil && len(data) == 0 {
			a.Out.ErrorCode = rs.ErrorCode(err)
			f.c.cfg.Logger.Warn("share fetch read failed", "topic", a.Target.Topic, "partition", a.Target.Partition, "err", err)
			continue
		}
		if len(data) == 0 {
			continue
		}
		if f.ReadCommitted {
			if ab := abortedRanges(rs, a.Target, data); len(ab) > 0 {
				f.Archive(a, ab)
			}
		}
		f.BytesLeft -= len(data)
		f.Sent = true
		if a.Out.Records == nil {
			a.Out.Records = data
		} else {
			a.Out.Records = append(a.Out.Records, data...)
		}
		got = got || len(a.Out.AcquiredRecords) > 0
	}
	return got
}

// batchesWithin cuts data after the last whole batch that ends within n
// bytes, keeping the first batch anyway when minOne.
func batchesWithin(data []byte, n int, minOne bool) []byte {
	if len(data) <= n {
		return data
	}
	pos := 0
	for len(data)-pos >= 27 {
		sz := int(binary.BigEndian.Uint32(data[pos+8:pos+12])) + 12
		if sz > len(data)-pos || sz < 27 || (pos+sz > n && !(pos == 0 && minOne)) {
			break
		}
		pos += sz
	}
	return data[:pos]
}

// abortedRanges lists the offsets of data's batches that belong to
// aborted transactions: a transactional data batch whose producer
// aborted a transaction that began at or before it and whose abort
// marker follows it. A share consumer cannot drop them itself (the
// response names no aborted transactions), so under read_committed the
// share-partition archives them, as Kafka does.
func abortedRanges(rs Records, t *Target, data []byte) [][2]int64 {
	if len(data) < 27 {
		return nil
	}
	aborted := rs.AbortedIn(t.Topic, t.Partition, int64(binary.BigEndian.Uint64(data[0:8])), BatchesEnd(data))
	if len(aborted) == 0 {
		return nil
	}
	var out [][2]int64
	for len(data) >= 61 {
		sz := int(binary.BigEndian.Uint32(data[8:12])) + 12
		if sz > len(data) || sz < 61 {
			break
		}
		base := int64(binary.BigEndian.Uint64(data[0:8]))
		last := base + int64(int32(binary.BigEndian.Uint32(data[23:27])))
		attrs := binary.BigEndian.Uint16(data[21:23])
		pid := int64(binary.BigEndian.Uint64(data[43:51]))
		if attrs&0x10 != 0 && attrs&0x20 == 0 { // transactional, not control
			for _, a := range aborted {
				if a.PID == pid && a.First <= base && base < a.Last {
					out = append(out, [2]int64{base, last})
					break
				}
			}
		}
		data = data[sz:]
	}
	return out
}
