package recordcheck

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/records"
)

// MaxDecompressed bounds what one compressed batch may inflate to when the
// topic's max.message.bytes is smaller than a quarter of it: a zip bomb
// stops there (CORRUPT_MESSAGE) instead of taking memory.
const MaxDecompressed = 64 << 20

// RecordError is one entry of a Produce response's record_errors.
type RecordError struct {
	Index int32
	Msg   string
}

// Error is Kafka's RecordValidationException: the batch is rejected
// because of the listed records.
type Error struct {
	Code    int16 // INVALID_RECORD or INVALID_TIMESTAMP
	Records []RecordError
}

func (e *Error) Error() string {
	if e.Code == kerr.InvalidTimestamp.Code {
		return "One or more records have been rejected due to invalid timestamp"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "One or more records have been rejected due to %d record errors in total, and only showing the first three errors at most: [", len(e.Records))
	for i, r := range e.Records[:min(3, len(e.Records))] {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "RecordError(batchIndex=%d, message='%s')", r.Index, r.Msg)
	}
	sb.WriteString("]")
	return sb.String()
}

// Fill puts the record errors into a v8+ partition response.
func (e *Error) Fill(sp *kmsg.ProduceResponseTopicPartition) {
	sp.ErrorRecords = make([]kmsg.ProduceResponseTopicPartitionErrorRecord, len(e.Records))
	for i, r := range e.Records {
		er := kmsg.NewProduceResponseTopicPartitionErrorRecord()
		er.RelativeOffset = r.Index
		m := r.Msg
		er.ErrorMessage = &m
		sp.ErrorRecords[i] = er
	}
}

// batchValidation holds what the checks of one batch need.
type batchValidation struct {
	h         *records.BatchHeader
	cfg       *topicconfig.Config
	topic     string
	partition int32
	nowMs     int64
	compacted bool // every record needs a key, so batches are always decoded
}

// Check applies the record-level rules to a batch of topic's partition
// whose header is valid, decompressing only when it must (see the package
// comment), and returns the batch to store: batch itself, or, when the
// topic's compression.type differs from the producer's codec, the batch
// rebuilt in that codec from records decoded once for both jobs. pass is
// the broker's opt-out of checking compressed records. storeDecodes is the
// partition store's decodesBatches: a batch its store will decode later
// (the forwarder merges small batches) must decode now, or it would be
// dropped after we acknowledged it. A rejection for the records' sake is
// an *Error.
func Check(h *records.BatchHeader, batch []byte, topic string, partition int32, pass, storeDecodes bool, cfg *topicconfig.Config, now time.Time) ([]byte, error) {
	v := batchValidation{h: h, cfg: cfg, topic: topic, partition: partition, nowMs: now.UnixMilli(), compacted: cfg.Compacts()}
	if cfg.Recompress && h.Compression() != cfg.Codec {
		return v.recompress(batch)
	}
	if h.Compression() != records.CodecNone && !v.compacted && pass && !storeDecodes {
		if err := records.CheckFrame(h.Compression(), batch[records.BatchHeaderLen:]); err != nil {
			return nil, err
		}
		if v.headerTimestampsOK() {
			return batch, nil
		}
		// Rare: a timestamp looks out of range. Decode the records so
		// the answer names exactly the records Kafka would.
	}
	it := scanPool.Scan(*h, batch[records.BatchHeaderLen:], v.inflateLimit())
	defer it.Close()
	return batch, v.check(it)
}

// inflateLimit is how far a batch may decompress.
func (v *batchValidation) inflateLimit() int {
	return max(MaxDecompressed, 4*int(v.cfg.MaxMessageBytes))
}

// headerTimestampsOK reports whether no record can break the timestamp
// rules, judging from the batch header alone: exact for LogAppendTime
// batches (every record carries MaxTimestamp), and for CreateTime batches
// a check of FirstTimestamp and MaxTimestamp, the bounds producers write.
// A record whose negative delta puts it before FirstTimestamp is not seen
// here; that is part of what passthrough gives up.
func (v *batchValidation) headerTimestampsOK() bool {
	h := v.h
	if h.HasLogAppendTime() {
		return v.timestampError(h.MaxTimestamp) == ""
	}
	if v.cfg.LogAppendTimestamps {
		return true
	}
	return v.timestampError(h.FirstTimestamp) == "" && v.timestampError(h.MaxTimestamp) == ""
}

