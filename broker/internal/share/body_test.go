package share

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestShareFetchBodyMatchesKmsg: the fields FetchBody encodes itself,
// with the record buffers written between them, are byte for byte what
// kmsg's AppendTo writes, for every ShareFetch version and the shapes a
// response takes (errors with messages, null and empty and non-empty
// records, acquired ranges, node endpoints), and the throttle patch
// reaches the encoded bytes.
func TestShareFetchBodyMatchesKmsg(t *testing.T) {
	msg := "why"
	rack := "r1"
	for v := int16(0); v <= 2; v++ {
		for _, throttle := range []int32{0, 250} {
			t.Run(fmt.Sprintf("v%d/throttle=%d", v, throttle), func(t *testing.T) {
				r := kmsg.NewPtrShareFetchResponse()
				r.Version = v
				r.AcquisitionLockTimeoutMillis = 30000
				r.ErrorMessage = nil
				for ti := 0; ti < 3; ti++ {
					rt := kmsg.NewShareFetchResponseTopic()
					rt.TopicID[0], rt.TopicID[15] = byte(ti+1), 0xee
					for pi := 0; pi < 3; pi++ {
						rp := kmsg.NewShareFetchResponseTopicPartition()
						rp.Partition = int32(pi)
						rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = 1, int32(ti)
						switch (ti*3 + pi) % 4 {
						case 0:
							rp.Records = bytes.Repeat([]byte{byte(ti), byte(pi)}, 300*(pi+1))
							for k := 0; k < pi+1; k++ {
								ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
								ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = int64(10*k), int64(10*k+4), int16(k+1)
								rp.AcquiredRecords = append(rp.AcquiredRecords, ar)
							}
						case 1:
							rp.Records = []byte{}
						case 2:
							rp.ErrorCode, rp.ErrorMessage = 3, &msg
							rp.AcknowledgeErrorCode, rp.AcknowledgeErrorMessage = 124, &msg
						case 3:
							// null records
						}
						rt.Partitions = append(rt.Partitions, rp)
					}
					r.Topics = append(r.Topics, rt)
				}
				r.NodeEndpoints = append(r.NodeEndpoints, kmsg.ShareFetchResponseNodeEndpoint{NodeID: 1, Host: "127.0.0.1", Port: 9092, Rack: &rack},
					kmsg.ShareFetchResponseNodeEndpoint{NodeID: 2, Host: "h", Port: 1})
				bp := getBuf(1)
				body := NewFetchBody(r, []*[]byte{bp}).(*FetchBody)
				n := body.BodyLen() // encodes: the throttle patch must reach the encoded bytes
				if throttle != 0 {
					body.SetThrottle(throttle)
				}
				want := r.AppendTo([]byte("head"))
				var got bytes.Buffer
				if err := body.WriteBody(&got, []byte("head")); err != nil {
					t.Fatal(err)
				}
				if int64(got.Len()-4) != n {
					t.Fatalf("BodyLen %d, wrote %d", n, got.Len()-4)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("WriteBody differs from kmsg:\n got %x\nwant %x", got.Bytes(), want)
				}
				back := kmsg.NewPtrShareFetchResponse()
				back.Version = v
				if err := back.ReadFrom(got.Bytes()[4:]); err != nil {
					t.Fatalf("kmsg cannot read it back: %v", err)
				}
				if back.ThrottleMillis != throttle {
					t.Fatalf("throttle %d, want %d", back.ThrottleMillis, throttle)
				}
				body.Release()
				if body.bufs != nil || len(r.Topics[0].Partitions[0].Records) != 0 {
					t.Fatal("Release left the pooled buffers referenced")
				}
			})
		}
	}
}

func TestShareBufPool(t *testing.T) {
	for _, n := range []int{0, 1, 64 << 10, 64<<10 + 1, 1 << 20, 3 << 20, 16 << 20} {
		bp := getBuf(n)
		if cap(*bp) < n || len(*bp) != 0 {
			t.Fatalf("getBuf(%d): len %d cap %d", n, len(*bp), cap(*bp))
		}
		if c := cap(*bp); c&(c-1) != 0 {
			t.Fatalf("getBuf(%d): cap %d is not a pool class", n, c)
		}
		*bp = append(*bp, 1)
		putBuf(bp)
	}
	big := getBuf(16<<20 + 1) // past the largest class: a buffer of its own
	if cap(*big) != 16<<20+1 {
		t.Fatalf("large buffer cap %d", cap(*big))
	}
	putBuf(big) // not pooled; must not panic
}

// errWriter fails every write, as a connection whose client went away.
type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

// A client that disconnects while its answer is written: WriteBody returns
// the write's error (the connection then closes), and Release still gives
// the buffers back and unhooks the records from them.
func TestShareFetchBodyWriteFails(t *testing.T) {
	r := kmsg.NewPtrShareFetchResponse()
	r.Version = 1
	rt := kmsg.NewShareFetchResponseTopic()
	rp := kmsg.NewShareFetchResponseTopicPartition()
	bp := getBuf(1000)
	*bp = append(*bp, bytes.Repeat([]byte{7}, 1000)...)
	rp.Records = *bp
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	body := NewFetchBody(r, []*[]byte{bp}).(*FetchBody)
	gone := errors.New("connection reset by peer")
	if err := body.WriteBody(errWriter{gone}, []byte("head")); !errors.Is(err, gone) {
		t.Fatalf("WriteBody = %v, want the writer's error", err)
	}
	body.Release()
	if body.bufs != nil || len(r.Topics[0].Partitions[0].Records) != 0 {
		t.Fatal("Release after a failed write left the pooled buffer referenced")
	}
}
