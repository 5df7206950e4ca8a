package compat_test

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// txnV2DiffRows are TestKafkaDiff's rows for transaction version 2
// (KIP-890 part 2) and the transaction marker's coordinator epoch,
// appended to kafkaDiffRows. Each is a sequence of requests at pinned
// versions on one side, reduced to codes and epochs relative to the
// side's own producer, so both brokers' producer IDs may differ.
func txnV2DiffRows() []diffRow {
	return []diffRow{
		{name: "TxnV2/features", raw: func(s *diffSide) any {
			av := kmsg.NewPtrApiVersionsRequest()
			av.ClientSoftwareName, av.ClientSoftwareVersion = "kd", "1"
			out := map[string]any{}
			// Before v4 no supported range starting at 0 is listed.
			for _, f := range s.pinned(av, 3).(*kmsg.ApiVersionsResponse).SupportedFeatures {
				if f.Name == "transaction.version" {
					out["v3 supported"] = fmt.Sprintf("%d-%d", f.MinVersion, f.MaxVersion)
				}
			}
			r := s.pinned(av, 4).(*kmsg.ApiVersionsResponse)
			for _, f := range r.SupportedFeatures {
				if f.Name == "transaction.version" {
					out["supported"] = fmt.Sprintf("%d-%d", f.MinVersion, f.MaxVersion)
				}
			}
			for _, f := range r.FinalizedFeatures {
				if f.Name == "transaction.version" {
					out["finalized"] = f.MaxVersionLevel
				}
			}
			for _, k := range r.ApiKeys {
				switch k.ApiKey {
				case 0, 26, 28:
					out[fmt.Sprint("max ", k.ApiKey)] = k.MaxVersion
				}
			}
			return out
		}},
		{name: "TxnV2/UpdateFeatures downgrade as an upgrade", raw: txnVersionUpdate(0, 1)},
		{name: "TxnV2/UpdateFeatures beyond the supported", raw: txnVersionUpdate(3, 1)},
		{name: "TxnV2/UpdateFeatures below zero", raw: txnVersionUpdate(-1, 1)},
		{name: "TxnV2/UpdateFeatures safe downgrade", raw: txnVersionUpdate(0, 2)},
		{name: "TxnV2/UpdateFeatures unsafe downgrade to 1", raw: txnVersionUpdate(1, 3)},
		{name: "TxnV2/EndTxn v5 and retries", raw: func(s *diffSide) any {
			tx := s.newTxn("kd-tv2-end", "kd-tv2-end", 2)
			var out []any
			out = append(out, "implicit add", tx.produce(12, 0, tx.epoch, 0))
			out = append(out, "implicit add 2", tx.produce(12, 1, tx.epoch, 0))
			out = append(out, "commit", tx.end(5, tx.epoch, true))
			out = append(out, "producer", tx.producerOn(0))
			out = append(out, "retry", tx.end(5, 0, true))
			out = append(out, "retry, other decision", tx.end(5, 0, false))
			out = append(out, "retry as v4", tx.end(4, 0, true))
			out = append(out, "produce, old epoch", tx.produce(12, 0, 0, 1))
			out = append(out, "produce v11, old epoch", tx.produce(11, 0, 0, 1))
			out = append(out, "empty commit", tx.end(5, 1, true))
			out = append(out, "empty abort", tx.end(5, 1, false))
			out = append(out, "empty abort retried", tx.end(5, 1, false))
			out = append(out, "future epoch", tx.end(5, 7, false))
			out = append(out, "another producer", tx.endAs(5, tx.pid+1000, 2, false))
			out = append(out, "described", tx.describe())
			return out
		}},
		{name: "TxnV2/older versions beside it", raw: func(s *diffSide) any {
			tx := s.newTxn("kd-tv2-old", "kd-tv2-old", 2)
			var out []any
			out = append(out, "v11 not added", tx.produce(11, 0, 0, 0))
			out = append(out, "v10 not added", tx.produce(10, 0, 0, 0))
			out = append(out, "add v3", tx.add(3, 0, 0))
			out = append(out, "v11 added", tx.produce(11, 0, 0, 0))
			out = append(out, "commit v4", tx.end(4, 0, true))
			out = append(out, "commit v4 retried", tx.end(4, 0, true))
			out = append(out, "abort v4 after", tx.end(4, 0, false))
			out = append(out, "v4 future epoch", tx.end(4, 1, true))
			out = append(out, "v12 after v4", tx.produce(12, 1, 0, 0))
			out = append(out, "commit v5", tx.end(5, 0, true))
			out = append(out, "init naming the last epoch", tx.init(0))
			out = append(out, "init naming the current", tx.init(1))
			out = append(out, "described", tx.describe())
			return out
		}},
		{name: "TxnV2/a new producer fences", raw: func(s *diffSide) any {
			tx := s.newTxn("kd-tv2-fence", "kd-tv2-fence", 1)
			var out []any
			out = append(out, "produce", tx.produce(12, 0, 0, 0))
			out = append(out, "new producer", tx.initNew())
			out = append(out, "fenced transaction's marker", tx.producerOn(0))
			out = append(out, "old producer commits", tx.end(5, 0, true))
			out = append(out, "old producer aborts", tx.end(5, 0, false))
			out = append(out, "described", tx.describe())
			return out
		}},
		{name: "TxnV2/TxnOffsetCommit", raw: func(s *diffSide) any {
			tx := s.newTxn("kd-tv2-off", "kd-tv2-off", 1)
			var out []any
			out = append(out, "v4 not added", tx.offsets(4, 0))
			out = append(out, "v3 not added", tx.offsets(3, 0))
			out = append(out, "v5 adds", tx.offsets(5, 0))
			out = append(out, "v5 future epoch", tx.offsets(5, 3))
			out = append(out, "state", tx.describe()["state"])
			out = append(out, "commit", tx.end(5, 0, true))
			out = append(out, "v5 old epoch", tx.offsets(5, 0))
			out = append(out, "v4 old epoch", tx.offsets(4, 0))
			return out
		}},
		{name: "AddPartitionsToTxn/v5 verify and add", raw: func(s *diffSide) any {
			tx := s.newTxn("kd-tv2-b2b", "kd-tv2-b2b", 2)
			var out []any
			out = append(out, "verify before", tx.addV5(true, 0, 0, 1))
			out = append(out, "add", tx.addV5(false, 0, 0))
			out = append(out, "verify after", tx.addV5(true, 0, 0, 1))
			out = append(out, "verify, future epoch", tx.addV5(true, 1, 0))
			out = append(out, "described", tx.describe())
			out = append(out, "commit v4", tx.end(4, 0, true))
			return out
		}},
		{name: "WriteTxnMarkers/coordinator epoch", raw: func(s *diffSide) any {
			tx := s.newTxn("kd-tv2-mk", "kd-tv2-mk", 2)
			fake := tx.pid + 500000
			var out []any
			out = append(out, "first", tx.marker(1, fake, 3, 5, 0, 0))
			out = append(out, "producer", tx.producerOf(0, fake))
			out = append(out, "older coordinator", tx.marker(1, fake, 3, 4, 0, 0))
			out = append(out, "same coordinator", tx.marker(1, fake, 3, 5, 0, 0))
			out = append(out, "older epoch, newer coordinator", tx.marker(1, fake, 2, 9, 0, 0))
			out = append(out, "newer epoch, older coordinator", tx.marker(1, fake, 4, 1, 0, 0))
			out = append(out, "TV2 newer", tx.marker(2, fake, 4, 6, 2, 0))
			out = append(out, "TV2 repeated", tx.marker(2, fake, 4, 6, 2, 0))
			out = append(out, "producer after", tx.producerOf(0, fake))
			out = append(out, "produce", tx.produce(12, 1, 0, 0))
			out = append(out, "TV2 at the open epoch", tx.marker(2, tx.pid, tx.epoch, 0, 2, 1))
			out = append(out, "legacy at the open epoch", tx.marker(2, tx.pid, tx.epoch, 0, 0, 1))
			out = append(out, "coordinator -1", tx.marker(2, tx.pid, tx.epoch+1, -1, 2, 1))
			out = append(out, "abort", tx.end(5, 0, false))
			out = append(out, "producer after the abort", tx.producerOn(1))
			return out
		}},
	}
}

