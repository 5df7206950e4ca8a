package broker

import (
	"encoding/binary"
	"io"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// fetchBody is a Fetch response whose record bytes stay in the segment
// files until the connection's writer sends them: it implements
// protocol.BodyWriter, encoding the response's fields itself and sending
// each partition's file ranges with sendfile(2) where the OS allows (file
// bytes never pass through user space), and protocol.Releaser, unpinning
// the files once written or dropped.
//
// The embedded FetchResponse carries every field but RecordBatches, which
// are in reads (flattened in topic/partition order; nil where a partition
// has no data). AppendTo, for any caller that does not use BodyWriter,
// copies the bytes in and encodes with kmsg.
type fetchBody struct {
	*kmsg.FetchResponse
	reads []*logstore.ReadResult

	once sync.Once
	meta []byte   // encoded fields; records go between the spans
	cuts []fbSpan // meta[cuts[i].end:] continues after reads[cuts[i].read]
	size int64
}

type fbSpan struct {
	end  int // meta bytes before this partition's records
	read int
}

// encode lays out the body: meta bytes with a cut wherever a partition's
// record bytes go. Byte for byte what kmsg's AppendTo writes (see
// TestFetchBodyMatchesKmsg).
func (fb *fetchBody) encode() {
	fb.once.Do(func() {
		r := fb.FetchResponse
		v := r.Version
		flex := v >= 12
		b := make([]byte, 0, 256)
		b = binary.BigEndian.AppendUint32(b, uint32(r.ThrottleMillis))
		if v >= 7 {
			b = binary.BigEndian.AppendUint16(b, uint16(r.ErrorCode))
			b = binary.BigEndian.AppendUint32(b, uint32(r.SessionID))
		}
		b = appendArrayLen(b, len(r.Topics), flex)
		k := 0
		for ti := range r.Topics {
			t := &r.Topics[ti]
			if v >= 13 {
				b = append(b, t.TopicID[:]...)
			} else if flex {
				b = binary.AppendUvarint(b, uint64(len(t.Topic))+1)
				b = append(b, t.Topic...)
			} else {
				b = binary.BigEndian.AppendUint16(b, uint16(len(t.Topic)))
				b = append(b, t.Topic...)
			}
			b = appendArrayLen(b, len(t.Partitions), flex)
			for pi := range t.Partitions {
				p := &t.Partitions[pi]
				b = binary.BigEndian.AppendUint32(b, uint32(p.Partition))
				b = binary.BigEndian.AppendUint16(b, uint16(p.ErrorCode))
				b = binary.BigEndian.AppendUint64(b, uint64(p.HighWatermark))
				b = binary.BigEndian.AppendUint64(b, uint64(p.LastStableOffset))
				if v >= 5 {
					b = binary.BigEndian.AppendUint64(b, uint64(p.LogStartOffset))
				}
				switch at := p.AbortedTransactions; {
				case at == nil && flex:
					b = append(b, 0)
				case at == nil:
					b = binary.BigEndian.AppendUint32(b, 0xffffffff)
				default:
					b = appendArrayLen(b, len(at), flex)
					for _, a := range at {
						b = binary.BigEndian.AppendUint64(b, uint64(a.ProducerID))
						b = binary.BigEndian.AppendUint64(b, uint64(a.FirstOffset))
						if flex {
							b = append(b, 0)
						}
					}
				}
				if v >= 11 {
					b = binary.BigEndian.AppendUint32(b, uint32(p.PreferredReadReplica))
				}
				rr := fb.reads[k]
				switch {
				case rr != nil:
					if flex {
						b = binary.AppendUvarint(b, uint64(rr.Size)+1)
					} else {
						b = binary.BigEndian.AppendUint32(b, uint32(rr.Size))
					}
					fb.cuts = append(fb.cuts, fbSpan{end: len(b), read: k})
					fb.size += rr.Size
				case p.RecordBatches != nil:
					if flex {
						b = binary.AppendUvarint(b, uint64(len(p.RecordBatches))+1)
					} else {
						b = binary.BigEndian.AppendUint32(b, uint32(len(p.RecordBatches)))
					}
					b = append(b, p.RecordBatches...)
				case flex: // null, which handleFetch never leaves
					b = append(b, 0)
				default:
					b = binary.BigEndian.AppendUint32(b, 0xffffffff)
				}
				if flex {
					b = append(b, 0) // partition tagged fields
				}
				k++
			}
			if flex {
				b = append(b, 0) // topic tagged fields
			}
		}
		if flex {
			b = append(b, 0) // response tagged fields
		}
		fb.meta = b
		fb.size += int64(len(b))
	})
}

func appendArrayLen(b []byte, n int, flex bool) []byte {
	if flex {
		return binary.AppendUvarint(b, uint64(n)+1)
	}
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

// BodyLen implements protocol.BodyWriter.
func (fb *fetchBody) BodyLen() int64 {
	fb.encode()
	return fb.size
}

// WriteBody implements protocol.BodyWriter: head and meta bytes are written
// in as few writes as possible, record bytes straight from the files.
func (fb *fetchBody) WriteBody(w io.Writer, head []byte) error {
	fb.encode()
	pending := head
	prev := 0
	for _, c := range fb.cuts {
		pending = append(pending, fb.meta[prev:c.end]...)
		prev = c.end
		if _, err := w.Write(pending); err != nil {
			return err
		}
		pending = pending[:0]
		for _, rg := range fb.reads[c.read].Ranges {
			if err := sendRange(w, rg); err != nil {
				return err
			}
		}
	}
	pending = append(pending, fb.meta[prev:]...)
	_, err := w.Write(pending)
	return err
}

// AppendTo encodes with the record bytes copied in (the non-BodyWriter path).
func (fb *fetchBody) AppendTo(dst []byte) []byte {
	fb.materialize()
	return fb.FetchResponse.AppendTo(dst)
}

// materialize copies the record bytes into RecordBatches and releases the
// files; the response is then a plain FetchResponse.
func (fb *fetchBody) materialize() *kmsg.FetchResponse {
	k := 0
	for ti := range fb.Topics {
		for pi := range fb.Topics[ti].Partitions {
			if rr := fb.reads[k]; rr != nil {
				buf, err := rr.AppendTo(make([]byte, 0, rr.Size))
				if err == nil {
					fb.Topics[ti].Partitions[pi].RecordBatches = buf
				} else {
					fb.Topics[ti].Partitions[pi].ErrorCode = errCode(err)
				}
				rr.Release()
				fb.reads[k] = nil
			}
			k++
		}
	}
	return fb.FetchResponse
}

// Release implements protocol.Releaser.
func (fb *fetchBody) Release() {
	for i, rr := range fb.reads {
		if rr != nil {
			rr.Release()
			fb.reads[i] = nil
		}
	}
}

// sendfileRanges counts ranges sent with sendfile (tests check the zero-copy
// path is really taken).
var sendfileRanges atomic.Int64

var copyBufPool = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// sendRange writes one file range to w: sendfile when both ends are OS
// descriptors, else a bounded copy through a pooled buffer.
func sendRange(w io.Writer, rg logstore.Range) error {
	if of, ok := rg.File.(vfs.OSFile); ok {
		if handled, err := sendfile(w, of.OS(), rg.Pos, rg.Len); handled {
			sendfileRanges.Add(1)
			return err
		}
	}
	bp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bp)
	buf := *bp
	pos, n := rg.Pos, rg.Len
	for n > 0 {
		m := int64(len(buf))
		if n < m {
			m = n
		}
		got, err := rg.File.ReadAt(buf[:m], pos)
		if int64(got) < m {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if _, err := w.Write(buf[:m]); err != nil {
			return err
		}
		pos += m
		n -= m
	}
	return nil
}
