package console

// The message browser across all partitions of a topic: newest first,
// merged by timestamp, paged backwards with a cursor that holds, per
// partition, the offset below which the next page reads.

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// filteredWindow is how many offsets of a partition one backward step
// reads when a filter is on (without one, a page's worth).
const filteredWindow = 500

type partitionCursor struct {
	Partition   int32 `json:"partition"`
	StartOffset int64 `json:"start_offset"`
	EndOffset   int64 `json:"end_offset"`
	// Before is where this page began reading down from (exclusive).
	Before int64 `json:"before"`
}

type mergedPage struct {
	Topic      string            `json:"topic"`
	Partitions []partitionCursor `json:"partitions"`
	// Cursor is this page's position; Next the position of the older
	// page, "" when nothing older is left. Each is "P:OFFSET,..." and goes
	// back as the before parameter.
	Cursor  string       `json:"cursor"`
	Next    string       `json:"next"`
	Scanned int          `json:"scanned"`
	Partial bool         `json:"partial"` // stopped at a bound before the page was full
	Records []recordView `json:"records"`
}

func formatCursor(before map[int32]int64) string {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(before)) {
		parts = append(parts, fmt.Sprintf("%d:%d", p, before[p]))
	}
	return strings.Join(parts, ",")
}

func parseCursor(s string) (map[int32]int64, error) {
	out := map[int32]int64{}
	if s == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		ps, os, ok := strings.Cut(part, ":")
		p, err1 := strconv.ParseInt(ps, 10, 32)
		o, err2 := strconv.ParseInt(os, 10, 64)
		if !ok || err1 != nil || err2 != nil || p < 0 || o < 0 {
			return nil, errorf(http.StatusBadRequest, "before %q: want PARTITION:OFFSET,...", s)
		}
		out[int32(p)] = o
	}
	return out, nil
}

