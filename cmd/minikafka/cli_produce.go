package main

// minikafka produce: records from stdin, one a line.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	cliVerbs["produce"] = &cliVerb{cmd: cliCommand{
		usage: "TOPIC [-f FORMAT] [-k KEY] [-H key=value]... [-p PARTITION] [-z CODEC] [-acks all|1|0] < lines",
		summary: "Produces one record a line of stdin. The idempotent producer is the default (acks=all). A missing\n" +
			"topic is created if the broker creates topics on first use.",
		setup: produceCmd,
	}}
}

// kafkaUUID writes a topic ID as Kafka does (URL-safe base64, no padding).
func kafkaUUID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// lineFormat parses a line into a record: -f names the fields in order, %k
// key, %v value, %h headers (k=v pairs split by ','), %p partition, %t
// timestamp (ms since the epoch), with the text between them as
// separators, as kcat's -K and rpk's -f do; \t, \n, \r and \\ in it are
// escapes, as there. A separator holding \n makes a record span that many
// more lines of stdin. The default "%v" takes the whole line as the value.
type lineFormat struct {
	fields []byte   // 'k', 'v', 'h', 'p', 't'
	seps   []string // seps[i] follows fields[i]; the last is "" (rest of line)
	lines  int      // lines of stdin a record takes
}