func txnVersionUpdate(level int16, upgradeType int8) func(*diffSide) any {
	return func(s *diffSide) any {
		r := kmsg.NewPtrUpdateFeaturesRequest()
		r.ValidateOnly = true
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType = "transaction.version", level, upgradeType
		r.FeatureUpdates = append(r.FeatureUpdates, u)
		resp := s.pinned(r, 2).(*kmsg.UpdateFeaturesResponse)
		msg, _ := deref(resp.ErrorMessage).(string)
		// Kafka names its controller's node; the two sides' IDs differ.
		msg = strings.ReplaceAll(msg, fmt.Sprintf("controller %d ", s.node), "controller NODE ")
		return map[string]any{"err": errName(resp.ErrorCode), "msg": msg}
	}
}

// txnV2Suffix ends the rows' names (empty: each side is fresh).
var txnV2Suffix = ""

var (
	pinnedMu      sync.Mutex
	pinnedBrokers = map[string]*kgo.Broker{}
)

// pinned sends r at exactly version v (kgo otherwise picks the highest
// both sides know) and returns the answer; a failure ends the test.
func (s *diffSide) pinned(r kmsg.Request, v int16) kmsg.Response {
	s.t.Helper()
	key := fmt.Sprintf("%s/%d/%d", s.addr, r.Key(), v)
	pinnedMu.Lock()
	br := pinnedBrokers[key]
	if br == nil {
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(r.Key(), v)
		cl, err := kgo.NewClient(kgo.SeedBrokers(s.addr), kgo.MaxVersions(vs), kgo.RequestRetries(0))
		if err != nil {
			pinnedMu.Unlock()
			s.t.Fatal(err)
		}
		s.t.Cleanup(func() {
			pinnedMu.Lock()
			delete(pinnedBrokers, key)
			pinnedMu.Unlock()
			cl.Close()
		})
		br = cl.SeedBrokers()[0]
		pinnedBrokers[key] = br
	}
	pinnedMu.Unlock()
	resp, err := br.Request(s.ctx, r)
	if err != nil {
		s.t.Fatalf("%s: %T v%d: %v", s.name, r, v, err)
	}
	if resp.GetVersion() != v {
		s.t.Fatalf("%s: %T sent at v%d, not v%d", s.name, r, resp.GetVersion(), v)
	}
	return resp
}

