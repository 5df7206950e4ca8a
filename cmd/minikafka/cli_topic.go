package main

// minikafka topic create|list|describe|delete|alter-config|add-partitions|trim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() {
	cliVerbs["topic"] = &cliVerb{summary: "Creates, lists, describes, changes and deletes topics.", sub: map[string]cliCommand{
		"create":         {"TOPIC... [-p N] [-r N] [-c key=value]...", "create topics", topicCreate},
		"list":           {"[-a]", "list topics with their partition counts", topicList},
		"describe":       {"TOPIC...", "partitions with their offsets, and the configs set on the topic", topicDescribe},
		"delete":         {"TOPIC...", "delete topics", topicDelete},
		"alter-config":   {"TOPIC... [-set key=value]... [-delete key]...", "set or remove topic configs", topicAlterConfig},
		"add-partitions": {"TOPIC... -n N", "add N partitions to each topic", topicAddPartitions},
		"trim":           {"TOPIC [-p PARTITION] -offset N|end", "delete records below an offset (DeleteRecords)", topicTrim},
	}}
}

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// keyValues parses key=value flags.
func keyValues(kvs []string, flagName string) (map[string]*string, error) {
	out := map[string]*string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("-%s %q: want key=value", flagName, kv)
		}
		out[k] = &v
	}
	return out, nil
}

// topicErr names the topic in a per-topic error.
func topicErr(topic string, err error) error {
	if errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID) {
		return fmt.Errorf("topic %s does not exist", topic)
	}
	return fmt.Errorf("topic %s: %w", topic, err)
}

// reasonErr is a broker's per-item error with the reason it gave in
// error_message: the code's name and the reason ("INVALID_CONFIG: unknown
// topic config bogus"), or the code's generic text when it gave none.
type reasonErr struct {
	err    error
	reason string
}

func (e reasonErr) Error() string {
	var ke *kerr.Error
	if e.reason == "" || !errors.As(e.err, &ke) {
		return e.err.Error()
	}
	return ke.Message + ": " + e.reason
}

func (e reasonErr) Unwrap() error { return e.err }

// withReason pairs err with the broker's error_message (nil stays nil).
func withReason(err error, reason string) error {
	if err == nil {
		return nil
	}
	return reasonErr{err, reason}
}

func topicCreate(c *cliCmd) func(context.Context) error {
	parts := c.fs.Int("p", -1, "partitions (-1: the broker's default)")
	repl := c.fs.Int("r", -1, "replication factor (-1: the broker's default)")
	var cfgs multiFlag
	c.fs.Var(&cfgs, "c", "topic config `key=value` (repeatable)")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, -1, "one or more topic names"); err != nil {
			return err
		}
		configs, err := keyValues(cfgs, "c")
		if err != nil {
			return err
		}
		_, adm, err := c.client()
		if err != nil {
			return err
		}
		resps, err := adm.CreateTopics(ctx, int32(*parts), int16(*repl), configs, c.args...)
		if err != nil {
			return err
		}
		type created struct {
			Topic      string `json:"topic"`
			ID         string `json:"id,omitempty"`
			Partitions int32  `json:"partitions"`
			Error      string `json:"error,omitempty"`
		}
		var out []created
		var firstErr error
		for _, name := range c.args {
			r := resps[name]
			cr := created{Topic: name, Partitions: r.NumPartitions}
			if err := withReason(r.Err, r.ErrMessage); err != nil {
				cr.Error = err.Error()
				if firstErr == nil {
					firstErr = fmt.Errorf("topic %s: %w", name, err)
				}
			} else {
				cr.ID = kafkaUUID(r.ID)
			}
			out = append(out, cr)
		}
		if c.json() {
			if err := c.printJSON(out); err != nil {
				return err
			}
			return firstErr
		}
		// The table lists what was created; each failure is one line on
		// stderr, said once.
		var rows [][]string
		var failed []error
		for _, cr := range out {
			if cr.Error != "" {
				failed = append(failed, fmt.Errorf("topic %s: %s", cr.Topic, cr.Error))
				continue
			}
			rows = append(rows, []string{cr.Topic, strconv.Itoa(int(cr.Partitions)), cr.ID})
		}
		if len(rows) > 0 {
			c.table([]string{"TOPIC", "PARTITIONS", "ID"}, rows)
		}
		return errors.Join(failed...)
	}
}

