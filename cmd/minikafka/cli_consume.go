package main

// minikafka consume: records to stdout, from an offset, a timestamp or a
// group's commits.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() {
	cliVerbs["consume"] = &cliVerb{cmd: cliCommand{
		usage: "TOPIC [-offset start|end|N|@TIME] [-n COUNT] [-follow] [-format value|json|TEMPLATE] [-g GROUP]",
		summary: "Prints a topic's records. Without -follow it stops at the end offsets the partitions had when it\n" +
			"started; -g reads as a member of a consumer group and commits what it printed.",
		setup: consumeCmd,
	}}
}

// consumedRecord is a record as -format json and templates see it.
type consumedRecord struct {
	Topic     string           `json:"topic"`
	Partition int32            `json:"partition"`
	Offset    int64            `json:"offset"`
	Timestamp int64            `json:"timestamp"` // ms since the epoch
	Key       *string          `json:"key"`
	Value     *string          `json:"value"`
	Headers   []consumedHeader `json:"headers"`
}

type consumedHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func strOrNil(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// startSpec is -offset: start, end, an offset, -N (N before the end), or
// @TIME (ms since the epoch or RFC 3339).
type startSpec struct {
	kind byte  // 's' start, 'e' end, 'o' offset, 'r' relative to end, 't' time
	n    int64 // the offset, N, or the ms
}

func parseStartOffset(s string) (startSpec, error) {
	switch {
	case s == "start":
		return startSpec{kind: 's'}, nil
	case s == "end":
		return startSpec{kind: 'e'}, nil
	case strings.HasPrefix(s, "@"):
		ts := s[1:]
		if ms, err := strconv.ParseInt(ts, 10, 64); err == nil {
			return startSpec{'t', ms}, nil
		}
		t, err := time.Parse(time.RFC3339, ts)
		if err != nil {
			return startSpec{}, usagef("-offset %q: want @ms-since-epoch or @RFC3339 time", s)
		}
		return startSpec{'t', t.UnixMilli()}, nil
	case strings.HasPrefix(s, "-"):
		n, err := strconv.ParseInt(s[1:], 10, 64)
		if err != nil || n <= 0 {
			return startSpec{}, usagef("-offset %q: want -N, N records before the end", s)
		}
		return startSpec{'r', n}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return startSpec{}, usagef("-offset %q: want start, end, an offset, -N or @TIME", s)
	}
	return startSpec{'o', n}, nil
}

// reset is the spec as a group member's reset offset (where the group has
// no commit).
func (s startSpec) reset() kgo.Offset {
	switch s.kind {
	case 'e':
		return kgo.NewOffset().AtEnd()
	case 'o':
		return kgo.NewOffset().At(s.n)
	case 'r':
		return kgo.NewOffset().AtEnd().Relative(-s.n)
	case 't':
		return kgo.NewOffset().AfterMilli(s.n)
	}
	return kgo.NewOffset().AtStart()
}

// resolve turns the spec into an offset per partition, clamped to the
// partition's log start and end.
func (s startSpec) resolve(ctx context.Context, adm *kadm.Client, topic string, ends map[int32]int64) (map[int32]int64, error) {
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	var at kadm.ListedOffsets
	if s.kind == 't' {
		if at, err = adm.ListOffsetsAfterMilli(ctx, s.n, topic); err != nil {
			return nil, err
		}
	}
	out := map[int32]int64{}
	for p, end := range ends {
		lo := int64(0)
		if o, ok := starts.Lookup(topic, p); ok && o.Err == nil {
			lo = o.Offset
		}
		var from int64
		switch s.kind {
		case 's':
			from = lo
		case 'e':
			from = end
		case 'o':
			from = s.n
		case 'r':
			from = end - s.n
		case 't':
			from = end // no record at or after the time
			if o, ok := at.Lookup(topic, p); ok && o.Err == nil && o.Offset >= 0 {
				from = o.Offset
			}
		}
		out[p] = min(max(from, lo), end)
	}
	return out, nil
}

func consumeCmd(c *cliCmd) func(context.Context) error {
	offset := c.fs.String("offset", "start", "where to start: start, end, an offset, -N (N before the end), @TIME (ms or RFC 3339)")
	count := c.fs.Int("n", 0, "stop after this many records (0: no limit)")
	follow := c.fs.Bool("follow", false, "keep waiting for new records instead of stopping at the end")
	format := c.fs.String("format", "value", "value (the value, a line each), json (a JSON object a line), or a Go template such as '{{.Partition}} {{.Offset}} {{.Key}} {{.Value}}'")
	group := c.fs.String("g", "", "consume as a member of this consumer group, committing what is printed")
	parts := c.fs.String("p", "", "comma-separated partitions (default: all)")
	readCommitted := c.fs.Bool("read-committed", false, "skip records of aborted and open transactions")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "one topic name"); err != nil {
			return err
		}
		topic := c.args[0]
		start, err := parseStartOffset(*offset)
		if err != nil {
			return err
		}
		out := bufio.NewWriterSize(c.env.stdout, 64<<10)
		defer out.Flush()
		write, err := recordWriter(out, *format, c.json())
		if err != nil {
			return err
		}
		if *group != "" && *parts != "" {
			return usagef("-p and -g: a group member reads what the group assigns it")
		}
		// The topic and its end offsets now, so the consumer knows where
		// "the end" is and an unknown topic fails at once.
		_, adm, err := c.client()
		if err != nil {
			return err
		}
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return err
		}
		if len(ends[topic]) == 0 {
			return fmt.Errorf("topic %s does not exist", topic)
		}
		if err := ends.Error(); err != nil {
			return topicErr(topic, err)
		}
		want := map[int32]bool{}
		if *parts != "" {
			for ps := range strings.SplitSeq(*parts, ",") {
				p, err := strconv.ParseInt(ps, 10, 32)
				if err != nil {
					return usagef("-p %q: want comma-separated partition numbers", *parts)
				}
				if _, ok := ends[topic][int32(p)]; !ok {
					return fmt.Errorf("topic %s has no partition %d", topic, p)
				}
				want[int32(p)] = true
			}
		}
		remaining := map[int32]int64{} // partition → end offset not yet reached
		for p, o := range ends[topic] {
			if len(want) == 0 || want[p] {
				remaining[p] = o.Offset
			}
		}
		opts := []kgo.Opt{kgo.ConsumeResetOffset(start.reset()), kgo.FetchMaxWait(500 * time.Millisecond),
			kgo.FetchMaxPartitionBytes(8 << 20)}
		if *readCommitted {
			opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		}
		if *group != "" {
			opts = append(opts, kgo.ConsumerGroup(*group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit())
			if !*follow {
				// Where the group's commit (or, without one, the reset
				// offset) is at the end already, nothing is waited for.
				from, err := start.resolve(ctx, adm, topic, remaining)
				if err != nil {
					return err
				}
				offs, err := adm.FetchOffsets(ctx, *group)
				if err != nil {
					return err
				}
				for p, end := range remaining {
					o := from[p]
					if c, ok := offs.Lookup(topic, p); ok && c.Err == nil && c.At >= 0 {
						o = c.At
					}
					if o >= end {
						delete(remaining, p)
					}
				}
			}
		} else {
			from, err := start.resolve(ctx, adm, topic, remaining)
			if err != nil {
				return err
			}
			ps := map[int32]kgo.Offset{}
			for p, o := range from {
				ps[p] = kgo.NewOffset().At(o)
				if !*follow && o >= remaining[p] {
					delete(remaining, p) // nothing to read there
				}
			}
			opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: ps}))
		}
		c.close() // the consumer below has its own options
		c.cl = nil
		cl, _, err := c.client(opts...)
		if err != nil {
			return err
		}
		printed := 0
		for *follow || len(remaining) > 0 {
			if *count > 0 && printed >= *count {
				break
			}
			fs := cl.PollRecords(ctx, 10000)
			if ctx.Err() != nil {
				if *follow {
					return nil // the timeout ends a follow
				}
				return fmt.Errorf("stopped after %d records: %w", printed, ctx.Err())
			}
			var ferr error
			fs.EachError(func(t string, p int32, err error) {
				if ferr == nil && !errors.Is(err, context.Canceled) {
					ferr = fmt.Errorf("topic %s partition %d: %w", t, p, err)
				}
			})
			if ferr != nil {
				return ferr
			}
			var toCommit []*kgo.Record
			for _, r := range fs.Records() {
				if *count > 0 && printed >= *count {
					break
				}
				if err := write(r); err != nil {
					return err
				}
				printed++
				toCommit = append(toCommit, r)
				if end, ok := remaining[r.Partition]; ok && r.Offset+1 >= end {
					delete(remaining, r.Partition)
				}
			}
			if *group != "" && len(toCommit) > 0 {
				if err := out.Flush(); err != nil {
					return err
				}
				if err := cl.CommitRecords(ctx, toCommit...); err != nil {
					return fmt.Errorf("committing for group %s: %w", *group, err)
				}
			}
			if *group != "" && !*follow {
				// A group member starts where the group committed;
				// partitions whose commit is at the end are done.
				if err := dropCommitted(ctx, c, *group, topic, remaining); err != nil {
					return err
				}
			}
		}
		return out.Flush()
	}
}