// diffTxn is one transactional ID on one side, with a topic of two
// partitions of its own; epochs in and out are relative to the epoch its
// InitProducerId got.
type diffTxn struct {
	s          *diffSide
	id, topic  string
	group      string
	pid        int64
	epoch      int16 // absolute, as InitProducerId answered
	topicID    [16]byte
	partitions int32
}

func (s *diffSide) newTxn(id, topic string, parts int32) *diffTxn {
	s.t.Helper()
	id, topic = id+txnV2Suffix, topic+txnV2Suffix
	if _, err := s.br.Request(s.ctx, createTopicReq(topic, parts, 1, false)); err != nil {
		s.t.Fatal(err)
	}
	s.waitTopic(topic)
	tx := &diffTxn{s: s, id: id, topic: topic, group: id + "-g", partitions: parts, topicID: s.topicID(topic)}
	for try := 0; ; try++ {
		r := kmsg.NewPtrInitProducerIDRequest()
		r.TransactionalID, r.TransactionTimeoutMillis = &id, 60000
		r.ProducerID, r.ProducerEpoch = -1, -1
		resp := s.pinned(r, 5).(*kmsg.InitProducerIDResponse)
		if resp.ErrorCode == 0 {
			tx.pid, tx.epoch = resp.ProducerID, resp.ProducerEpoch
			return tx
		}
		if try == 50 {
			s.t.Fatalf("%s: InitProducerId %s: %s", s.name, id, errName(resp.ErrorCode))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// settle waits for Kafka's coordinator to finish writing markers: it
// answers EndTxn before they are written, minikafka after.
func (tx *diffTxn) settle() {
	for i := 0; i < 200; i++ {
		if st := tx.describe()["state"]; st != "PrepareCommit" && st != "PrepareAbort" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (tx *diffTxn) rel(e int16) any {
	if e < 0 {
		return e
	}
	return e - tx.epoch
}

func (tx *diffTxn) end(v int16, rel int16, commit bool) any {
	return tx.endAs(v, tx.pid, rel, commit)
}

func (tx *diffTxn) endAs(v int16, pid int64, rel int16, commit bool) any {
	r := kmsg.NewPtrEndTxnRequest()
	r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Commit = tx.id, pid, tx.epoch+rel, commit
	resp := tx.s.pinned(r, v).(*kmsg.EndTxnResponse)
	tx.settle()
	out := map[string]any{"err": errName(resp.ErrorCode)}
	if v >= 5 {
		out["epoch"], out["same pid"] = tx.rel(resp.ProducerEpoch), resp.ProducerID == tx.pid
	}
	return out
}

func (tx *diffTxn) init(rel int16) any {
	r := kmsg.NewPtrInitProducerIDRequest()
	r.TransactionalID, r.TransactionTimeoutMillis = &tx.id, 60000
	r.ProducerID, r.ProducerEpoch = tx.pid, tx.epoch+rel
	resp := tx.s.pinned(r, 5).(*kmsg.InitProducerIDResponse)
	return map[string]any{"err": errName(resp.ErrorCode), "epoch": tx.rel(resp.ProducerEpoch)}
}

// initNew is InitProducerId from a new producer of the same
// transactional ID, retried as a client retries CONCURRENT_TRANSACTIONS
// (Kafka's answer while it fences an open transaction).
func (tx *diffTxn) initNew() any {
	for try := 0; ; try++ {
		r := kmsg.NewPtrInitProducerIDRequest()
		r.TransactionalID, r.TransactionTimeoutMillis = &tx.id, 60000
		r.ProducerID, r.ProducerEpoch = -1, -1
		resp := tx.s.pinned(r, 5).(*kmsg.InitProducerIDResponse)
		if resp.ErrorCode != kerr.ConcurrentTransactions.Code || try == 100 {
			tx.settle()
			return map[string]any{"err": errName(resp.ErrorCode), "epoch": tx.rel(resp.ProducerEpoch), "same pid": resp.ProducerID == tx.pid}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (tx *diffTxn) describe() map[string]any {
	r := kmsg.NewPtrDescribeTransactionsRequest()
	r.TransactionalIDs = []string{tx.id}
	st := tx.s.pinned(r, 0).(*kmsg.DescribeTransactionsResponse).TransactionStates[0]
	n := 0
	for _, t := range st.Topics {
		if t.Topic == tx.topic {
			n += len(t.Partitions)
		}
	}
	return map[string]any{"err": errName(st.ErrorCode), "state": st.State, "epoch": tx.rel(st.ProducerEpoch), "partitions": n}
}

func (tx *diffTxn) produce(v int16, part int32, rel int16, seq int32) any {
	r := kmsg.NewPtrProduceRequest()
	r.Acks, r.TimeoutMillis, r.TransactionID = -1, 10000, &tx.id
	t := kmsg.NewProduceRequestTopic()
	t.Topic, t.TopicID = tx.topic, tx.topicID
	p := kmsg.NewProduceRequestTopicPartition()
	p.Partition, p.Records = part, txnRecordBatch(tx.pid, tx.epoch+rel, seq)
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	sp := tx.s.pinned(r, v).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	// Kafka's new partition takes a moment to take writes after its
	// metadata shows a leader.
	for try := 0; sp.ErrorCode == kerr.NotLeaderForPartition.Code && try < 50; try++ {
		time.Sleep(200 * time.Millisecond)
		sp = tx.s.pinned(r, v).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	}
	return map[string]any{"err": errName(sp.ErrorCode), "msg": errMsg(sp.ErrorCode, sp.ErrorMessage)}
}

func (tx *diffTxn) add(v int16, part int32, rel int16) any {
	r := kmsg.NewPtrAddPartitionsToTxnRequest()
	r.TransactionalID, r.ProducerID, r.ProducerEpoch = tx.id, tx.pid, tx.epoch+rel
	r.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: tx.topic, Partitions: []int32{part}}}
	return errName(tx.s.pinned(r, v).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode)
}

// addV5 is AddPartitionsToTxn v5 (the broker-to-broker form) for the
// transaction's topic.
func (tx *diffTxn) addV5(verify bool, rel int16, parts ...int32) any {
	r := kmsg.NewPtrAddPartitionsToTxnRequest()
	t := kmsg.NewAddPartitionsToTxnRequestTransaction()
	t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.VerifyOnly = tx.id, tx.pid, tx.epoch+rel, verify
	t.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: tx.topic, Partitions: parts}}
	r.Transactions = append(r.Transactions, t)
	resp := tx.s.pinned(r, 5).(*kmsg.AddPartitionsToTxnResponse)
	out := map[string]any{"err": errName(resp.ErrorCode)}
	for _, rt := range resp.Transactions {
		for _, t := range rt.Topics {
			for _, p := range t.Partitions {
				out[fmt.Sprint(p.Partition)] = errName(p.ErrorCode)
			}
		}
	}
	return out
}

func (tx *diffTxn) offsets(v int16, rel int16) any {
	r := kmsg.NewPtrTxnOffsetCommitRequest()
	r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation = tx.id, tx.group, tx.pid, tx.epoch+rel, -1
	t := kmsg.NewTxnOffsetCommitRequestTopic()
	t.Topic, t.TopicID = tx.topic, tx.topicID
	p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	p.Partition, p.Offset, p.LeaderEpoch = 0, 1, -1
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return errName(tx.s.pinned(r, v).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode)
}

func (tx *diffTxn) marker(v int16, pid int64, epoch int16, coordinatorEpoch int32, tv int8, part int32) any {
	r := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.TransactionVersion = pid, epoch, coordinatorEpoch, tv
	m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: tx.topic, Partitions: []int32{part}}}
	r.Markers = append(r.Markers, m)
	return errName(tx.s.pinned(r, v).(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode)
}

// producerOn is the transaction's producer as DescribeProducers shows it
// on part, epochs relative.
func (tx *diffTxn) producerOn(part int32) any {
	p := tx.producerOf(part, tx.pid)
	if m, ok := p.(map[string]any); ok {
		m["epoch"] = tx.rel(int16(m["epoch"].(int32)))
	}
	return p
}

func (tx *diffTxn) producerOf(part int32, pid int64) any {
	r := kmsg.NewPtrDescribeProducersRequest()
	t := kmsg.NewDescribeProducersRequestTopic()
	t.Topic, t.Partitions = tx.topic, []int32{part}
	r.Topics = append(r.Topics, t)
	for _, p := range tx.s.pinned(r, 0).(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ActiveProducers {
		if p.ProducerID == pid {
			return map[string]any{"epoch": p.ProducerEpoch, "coordinator epoch": p.CoordinatorEpoch, "open": p.CurrentTxnStartOffset >= 0}
		}
	}
	return "none"
}

// txnRecordBatch is a transactional v2 batch of one record.
func txnRecordBatch(pid int64, epoch int16, seq int32) []byte {
	rec := kmsg.Record{Value: []byte("v")}
	body := rec.AppendTo(nil)
	rec.Length = int32(len(body) - 1)
	body = rec.AppendTo(nil)
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{Magic: 2, Attributes: 0x10, FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, NumRecords: 1, Records: body}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}
