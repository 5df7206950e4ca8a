package main

// minikafka inspect partition|records|group|lag, minikafka wait
// topic|high-watermark|group-stable|lag-zero and minikafka seed
// topic|records: the control API's inspection, waits and seeding
// (docs/control-api.md), for tests written in any language.

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

func init() {
	cliVerbs["inspect"] = &cliVerb{summary: "Shows a partition's offsets and records, a group's state and lag, without a Kafka client (needs -admin-addr).", sub: map[string]cliCommand{
		"partition":    {"TOPIC PARTITION", "log start, high watermark, last stable offset", inspectPartition},
		"records":      {"TOPIC PARTITION [-offset N] [-limit N] [-committed]", "the partition's records, decoded", inspectRecords},
		"group":        {"GROUP", "state, epoch, members and committed offsets", inspectGroup},
		"lag":          {"GROUP TOPIC", "the group's lag per partition", inspectLag},
		"transactions": {"[TRANSACTIONAL-ID]", "transactional ids with their state and open partitions", inspectTransactions},
		"producers":    {"TOPIC PARTITION", "producer ids a partition holds state for", inspectProducers},
		"members":      {"GROUP", "the group's members and what each is assigned", inspectMembers},
	}}
	cliVerbs["wait"] = &cliVerb{summary: "Returns when a condition holds, exit 1 when -timeout passes first (needs -admin-addr).", sub: map[string]cliCommand{
		"topic":          {"TOPIC [-timeout D]", "the topic exists", waitTopic},
		"high-watermark": {"TOPIC PARTITION OFFSET [-timeout D]", "the partition's high watermark reaches OFFSET", waitHighWatermark},
		"group-stable":   {"GROUP MEMBERS [-timeout D]", "the group is stable with MEMBERS members", waitGroupStable},
		"lag-zero":       {"GROUP TOPIC [-timeout D]", "the group has consumed everything of TOPIC", waitLagZero},
		"transaction":    {"TRANSACTIONAL-ID [-timeout D]", "the transactional id has no transaction open", waitTransaction},
	}}
	cliVerbs["seed"] = &cliVerb{summary: "Creates topics and writes records straight into the broker (needs -admin-addr).", sub: map[string]cliCommand{
		"topic":   {"TOPIC [-partitions N] [-config K=V]...", "create a topic", seedTopic},
		"records": {"TOPIC [-partition N] [-transaction commit|abort] [KEY=VALUE|VALUE]...", "write the records given as arguments (KEY=VALUE, or VALUE with a null key)", seedRecords},
	}}
}

func partitionArg(s string) (int32, error) {
	p, err := strconv.ParseInt(s, 10, 32)
	if err != nil || p < 0 {
		return 0, usagef("partition %q: want a non-negative integer", s)
	}
	return int32(p), nil
}

func inspectPartition(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(2, 2, "TOPIC PARTITION"); err != nil {
			return err
		}
		p, err := partitionArg(c.args[1])
		if err != nil {
			return err
		}
		var out struct {
			Topic         string `json:"topic"`
			Partition     int32  `json:"partition"`
			LogStart      int64  `json:"log_start_offset"`
			HighWatermark int64  `json:"high_watermark"`
			LastStable    int64  `json:"last_stable_offset"`
		}
		if err := a.do(ctx, "GET", fmt.Sprintf("/v1/topics/%s/partitions/%d", url.PathEscape(c.args[0]), p), nil, &out); err != nil {
			return err
		}
		return c.answer(out, []string{"TOPIC", "PARTITION", "LOG START", "HIGH WATERMARK", "LAST STABLE"},
			[][]string{{out.Topic, strconv.Itoa(int(out.Partition)), strconv.FormatInt(out.LogStart, 10), strconv.FormatInt(out.HighWatermark, 10), strconv.FormatInt(out.LastStable, 10)}}, nil)
	}
}