func topicList(c *cliCmd) func(context.Context) error {
	all := c.fs.Bool("a", false, "include internal topics (__consumer_offsets, ...)")
	return func(ctx context.Context) error {
		adm, err := c.admin(0, 0, "no arguments")
		if err != nil {
			return err
		}
		var td kadm.TopicDetails
		if *all {
			td, err = adm.ListTopicsWithInternal(ctx)
		} else {
			td, err = adm.ListTopics(ctx)
		}
		if err != nil {
			return err
		}
		type listed struct {
			Topic      string `json:"topic"`
			ID         string `json:"id"`
			Partitions int    `json:"partitions"`
			Replicas   int    `json:"replicas"`
			Internal   bool   `json:"internal,omitempty"`
		}
		out := []listed{}
		for _, name := range td.Names() {
			t := td[name]
			if t.Err != nil {
				return topicErr(name, t.Err)
			}
			out = append(out, listed{name, kafkaUUID(t.ID), len(t.Partitions), t.Partitions.NumReplicas(), t.IsInternal})
		}
		if c.json() {
			return c.printJSON(out)
		}
		var rows [][]string
		for _, l := range out {
			rows = append(rows, []string{l.Topic, strconv.Itoa(l.Partitions), strconv.Itoa(l.Replicas)})
		}
		c.table([]string{"TOPIC", "PARTITIONS", "REPLICAS"}, rows)
		return nil
	}
}

// describedTopic is `topic describe`'s answer for one topic.
type describedTopic struct {
	Topic      string               `json:"topic"`
	ID         string               `json:"id"`
	Internal   bool                 `json:"internal"`
	Partitions []describedPartition `json:"partitions"`
	Configs    []describedConfig    `json:"configs"`
}

type describedPartition struct {
	Partition     int32   `json:"partition"`
	Leader        int32   `json:"leader"`
	LeaderEpoch   int32   `json:"leader_epoch"`
	Replicas      []int32 `json:"replicas"`
	LogStart      int64   `json:"log_start_offset"`
	HighWatermark int64   `json:"high_watermark"`
}

type describedConfig struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

func topicDescribe(c *cliCmd) func(context.Context) error {
	allConfigs := c.fs.Bool("all-configs", false, "list every config, defaults too (default: only those set on the topic)")
	return func(ctx context.Context) error {
		adm, err := c.admin(1, -1, "one or more topic names")
		if err != nil {
			return err
		}
		td, err := adm.ListTopicsWithInternal(ctx, c.args...)
		if err != nil {
			return err
		}
		for _, name := range c.args {
			if t, ok := td[name]; !ok || t.Err != nil {
				if !ok {
					return fmt.Errorf("topic %s does not exist", name)
				}
				return topicErr(name, t.Err)
			}
		}
		starts, err := adm.ListStartOffsets(ctx, c.args...)
		if err != nil {
			return err
		}
		ends, err := adm.ListEndOffsets(ctx, c.args...)
		if err != nil {
			return err
		}
		rcs, err := adm.DescribeTopicConfigs(ctx, c.args...)
		if err != nil {
			return err
		}
		var out []describedTopic
		for _, name := range c.args {
			t := td[name]
			dt := describedTopic{Topic: name, ID: kafkaUUID(t.ID), Internal: t.IsInternal, Partitions: []describedPartition{}, Configs: []describedConfig{}}
			for _, p := range t.Partitions.Sorted() {
				dp := describedPartition{Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, Replicas: p.Replicas, LogStart: -1, HighWatermark: -1}
				if o, ok := starts.Lookup(name, p.Partition); ok && o.Err == nil {
					dp.LogStart = o.Offset
				}
				if o, ok := ends.Lookup(name, p.Partition); ok && o.Err == nil {
					dp.HighWatermark = o.Offset
				}
				dt.Partitions = append(dt.Partitions, dp)
			}
			if rc, err := rcs.On(name, nil); err == nil && rc.Err == nil {
				for _, cfg := range rc.Configs {
					src := strings.ToLower(strings.TrimSuffix(cfg.Source.String(), "_CONFIG"))
					if !*allConfigs && cfg.Source.String() != "DYNAMIC_TOPIC_CONFIG" {
						continue
					}
					dt.Configs = append(dt.Configs, describedConfig{cfg.Key, cfg.MaybeValue(), src})
				}
				sort.Slice(dt.Configs, func(i, j int) bool { return dt.Configs[i].Name < dt.Configs[j].Name })
			}
			out = append(out, dt)
		}
		if c.json() {
			return c.printJSON(out)
		}
		for i, dt := range out {
			if i > 0 {
				fmt.Fprintln(c.env.stdout)
			}
			fmt.Fprintf(c.env.stdout, "TOPIC %s  ID %s  PARTITIONS %d\n", dt.Topic, dt.ID, len(dt.Partitions))
			var rows [][]string
			for _, p := range dt.Partitions {
				rs := make([]string, len(p.Replicas))
				for i, r := range p.Replicas {
					rs[i] = strconv.Itoa(int(r))
				}
				rows = append(rows, []string{strconv.Itoa(int(p.Partition)), strconv.Itoa(int(p.Leader)), strconv.Itoa(int(p.LeaderEpoch)),
					strings.Join(rs, ","), strconv.FormatInt(p.LogStart, 10), strconv.FormatInt(p.HighWatermark, 10)})
			}
			c.table([]string{"PARTITION", "LEADER", "EPOCH", "REPLICAS", "LOG-START", "HIGH-WATERMARK"}, rows)
			if len(dt.Configs) > 0 {
				var rows [][]string
				for _, cfg := range dt.Configs {
					rows = append(rows, []string{cfg.Name, cfg.Value, cfg.Source})
				}
				fmt.Fprintln(c.env.stdout)
				c.table([]string{"CONFIG", "VALUE", "SOURCE"}, rows)
			}
		}
		return nil
	}
}