// unescapeFormat replaces -f's backslash escapes.
func unescapeFormat(f string) (string, error) {
	if !strings.Contains(f, `\`) {
		return f, nil
	}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '\\' {
			b.WriteByte(f[i])
			continue
		}
		if i+1 >= len(f) {
			return "", usagef("-f '%s': a lone \\ at the end", f)
		}
		i++
		switch f[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		default:
			return "", usagef("-f '%s': unknown escape \\%c (want \\t \\n \\r \\\\)", f, f[i])
		}
	}
	return b.String(), nil
}

func parseLineFormat(raw string) (lineFormat, error) {
	lf := lineFormat{lines: 1}
	f, err := unescapeFormat(raw)
	if err != nil {
		return lf, err
	}
	// A record ends at the end of its line anyway: a final newline, as
	// rpk's formats end, adds nothing.
	f = strings.TrimSuffix(f, "\n")
	lit := strings.Builder{}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			lit.WriteByte(f[i])
			continue
		}
		if i+1 >= len(f) {
			return lf, usagef("-f %q: a lone %% at the end", raw)
		}
		i++
		switch f[i] {
		case '%':
			lit.WriteByte('%')
			continue
		case 'k', 'v', 'h', 'p', 't':
		default:
			return lf, usagef("-f %q: unknown field %%%c (want %%k %%v %%h %%p %%t)", raw, f[i])
		}
		if len(lf.fields) == 0 && lit.Len() > 0 {
			return lf, usagef("-f %q: text before the first field", raw)
		}
		if len(lf.fields) > 0 {
			if lit.Len() == 0 {
				return lf, usagef("-f %q: two fields with nothing between them", raw)
			}
			lf.seps[len(lf.seps)-1] = lit.String()
			lf.lines += strings.Count(lit.String(), "\n")
		}
		lit.Reset()
		lf.fields = append(lf.fields, f[i])
		lf.seps = append(lf.seps, "")
	}
	if len(lf.fields) == 0 {
		return lf, usagef("-f %q: no field", raw)
	}
	if lit.Len() > 0 {
		return lf, usagef("-f %q: text after the last field", raw)
	}
	return lf, nil
}

// ensureTopic asks for topic's metadata allowing auto-creation, and fails
// naming the topic if it neither exists nor was created.
func ensureTopic(ctx context.Context, cl *kgo.Client, topic string) error {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		switch err := kerr.ErrorForCode(t.ErrorCode); {
		case err == nil, errors.Is(err, kerr.LeaderNotAvailable):
			return nil // exists, or just created and electing
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			return fmt.Errorf("topic %s does not exist (and the broker does not create topics on first use)", topic)
		default:
			return topicErr(topic, err)
		}
	}
	return fmt.Errorf("topic %s does not exist", topic)
}

// parse fills r from line; key and value alias line's bytes.
func (lf lineFormat) parse(line []byte, r *kgo.Record) error {
	rest := line
	for i, f := range lf.fields {
		val := rest
		if sep := lf.seps[i]; sep != "" {
			var ok bool
			val, rest, ok = bytes.Cut(rest, []byte(sep))
			if !ok {
				return fmt.Errorf("no %q after field %%%c", sep, f)
			}
		}
		switch f {
		case 'k':
			r.Key = val
		case 'v':
			r.Value = val
		case 'h':
			for kv := range strings.SplitSeq(string(val), ",") {
				if kv == "" {
					continue
				}
				k, v, _ := strings.Cut(kv, "=")
				r.Headers = append(r.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
			}
		case 'p':
			p, err := strconv.ParseInt(string(val), 10, 32)
			if err != nil || p < 0 {
				return fmt.Errorf("partition %q is not a partition number", val)
			}
			r.Partition = int32(p)
		case 't':
			ms, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil {
				return fmt.Errorf("timestamp %q is not milliseconds since the epoch", val)
			}
			r.Timestamp = time.UnixMilli(ms)
		}
	}
	return nil
}

func produceCmd(c *cliCmd) func(context.Context) error {
	format := c.fs.String("f", "%v", "line `format`: %k key, %v value, %h headers (k=v,k=v), %p partition, %t timestamp ms, with separators between (\\t, \\n escapes; a \\n separator spans lines)")
	key := c.fs.String("k", "", "key for every record (when the format has no %k)")
	var headers multiFlag
	c.fs.Var(&headers, "H", "header `key=value` for every record (repeatable)")
	partition := c.fs.Int("p", -1, "partition for every record (-1: the partitioner's choice, or %p)")
	codec := c.fs.String("z", "none", "compression: none, gzip, snappy, lz4, zstd")
	acks := c.fs.String("acks", "all", "acks: all, 1 or 0 (1 and 0 turn the idempotent producer off)")
	idempotent := c.fs.Bool("idempotent", true, "idempotent producer (needs acks=all)")
	maxLine := c.fs.Int("max-line-bytes", 1<<20, "longest line accepted")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "one topic name"); err != nil {
			return err
		}
		topic := c.args[0]
		lf, err := parseLineFormat(*format)
		if err != nil {
			return err
		}
		var hs []kgo.RecordHeader
		for _, kv := range headers {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usagef("-H %q: want key=value", kv)
			}
			hs = append(hs, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
		// A deep buffer keeps batches full while stdin is read (as
		// librdkafka's queue.buffering.max.messages does).
		opts := []kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5 * time.Millisecond), kgo.MaxBufferedRecords(256 << 10)}
		switch *codec {
		case "none":
			opts = append(opts, kgo.ProducerBatchCompression(kgo.NoCompression()))
		case "gzip":
			opts = append(opts, kgo.ProducerBatchCompression(kgo.GzipCompression()))
		case "snappy":
			opts = append(opts, kgo.ProducerBatchCompression(kgo.SnappyCompression()))
		case "lz4":
			opts = append(opts, kgo.ProducerBatchCompression(kgo.Lz4Compression()))
		case "zstd":
			opts = append(opts, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
		default:
			return usagef("-z %q: want none, gzip, snappy, lz4 or zstd", *codec)
		}
		switch *acks {
		case "all", "-1":
			opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
			if !*idempotent {
				opts = append(opts, kgo.DisableIdempotentWrite())
			}
		case "1":
			opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
		case "0":
			opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
		default:
			return usagef("-acks %q: want all, 1 or 0", *acks)
		}
		manual := *partition >= 0 || strings.Contains(*format, "%p")
		if manual {
			opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		}
		// A missing topic is created where the broker creates topics on
		// first use (auto.create.topics.enable), as kcat's produce does.
		opts = append(opts, kgo.AllowAutoTopicCreation())
		cl, _, err := c.client(opts...)
		if err != nil {
			return err
		}
		// Fail at once, naming the topic, rather than retrying an unknown
		// topic until the timeout.
		if err := ensureTopic(ctx, cl, topic); err != nil {
			return err
		}

		var (
			sent, failed atomic.Int64
			firstMu      sync.Mutex
			firstErr     error
			wg           sync.WaitGroup
		)
		done := func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
				firstMu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				firstMu.Unlock()
			}
			wg.Done()
		}
		sc := bufio.NewScanner(c.env.stdin)
		sc.Buffer(make([]byte, 0, 64<<10), *maxLine)
		line := 0
		// Records and their bytes come from slabs: one allocation per
		// thousand records instead of three per record.
		var recs []kgo.Record
		var arena []byte
		var multi []byte // the lines so far of a record that spans several
		got := 0         // how many lines multi holds
		for sc.Scan() {
			line++
			text := sc.Bytes()
			if lf.lines > 1 {
				if got > 0 {
					multi = append(multi, '\n')
				}
				multi = append(multi, text...)
				if got++; got < lf.lines {
					continue
				}
				text, got = multi, 0
				multi = multi[:0]
			}
			if len(recs) == 0 {
				recs = make([]kgo.Record, 1024)
			}
			r := &recs[0]
			recs = recs[1:]
			if cap(arena)-len(arena) < len(text) {
				arena = make([]byte, 0, max(256<<10, len(text)))
			}
			start := len(arena)
			arena = append(arena, text...)
			text = arena[start:len(arena):len(arena)]
			if *key != "" {
				r.Key = []byte(*key)
			}
			r.Headers = append(r.Headers, hs...)
			if err := lf.parse(text, r); err != nil {
				wg.Wait()
				return usagef("line %d: %v", line, err)
			}
			if *partition >= 0 {
				r.Partition = int32(*partition)
			}
			wg.Add(1)
			cl.Produce(ctx, r, done)
			sent.Add(1)
		}
		if err := sc.Err(); err != nil {
			wg.Wait()
			return fmt.Errorf("reading stdin after line %d: %w", line, err)
		}
		if got > 0 {
			wg.Wait()
			return usagef("line %d: the input ends inside a record (-f takes %d lines a record)", line, lf.lines)
		}
		wg.Wait()
		n, bad := sent.Load(), failed.Load()
		if c.json() {
			if err := c.printJSON(map[string]any{"topic": topic, "produced": n - bad, "failed": bad}); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(c.env.stdout, "produced %s to %s\n", plural(n-bad, "record"), topic)
		}
		if bad > 0 && n == 1 {
			return fmt.Errorf("the record failed: %w", firstErr)
		}
		if bad > 0 {
			return fmt.Errorf("%d of %d records failed, the first: %w", bad, n, firstErr)
		}
		return nil
	}
}

// plural is "1 record", "2 records".
func plural[N int64 | int](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