func inspectRecords(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	offset := c.fs.Int64("offset", 0, "first `offset` to read")
	limit := c.fs.Int("limit", 100, "at most `N` records (up to 10000)")
	committed := c.fs.Bool("committed", false, "read as a read_committed consumer (skip aborted transactions, stop at the last stable offset)")
	return func(ctx context.Context) error {
		if err := c.needArgs(2, 2, "TOPIC PARTITION"); err != nil {
			return err
		}
		p, err := partitionArg(c.args[1])
		if err != nil {
			return err
		}
		iso := "read_uncommitted"
		if *committed {
			iso = "read_committed"
		}
		q := url.Values{"offset": {strconv.FormatInt(*offset, 10)}, "limit": {strconv.Itoa(*limit)}, "isolation": {iso}}
		var out struct {
			Next    int64 `json:"next_offset"`
			Records []struct {
				Offset      int64   `json:"offset"`
				TimestampMs int64   `json:"timestamp_ms"`
				Key         *string `json:"key"`
				KeyBase64   []byte  `json:"key_base64"`
				Value       *string `json:"value"`
				ValueBase64 []byte  `json:"value_base64"`
				Headers     []struct {
					Key   string `json:"key"`
					Value string `json:"value"`
				} `json:"headers"`
			} `json:"records"`
		}
		if err := a.do(ctx, "GET", fmt.Sprintf("/v1/topics/%s/partitions/%d/records?%s", url.PathEscape(c.args[0]), p, q.Encode()), nil, &out); err != nil {
			return err
		}
		show := func(s *string, raw []byte) string {
			switch {
			case s != nil:
				return *s
			case raw == nil:
				return "null"
			}
			return fmt.Sprintf("%x", raw)
		}
		var rows [][]string
		for _, r := range out.Records {
			var hs []string
			for _, h := range r.Headers {
				hs = append(hs, h.Key+"="+h.Value)
			}
			rows = append(rows, []string{strconv.FormatInt(r.Offset, 10), time.UnixMilli(r.TimestampMs).UTC().Format(time.RFC3339Nano),
				show(r.Key, r.KeyBase64), show(r.Value, r.ValueBase64), strings.Join(hs, ",")})
		}
		return c.answer(out, []string{"OFFSET", "TIMESTAMP", "KEY", "VALUE", "HEADERS"}, rows, nil)
	}
}

func inspectGroup(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "GROUP"); err != nil {
			return err
		}
		var out struct {
			Group   string `json:"group"`
			Type    string `json:"type"`
			State   string `json:"state"`
			Epoch   int32  `json:"epoch"`
			Members int    `json:"members"`
			Offsets []struct {
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
				Offset    int64  `json:"offset"`
			} `json:"offsets"`
		}
		if err := a.do(ctx, "GET", "/v1/groups/"+url.PathEscape(c.args[0]), nil, &out); err != nil {
			return err
		}
		rows := [][]string{}
		for _, o := range out.Offsets {
			rows = append(rows, []string{out.Group, out.Type, out.State, strconv.Itoa(int(out.Epoch)), strconv.Itoa(out.Members), o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.Offset, 10)})
		}
		if len(rows) == 0 {
			rows = append(rows, []string{out.Group, out.Type, out.State, strconv.Itoa(int(out.Epoch)), strconv.Itoa(out.Members), "-", "-", "-"})
		}
		return c.answer(out, []string{"GROUP", "TYPE", "STATE", "EPOCH", "MEMBERS", "TOPIC", "PARTITION", "COMMITTED"}, rows, nil)
	}
}

func inspectLag(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(2, 2, "GROUP TOPIC"); err != nil {
			return err
		}
		var out struct {
			Topic      string `json:"topic"`
			Total      int64  `json:"total_lag"`
			Partitions []struct {
				Partition     int32 `json:"partition"`
				Committed     int64 `json:"committed"`
				HighWatermark int64 `json:"high_watermark"`
				Lag           int64 `json:"lag"`
			} `json:"partitions"`
		}
		if err := a.do(ctx, "GET", fmt.Sprintf("/v1/groups/%s/lag/%s", url.PathEscape(c.args[0]), url.PathEscape(c.args[1])), nil, &out); err != nil {
			return err
		}
		var rows [][]string
		for _, p := range out.Partitions {
			rows = append(rows, []string{out.Topic, strconv.Itoa(int(p.Partition)), strconv.FormatInt(p.Committed, 10), strconv.FormatInt(p.HighWatermark, 10), strconv.FormatInt(p.Lag, 10)})
		}
		return c.answer(out, []string{"TOPIC", "PARTITION", "COMMITTED", "HIGH WATERMARK", "LAG"}, rows, nil)
	}
}

