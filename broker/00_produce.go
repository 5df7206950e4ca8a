package broker

// Produce v3–v13.
//
// Each partition gets exactly one v2 record batch (Kafka rejects more, or
// none, with INVALID_RECORD since v3). The batch is validated before it is
// stored as sent: framing and CRC (CORRUPT_MESSAGE), size against the
// topic's max.message.bytes (MESSAGE_TOO_LARGE), then the records
// (broker/internal/recordcheck): every record decoded and checked, compressed ones
// by streaming in bounded memory, unless Config.PassCompressedRecords opts
// out for compressed batches (recordcheck's doc). Per-record problems
// (keyless record on a compacted topic, timestamp outside
// message.timestamp.{before,after}.max.ms) reject the batch with
// INVALID_RECORD or INVALID_TIMESTAMP and, from v8, record_errors.
// Idempotent batches (producer ID >= 0) are checked
// against the producer's last sequence on that partition: a retry of one of
// the last five batches is acknowledged with its original offset (Kafka's
// DUPLICATE_SEQUENCE handling), a gap is OUT_OF_ORDER_SEQUENCE_NUMBER, an
// old epoch INVALID_PRODUCER_EPOCH.
//
// acks=0 gets no response, unless a partition failed: then, as Kafka does,
// the connection is closed so the producer notices. acks=1 is answered once
// appended. acks=-1 is answered once the durability policy is met
// (logstore.WaitDurable, on the writer goroutine so the reader keeps
// reading). Other acks values: INVALID_REQUIRED_ACKS.
//
// With the authorizer on (acls.go) a topic needs WRITE, else every one of
// its partitions is TOPIC_AUTHORIZATION_FAILED, and a transactional
// producer WRITE on its transactional ID, else the whole request is
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
//
// Transactional batches need the request's transactional ID
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for the whole request without it,
// as Kafka) and must belong to their producer's open transaction (a
// partition not added is TRANSACTION_ABORTABLE from v11, INVALID_TXN_STATE
// before; INVALID_PRODUCER_EPOCH for another epoch); Produce v12+ adds the
// partition implicitly under transaction version 2 (KIP-890; see
// broker/internal/txn's BeginProduce).
// The batch's first offset holds the partition's last stable offset back
// until the transaction ends (txn.go).
//
// Internal topics (__consumer_offsets) take no client writes:
// INVALID_TOPIC_EXCEPTION, as Kafka.
//
// Version notes: v8 adds per-record errors and error messages, v9 flexible,
// v13 (KIP-516) names topics by ID (UNKNOWN_TOPIC_ID when unknown).

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/recordcheck"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
	"github.com/minikafka/minikafka/protocol"
)

// maxDecompressedBatch bounds what one compressed batch may inflate to
// while its records are validated (at least this, or 4x the topic's
// max.message.bytes if larger). Producers batch far less than this.
const maxDecompressedBatch = recordcheck.MaxDecompressed

type produceWait struct {
	st  partitionStore
	end int64 // exclusive: the offset after the batch
	rp  *kmsg.ProduceResponseTopicPartition
}

