package share

import (
	"encoding/binary"
	"io"
	"math/bits"
	"net"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FetchBody is a ShareFetch response whose record bytes go to the
// connection from the buffers they were read into (one writev with the
// encoded fields between them), not copied into an encoded response as
// kmsg's AppendTo would: it implements protocol.BodyWriter, and
// protocol.Releaser to give the pooled read buffers back once written or
// dropped. The embedded response's AppendTo (any caller that does not use
// BodyWriter) encodes with kmsg, record bytes copied in.
//
// Record bytes are read (not sent with sendfile as Fetch's are) because a
// ShareFetch answer is cut at batch boundaries the share-partition state
// decides (the last acquired offset, MaxBytes) and, under read_committed,
// its batches' headers are inspected; reading once into a reused buffer
// and writing from it keeps the cost to the two kernel copies.
type FetchBody struct {
	*kmsg.ShareFetchResponse
	bufs []*[]byte // pooled buffers the partitions' Records point into

	once sync.Once
	meta []byte   // encoded fields; recs[i] goes at meta offset cuts[i]
	cuts []int    // ascending
	recs [][]byte // non-empty Records, in encoding order
	size int64
}

// NewFetchBody wraps resp; bufs are the pooled buffers its Records
// were read into. Without buffers to return the plain response serves as
// well (it is small, or its records are not pooled).
func NewFetchBody(resp *kmsg.ShareFetchResponse, bufs []*[]byte) kmsg.Response {
	if len(bufs) == 0 {
		return resp
	}
	return &FetchBody{ShareFetchResponse: resp, bufs: bufs}
}

func appendCompactNullableString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(*s))+1)
	return append(b, *s...)
}

// encode lays out the fields, byte for byte as kmsg's AppendTo (every
// ShareFetch version is flexible; the coordinator sets no unknown tags,
// so each tag section is one zero byte). TestShareFetchBodyMatchesKmsg
// checks it.
func (sb *FetchBody) encode() {
	sb.once.Do(func() {
		r := sb.ShareFetchResponse
		b := make([]byte, 0, 256)
		b = binary.BigEndian.AppendUint32(b, uint32(r.ThrottleMillis))
		b = binary.BigEndian.AppendUint16(b, uint16(r.ErrorCode))
		b = appendCompactNullableString(b, r.ErrorMessage)
		if r.Version >= 1 {
			b = binary.BigEndian.AppendUint32(b, uint32(r.AcquisitionLockTimeoutMillis))
		}
		b = binary.AppendUvarint(b, uint64(len(r.Topics))+1)
		for ti := range r.Topics {
			t := &r.Topics[ti]
			b = append(b, t.TopicID[:]...)
			b = binary.AppendUvarint(b, uint64(len(t.Partitions))+1)
			for pi := range t.Partitions {
				p := &t.Partitions[pi]
				b = binary.BigEndian.AppendUint32(b, uint32(p.Partition))
				b = binary.BigEndian.AppendUint16(b, uint16(p.ErrorCode))
				b = appendCompactNullableString(b, p.ErrorMessage)
				b = binary.BigEndian.AppendUint16(b, uint16(p.AcknowledgeErrorCode))
				b = appendCompactNullableString(b, p.AcknowledgeErrorMessage)
				b = binary.BigEndian.AppendUint32(b, uint32(p.CurrentLeader.LeaderID))
				b = binary.BigEndian.AppendUint32(b, uint32(p.CurrentLeader.LeaderEpoch))
				b = append(b, 0) // CurrentLeader's tags
				if p.Records == nil {
					b = append(b, 0)
				} else {
					b = binary.AppendUvarint(b, uint64(len(p.Records))+1)
					if len(p.Records) > 0 {
						sb.cuts = append(sb.cuts, len(b))
						sb.recs = append(sb.recs, p.Records)
						sb.size += int64(len(p.Records))
					}
				}
				b = binary.AppendUvarint(b, uint64(len(p.AcquiredRecords))+1)
				for _, a := range p.AcquiredRecords {
					b = binary.BigEndian.AppendUint64(b, uint64(a.FirstOffset))
					b = binary.BigEndian.AppendUint64(b, uint64(a.LastOffset))
					b = binary.BigEndian.AppendUint16(b, uint16(a.DeliveryCount))
					b = append(b, 0)
				}
				b = append(b, 0) // partition tags
			}
			b = append(b, 0) // topic tags
		}
		b = binary.AppendUvarint(b, uint64(len(r.NodeEndpoints))+1)
		for _, n := range r.NodeEndpoints {
			b = binary.BigEndian.AppendUint32(b, uint32(n.NodeID))
			b = binary.AppendUvarint(b, uint64(len(n.Host))+1)
			b = append(b, n.Host...)
			b = binary.BigEndian.AppendUint32(b, uint32(n.Port))
			b = appendCompactNullableString(b, n.Rack)
			b = append(b, 0)
		}
		b = append(b, 0) // response tags
		sb.meta = b
		sb.size += int64(len(b))
	})
}