func topicDelete(c *cliCmd) func(context.Context) error {
	return func(ctx context.Context) error {
		adm, err := c.admin(1, -1, "one or more topic names")
		if err != nil {
			return err
		}
		resps, err := adm.DeleteTopics(ctx, c.args...)
		if err != nil {
			return err
		}
		return c.perTopic(c.args, func(t string) error { return withReason(resps[t].Err, resps[t].ErrMessage) })
	}
}

// perTopic prints a status line per topic that succeeded (or JSON for
// all) and returns every failure, each naming its topic.
func (c *cliCmd) perTopic(topics []string, errOf func(string) error) error {
	type status struct {
		Topic string `json:"topic"`
		Error string `json:"error,omitempty"`
	}
	var out []status
	var rows [][]string
	var ok []bool
	var errs []error
	for _, t := range topics {
		s := status{Topic: t}
		if err := errOf(t); err != nil {
			s.Error = err.Error()
			errs = append(errs, topicErr(t, err))
		}
		out = append(out, s)
		rows = append(rows, []string{s.Topic, statusText(s.Error)})
		ok = append(ok, s.Error == "")
	}
	return c.answerItems(out, []string{"TOPIC", "STATUS"}, rows, ok, errs)
}

func topicAlterConfig(c *cliCmd) func(context.Context) error {
	var sets, dels multiFlag
	c.fs.Var(&sets, "set", "set config `key=value` (repeatable)")
	c.fs.Var(&dels, "delete", "remove config `key`, back to its default (repeatable)")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, -1, "one or more topic names"); err != nil {
			return err
		}
		if len(sets)+len(dels) == 0 {
			return usagef("nothing to change: give -set key=value or -delete key")
		}
		kv, err := keyValues(sets, "set")
		if err != nil {
			return err
		}
		var alters []kadm.AlterConfig
		for k, v := range kv {
			alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: v})
		}
		for _, k := range dels {
			alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
		}
		sort.Slice(alters, func(i, j int) bool { return alters[i].Name < alters[j].Name })
		_, adm, err := c.client()
		if err != nil {
			return err
		}
		resps, err := adm.AlterTopicConfigs(ctx, alters, c.args...)
		if err != nil {
			return err
		}
		return c.perTopic(c.args, func(t string) error {
			r, err := resps.On(t, nil)
			if err != nil {
				return kerr.UnknownTopicOrPartition
			}
			return withReason(r.Err, r.ErrMessage)
		})
	}
}

func topicAddPartitions(c *cliCmd) func(context.Context) error {
	n := c.fs.Int("n", 0, "partitions to add")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, -1, "one or more topic names"); err != nil {
			return err
		}
		if *n <= 0 {
			return usagef("-n: want the number of partitions to add (> 0)")
		}
		_, adm, err := c.client()
		if err != nil {
			return err
		}
		resps, err := adm.CreatePartitions(ctx, *n, c.args...)
		if err != nil {
			return err
		}
		return c.perTopic(c.args, func(t string) error { return withReason(resps[t].Err, resps[t].ErrMessage) })
	}
}

func topicTrim(c *cliCmd) func(context.Context) error {
	part := c.fs.Int("p", -1, "partition (-1: every partition)")
	offset := c.fs.String("offset", "", "delete records below this `offset`, or end for all of them")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "one topic name"); err != nil {
			return err
		}
		if *offset == "" {
			return usagef("-offset: want an offset or end")
		}
		topic := c.args[0]
		_, adm, err := c.client()
		if err != nil {
			return err
		}
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return err
		}
		if err := ends.Error(); err != nil {
			return topicErr(topic, err)
		}
		if len(ends[topic]) == 0 {
			return fmt.Errorf("topic %s does not exist", topic)
		}
		var at int64
		if *offset != "end" {
			if at, err = strconv.ParseInt(*offset, 10, 64); err != nil || at < 0 {
				return usagef("-offset %q: want an offset (>= 0) or end", *offset)
			}
		}
		os := kadm.Offsets{}
		for p, e := range ends[topic] {
			if *part >= 0 && p != int32(*part) {
				continue
			}
			o := at
			if *offset == "end" {
				o = e.Offset
			}
			os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
		}
		if len(os) == 0 {
			return fmt.Errorf("topic %s has no partition %d", topic, *part)
		}
		resps, err := adm.DeleteRecords(ctx, os)
		if err != nil {
			return err
		}
		var out []partOutcome
		resps.Each(func(r kadm.DeleteRecordsResponse) {
			t := partOutcome{Topic: r.Topic, Partition: r.Partition, Offset: r.LowWatermark}
			if r.Err != nil {
				t.Error = r.Err.Error()
			}
			out = append(out, t)
		})
		return c.answerPartitions(out, "LOG-START", func(o partOutcome) error {
			return fmt.Errorf("topic %s partition %d: %s", o.Topic, o.Partition, o.Error)
		})
	}
}