// waitCmd runs the wait request built from the arguments under the
// common -timeout; the broker gives up a little before it, so its answer
// (naming what was awaited and the last state seen) still arrives.
//
// held says what holds, from the arguments (fmt's %[1]s, ...): the one
// line a person reads; -o json prints the broker's answer.
func waitCmd(c *cliCmd, minArgs int, what, held, path string, body func() (map[string]any, error)) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(minArgs, minArgs, what); err != nil {
			return err
		}
		in, err := body()
		if err != nil {
			return err
		}
		timeout := c.cf.timeout
		if timeout <= 0 || timeout > 10*time.Minute {
			return usagef("-timeout %v: want 0 < timeout <= 10m", timeout)
		}
		in["timeout_ms"] = max(1, (timeout - min(timeout/5, time.Second)).Milliseconds())
		var out map[string]any
		if err := a.do(ctx, "POST", path, in, &out); err != nil {
			return err
		}
		if c.json() {
			return c.printJSON(out)
		}
		args := make([]any, len(c.args))
		for i, a := range c.args {
			args[i] = a
		}
		_, err = fmt.Fprintln(c.env.stdout, fmt.Sprintf(held, args...))
		return err
	}
}

func waitTopic(c *cliCmd) func(context.Context) error {
	return waitCmd(c, 1, "TOPIC", "topic %[1]s exists", "/v1/wait/topic", func() (map[string]any, error) {
		return map[string]any{"topic": c.args[0]}, nil
	})
}

func waitHighWatermark(c *cliCmd) func(context.Context) error {
	return waitCmd(c, 3, "TOPIC PARTITION OFFSET", "%[1]s/%[2]s high watermark reached %[3]s", "/v1/wait/high-watermark", func() (map[string]any, error) {
		p, err := partitionArg(c.args[1])
		if err != nil {
			return nil, err
		}
		off, err := strconv.ParseInt(c.args[2], 10, 64)
		if err != nil {
			return nil, usagef("offset %q: want an integer", c.args[2])
		}
		return map[string]any{"topic": c.args[0], "partition": p, "offset": off}, nil
	})
}

func waitGroupStable(c *cliCmd) func(context.Context) error {
	return waitCmd(c, 2, "GROUP MEMBERS", "group %[1]s stable with %[2]s members", "/v1/wait/group-stable", func() (map[string]any, error) {
		n, err := strconv.Atoi(c.args[1])
		if err != nil || n < 0 {
			return nil, usagef("members %q: want a non-negative integer", c.args[1])
		}
		return map[string]any{"group": c.args[0], "members": n}, nil
	})
}

func waitLagZero(c *cliCmd) func(context.Context) error {
	return waitCmd(c, 2, "GROUP TOPIC", "group %[1]s has consumed all of %[2]s", "/v1/wait/lag-zero", func() (map[string]any, error) {
		return map[string]any{"group": c.args[0], "topic": c.args[1]}, nil
	})
}

// kvList collects a repeated K=V flag.
type kvList map[string]string

func (l kvList) String() string { return fmt.Sprint(map[string]string(l)) }
func (l kvList) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q: want KEY=VALUE", v)
	}
	l[k] = val
	return nil
}

func seedTopic(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	parts := c.fs.Int("partitions", 0, "number of partitions (0: the broker default)")
	configs := kvList{}
	c.fs.Var(configs, "config", "a topic config `KEY=VALUE` (repeatable), e.g. cleanup.policy=compact")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "TOPIC"); err != nil {
			return err
		}
		var out map[string]any
		if err := a.do(ctx, "POST", "/v1/topics", map[string]any{"topic": c.args[0], "partitions": *parts, "configs": map[string]string(configs)}, &out); err != nil {
			return err
		}
		return c.answer(out, []string{"TOPIC", "CREATED"}, [][]string{{c.args[0], "true"}}, nil)
	}
}

func seedRecords(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	part := c.fs.Int("partition", 0, "the `partition` every record goes to")
	txn := c.fs.String("transaction", "", "write them in one transaction that is then `commit`ted or `abort`ed")
	sep := c.fs.String("key-separator", "=", "split each argument into KEY and VALUE at the first `SEP` (empty: every argument is a value with a null key)")
	return func(ctx context.Context) error {
		if err := c.needArgs(2, 1<<20, "TOPIC RECORD..."); err != nil {
			return err
		}
		var recs []map[string]any
		for _, arg := range c.args[1:] {
			r := map[string]any{"partition": *part}
			if k, v, ok := strings.Cut(arg, *sep); ok && *sep != "" {
				r["key"], r["value"] = k, v
			} else {
				r["value"] = arg
			}
			recs = append(recs, r)
		}
		in := map[string]any{"records": recs}
		if *txn != "" {
			in["transaction"] = *txn
		}
		var out struct {
			Offsets []struct {
				Partition int32 `json:"partition"`
				Offset    int64 `json:"offset"`
			} `json:"offsets"`
		}
		if err := a.do(ctx, "POST", "/v1/topics/"+url.PathEscape(c.args[0])+"/records", in, &out); err != nil {
			return err
		}
		var rows [][]string
		for _, o := range out.Offsets {
			rows = append(rows, []string{c.args[0], strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.Offset, 10)})
		}
		return c.answer(out, []string{"TOPIC", "PARTITION", "OFFSET"}, rows, nil)
	}
}