// BodyLen implements protocol.BodyWriter.
func (sb *FetchBody) BodyLen() int64 {
	sb.encode()
	return sb.size
}

// WriteBody implements protocol.BodyWriter: head, the fields and the
// record buffers in one vectored write where the connection allows.
func (sb *FetchBody) WriteBody(w io.Writer, head []byte) error {
	sb.encode()
	bufs := make(net.Buffers, 0, 2*len(sb.recs)+1)
	prev := 0
	for i, c := range sb.cuts {
		if i == 0 {
			bufs = append(bufs, append(head, sb.meta[:c]...))
		} else {
			bufs = append(bufs, sb.meta[prev:c])
		}
		bufs = append(bufs, sb.recs[i])
		prev = c
	}
	if len(sb.cuts) == 0 {
		bufs = append(bufs, append(head, sb.meta...))
	} else {
		bufs = append(bufs, sb.meta[prev:])
	}
	_, err := bufs.WriteTo(w)
	bodyWrites.Add(1)
	return err
}

// bodyWrites counts ShareFetch bodies written from pooled buffers
// (tests check the path is really taken).
var bodyWrites atomic.Int64

// BodyWrites is how many ShareFetch bodies were written from pooled
// buffers since the process started.
func BodyWrites() int64 { return bodyWrites.Load() }

// SetThrottle also patches the encoded fields (throttle_time_ms comes
// first).
func (sb *FetchBody) SetThrottle(ms int32) {
	sb.ShareFetchResponse.ThrottleMillis = ms
	if len(sb.meta) >= 4 {
		binary.BigEndian.PutUint32(sb.meta, uint32(ms))
	}
}

// Release implements protocol.Releaser: the read buffers go back to the
// pool, and the response no longer points into them.
func (sb *FetchBody) Release() {
	if sb.bufs == nil {
		return
	}
	for ti := range sb.Topics {
		for pi := range sb.Topics[ti].Partitions {
			if p := &sb.Topics[ti].Partitions[pi]; p.Records != nil {
				p.Records = p.Records[:0:0]
			}
		}
	}
	sb.recs = nil
	for _, bp := range sb.bufs {
		putBuf(bp)
	}
	sb.bufs = nil
}

// Pooled read buffers for ShareFetch records, by power-of-two capacity
// from 64 KiB to 16 MiB; a larger read gets a buffer of its own. Reusing
// them spares the zeroing of a new buffer per read.
const (
	bufMinShift = 16
	bufMaxShift = 24
)

var bufPools [bufMaxShift - bufMinShift + 1]sync.Pool

func bufClass(n int) int {
	if n <= 1<<bufMinShift {
		return 0
	}
	return bits.Len(uint(n-1)) - bufMinShift
}

// getBuf returns an empty buffer with room for n bytes.
func getBuf(n int) *[]byte {
	c := bufClass(n)
	if c >= len(bufPools) {
		b := make([]byte, 0, n)
		return &b
	}
	if v := bufPools[c].Get(); v != nil {
		bp := v.(*[]byte)
		*bp = (*bp)[:0]
		return bp
	}
	b := make([]byte, 0, 1<<(c+bufMinShift))
	return &b
}

func putBuf(bp *[]byte) {
	c := cap(*bp)
	if c < 1<<bufMinShift || c > 1<<bufMaxShift || c&(c-1) != 0 {
		return
	}
	bufPools[bufClass(c)].Put(bp)
}
