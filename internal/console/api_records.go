package console

// The message browser: a page of a partition's records from an offset, a
// timestamp or the end, optionally filtered; and producing one record.

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Bounds on one page.
const (
	defaultPageRecords = 50
	maxPageRecords     = 500
	maxFilterBytes     = 256
	fetchBytes         = 1 << 20  // asked of the broker per fetch
	maxScanBytes       = 32 << 20 // batch bytes one page may read while filtering
	maxShownBytes      = 64 << 10 // a key or value longer than this is cut
	maxPageBytes       = 4 << 20  // keys and values of one page, after cutting
)

type headerView struct {
	Key   string `json:"key"`
	Value []byte `json:"value"` // base64 in JSON
}

type recordView struct {
	Partition int32        `json:"partition"`
	Offset    int64        `json:"offset"`
	Timestamp int64        `json:"timestamp"`
	Key       []byte       `json:"key"`   // base64; null for a null key
	Value     []byte       `json:"value"` // base64; null for a tombstone
	KeyLen    int          `json:"key_len"`
	ValueLen  int          `json:"value_len"`
	Truncated bool         `json:"truncated"` // key or value cut to maxShownBytes
	Headers   []headerView `json:"headers"`
	// Registry-framed keys and values, decoded through their schema.
	KeyDecoded   *decoded `json:"key_decoded,omitempty"`
	ValueDecoded *decoded `json:"value_decoded,omitempty"`
}

type page struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	StartOffset int64  `json:"start_offset"` // the partition's log start
	EndOffset   int64  `json:"end_offset"`   // its high watermark
	From        int64  `json:"from"`         // where this page began reading
	// Next is where the following page begins; Prev where the previous
	// one began, assuming no filter (the page keeps its own history).
	Next    int64        `json:"next"`
	Prev    int64        `json:"prev"`
	Scanned int          `json:"scanned"` // records read, matching or not
	Partial bool         `json:"partial"` // stopped at a bound before the page was full
	Records []recordView `json:"records"`
}

func queryInt(r *http.Request, name string, def int64) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errorf(http.StatusBadRequest, "%s %q: not an integer", name, s)
	}
	return n, nil
}

func (c *Console) browse(r *http.Request) (any, error) {
	ctx := r.Context()
	topic := r.PathValue("topic")
	q := r.URL.Query()
	if q.Get("partition") == "all" {
		return c.browseAll(r)
	}
	part, err := queryInt(r, "partition", 0)
	if err != nil {
		return nil, err
	}
	limit, err := queryInt(r, "limit", defaultPageRecords)
	if err != nil {
		return nil, err
	}
	if limit < 1 || limit > maxPageRecords {
		return nil, errorf(http.StatusBadRequest, "limit %d: want 1..%d", limit, maxPageRecords)
	}
	filter := []byte(q.Get("filter"))
	if len(filter) > maxFilterBytes {
		return nil, errorf(http.StatusBadRequest, "filter longer than %d bytes", maxFilterBytes)
	}
	d, err := c.topicDetail(ctx, topic)
	if err != nil {
		return nil, err
	}
	if _, ok := d.Partitions[int32(part)]; !ok || part < 0 || part > 1<<31-1 {
		return nil, errorf(http.StatusNotFound, "topic %q has no partition %d (it has %d)", topic, part, len(d.Partitions))
	}
	p := page{Topic: topic, Partition: int32(part), Records: []recordView{}}
	starts, err := c.adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	ends, err := c.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	so, _ := starts.Lookup(topic, p.Partition)
	eo, _ := ends.Lookup(topic, p.Partition)
	if so.Err != nil {
		return nil, so.Err
	}
	if eo.Err != nil {
		return nil, eo.Err
	}
	p.StartOffset, p.EndOffset = so.Offset, eo.Offset

	switch {
	case q.Has("offset"):
		off, err := queryInt(r, "offset", 0)
		if err != nil {
			return nil, err
		}
		if off < 0 {
			return nil, errorf(http.StatusBadRequest, "offset %d: must be >= 0", off)
		}
		p.From = min(max(off, p.StartOffset), p.EndOffset)
	case q.Has("timestamp"):
		ts, err := queryInt(r, "timestamp", 0)
		if err != nil {
			return nil, err
		}
		if ts < 0 {
			return nil, errorf(http.StatusBadRequest, "timestamp %d: must be >= 0 (milliseconds since 1970)", ts)
		}
		lo, err := c.adm.ListOffsetsAfterMilli(ctx, ts, topic)
		if err != nil {
			return nil, err
		}
		o, _ := lo.Lookup(topic, p.Partition)
		if o.Err != nil {
			return nil, o.Err
		}
		p.From = p.EndOffset // no record at or after ts
		if o.Offset >= 0 {
			p.From = min(max(o.Offset, p.StartOffset), p.EndOffset)
		}
	default:
		switch from := q.Get("from"); from {
		case "", "start":
			p.From = p.StartOffset
		case "latest", "end":
			p.From = max(p.StartOffset, p.EndOffset-limit)
		default:
			return nil, errorf(http.StatusBadRequest, "from %q: want start or latest (or give offset or timestamp)", from)
		}
	}
	p.Prev = max(p.StartOffset, p.From-limit)
	p.Next = p.From
	if err := c.readPage(ctx, d.ID, &p, int(limit), filter); err != nil {
		return nil, err
	}
	return p, nil
}