// dropCommitted removes partitions whose committed offset reached their end.
func dropCommitted(ctx context.Context, c *cliCmd, group, topic string, remaining map[int32]int64) error {
	if len(remaining) == 0 {
		return nil
	}
	adm := kadm.NewClient(c.cl)
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return err
	}
	for p, end := range remaining {
		if o, ok := offs.Lookup(topic, p); ok && o.Err == nil && o.At >= end {
			delete(remaining, p)
		}
	}
	return nil
}

// recordWriter returns what prints one record in the chosen format.
func recordWriter(w io.Writer, format string, jsonOut bool) (func(*kgo.Record) error, error) {
	if jsonOut {
		format = "json"
	}
	toRec := func(r *kgo.Record) consumedRecord {
		cr := consumedRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli(),
			Key: strOrNil(r.Key), Value: strOrNil(r.Value), Headers: []consumedHeader{}}
		for _, h := range r.Headers {
			cr.Headers = append(cr.Headers, consumedHeader{h.Key, string(h.Value)})
		}
		return cr
	}
	switch format {
	case "value":
		return func(r *kgo.Record) error {
			if _, err := w.Write(r.Value); err != nil {
				return err
			}
			_, err := w.Write([]byte{'\n'})
			return err
		}, nil
	case "json":
		enc := json.NewEncoder(w)
		return func(r *kgo.Record) error { return enc.Encode(toRec(r)) }, nil
	}
	tmpl, err := template.New("format").Option("missingkey=error").Parse(format)
	if err != nil {
		return nil, usagef("-format: %v", err)
	}
	return func(r *kgo.Record) error {
		cr := toRec(r)
		// Templates see plain strings for key and value ("" for null).
		view := struct {
			consumedRecord
			Key, Value string
			Time       time.Time
		}{consumedRecord: cr, Time: r.Timestamp}
		if cr.Key != nil {
			view.Key = *cr.Key
		}
		if cr.Value != nil {
			view.Value = *cr.Value
		}
		if err := tmpl.Execute(w, view); err != nil {
			return err
		}
		_, err := w.Write([]byte{'\n'})
		return err
	}, nil
}