// browseAll answers partition=all: the newest records of every partition
// (below the cursor in before, or at or before timestamp), merged so the
// page runs newest first. Within a partition records stay in offset
// order, so each partition is consumed from the top down and the cursor
// never skips one; across partitions the record with the latest
// timestamp goes first.
func (c *Console) browseAll(r *http.Request) (any, error) {
	ctx := r.Context()
	topic := r.PathValue("topic")
	q := r.URL.Query()
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
	if q.Has("offset") || (q.Get("from") != "" && q.Get("from") != "latest" && q.Get("from") != "end") {
		return nil, errorf(http.StatusBadRequest, "partition=all reads newest first: give from=latest, timestamp or before (offsets are per partition)")
	}
	before, err := parseCursor(q.Get("before"))
	if err != nil {
		return nil, err
	}
	d, err := c.topicDetail(ctx, topic)
	if err != nil {
		return nil, err
	}
	starts, err := c.adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	ends, err := c.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	var after kadm.ListedOffsets // the first offset past the timestamp
	if q.Has("timestamp") {
		ts, err := queryInt(r, "timestamp", 0)
		if err != nil {
			return nil, err
		}
		if ts < 0 {
			return nil, errorf(http.StatusBadRequest, "timestamp %d: must be >= 0 (milliseconds since 1970)", ts)
		}
		if after, err = c.adm.ListOffsetsAfterMilli(ctx, ts+1, topic); err != nil {
			return nil, err
		}
	}
	mp := mergedPage{Topic: topic, Records: []recordView{}}
	for _, p := range slices.Sorted(maps.Keys(d.Partitions)) {
		so, _ := starts.Lookup(topic, p)
		eo, _ := ends.Lookup(topic, p)
		if so.Err != nil {
			return nil, so.Err
		}
		if eo.Err != nil {
			return nil, eo.Err
		}
		pc := partitionCursor{Partition: p, StartOffset: so.Offset, EndOffset: eo.Offset, Before: eo.Offset}
		if b, ok := before[p]; ok {
			pc.Before = b
		} else if a, ok := after.Lookup(topic, p); ok && a.Err == nil && a.Offset >= 0 {
			pc.Before = a.Offset
		}
		pc.Before = min(max(pc.Before, pc.StartOffset), pc.EndOffset)
		mp.Partitions = append(mp.Partitions, pc)
	}
	for p := range before {
		if _, ok := d.Partitions[p]; !ok {
			return nil, errorf(http.StatusNotFound, "topic %q has no partition %d (it has %d)", topic, p, len(d.Partitions))
		}
	}

	// Per partition, up to limit records below Before, newest last, and
	// how far down its read got.
	budget := &scanBudget{}
	tails := make([][]recordView, len(mp.Partitions))
	lows := make([]int64, len(mp.Partitions))
	for i, pc := range mp.Partitions {
		recs, low, scanned, partial, err := c.readBackwards(ctx, d.ID, topic, pc, int(limit), filter, budget)
		if err != nil {
			return nil, err
		}
		tails[i], lows[i], mp.Scanned = recs, low, mp.Scanned+scanned
		mp.Partial = mp.Partial || partial
	}
	// Merge from the top: take the head with the latest timestamp (the
	// lower partition on a tie, for a stable order).
	next := map[int32]int64{}
	cursor := map[int32]int64{}
	for _, pc := range mp.Partitions {
		next[pc.Partition], cursor[pc.Partition] = pc.Before, pc.Before
	}
	for len(mp.Records) < int(limit) {
		best := -1
		for i, t := range tails {
			if len(t) > 0 && (best < 0 || t[len(t)-1].Timestamp > tails[best][len(tails[best])-1].Timestamp) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		t := tails[best]
		rec := t[len(t)-1]
		tails[best] = t[:len(t)-1]
		mp.Records = append(mp.Records, rec)
		next[rec.Partition] = rec.Offset
	}
	// A partition with records left unshown resumes below its lowest shown
	// one (next holds it, or Before); one whose read was all shown resumes
	// where the read got down to (what lies between was filtered out).
	for i, pc := range mp.Partitions {
		if len(tails[i]) == 0 {
			next[pc.Partition] = lows[i]
		}
	}
	mp.Cursor = formatCursor(cursor)
	for _, pc := range mp.Partitions {
		if next[pc.Partition] > pc.StartOffset {
			mp.Next = formatCursor(next)
			break
		}
	}
	return mp, nil
}

// readBackwards reads the partition down from pc.Before in windows until
// it holds limit (matching) records or reaches the log start. It returns
// them in offset order and the offset the read got down to: every record
// from there to Before is in recs or did not match. When the budget runs
// out it stops (partial) at the last whole window.
func (c *Console) readBackwards(ctx context.Context, topicID [16]byte, topic string, pc partitionCursor, limit int, filter []byte, budget *scanBudget) (recs []recordView, low int64, scanned int, partial bool, err error) {
	low = pc.Before
	window := int64(limit)
	if len(filter) > 0 {
		window = max(window, filteredWindow)
	}
	for low > pc.StartOffset && len(recs) < limit {
		if budget.spent() {
			return recs, low, scanned, true, nil
		}
		lo := max(pc.StartOffset, low-window)
		pg := page{Topic: topic, Partition: pc.Partition, Next: lo, EndOffset: low, Records: []recordView{}}
		if err := c.readRange(ctx, topicID, &pg, int(low-lo), filter, budget); err != nil {
			return nil, 0, 0, false, err
		}
		scanned += pg.Scanned
		if pg.Partial {
			// Stopped inside the window: what it read leaves a gap above,
			// so none of it counts.
			return recs, low, scanned, true, nil
		}
		recs = append(pg.Records, recs...)
		low = lo
	}
	if len(recs) > limit {
		// The newest limit; the next read starts at the first kept one
		// and finds the dropped ones again.
		recs = recs[len(recs)-limit:]
		low = recs[0].Offset
	}
	return recs, low, scanned, false, nil
}
