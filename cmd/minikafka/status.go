package main

// minikafka forward-status: the forwarding state of a running broker, read
// over the Kafka protocol (DescribeConfigs of the read-only entries
// minikafka.forward.partitions and minikafka.forward.group.offsets on every
// topic), so it needs nothing but the broker's client port.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/uplink"
)

// forwardPartitionsConfig is the DescribeConfigs entry holding a topic's
// per-partition forwarding state as JSON (broker/uplink).
const forwardPartitionsConfig = "minikafka.forward.partitions"

// forwardGroupOffsetsConfig holds a topic's consumer group offset sync rows
// as JSON (-forward-group-offsets, broker/uplink). Brokers before it
// leave it out, which reads as no rows.
const forwardGroupOffsetsConfig = "minikafka.forward.group.offsets"

// runForwardStatus implements `minikafka forward-status`.
func runForwardStatus(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("minikafka forward-status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := "localhost:9092"
	if v, ok := lookupEnv("MINIKAFKA_BROKERS"); ok && v != "" {
		def = v
	}
	// -b and -brokers as every client verb has them; -bootstrap as before.
	bootstrap := fs.String("bootstrap", def, "`host:port` of the broker to ask (env MINIKAFKA_BROKERS)")
	fs.StringVar(bootstrap, "b", def, "short for -bootstrap")
	fs.StringVar(bootstrap, "brokers", def, "same as -bootstrap")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after this long")
	asJSON := fs.Bool("json", false, "print the state as JSON (one array of partitions); same as -o json")
	output := fs.String("o", "table", "output: table or json (as every client verb)")
	groups := fs.Bool("groups", false, "with -json, print the consumer group offset sync rows instead of the partitions")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: minikafka forward-status [flags] [topic...]\n\nPrints, per forwarded partition of a running broker (of the given topics,\nor all): upstream topic, local high watermark, upstream-acknowledged\noffset, lag in records, spool bytes and pressure, spool encryption (cipher and key ID), the upstream producer\n(ID/epoch, and how often the upstream forgot it), state and last error.\n\nWith -forward-group-offsets or -forward-checkpoints on the broker, a\nsecond table follows: per local consumer group and forwarded partition,\nthe group's local committed offset, its translation upstream, what the\nupstream group has committed, the last MirrorMaker 2 checkpoint written,\nthe lag in records (of the upstream group, else of the checkpoint), when\nit was last synced and why not.\n-o json (or -json) prints the partitions only; with -groups the group rows.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stdout, stderr, "its flags"); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch *output {
	case "table":
	case "json":
		*asJSON = true
	default:
		fmt.Fprintf(stderr, "minikafka forward-status: -o %q: want table or json\n", *output)
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	stats, syncs, err := fetchForwardStats(ctx, *bootstrap, fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "minikafka forward-status: %v\n", err)
		return 1
	}
	if *asJSON && *groups {
		if syncs == nil {
			syncs = []uplink.GroupOffsetSync{}
		}
		js, _ := json.MarshalIndent(syncs, "", "  ")
		fmt.Fprintf(stdout, "%s\n", js)
		return 0
	}
	if *asJSON {
		if stats == nil {
			stats = []uplink.ForwardStat{}
		}
		js, _ := json.MarshalIndent(stats, "", "  ")
		fmt.Fprintf(stdout, "%s\n", js)
		return 0
	}
	if len(stats) == 0 {
		fmt.Fprintf(stdout, "no forwarded partitions on %s\n", *bootstrap)
		return 0
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "TOPIC\tPARTITION\tUPSTREAM TOPIC\tHIGH WATERMARK\tUPSTREAM ACKED\tLAG\tSPOOL BYTES\tPRESSURE\tENCRYPTION\tPRODUCER\tSTATE\tLAST ERROR")
	for _, s := range stats {
		lastErr := s.LastError
		if lastErr == "" {
			lastErr = "-"
		}
		enc := "off"
		if s.Encryption != "" {
			enc = s.Encryption + " key " + s.KeyID
		}
		producer := "-"
		if s.ProducerID >= 0 {
			producer = fmt.Sprintf("%d/%d", s.ProducerID, s.ProducerEpoch)
			if s.ProducerResets > 0 {
				producer += fmt.Sprintf("(%d resets)", s.ProducerResets)
			}
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%d\t%d\t%d\t%.1f%%\t%s\t%s\t%s\t%s\n", s.Topic, s.Partition, s.UpstreamTopic,
			s.HighWatermark, s.UpstreamAcked, s.Lag, s.SpoolBytes, 100*s.Pressure, enc, producer, s.State, strings.ReplaceAll(lastErr, "\n", " "))
	}
	w.Flush()
	if s := stats[0]; s.TransactionalID != "" && s.TransactionalProducerID >= 0 {
		// Shown once transactions were shipped this run.
		fmt.Fprintf(stdout, "\ncommitted transactions ship as upstream transactional ID %s (producer %d), %d upstream transactions committed since start\n",
			s.TransactionalID, s.TransactionalProducerID, s.TransactionRounds)
	}
	if len(syncs) > 0 {
		fmt.Fprintln(stdout)
		printGroupSyncs(stdout, syncs, time.Now())
	}
	return 0
}

