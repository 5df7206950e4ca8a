package uplink

// Shipping a forwarded partition upstream.
//
// The spool holds the Kafka batches producers sent. A forwarder ships them
// as they are, in raw ProduceRequests sent through the uplink's kgo client
// (which owns connections, TLS and SASL): no decompression, no re-encoding
// and no recompression. Each forwarder is its own idempotent producer: it
// takes a producer id from the upstream (InitProducerID), writes that id,
// its epoch and the partition's running sequence into each batch header and
// recomputes the CRC. One request is in flight per partition, so the
// sequence only moves on an acknowledgement and a failed request is resent
// with the same sequence, which the upstream recognizes as a duplicate if
// it had written it.
//
// Runs of small batches (a producer with linger 0 sends one record per
// batch) would cost one round trip each, so consecutive batches under
// mergeBelow are decoded and merged into one batch of up to mergeMax bytes,
// keeping every record's key, value, headers and timestamp. Batches stamped
// with LogAppendTime are re-encoded too, each record carrying the stamped
// time as its create time, since an upstream would not accept the
// attribute from a producer.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/spool"
)

const (
	// Batches smaller than mergeBelow are merged with their small
	// neighbours into batches of at most mergeMax bytes (before
	// compression) and mergeMaxRecords records.
	mergeBelow      = 16 << 10
	mergeMax        = 512 << 10
	mergeMaxRecords = 20000
	// produceTimeout is the upstream's time to meet acks=all.
	produceTimeout = 10 * time.Second
	// openTxnRecheck is how long a forwarder held by an open transaction
	// waits between looks when nothing is appended: the broker's
	// coordinator aborts a timed-out transaction within as long (its
	// check interval), and an abort that fails to append leaves no
	// marker to wake the forwarder.
	openTxnRecheck = 500 * time.Millisecond
)

// upProducer is a forwarder's idempotent producer identity upstream.
type upProducer struct {
	id    int64 // -1: none yet
	epoch int16
	seq   int32 // sequence of the next batch's first record
}

// nextSeq advances a Kafka producer sequence by n, wrapping past MaxInt32
// to 0 as Kafka does.
func nextSeq(seq int32, n int32) int32 {
	if seq > math.MaxInt32-n {
		return n - (math.MaxInt32 - seq) - 1
	}
	return seq + n
}

// produceV12 caps the produce version at 12: version 13 names topics by id
// only, and a name is all the forwarder needs.
type produceV12 struct{ *kmsg.ProduceRequest }

func (produceV12) MaxVersion() int16 { return 12 }

// outBatch is one batch ready to ship: the spool records [first, last] it
// carries.
type outBatch struct {
	data        []byte
	first, last int64
	records     int32
	spoolRecs   int  // spool records consumed
	reencoded   bool // decoded and encoded here (merged, or repaired)
	// undecodable is set by ship when the upstream refused the batch as
	// corrupt and it does not decode here either: it cannot ever be
	// shipped.
	undecodable error
}

