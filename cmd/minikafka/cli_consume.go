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
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() {
	cliVerbs["consume"] = &cliVerb{cmd: cliCommand{
		usage: "TOPIC... | -regex RE [-offset start|end|N|@TIME] [-n COUNT] [-follow] [-format value|json|TEMPLATE] [-g GROUP]",
		summary: "Prints the records of one or more topics. Without -follow it stops at the end offsets the partitions\n" +
			"had when it started; with -follow it prints each record as it arrives until interrupted (Ctrl-C\n" +
			"prints and commits what was read, exit 0), waiting for topics that do not exist yet. -g reads as a member of a consumer group and commits\n" +
			"what it printed.",
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
	follow := c.fs.Bool("follow", false, "keep printing new records as they arrive until interrupted (or -n, or an explicit -timeout)")
	format := c.fs.String("format", "value", "value (the value, a line each), json (a JSON object a line), or a Go template such as '{{.Partition}} {{.Offset}} {{.Key}} {{.Value}}'")
	group := c.fs.String("g", "", "consume as a member of this consumer group, committing what is printed")
	parts := c.fs.String("p", "", "comma-separated partitions (default: all; one topic only)")
	regex := c.fs.String("regex", "", "consume every topic whose name matches this regular `expression` (instead of naming topics)")
	readCommitted := c.fs.Bool("read-committed", false, "skip records of aborted and open transactions")
	registry := c.fs.String("registry", "", "schema registry `URL`: print registry-framed keys and values (Avro, Protobuf, JSON) decoded, as JSON (cli_schema.go)")
	// A tail runs until interrupted: the common -timeout bounds it only
	// when given.
	c.untimed = func() bool { return *follow }
	return func(ctx context.Context) error {
		if *regex == "" {
			if err := c.needArgs(1, -1, "one or more topic names, or -regex"); err != nil {
				return err
			}
		} else if len(c.args) > 0 {
			return usagef("-regex and topic names: give one or the other")
		}
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
		if *registry != "" {
			write = decodingWriter(ctx, *registry, write)
		}
		if *group != "" && *parts != "" {
			return usagef("-p and -g: a group member reads what the group assigns it")
		}
		if *parts != "" && len(c.args) != 1 {
			return usagef("-p: name one topic")
		}
		// The topics and their end offsets now, so the consumer knows
		// where "the end" is and an unknown topic fails at once (a tail
		// waits for it: its metadata must then not be cached for kgo's
		// default 5 s).
		_, adm, err := c.client(kgo.MetadataMinAge(100 * time.Millisecond))
		if err != nil {
			return err
		}
		// A tail over a regex consumes every matching topic, those
		// created later too, through kgo's regex consuming.
		regexTail := *follow && *regex != ""
		topics := c.args
		if *regex != "" {
			if topics, err = matchTopics(ctx, adm, *regex); err != nil && !(regexTail && errors.Is(err, errNoMatch)) {
				return err
			}
			if regexTail && len(topics) == 0 {
				fmt.Fprintf(c.env.stderr, "minikafka consume: waiting for a topic matching %q to be created\n", *regex)
			}
		}
		// SIGINT and SIGTERM end the wait for topics and the loop below as
		// the end of the data does: what was read is printed (and
		// committed) and the exit is 0. The timeout (an explicit -timeout
		// with -follow) does the same.
		pollCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		// remaining: topic → partition → end offset not yet reached (none
		// for a regex tail, which reads what it finds as it goes).
		remaining := map[string]map[int32]int64{}
		appeared := map[string]bool{}
		if !regexTail {
			ends, err := adm.ListEndOffsets(ctx, topics...)
			if err != nil {
				return err
			}
			// A tail started before the producer waits for its topics, as
			// kcat -C and rpk topic consume do; a topic that appears meanwhile
			// is new to the tail, so it is read from its start.
			if *follow {
				if ends, err = waitTopics(pollCtx, c, adm, topics, ends, appeared); err != nil {
					return err
				}
				if pollCtx.Err() != nil {
					return nil // interrupted, or the -timeout of a follow, before a record
				}
			}
			for _, topic := range topics {
				if len(ends[topic]) == 0 {
					return fmt.Errorf("topic %s does not exist", topic)
				}
				for _, o := range ends[topic] {
					if o.Err != nil {
						return topicErr(topic, o.Err)
					}
				}
				remaining[topic] = map[int32]int64{}
				for p, o := range ends[topic] {
					remaining[topic][p] = o.Offset
				}
			}
			if *parts != "" {
				topic := topics[0]
				want := map[int32]int64{}
				for ps := range strings.SplitSeq(*parts, ",") {
					p, err := strconv.ParseInt(ps, 10, 32)
					if err != nil {
						return usagef("-p %q: want comma-separated partition numbers", *parts)
					}
					end, ok := remaining[topic][int32(p)]
					if !ok {
						return fmt.Errorf("topic %s has no partition %d", topic, p)
					}
					want[int32(p)] = end
				}
				remaining[topic] = want
			}
		}
		opts := []kgo.Opt{kgo.ConsumeResetOffset(start.reset()), kgo.FetchMaxWait(500 * time.Millisecond),
			kgo.FetchMaxPartitionBytes(8 << 20)}
		if *readCommitted {
			opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		}
		if *group != "" {
			opts = append(opts, kgo.ConsumerGroup(*group), kgo.DisableAutoCommit())
			if regexTail {
				// A following member also joins topics created later.
				opts = append(opts, kgo.ConsumeTopics(*regex), kgo.ConsumeRegex(), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(time.Second))
			} else {
				opts = append(opts, kgo.ConsumeTopics(topics...))
			}
			if !*follow {
				// Where the group's commit (or, without one, the reset
				// offset) is at the end already, nothing is waited for.
				offs, err := adm.FetchOffsets(ctx, *group)
				if err != nil {
					return err
				}
				for topic, rem := range remaining {
					from, err := start.resolve(ctx, adm, topic, rem)
					if err != nil {
						return err
					}
					for p, end := range rem {
						o := from[p]
						if c, ok := offs.Lookup(topic, p); ok && c.Err == nil && c.At >= 0 {
							o = c.At
						}
						if o >= end {
							delete(rem, p)
						}
					}
				}
			}
		} else if regexTail {
			// kgo finds new matching topics when it refreshes metadata:
			// every second, not its default 5 minutes. A topic found
			// later starts where -offset says (the start by default).
			opts = append(opts, kgo.ConsumeTopics(*regex), kgo.ConsumeRegex(), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(time.Second))
		} else {
			assign := map[string]map[int32]kgo.Offset{}
			for topic, rem := range remaining {
				spec := start
				if appeared[topic] {
					spec = startSpec{kind: 's'}
				}
				from, err := spec.resolve(ctx, adm, topic, rem)
				if err != nil {
					return err
				}
				ps := map[int32]kgo.Offset{}
				for p, o := range from {
					ps[p] = kgo.NewOffset().At(o)
					if !*follow && o >= rem[p] {
						delete(rem, p) // nothing to read there
					}
				}
				assign[topic] = ps
			}
			opts = append(opts, kgo.ConsumePartitions(assign))
		}
		c.close() // the consumer below has its own options
		c.cl = nil
		cl, _, err := c.client(opts...)
		if err != nil {
			return err
		}
		left := func() bool {
			for _, rem := range remaining {
				if len(rem) > 0 {
					return true
				}
			}
			return false
		}
		printed := 0
		var toCommit []*kgo.Record
		// commit commits what was printed; after an interrupt the poll's
		// context is done, so it gets a few seconds of its own.
		commit := func() error {
			if *group == "" || len(toCommit) == 0 {
				return nil
			}
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := cl.CommitRecords(cctx, toCommit...); err != nil {
				return fmt.Errorf("committing for group %s: %w", *group, err)
			}
			toCommit = toCommit[:0]
			return nil
		}
		for *follow || left() {
			if *count > 0 && printed >= *count {
				break
			}
			fs := cl.PollRecords(pollCtx, 10000)
			var ferr error
			fs.EachError(func(t string, p int32, err error) {
				if ferr == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
					ferr = fmt.Errorf("topic %s partition %d: %w", t, p, err)
				}
			})
			if ferr != nil {
				return ferr
			}
			for _, r := range fs.Records() {
				if *count > 0 && printed >= *count {
					break
				}
				if err := write(r); err != nil {
					return err
				}
				printed++
				toCommit = append(toCommit, r)
				if rem := remaining[r.Topic]; rem != nil {
					if end, ok := rem[r.Partition]; ok && r.Offset+1 >= end {
						delete(rem, r.Partition)
					}
				}
			}
			// Each fetch is on stdout before the next is waited for, so a
			// tail shows records as they arrive; a commit follows only
			// what was printed.
			if err := out.Flush(); err != nil {
				return err
			}
			if err := commit(); err != nil {
				return err
			}
			if pollCtx.Err() != nil {
				if *follow || ctx.Err() == nil {
					return nil // interrupted, or the -timeout of a follow
				}
				return fmt.Errorf("stopped after %d records: %w", printed, ctx.Err())
			}
			if *group != "" && !*follow {
				// A group member starts where the group committed;
				// partitions whose commit is at the end are done.
				if err := dropCommitted(ctx, c, *group, remaining); err != nil {
					return err
				}
			}
		}
		return out.Flush()
	}
}

// waitTopics waits until every topic has partitions, saying once on
// stderr which it waits for; it returns their end offsets and marks in
// appeared the topics that were missing. It returns early (nil error)
// when ctx ends.
func waitTopics(ctx context.Context, c *cliCmd, adm *kadm.Client, topics []string, ends kadm.ListedOffsets, appeared map[string]bool) (kadm.ListedOffsets, error) {
	missing := func() []string {
		var m []string
		for _, t := range topics {
			gone := len(ends[t]) == 0
			for _, o := range ends[t] {
				gone = gone || errors.Is(o.Err, kerr.UnknownTopicOrPartition)
			}
			if gone {
				m = append(m, t)
			}
		}
		return m
	}
	m := missing()
	if len(m) == 0 {
		return ends, nil
	}
	for _, t := range m {
		appeared[t] = true
	}
	fmt.Fprintf(c.env.stderr, "minikafka consume: waiting for topic %s to be created\n", strings.Join(m, ", "))
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for len(m) > 0 {
		select {
		case <-ctx.Done():
			return ends, nil
		case <-tick.C:
		}
		var err error
		if ends, err = adm.ListEndOffsets(ctx, topics...); err != nil {
			if ctx.Err() != nil {
				return ends, nil
			}
			return nil, err
		}
		m = missing()
	}
	return ends, nil
}

// matchTopics lists the topics whose names match expr anywhere, as kgo's
// ConsumeRegex matches (anchor with ^ and $), internal topics left out.
func matchTopics(ctx context.Context, adm *kadm.Client, expr string) ([]string, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, usagef("-regex %q: %v", expr, err)
	}
	td, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range td.Names() {
		if re.MatchString(name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w %q", errNoMatch, expr)
	}
	return out, nil
}

// errNoMatch is matchTopics' error when no topic matches.
var errNoMatch = errors.New("no topic matches")

// dropCommitted removes partitions whose committed offset reached their end.
func dropCommitted(ctx context.Context, c *cliCmd, group string, remaining map[string]map[int32]int64) error {
	n := 0
	for _, rem := range remaining {
		n += len(rem)
	}
	if n == 0 {
		return nil
	}
	adm := kadm.NewClient(c.cl)
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return err
	}
	for topic, rem := range remaining {
		for p, end := range rem {
			if o, ok := offs.Lookup(topic, p); ok && o.Err == nil && o.At >= end {
				delete(rem, p)
			}
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