func (b *Broker) handleProduce(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ProduceRequest)
	resp := r.ResponseKind().(*kmsg.ProduceResponse)
	resp.Version = req.Version

	acksOK := r.Acks == 0 || r.Acks == 1 || r.Acks == -1
	// As Kafka: transactional records in a request without a
	// transactional ID fail the whole request.
	noTxnID := r.TransactionID == nil && hasTransactionalBatch(r)
	now := b.now()
	az := b.authorizer(req)
	node, routed := b.reqNode(req)
	var (
		waits    []produceWait
		failed   int
		firstErr string
	)
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(r.Topics))
	for ti := range r.Topics {
		rt := &r.Topics[ti]
		st := &resp.Topics[ti]
		*st = kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		var t *topic
		if req.Version >= 13 {
			t = b.lookupTopic("", rt.TopicID)
		} else {
			t = b.lookupTopic(rt.Topic, [16]byte{})
		}
		name := rt.Topic
		if t != nil {
			name = t.name
		}
		// Authorization comes before existence, as in Kafka: a client
		// learns nothing of a topic it may not write.
		denied := (t != nil || req.Version < 13) && !az.topic(opWrite, name)
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			sp := &st.Partitions[pi]
			*sp = kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			var code int16
			var msg string
			switch {
			case !acksOK:
				code, msg = kerr.InvalidRequiredAcks.Code, fmt.Sprintf("acks %d", r.Acks)
			case noTxnID:
				code, msg = kerr.TransactionalIDAuthorizationFailed.Code, "transactional records in a produce request without a transactional id"
			case denied:
				code, msg = errTopicAuth, ""
			case t == nil && req.Version >= 13:
				code, msg = kerr.UnknownTopicID.Code, "unknown topic id"
			case t == nil && validateTopicName(rt.Topic) != nil:
				code, msg = kerr.InvalidTopicException.Code, validateTopicName(rt.Topic).Error()
			case t == nil:
				code, msg = kerr.UnknownTopicOrPartition.Code, "unknown topic "+rt.Topic
			case isInternalTopic(t.name):
				code, msg = kerr.InvalidTopicException.Code, "cannot append to internal topic "+t.name
			default:
				p := t.partition(rp.Partition)
				if p == nil {
					code, msg = kerr.UnknownTopicOrPartition.Code, fmt.Sprintf("unknown partition %s-%d", t.name, rp.Partition)
					break
				}
				if code = b.leaderCode(node, routed, p); code != 0 {
					msg = b.notLeaderProduce(req, resp, sp, p, node)
					break
				}
				st := b.storeOf(p)
				var end int64
				var err error
				code, end, err = b.produceTo(p, st, rp.Records, r.Acks, sp, now, req.Version, node, routed)
				if code == kerr.NotLeaderForPartition.Code {
					msg = b.notLeaderProduce(req, resp, sp, p, node)
				}
				if err != nil {
					msg = err.Error()
				}
				if code == 0 && r.Acks == -1 && b.cfg.Sync.Mode == logstore.SyncAlways {
					waits = append(waits, produceWait{st: st, end: end, rp: sp})
				}
			}
			if code != 0 {
				sp.ErrorCode = code
				sp.BaseOffset = -1
				if req.Version >= 8 && msg != "" {
					m := msg
					sp.ErrorMessage = &m
				}
				if failed == 0 {
					firstErr = fmt.Sprintf("%s[%d]: %s: %s", rt.Topic, rp.Partition, kerr.ErrorForCode(code), msg)
				}
				failed++
			}
		}
	}
	if failed > 0 {
		b.logBad(req, "produce rejected", "partitions", failed, "first", firstErr)
	}
	resp.ThrottleMillis = b.produceThrottle(r)
	if r.Acks == 0 {
		if failed > 0 {
			return protocol.Reply{Err: errors.New("acks=0 produce failed: " + firstErr)}
		}
		return protocol.Reply{}
	}
	if len(waits) == 0 {
		return protocol.Reply{Response: resp}
	}
	timeout := time.Duration(r.TimeoutMillis) * time.Millisecond
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	// Start waiting for durability now rather than when the writer gets
	// to this reply, so this request's fsyncs overlap the ones of the
	// requests ahead of it; partitions (separate files) sync in parallel.
	done := make(chan struct{})
	go func() {
		defer close(done)
		wctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var wg sync.WaitGroup
		for i := range waits {
			w := &waits[i]
			wait := func() {
				if err := w.st.waitDurable(wctx, w.end); err != nil {
					w.rp.ErrorCode = errCode(err)
					w.rp.BaseOffset = -1
					if req.Version >= 8 {
						w.rp.ErrorMessage = errMessage(err)
					}
				}
			}
			if i == len(waits)-1 {
				wait()
				break
			}
			wg.Add(1)
			go func() { defer wg.Done(); wait() }()
		}
		wg.Wait()
	}()
	return protocol.Reply{Wait: func() (kmsg.Response, error) {
		<-done
		return resp, nil
	}}
}