// printGroupSyncs prints the group offset sync table; SYNCED is the age
// of the last sync pass as of now.
func printGroupSyncs(out io.Writer, syncs []uplink.GroupOffsetSync, now time.Time) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tTOPIC\tPARTITION\tLOCAL OFFSET\tUPSTREAM OFFSET\tUPSTREAM COMMITTED\tCHECKPOINT\tLAG\tSYNCED\tERROR")
	off := func(o int64) string {
		if o < 0 {
			return "-"
		}
		return strconv.FormatInt(o, 10)
	}
	for _, g := range syncs {
		synced := "-"
		if !g.SyncedAt.IsZero() {
			synced = max(0, now.Sub(g.SyncedAt)).Truncate(100*time.Millisecond).String() + " ago"
		}
		lag := "-" // untranslatable: no lag is known
		if g.UpstreamOffset >= 0 {
			lag = strconv.FormatInt(g.Lag, 10)
		}
		errText := g.Err
		if errText == "" {
			errText = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.Group, g.Topic, g.Partition, off(g.LocalOffset),
			off(g.UpstreamOffset), off(g.Committed), off(g.Checkpoint), lag, synced, strings.ReplaceAll(errText, "\n", " "))
	}
	w.Flush()
}

// fetchForwardStats asks the broker at addr for the forwarding state of
// topics (all when empty): partitions and group offset sync rows.
func fetchForwardStats(ctx context.Context, addr string, topics []string) ([]uplink.ForwardStat, []uplink.GroupOffsetSync, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addr, ",")...), kgo.RequestRetries(1), kgo.DialTimeout(5*time.Second))
	if err != nil {
		return nil, nil, fmt.Errorf("bootstrap %q: %w", addr, err)
	}
	defer cl.Close()
	if len(topics) == 0 {
		meta := kmsg.NewPtrMetadataRequest()
		resp, err := meta.RequestWith(ctx, cl)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot reach the broker at %s: %w", addr, err)
		}
		for _, t := range resp.Topics {
			if t.Topic != nil && !t.IsInternal && !strings.HasPrefix(*t.Topic, "__") {
				topics = append(topics, *t.Topic)
			}
		}
		if len(topics) == 0 {
			return nil, nil, nil
		}
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, t := range topics {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType = kmsg.ConfigResourceTypeTopic
		r.ResourceName = t
		r.ConfigNames = []string{forwardPartitionsConfig, forwardGroupOffsetsConfig}
		req.Resources = append(req.Resources, r)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot reach the broker at %s: %w", addr, err)
	}
	var out []uplink.ForwardStat
	var syncs []uplink.GroupOffsetSync
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return nil, nil, fmt.Errorf("topic %s: %w", r.ResourceName, err)
		}
		for _, c := range r.Configs {
			if c.Value == nil {
				continue
			}
			var err error
			switch c.Name {
			case forwardPartitionsConfig:
				out, err = appendJSONRows(out, *c.Value)
			case forwardGroupOffsetsConfig:
				syncs, err = appendJSONRows(syncs, *c.Value)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("topic %s: bad %s: %w", r.ResourceName, c.Name, err)
			}
		}
	}
	// Each topic's rows come sorted; across topics, order by group first
	// as the broker does.
	slices.SortStableFunc(syncs, uplink.CompareGroupOffsetSyncs)
	return out, syncs, nil
}

// appendJSONRows appends the rows of a JSON array config value to dst.
func appendJSONRows[T any](dst []T, value string) ([]T, error) {
	var rows []T
	if err := json.Unmarshal([]byte(value), &rows); err != nil {
		return dst, err
	}
	return append(dst, rows...), nil
}