// run is the forwarding loop: make sure the upstream topic exists, then read
// the spool where the last acknowledgement left off and ship it batch by
// batch, each resent until the upstream acknowledges it.
func (f *Forwarder) run() {
	defer f.u.wg.Done()
	defer close(f.done)
	defer f.setState(stateStopped)
	defer f.closeJournal()
	select {
	case <-f.u.ready:
	case <-f.quit:
		return
	}
	if !f.retry(f.ensureTopic) {
		return
	}
	// Commits (a marker write and a directory fsync each) run beside the
	// loop, so a slow disk does not stall shipping.
	cdone := make(chan struct{})
	go func() { defer close(cdone); f.commitLoop() }()
	defer func() { <-cdone }()
	// qctx ends with the forwarder's stop, for waits that must not outlast it.
	qctx, qcancel := context.WithCancel(f.ctx)
	defer qcancel()
	go func() {
		select {
		case <-f.quit:
			qcancel()
		case <-qctx.Done():
		}
	}()
	next := f.acked.Load() + 1
	if j := f.resend; j != nil {
		// After a restart: the batch that was in flight goes first, as
		// it was, so the upstream can recognize it.
		f.resend = nil
		b, err := f.rebuild(j)
		if err != nil {
			f.u.log.Warn("forwarding: cannot rebuild the batch in flight before the restart; shipping on (it may be duplicated upstream)", "topic", f.topic, "partition", f.index, "err", err)
		} else {
			if !f.ship(&b) {
				return
			}
			if b.undecodable != nil {
				f.setErr(b.undecodable)
				f.errCount.Add(1)
				f.acked.Store(b.last)
			} else {
				f.ackedThrough(b.last, int(b.records), len(b.data))
			}
			next = b.last + 1
		}
	}
	var pend []spool.Record
	backoff := 100 * time.Millisecond
	for {
		select {
		case <-f.quit:
			return
		default:
		}
		if len(pend) == 0 {
			changed := f.sp.Changed()
			recs, err := f.sp.Read(next, 1024, 8<<20)
			if err != nil {
				var se *spool.SegmentError
				if errors.As(err, &se) {
					// Reported once by the spool; the next read goes on.
					f.u.log.Error("spool: records lost to a corrupt segment", "topic", f.topic, "partition", f.index, "err", err)
					f.setErr(err)
					continue
				}
				f.setErr(err)
				if !f.sleep(backoff) {
					return
				}
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			backoff = 100 * time.Millisecond
			// Ship only what a crash cannot take back (the high
			// watermark: under durability always, what is fsynced):
			// records shipped and then lost here would come again from
			// their producer, which was never answered, and arrive
			// upstream twice. And only what no open transaction holds
			// (the last stable offset): a transaction's records go
			// once it has committed, and never if it aborts.
			hw, stable := f.HighWatermark(), f.lastStable()
			n := 0
			for n < len(recs) && recs[n].Last() < stable {
				n++
			}
			if n == 0 && len(recs) > 0 && recs[0].Last() < hw {
				// Held by an open transaction: its marker (or its
				// abort at the timeout) is the next append; a failed
				// transactional append releases it without one.
				f.setState(stateIdle)
				t := time.NewTimer(openTxnRecheck)
				select {
				case <-f.quit:
					t.Stop()
					return
				case <-changed:
				case <-t.C:
				}
				t.Stop()
				continue
			}
			if n == 0 && len(recs) > 0 {
				if err := f.sp.WaitDurable(qctx, recs[0].Last()); err != nil {
					if qctx.Err() != nil || errors.Is(err, spool.ErrClosed) {
						return
					}
					f.setErr(err)
					if !f.sleep(backoff) {
						return
					}
				}
				continue
			}
			recs = recs[:n]
			if len(recs) == 0 {
				f.setState(stateIdle)
				select {
				case <-f.quit:
					return
				case <-changed:
				}
				continue
			}
			pend = recs
		}
		switch f.fate(pend[0]) {
		case staysHere:
			f.passedThrough(pend[0].Last())
			next = pend[0].Last() + 1
			pend = pend[1:]
			continue
		case shipsInTxn:
			n, ok := f.u.txs.park(f, pend[0].Seq)
			if !ok {
				return
			}
			// What was read past the round is still to ship.
			next = n
			for len(pend) > 0 && pend[0].Seq < n {
				pend = pend[1:]
			}
			continue
		}
		b, err := f.build(pend, false)
		if err != nil {
			// Undecodable spooled batch: it cannot be shipped; skip it
			// loudly rather than block the partition forever.
			f.u.log.Error("forwarding: dropping undecodable spooled batch", "topic", f.topic, "partition", f.index, "offset", pend[0].Seq, "err", err)
			f.setErr(err)
			f.acked.Store(pend[0].Last())
			next = pend[0].Last() + 1
			pend = pend[1:]
			continue
		}
		if !f.ship(&b) {
			return
		}
		if b.undecodable != nil {
			f.u.log.Error("forwarding: dropping a spooled batch the upstream refused as corrupt and that does not decode", "topic", f.topic, "partition", f.index, "offsets", fmt.Sprintf("%d-%d", b.first, b.last), "err", b.undecodable)
			f.setErr(b.undecodable)
			f.errCount.Add(1)
			f.acked.Store(b.last)
			next = b.last + 1
			pend = pend[b.spoolRecs:]
			continue
		}
		f.ackedThrough(b.last, int(b.records), len(b.data))
		next = b.last + 1
		pend = pend[b.spoolRecs:]
	}
}

// retry runs fn until it succeeds, backing off on errors; false when
// stopped.
func (f *Forwarder) retry(fn func() error) bool {
	backoff := 100 * time.Millisecond
	for {
		err := fn()
		if err == nil {
			return true
		}
		f.errCount.Add(1)
		f.setErr(err)
		if !f.sleep(backoff) {
			return false
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// ensureTopic makes sure the upstream topic exists with at least the local
// partition count: it looks first (so an upstream that lets us produce but
// not create topics works once the topic is there), creates the topic if
// it is missing and adds partitions when the local topic has more, so no
// record is shipped to a partition the upstream lacks.
func (f *Forwarder) ensureTopic() error {
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	n := f.p.TopicPartitions()
	have, err := f.upstreamPartitions(ctx)
	if err == nil && have >= n {
		return nil
	}
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) && !errors.Is(err, errUpstreamTopicMissing) {
		return err
	}
	adm := kadm.NewClient(f.u.client)
	if err != nil { // missing
		res, err := adm.CreateTopic(ctx, n, -1, nil, f.upstream)
		if err == nil {
			err = res.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("creating upstream topic %s: %w", f.upstream, err)
		}
	} else {
		f.u.log.Info("forwarding: adding partitions upstream", "topic", f.upstream, "from", have, "to", n)
		rs, err := adm.UpdatePartitions(ctx, int(n), f.upstream)
		if err == nil {
			var r kadm.CreatePartitionsResponse
			if r, err = rs.On(f.upstream, nil); err == nil {
				err = r.Err
			}
		}
		// INVALID_PARTITIONS: another forwarder of the topic (or an
		// operator) got there first; the metadata below tells.
		if err != nil && !errors.Is(err, kerr.InvalidPartitions) {
			return fmt.Errorf("adding partitions to upstream topic %s: %w", f.upstream, err)
		}
	}
	if have, err = f.upstreamPartitions(ctx); err != nil {
		return err
	}
	if have < n {
		return fmt.Errorf("upstream topic %s has %d partitions, want %d", f.upstream, have, n)
	}
	return nil
}

var errUpstreamTopicMissing = errors.New("topic missing from the upstream's metadata")

// upstreamPartitions asks the upstream for the topic's partition count and
// notes the partition's leader.
func (f *Forwarder) upstreamPartitions(ctx context.Context) (int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false // ensureTopic creates it, with our partition count
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(f.upstream)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, f.u.client)
	if err != nil {
		return 0, fmt.Errorf("upstream metadata: %w", err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != f.upstream {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return 0, fmt.Errorf("upstream metadata of %s: %w", f.upstream, err)
		}
		f.leader, f.upTopicID = -1, t.TopicID
		for _, p := range t.Partitions {
			if p.Partition == f.index && p.ErrorCode == 0 {
				f.leader = p.Leader
			}
		}
		return int32(len(t.Partitions)), nil
	}
	return 0, fmt.Errorf("upstream metadata of %s: %w", f.upstream, errUpstreamTopicMissing)
}

// findLeader returns the partition's upstream leader. When it is not known
// (first use, or an error made it stale) ensureTopic runs again: it learns
// the leader from metadata, and recreates the upstream topic if it was lost
// (an upstream rebuilt empty) or grows it if the local topic grew.
func (f *Forwarder) findLeader(ctx context.Context) (int32, error) {
	if f.leader >= 0 {
		return f.leader, nil
	}
	if err := f.ensureTopic(); err != nil {
		return -1, err
	}
	if f.leader < 0 {
		if _, err := f.upstreamPartitions(ctx); err != nil {
			return -1, err
		}
	}
	if f.leader < 0 {
		return -1, fmt.Errorf("upstream partition %s-%d has no leader", f.upstream, f.index)
	}
	return f.leader, nil
}

// initProducer takes a fresh producer id from the upstream.
func (f *Forwarder) initProducer(ctx context.Context) error {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionTimeoutMillis = -1
	req.ProducerID, req.ProducerEpoch = -1, -1
	resp, err := req.RequestWith(ctx, f.u.client)
	if err != nil {
		return fmt.Errorf("upstream InitProducerID: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("upstream InitProducerID: %w", err)
	}
	if f.prod.id >= 0 || f.resets.Load() > 0 || f.journaled != nil {
		f.resets.Add(1)
	}
	f.setProducer(upProducer{id: resp.ProducerID, epoch: resp.ProducerEpoch})
	f.u.log.Info("forwarding: new upstream producer", "topic", f.topic, "partition", f.index, "producer_id", resp.ProducerID, "epoch", resp.ProducerEpoch)
	return nil
}

// build makes the next batch to ship from the front of pend: a large batch
// as it is, a run of small ones merged.
// Transactional data ends a run (withTxn false) for the idempotent path:
// it goes in upstream transactions (txn.go).
func (f *Forwarder) build(pend []spool.Record, withTxn bool) (outBatch, error) {
	r := pend[0]
	h, err := records.ParseHeader(r.Data)
	if err != nil {
		return outBatch{}, err
	}
	if h.Size() != len(r.Data) {
		return outBatch{}, fmt.Errorf("%w: batch of %d bytes in a spool record of %d", records.ErrCorrupt, h.Size(), len(r.Data))
	}
	n := 1
	if len(r.Data) < mergeBelow {
		size, recs := len(r.Data), int(h.NumRecords)
		for n < len(pend) && len(pend[n].Data) < mergeBelow && size+len(pend[n].Data) <= mergeMax && recs+pend[n].Span <= mergeMaxRecords && f.merges(pend[n], withTxn) {
			size += len(pend[n].Data)
			recs += pend[n].Span
			n++
		}
	}
	if n == 1 && !h.HasLogAppendTime() {
		// Shipped as it is: only the producer fields and the CRC change
		// (stamped at send time, in a private copy).
		return outBatch{data: append([]byte(nil), r.Data...), first: r.Seq, last: r.Last(), records: h.NumRecords, spoolRecs: 1}, nil
	}
	return merge(pend[:n], h.Compression(), f.u.env.MaxBatchBytes)
}

// merge decodes the spooled batches recs (each up to limit bytes
// decompressed) and encodes their records as one batch with codec. Each
// record keeps its absolute timestamp.
func merge(recs []spool.Record, codec records.Codec, limit int) (outBatch, error) {
	var out []records.Record
	var base int64
	for i, r := range recs {
		h, err := records.ParseHeader(r.Data)
		if err != nil {
			if i == 0 {
				return outBatch{}, err
			}
			recs = recs[:i] // ship what decodes; the bad one fails alone next
			break
		}
		it, err := records.Records(h, r.Data[records.BatchHeaderLen:h.Size()], limit)
		var got []records.Record
		if err == nil {
			for it.Next() {
				rec := it.Record()
				ts := h.FirstTimestamp + rec.TimestampDelta
				if h.HasLogAppendTime() {
					ts = h.MaxTimestamp
				}
				if len(out) == 0 && len(got) == 0 {
					base = ts
				}
				c := records.Record{TimestampDelta: ts - base, Key: cloneBytes(rec.Key), Value: cloneBytes(rec.Value)}
				if len(rec.Headers) > 0 {
					c.Headers = make([]records.Header, len(rec.Headers))
					for j, hd := range rec.Headers {
						c.Headers[j] = records.Header{Key: cloneBytes(hd.Key), Value: cloneBytes(hd.Value)}
					}
				}
				got = append(got, c)
			}
			err = it.Err()
		}
		if err == nil && len(got) != r.Span {
			err = fmt.Errorf("%w: batch holds %d records, spool record spans %d", records.ErrInvalidRecord, len(got), r.Span)
		}
		if err != nil {
			if i == 0 {
				return outBatch{}, err
			}
			recs = recs[:i]
			break
		}
		out = append(out, got...)
	}
	data, err := records.AppendBatch(nil, records.BatchSpec{LeaderEpoch: -1, Codec: codec, FirstTimestamp: base,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, out)
	if err != nil {
		return outBatch{}, err
	}
	return outBatch{data: data, first: recs[0].Seq, last: recs[len(recs)-1].Last(), records: int32(len(out)), spoolRecs: len(recs), reencoded: true}, nil
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// What becomes of a spooled batch.
type batchFate int8

const (
	shipsPlain batchFate = iota // its forwarder ships it, as its idempotent producer
	shipsInTxn                  // committed transactional data: in an upstream transaction (txn.go)
	staysHere                   // a transaction marker, or aborted data: never shipped
)

// fate tells what becomes of a spooled batch. One whose header does not
// parse is shipped plain, which drops it loudly (build).
func (f *Forwarder) fate(r spool.Record) batchFate {
	h, err := records.ParseHeader(r.Data)
	switch {
	case err != nil || !h.IsTransactional():
		return shipsPlain
	case h.IsControl() || f.p.AbortedHolds(h.ProducerID, r.Seq):
		return staysHere
	}
	return shipsInTxn
}

// merges reports whether a batch may join a merged run: never one that
// stays here, transactional data only in a round (withTxn).
func (f *Forwarder) merges(r spool.Record, withTxn bool) bool {
	switch f.fate(r) {
	case shipsPlain:
		return true
	case shipsInTxn:
		return withTxn
	}
	return false
}

// refusedAsCorrupt: the upstream could not read a batch; one shipped as it
// is may be repaired by re-encoding it (reencode).
func refusedAsCorrupt(err error) bool {
	return errors.Is(err, kerr.CorruptMessage) || errors.Is(err, kerr.InvalidRecord) || errors.Is(err, kerr.UnsupportedCompressionType)
}

// refusedAsTooLarge: a merged batch goes again in parts (shrink).
func refusedAsTooLarge(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)
}

// reencode decodes b and encodes its records again, uncompressed, which
// repairs what the codec stream or the record framing got wrong.
func (b outBatch) reencode(limit int) (outBatch, error) {
	return merge([]spool.Record{{Seq: b.first, Span: int(b.last - b.first + 1), Data: b.data}}, records.CodecNone, limit)
}

// stamp writes the producer identity into the batch, clears its
// transactional bit (the forwarder ships committed records only, as an
// idempotent producer) and recomputes its CRC (which covers the
// attributes and producer fields; the leader epoch is outside it).
func stamp(batch []byte, p upProducer) {
	records.SetPartitionLeaderEpoch(batch, -1)
	records.SetIdempotentProducer(batch, p.id, p.epoch, p.seq)
}

// ship sends b until the upstream acknowledges it; false when stopped.
func (f *Forwarder) ship(b *outBatch) bool {
	backoff := 50 * time.Millisecond
	fail := func(err error) bool {
		f.errCount.Add(1)
		f.setErr(err)
		f.setState(stateRetrying)
		if !f.sleep(backoff) {
			return false
		}
		backoff = min(2*backoff, 5*time.Second)
		return true
	}
	for {
		select {
		case <-f.quit:
			return false
		default:
		}
		f.setState(stateShipping)
		if f.prod.id < 0 {
			if err := f.initProducer(f.ctx); err != nil {
				if !fail(err) {
					return false
				}
				continue
			}
		}
		leader, err := f.findLeader(f.ctx)
		if err != nil {
			if !fail(err) {
				return false
			}
			continue
		}
		// On disk before the bytes leave: after a crash the same batch
		// goes again under the same identity (producer.go).
		if err := f.saveInFlight(b); err != nil {
			if !fail(err) {
				return false
			}
			continue
		}
		stamp(b.data, f.prod)
		req := kmsg.NewPtrProduceRequest()
		req.Acks = -1
		req.TimeoutMillis = int32(produceTimeout / time.Millisecond)
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = f.upstream
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = f.index
		rp.Records = b.data
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		ctx, cancel := context.WithTimeout(f.ctx, produceTimeout+30*time.Second)
		kresp, err := f.u.client.Broker(int(leader)).Request(ctx, produceV12{req})
		cancel()
		if err != nil {
			// The request may or may not have been written: resent
			// with the same sequence, the upstream drops a duplicate.
			f.leader = -1
			if !fail(fmt.Errorf("upstream produce to %s-%d: %w", f.upstream, f.index, err)) {
				return false
			}
			continue
		}
		code := int16(-1)
		var msg string
		upBase := int64(-1)
		for _, t := range kresp.(*kmsg.ProduceResponse).Topics {
			for _, p := range t.Partitions {
				if t.Topic == f.upstream && p.Partition == f.index {
					code = p.ErrorCode
					upBase = p.BaseOffset
					if p.ErrorMessage != nil {
						msg = *p.ErrorMessage
					}
				}
			}
		}
		if code == -1 {
			f.leader = -1
			if !fail(fmt.Errorf("upstream produce to %s-%d: partition missing from the response", f.upstream, f.index)) {
				return false
			}
			continue
		}
		perr := kerr.ErrorForCode(code)
		switch {
		case perr == nil, errors.Is(perr, kerr.DuplicateSequenceNumber):
			f.prod.seq = nextSeq(f.prod.seq, b.records)
			if upBase >= 0 {
				f.syncs.add(offsetSync{Local: b.first, Upstream: upBase, Len: b.last - b.first + 1})
			}
			return true
		case errors.Is(perr, kerr.OutOfOrderSequenceNumber), errors.Is(perr, kerr.UnknownProducerID),
			errors.Is(perr, kerr.InvalidProducerEpoch), errors.Is(perr, kerr.ProducerFenced),
			errors.Is(perr, kerr.InvalidProducerIDMapping):
			// The upstream lost or refused our producer state (a
			// restart without it, expiry): start over as a new
			// producer from the first unacknowledged record.
			f.u.log.Warn("forwarding: upstream reset the producer; continuing under a new producer id (the batch in flight may be duplicated upstream)", "topic", f.topic, "partition", f.index, "upstream_topic", f.upstream, "err", perr)
			f.prod.id = -1
		case !b.reencoded && refusedAsCorrupt(perr):
			// A batch shipped as it is was refused: it goes re-encoded;
			// one that does not decode can never be shipped.
			nb, err := b.reencode(f.u.env.MaxBatchBytes)
			if err != nil {
				b.undecodable = fmt.Errorf("upstream: %v; here: %w", perr, err)
				return true
			}
			*b = nb
			continue
		case refusedAsTooLarge(perr):
			if b.spoolRecs > 1 {
				// A merged batch: ship its parts one by one.
				*b = f.shrink(*b)
				continue
			}
		default:
			if kerr.IsRetriable(perr) {
				f.leader = -1
			}
		}
		if msg != "" {
			perr = fmt.Errorf("%w: %s", perr, msg)
		}
		if !fail(fmt.Errorf("upstream produce to %s-%d: %w", f.upstream, f.index, perr)) {
			return false
		}
	}
}

// shrink returns the first half (at least one spool record) of a merged
// batch the upstream found too large, rebuilt from the spool.
func (f *Forwarder) shrink(b outBatch) outBatch {
	recs, err := f.sp.Read(b.first, max(1, b.spoolRecs/2), math.MaxInt32)
	if err != nil || len(recs) == 0 {
		return b
	}
	h, err := records.ParseHeader(recs[0].Data)
	if err != nil {
		return b
	}
	if len(recs) == 1 && !h.HasLogAppendTime() {
		return outBatch{data: append([]byte(nil), recs[0].Data...), first: recs[0].Seq, last: recs[0].Last(), records: h.NumRecords, spoolRecs: 1}
	}
	nb, err := merge(recs, h.Compression(), f.u.env.MaxBatchBytes)
	if err != nil {
		return b
	}
	return nb
}