// timestampError applies Kafka's validateTimestamp to a record timestamp
// of this batch: "" when it is fine, else the kind of problem ("range" or
// "type").
func (v *batchValidation) timestampError(ts int64) string {
	if !v.cfg.LogAppendTimestamps && ts != -1 {
		if outOfRange(v.nowMs, ts, v.cfg.TsBeforeMax, v.cfg.TsAfterMax) {
			return "range"
		}
		return ""
	}
	if v.h.HasLogAppendTime() {
		return "type"
	}
	return ""
}

func outOfRange(now, ts, beforeMax, afterMax int64) bool {
	diff := now - ts // cannot overflow for real clocks; saturate anyway
	if ts < 0 && diff < 0 {
		diff = math.MaxInt64
	}
	return diff > beforeMax || -diff > afterMax
}

// tp names the partition as Kafka's messages do ("topic-partition").
func (v *batchValidation) tp() string { return fmt.Sprintf("%s-%d", v.topic, v.partition) }

// scanPool bounds the batches decompressed at once across the process,
// and with them the decompression scratch (records.ScanPool).
var scanPool = records.NewScanPool(0)

// check walks every record of it (streaming through the decompressed
// body, or over records decoded already) and collects Kafka's per-record
// errors.
func (v *batchValidation) check(it *records.Scanner) error {
	h, cfg := v.h, v.cfg
	var errs []RecordError
	anyTimestamp := false
	for i := int32(0); it.Next(); i++ {
		r := it.Record()
		if r.OffsetDelta != i {
			errs = append(errs, RecordError{i, fmt.Sprintf("Inner record at index %d of the record batch has offset delta %d; offset deltas must count up from 0 in topic partition %s", i, r.OffsetDelta, v.tp())})
			continue
		}
		if v.compacted && r.KeyLen < 0 {
			errs = append(errs, RecordError{i, "Compacted topic cannot accept message without key in topic partition " + v.tp()})
			continue
		}
		ts := h.FirstTimestamp + r.TimestampDelta
		if h.HasLogAppendTime() {
			ts = h.MaxTimestamp
		}
		switch v.timestampError(ts) {
		case "range":
			anyTimestamp = true
			errs = append(errs, RecordError{i, fmt.Sprintf("Timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]",
				ts, h.BaseOffset+int64(r.OffsetDelta), satSub(v.nowMs, cfg.TsBeforeMax), satAdd(v.nowMs, cfg.TsAfterMax))})
		case "type":
			anyTimestamp = true
			// Kafka prints the record as DefaultRecord.toString does.
			errs = append(errs, RecordError{i, fmt.Sprintf("Invalid timestamp type in message DefaultRecord(offset=%d, timestamp=%d, key=%d bytes, value=%d bytes). Producer should not set timestamp type to LogAppendTime.",
				h.BaseOffset+int64(r.OffsetDelta), ts, max(0, r.KeyLen), max(0, r.ValueLen))})
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if len(errs) == 0 {
		return nil
	}
	code := kerr.InvalidRecord.Code
	if anyTimestamp {
		code = kerr.InvalidTimestamp.Code
	}
	return &Error{Code: code, Records: errs}
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satSub(a, b int64) int64 {
	if b > 0 && a < -math.MaxInt64+b {
		return -math.MaxInt64 - 1
	}
	return a - b
}

// recompressSlots bounds the batches being recompressed at once (each
// holds its decompressed records in memory), as scanPool bounds
// validation.
var recompressSlots = make(chan struct{}, scanPool.Slots())

// rawPool keeps the buffers batches are decompressed into for
// recompression; one larger than rawKeep is not kept.
var rawPool sync.Pool // *[]byte

const rawKeep = 4 << 20

// recompress validates a batch and rebuilds it in the topic's codec
// (compression.type), as Kafka's LogValidator does when the producer's
// codec differs: the body is decompressed once, into memory (bounded by
// inflateLimit and recompressSlots), its records checked there and then
// compressed again.
func (v *batchValidation) recompress(batch []byte) ([]byte, error) {
	recompressSlots <- struct{}{}
	defer func() { <-recompressSlots }()
	bp, _ := rawPool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer func() {
		if cap(*bp) <= rawKeep {
			rawPool.Put(bp)
		}
	}()
	raw, err := scanPool.Inflate((*bp)[:0], *v.h, batch[records.BatchHeaderLen:], v.inflateLimit())
	*bp = raw
	if err != nil {
		return nil, err
	}
	it := scanPool.ScanRaw(*v.h, raw)
	err = v.check(it)
	it.Close()
	if err != nil {
		return nil, err
	}
	return records.RecompressRaw(make([]byte, 0, len(batch)), *v.h, raw, v.cfg.Codec, v.cfg.CodecLevel)
}
