package broker

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
)

func TestProduceAppendsAndFetches(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 2)
	for i := 0; i < 3; i++ {
		r := produce(t, b, "t", 1, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{key: []byte("k"), value: []byte("v")}, testRec{value: []byte("w")}))
		if r.ErrorCode != 0 || r.BaseOffset != int64(2*i) {
			t.Fatalf("produce %d: code %d base %d", i, r.ErrorCode, r.BaseOffset)
		}
		if r.LogStartOffset != 0 || r.LogAppendTime != -1 {
			t.Fatalf("log start %d append time %d", r.LogStartOffset, r.LogAppendTime)
		}
	}
	resp := serve(t, b, fetchReq(11, "t", [16]byte{}, 1, 2, 0, 1)).(*kmsg.FetchResponse)
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.HighWatermark != 6 || p.LastStableOffset != 6 || p.LogStartOffset != 0 {
		t.Fatalf("fetch: %+v", p)
	}
	var offs []int64
	if err := records.Split(p.RecordBatches, func(_ int, h records.BatchHeader, _ []byte) error {
		offs = append(offs, h.BaseOffset)
		if h.PartitionLeaderEpoch != 0 {
			t.Errorf("leader epoch %d", h.PartitionLeaderEpoch)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(offs) != 2 || offs[0] != 2 || offs[1] != 4 {
		t.Fatalf("batches at %v, want [2 4]", offs)
	}
}

func TestProduceErrors(t *testing.T) {
	b := newTestBroker(t)
	id := createTopic(t, b, "t", 1, "max.message.bytes", "2000")
	good := func() []byte { return makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")}) }

	badCRC := good()
	badCRC[len(badCRC)-1] ^= 0xff
	badMagic := good()
	badMagic[16] = 1
	twoBatches := append(good(), good()...)
	truncated := good()
	truncated = truncated[:len(truncated)-3]
	big := makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: bytes.Repeat([]byte("x"), 3000)})
	bigCompressed := makeBatch(t, records.CodecZstd, -1, 0, 0, testRec{value: bytes.Repeat([]byte("x"), 3000)})
	// A batch whose record count disagrees with its records.
	badCount := good()
	binary.BigEndian.PutUint32(badCount[57:], 2)
	binary.BigEndian.PutUint32(badCount[23:], 1)
	binary.BigEndian.PutUint32(badCount[17:], records.Checksum(badCount))
	// A compressed batch whose body is not valid for its codec.
	badGzip := makeBatch(t, records.CodecGzip, -1, 0, 0, testRec{value: []byte("v")})
	badGzip[records.BatchHeaderLen+2] ^= 0xff
	binary.BigEndian.PutUint32(badGzip[17:], records.Checksum(badGzip))
	txn := makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")})
	txn[22] |= 0x10
	binary.BigEndian.PutUint32(txn[17:], records.Checksum(txn))

	for _, tc := range []struct {
		name  string
		topic string
		part  int32
		batch []byte
		want  *kerr.Error
	}{
		{"unknown topic", "nope", 0, good(), kerr.UnknownTopicOrPartition},
		{"invalid topic name", "bad/name", 0, good(), kerr.InvalidTopicException},
		{"unknown partition", "t", 7, good(), kerr.UnknownTopicOrPartition},
		{"negative partition", "t", -1, good(), kerr.UnknownTopicOrPartition},
		{"bad crc", "t", 0, badCRC, kerr.CorruptMessage},
		{"bad magic", "t", 0, badMagic, kerr.InvalidRecord},
		{"two batches", "t", 0, twoBatches, kerr.InvalidRecord},
		{"truncated", "t", 0, truncated, kerr.CorruptMessage},
		{"empty", "t", 0, nil, kerr.InvalidRecord},
		{"too large", "t", 0, big, kerr.MessageTooLarge},
		{"bad record count", "t", 0, badCount, kerr.InvalidRecord},
		{"bad gzip", "t", 0, badGzip, kerr.CorruptMessage},
		{"transactional without transactional id", "t", 0, txn, kerr.TransactionalIDAuthorizationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := produce(t, b, tc.topic, tc.part, tc.batch)
			if r.ErrorCode != tc.want.Code {
				t.Fatalf("code %v, want %v (%s)", kerr.ErrorForCode(r.ErrorCode), tc.want, deref(r.ErrorMessage))
			}
			if r.ErrorMessage == nil {
				t.Fatal("no error message at v11")
			}
		})
	}
	// With a transactional ID the same batch fails on its missing
	// producer ID.
	if r := txnProduce(t, b, "x", "t", 0, txn); r.ErrorCode != kerr.InvalidRecord.Code {
		t.Fatalf("transactional without producer id: %v, want INVALID_RECORD", kerr.ErrorForCode(r.ErrorCode))
	}
	// The compressed batch is small on the wire, so it passes.
	if r := produce(t, b, "t", 0, bigCompressed); r.ErrorCode != 0 {
		t.Fatalf("compressed batch under max.message.bytes: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	// Nothing rejected reached the log.
	if got := b.lookupTopic("t", [16]byte{}).partition(0).log.LogEndOffset(); got != 1 {
		t.Fatalf("log end %d, want 1", got)
	}

	// v13 names topics by ID.
	resp := serve(t, b, produceReq(13, 1, "", id, 0, good())).(*kmsg.ProduceResponse)
	if c := resp.Topics[0].Partitions[0].ErrorCode; c != 0 {
		t.Fatalf("v13 by id: %v", kerr.ErrorForCode(c))
	}
	resp = serve(t, b, produceReq(13, 1, "", [16]byte{1}, 0, good())).(*kmsg.ProduceResponse)
	if c := resp.Topics[0].Partitions[0].ErrorCode; c != kerr.UnknownTopicID.Code {
		t.Fatalf("v13 unknown id: %v", kerr.ErrorForCode(c))
	}
	// Invalid acks.
	resp = serve(t, b, produceReq(11, 2, "t", [16]byte{}, 0, good())).(*kmsg.ProduceResponse)
	if c := resp.Topics[0].Partitions[0].ErrorCode; c != kerr.InvalidRequiredAcks.Code {
		t.Fatalf("acks=2: %v", kerr.ErrorForCode(c))
	}
}

func TestProduceAcksZero(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 1)
	rep := serveReply(b, produceReq(9, 0, "t", [16]byte{}, 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")})))
	if rep.Response != nil || rep.Wait != nil || rep.Err != nil {
		t.Fatalf("acks=0 success must have no response: %+v", rep)
	}
	// A failed acks=0 produce closes the connection, as Kafka does.
	rep = serveReply(b, produceReq(9, 0, "nope", [16]byte{}, 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")})))
	if rep.Err == nil {
		t.Fatal("acks=0 failure must close the connection")
	}
	if got := b.lookupTopic("t", [16]byte{}).partition(0).log.LogEndOffset(); got != 1 {
		t.Fatalf("log end %d", got)
	}
}

func TestProduceMinInsync(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 1, "min.insync.replicas", "2")
	if r := produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")})); r.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("got %v", kerr.ErrorForCode(r.ErrorCode))
	}
	resp := serve(t, b, produceReq(11, 1, "t", [16]byte{}, 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")}))).(*kmsg.ProduceResponse)
	if c := resp.Topics[0].Partitions[0].ErrorCode; c != 0 {
		t.Fatalf("acks=1 with min.insync.replicas=2: %v", kerr.ErrorForCode(c))
	}
}

func TestProduceTimestampBounds(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 1)
	// Default message.timestamp.after.max.ms is one hour (Kafka 4).
	future := makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v"), tsDelta: 2 * 3600 * 1000})
	if r := produce(t, b, "t", 0, future); r.ErrorCode != kerr.InvalidTimestamp.Code {
		t.Fatalf("future timestamp: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	past := makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v"), tsDelta: -10 * 365 * 24 * 3600 * 1000})
	if r := produce(t, b, "t", 0, past); r.ErrorCode != 0 {
		t.Fatalf("old timestamp (no before bound by default): %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

func TestLogAppendTime(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 1, "message.timestamp.type", "LogAppendTime")
	r := produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v"), tsDelta: -100000}))
	if r.ErrorCode != 0 || r.LogAppendTime <= 0 {
		t.Fatalf("code %v append time %d", kerr.ErrorForCode(r.ErrorCode), r.LogAppendTime)
	}
}

func TestIdempotentProducer(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 1)
	ipid := serve(t, b, kmsg.NewPtrInitProducerIDRequest()).(*kmsg.InitProducerIDResponse)
	if ipid.ErrorCode != 0 || ipid.ProducerID < 0 || ipid.ProducerEpoch != 0 {
		t.Fatalf("init producer id: %+v", ipid)
	}
	pid := ipid.ProducerID
	rec := func(n int) []testRec {
		rs := make([]testRec, n)
		for i := range rs {
			rs[i] = testRec{value: []byte{byte(i)}}
		}
		return rs
	}
	check := func(name string, r kmsg.ProduceResponseTopicPartition, code *kerr.Error, base int64) {
		t.Helper()
		want := int16(0)
		if code != nil {
			want = code.Code
		}
		if r.ErrorCode != want || (code == nil && r.BaseOffset != base) {
			t.Fatalf("%s: code %v base %d, want %v base %d", name, kerr.ErrorForCode(r.ErrorCode), r.BaseOffset, code, base)
		}
	}
	b0 := makeBatch(t, records.CodecNone, pid, 0, 0, rec(3)...)
	check("first", produce(t, b, "t", 0, b0), nil, 0)
	b1 := makeBatch(t, records.CodecNone, pid, 0, 3, rec(2)...)
	check("second", produce(t, b, "t", 0, b1), nil, 3)
	// A retry of either batch is acknowledged with its original offset.
	check("retry first", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 0, 0, rec(3)...)), nil, 0)
	check("retry second", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 0, 3, rec(2)...)), nil, 3)
	if got := b.lookupTopic("t", [16]byte{}).partition(0).log.LogEndOffset(); got != 5 {
		t.Fatalf("duplicates were appended: log end %d", got)
	}
	// A gap, or a sequence already passed that is not a cached batch.
	check("gap", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 0, 7, rec(1)...)), kerr.OutOfOrderSequenceNumber, 0)
	check("overlap", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 0, 1, rec(1)...)), kerr.OutOfOrderSequenceNumber, 0)
	check("next", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 0, 5, rec(1)...)), nil, 5)
	// Only the last five batches are remembered: after five more, the
	// first is no longer recognized and is out of order.
	for i := 0; i < 5; i++ {
		check("fill", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 0, int32(6+i), rec(1)...)), nil, int64(6+i))
	}
	check("evicted retry", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 0, 0, rec(3)...)), kerr.OutOfOrderSequenceNumber, 0)
	// A new epoch must start at sequence 0; then the old epoch is fenced.
	check("new epoch seq 4", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 1, 4, rec(1)...)), kerr.OutOfOrderSequenceNumber, 0)
	check("new epoch seq 0", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 1, 0, rec(1)...)), nil, 11)
	check("old epoch", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 0, 11, rec(1)...)), kerr.InvalidProducerEpoch, 0)
	// An unknown producer may start anywhere (Kafka since 2.5).
	check("unknown producer", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid+100, 0, 42, rec(1)...)), nil, 12)
	// Sequences wrap at MaxInt32.
	pid2 := pid + 200
	check("near wrap", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid2, 0, 1<<31-2, rec(2)...)), nil, 13)
	check("wrapped", produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid2, 0, 0, rec(1)...)), nil, 15)

	// Producer IDs are never handed out twice, across restarts too.
	ipid2 := serve(t, b, kmsg.NewPtrInitProducerIDRequest()).(*kmsg.InitProducerIDResponse)
	if ipid2.ProducerID == pid {
		t.Fatal("producer id reused")
	}
	// A transactional ID needs a valid transaction timeout (txn_test.go
	// covers the rest), and an ID without an epoch is malformed.
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = kmsg.StringPtr("tx")
	req.TransactionTimeoutMillis = 0
	if r := serve(t, b, req).(*kmsg.InitProducerIDResponse); r.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("transactional: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	req = kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.ProducerID, req.ProducerEpoch = 4, 5, -1
	if r := serve(t, b, req).(*kmsg.InitProducerIDResponse); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("half-set id: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

func TestProducerIDsPersist(t *testing.T) {
	dir := t.TempDir()
	var ids []int64
	for i := 0; i < 2; i++ {
		b, err := New(Config{DataDir: dir, NodeID: 1})
		if err != nil {
			t.Fatal(err)
		}
		r := serve(t, b, kmsg.NewPtrInitProducerIDRequest()).(*kmsg.InitProducerIDResponse)
		ids = append(ids, r.ProducerID)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if ids[1] <= ids[0] {
		t.Fatalf("producer ids after restart %v: must not reuse", ids)
	}
}