// readPage fetches from p.Next until the page holds limit records, the
// end offset is reached or a bound is hit.
func (c *Console) readPage(ctx context.Context, topicID [16]byte, p *page, limit int, filter []byte) error {
	return c.readRange(ctx, topicID, p, limit, filter, &scanBudget{})
}

// scanBudget is what one API request has read so far, against
// maxScanBytes and maxPageBytes.
type scanBudget struct{ scanned, shown int64 }

func (b *scanBudget) spent() bool { return b.scanned >= maxScanBytes || b.shown >= maxPageBytes }

// readRange is readPage with the budget shared by the caller; it reads
// below p.EndOffset only.
func (c *Console) readRange(ctx context.Context, topicID [16]byte, p *page, limit int, filter []byte, budget *scanBudget) error {
	for len(p.Records) < limit && p.Next < p.EndOffset {
		if budget.spent() {
			p.Partial = true
			return nil
		}
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 0
		req.MaxBytes = fetchBytes
		req.SessionEpoch = -1 // a full fetch, no session to keep
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = p.Topic, topicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p.Partition, p.Next, fetchBytes
		rp.CurrentLeaderEpoch, rp.LogStartOffset = -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, c.cl)
		if err != nil {
			return err
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return err
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return errorf(http.StatusBadGateway, "fetch answered %d topics", len(resp.Topics))
		}
		raw := &resp.Topics[0].Partitions[0]
		budget.scanned += int64(len(raw.RecordBatches))
		fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			Offset: p.Next, Topic: p.Topic, Partition: p.Partition, IsolationLevel: kgo.ReadUncommitted(),
		}, raw, kgo.DefaultDecompressor(), nil)
		if fp.Err != nil {
			return fp.Err
		}
		for _, rec := range fp.Records {
			if rec.Offset < p.Next {
				continue
			}
			if rec.Offset >= p.EndOffset {
				return nil // a batch reaching past the range
			}
			p.Scanned++
			p.Next = rec.Offset + 1
			if len(filter) > 0 && !bytes.Contains(rec.Key, filter) && !bytes.Contains(rec.Value, filter) {
				continue
			}
			v := view(rec)
			// Decoded from the whole key and value, not the cut ones.
			v.KeyDecoded, v.ValueDecoded = c.decode(ctx, rec.Key), c.decode(ctx, rec.Value)
			budget.shown += int64(len(v.Key) + len(v.Value))
			p.Records = append(p.Records, v)
			if len(p.Records) == limit {
				return nil
			}
		}
		if next <= p.Next && len(fp.Records) == 0 {
			break // nothing more to read below the high watermark
		}
		p.Next = max(p.Next, next)
	}
	return nil
}

func view(rec *kgo.Record) recordView {
	v := recordView{Partition: rec.Partition, Offset: rec.Offset, Timestamp: rec.Timestamp.UnixMilli(), Key: rec.Key, Value: rec.Value,
		KeyLen: len(rec.Key), ValueLen: len(rec.Value), Headers: []headerView{}}
	if len(v.Key) > maxShownBytes {
		v.Key, v.Truncated = v.Key[:maxShownBytes], true
	}
	if len(v.Value) > maxShownBytes {
		v.Value, v.Truncated = v.Value[:maxShownBytes], true
	}
	for _, h := range rec.Headers {
		hv := headerView{Key: h.Key, Value: h.Value}
		if len(hv.Value) > maxShownBytes {
			hv.Value, v.Truncated = hv.Value[:maxShownBytes], true
		}
		v.Headers = append(v.Headers, hv)
	}
	return v
}

type produceReq struct {
	// Partition -1 (or absent) lets the key choose, as Kafka's default
	// partitioner does.
	Partition *int32  `json:"partition"`
	Key       *string `json:"key"`
	Value     *string `json:"value"`
	Headers   []struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	} `json:"headers"`
}

func (c *Console) produce(r *http.Request) (any, error) {
	ctx := r.Context()
	topic := r.PathValue("topic")
	var req produceReq
	if err := readJSON(r, &req); err != nil {
		return nil, err
	}
	d, err := c.topicDetail(ctx, topic)
	if err != nil {
		return nil, err
	}
	rec := &kgo.Record{Topic: topic, Timestamp: time.Now()}
	if req.Key != nil {
		rec.Key = []byte(*req.Key)
	}
	if req.Value != nil {
		rec.Value = []byte(*req.Value)
	}
	for _, h := range req.Headers {
		if h.Key == "" {
			return nil, errorf(http.StatusBadRequest, "headers: empty header key")
		}
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)})
	}
	n := len(d.Partitions)
	switch {
	case req.Partition == nil || *req.Partition == -1:
		rec.Partition = int32(kgo.StickyKeyPartitioner(nil).ForTopic(topic).Partition(rec, n))
	case *req.Partition < 0 || int(*req.Partition) >= n:
		return nil, errorf(http.StatusBadRequest, "partition %d: topic %q has partitions 0..%d", *req.Partition, topic, n-1)
	default:
		rec.Partition = *req.Partition
	}
	if err := c.cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return nil, err
	}
	return created{map[string]any{"topic": topic, "partition": rec.Partition, "offset": rec.Offset}}, nil
}