func inspectTransactions(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(0, 1, "[TRANSACTIONAL-ID]"); err != nil {
			return err
		}
		type txn struct {
			ID         string             `json:"transactional_id"`
			ProducerID int64              `json:"producer_id"`
			Epoch      int16              `json:"producer_epoch"`
			State      string             `json:"state"`
			Partitions map[string][]int32 `json:"partitions"`
		}
		var txns []txn
		var out any
		if len(c.args) == 1 {
			var t txn
			if err := a.do(ctx, "GET", "/v1/transactions/"+url.PathEscape(c.args[0]), nil, &t); err != nil {
				return err
			}
			txns, out = []txn{t}, t
		} else {
			var all struct {
				Transactions []txn `json:"transactions"`
			}
			if err := a.do(ctx, "GET", "/v1/transactions", nil, &all); err != nil {
				return err
			}
			txns, out = all.Transactions, all
		}
		var rows [][]string
		for _, t := range txns {
			var parts []string
			for topic, ps := range t.Partitions {
				for _, p := range ps {
					parts = append(parts, fmt.Sprintf("%s-%d", topic, p))
				}
			}
			if len(parts) == 0 {
				parts = []string{"-"}
			}
			rows = append(rows, []string{t.ID, strconv.FormatInt(t.ProducerID, 10), strconv.Itoa(int(t.Epoch)), t.State, strings.Join(parts, ",")})
		}
		return c.answer(out, []string{"TRANSACTIONAL ID", "PRODUCER ID", "EPOCH", "STATE", "PARTITIONS"}, rows, nil)
	}
}

func inspectProducers(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(2, 2, "TOPIC PARTITION"); err != nil {
			return err
		}
		p, err := partitionArg(c.args[1])
		if err != nil {
			return err
		}
		var out struct {
			Producers []struct {
				ProducerID     int64 `json:"producer_id"`
				Epoch          int32 `json:"producer_epoch"`
				LastSequence   int32 `json:"last_sequence"`
				TxnStartOffset int64 `json:"txn_start_offset"`
			} `json:"producers"`
		}
		if err := a.do(ctx, "GET", fmt.Sprintf("/v1/topics/%s/partitions/%d/producers", url.PathEscape(c.args[0]), p), nil, &out); err != nil {
			return err
		}
		var rows [][]string
		for _, pr := range out.Producers {
			rows = append(rows, []string{strconv.FormatInt(pr.ProducerID, 10), strconv.Itoa(int(pr.Epoch)), strconv.Itoa(int(pr.LastSequence)), strconv.FormatInt(pr.TxnStartOffset, 10)})
		}
		return c.answer(out, []string{"PRODUCER ID", "EPOCH", "LAST SEQUENCE", "OPEN TXN START"}, rows, nil)
	}
}

func waitTransaction(c *cliCmd) func(context.Context) error {
	return waitCmd(c, 1, "TRANSACTIONAL-ID", "transactional id %[1]s has no transaction open", "/v1/wait/transaction", func() (map[string]any, error) {
		return map[string]any{"transactional_id": c.args[0]}, nil
	})
}

func inspectMembers(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "GROUP"); err != nil {
			return err
		}
		var out struct {
			Members []struct {
				MemberID   string             `json:"member_id"`
				InstanceID string             `json:"instance_id"`
				ClientID   string             `json:"client_id"`
				ClientHost string             `json:"client_host"`
				Assignment map[string][]int32 `json:"assignment"`
			} `json:"member_list"`
		}
		if err := a.do(ctx, "GET", "/v1/groups/"+url.PathEscape(c.args[0]), nil, &out); err != nil {
			return err
		}
		var rows [][]string
		for _, m := range out.Members {
			var parts []string
			for t, ps := range m.Assignment {
				for _, p := range ps {
					parts = append(parts, fmt.Sprintf("%s-%d", t, p))
				}
			}
			sort.Strings(parts)
			if len(parts) == 0 {
				parts = []string{"-"}
			}
			rows = append(rows, []string{m.MemberID, m.ClientID, m.ClientHost, strings.Join(parts, ",")})
		}
		return c.answer(out.Members, []string{"MEMBER ID", "CLIENT ID", "HOST", "ASSIGNED"}, rows, nil)
	}
}