// produceTo validates and appends one partition's batch to st, p's store,
// filling sp. It returns the error code, the offset after the batch (for
// waitDurable) and an error describing a failure. Local and forwarded
// partitions take the same path; the idempotence check is the partition's
// (producers.State), whichever store the batch lands in.
func (b *Broker) produceTo(p *partition, st partitionStore, batch []byte, acks int16, sp *kmsg.ProduceResponseTopicPartition, now time.Time, version int16, node int32, routed bool) (int16, int64, error) {
	cfg := p.topic.cfg.Load()
	if acks == -1 && cfg.MinInsync > 1 {
		if isr := p.place.Load().ISR; int32(len(isr)) < cfg.MinInsync {
			return kerr.NotEnoughReplicas.Code, 0, fmt.Errorf("The size of the current ISR %v is insufficient to satisfy the min.isr requirement of %d for partition %s-%d", isr, cfg.MinInsync, p.topic.name, p.index)
		}
	}
	if len(batch) == 0 {
		return kerr.InvalidRecord.Code, 0, errors.New("produce requests since v3 must carry exactly one record batch per partition")
	}
	h, err := records.Validate(batch)
	if err != nil {
		return errCode(err), 0, err
	}
	if h.Size() != len(batch) {
		if h.Size() < len(batch) {
			return kerr.InvalidRecord.Code, 0, errors.New("produce requests since v3 must carry exactly one record batch per partition")
		}
		return kerr.CorruptMessage.Code, 0, errors.New("record batch is truncated")
	}
	if int64(len(batch)) > int64(cfg.MaxMessageBytes) {
		return kerr.MessageTooLarge.Code, 0, fmt.Errorf("record batch of %d bytes exceeds max.message.bytes %d", len(batch), cfg.MaxMessageBytes)
	}
	if h.IsControl() {
		return kerr.InvalidRecord.Code, 0, errors.New("clients may not write control batches")
	}
	if h.IsTransactional() && (h.ProducerID < 0 || h.BaseSequence < 0) {
		return kerr.InvalidRecord.Code, 0, errors.New("transactional batches must carry a producer id and sequence")
	}
	if h.ProducerID >= 0 && h.BaseSequence < 0 {
		return kerr.InvalidRecord.Code, 0, fmt.Errorf("invalid sequence number %d in record batch with producerId %d", h.BaseSequence, h.ProducerID)
	}
	if h.Compression() == records.CodecZstd && version < 7 {
		return kerr.UnsupportedCompressionType.Code, 0, fmt.Errorf("produce requests with version %d are not allowed to use ZStandard compression", version)
	}
	if batch, err = recordcheck.Check(&h, batch, p.topic.name, p.index, b.cfg.PassCompressedRecords, st.decodesBatches(), cfg, now); err != nil {
		if rve, ok := err.(*recordcheck.Error); ok {
			if version >= 8 {
				rve.Fill(sp)
			}
			sp.LogStartOffset = st.logStart()
			return rve.Code, 0, err
		}
		return errCode(err), 0, err
	}
	if cfg.Recompress && h.Compression() != cfg.Codec {
		if int64(len(batch)) > int64(cfg.MaxMessageBytes) {
			return kerr.MessageTooLarge.Code, 0, fmt.Errorf("record batch of %d bytes in the topic's compression.type %s exceeds max.message.bytes %d", len(batch), cfg.Codec, cfg.MaxMessageBytes)
		}
	}
	idempotent := h.ProducerID >= 0 && h.BaseSequence >= 0
	if h.IsTransactional() {
		// The partition must be in the producer's open transaction
		// (txn.go); its lock is held until the append is done.
		unlock, code, err := st.beginTxn(h, version)
		if code != 0 {
			return code, 0, err
		}
		defer unlock()
	}
	if idempotent || b.cl.Multi() {
		p.mu.Lock()
		defer p.mu.Unlock()
	}
	// Each batch carries the leader epoch it was appended in (not covered
	// by the CRC), so OffsetForLeaderEpoch answers match what consumers
	// saw. With several nodes the leader may have moved since the request
	// was routed; p.mu orders this append against the move.
	if b.cl.Multi() {
		pl := p.place.Load()
		if routed && pl.Leader != node {
			return kerr.NotLeaderForPartition.Code, 0, nil
		}
		records.SetPartitionLeaderEpoch(batch, pl.Epoch)
	} else {
		records.SetPartitionLeaderEpoch(batch, p.place.Load().Epoch)
	}
	if idempotent {
		if !p.producers.Loaded() {
			p.loadProducerState(b.log, now)
		}
		dup, code := p.producers.Check(&h)
		if code != 0 {
			return code, 0, fmt.Errorf("producer %d epoch %d sequence %d", h.ProducerID, h.ProducerEpoch, h.BaseSequence)
		}
		if dup != nil {
			sp.BaseOffset = dup.FirstOffset
			sp.LogAppendTime = dup.AppendTime
			sp.LogStartOffset = st.logStart()
			return 0, dup.LastOffset + 1, nil
		}
	}
	txnOpened := h.IsTransactional() && b.txns.Producing(p, h.ProducerID, st.logEnd())
	// records.Validate checked NumRecords = LastOffsetDelta + 1 > 0.
	res, err := st.append(batch, int(h.NumRecords), now)
	if txnOpened {
		b.txns.Produced(p, h.ProducerID, res.BaseOffset, err)
	}
	if err != nil {
		return errCode(err), 0, err
	}
	if idempotent {
		p.producers.Record(&h, res.BaseOffset, res.LastOffset, res.AppendTimeMs, now)
	}
	sp.BaseOffset = res.BaseOffset
	sp.LogAppendTime = res.AppendTimeMs
	sp.LogStartOffset = res.LogStartOffset
	return 0, res.LastOffset + 1, nil
}

// hasTransactionalBatch reports whether any partition's records start with
// a transactional batch (what Kafka's ProduceRequest looks at).
func hasTransactionalBatch(r *kmsg.ProduceRequest) bool {
	for ti := range r.Topics {
		for pi := range r.Topics[ti].Partitions {
			if h, err := records.ParseHeader(r.Topics[ti].Partitions[pi].Records); err == nil && h.IsTransactional() {
				return true
			}
		}
	}
	return false
}
