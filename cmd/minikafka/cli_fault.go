package main

// minikafka fault add|list|remove|release|pause|coordinator|requests and
// minikafka broker down|up|state: the control API's faults and request
// log (docs/control-api.md), for tests written in any language.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/minikafka/minikafka"
)

func init() {
	cliVerbs["fault"] = &cliVerb{summary: "Injects, lists and removes faults; shows the request log (needs the broker's -admin-addr).", sub: map[string]cliCommand{
		"add":         {"[-api-key N]... [-topic T] [-group G] ... -error NAME|-drop before|after|-delay D|-hold|-swallow|-throttle D", "inject a fault; prints its id", faultAdd},
		"list":        {"", "faults with how often each fired", faultList},
		"remove":      {"ID...|-all", "remove faults (held answers go out)", faultRemove},
		"release":     {"ID", "let the answers a -hold fault keeps go out", faultRelease},
		"pause":       {"TOPIC [-partition N]", "answer NOT_LEADER_OR_FOLLOWER for a partition until removed", faultPause},
		"coordinator": {"GROUP [-loading]", "the group's coordinator answers COORDINATOR_NOT_AVAILABLE (or LOAD_IN_PROGRESS) until removed", faultCoordinator},
		"requests":    {"[-limit N] [-api-key N]", "the last requests the broker answered", faultRequests},
		"storage":     {"[-fail-sync on|off] [-full on|off] [-sync-delay D]", "the disk switches of a broker started with -storage-faults", faultStorage},
	}}
	cliVerbs["broker"] = &cliVerb{summary: "Takes the broker down for clients and back up on the same port (needs -admin-addr).", sub: map[string]cliCommand{
		"down":  {"", "close every connection and reset new ones", brokerDown},
		"up":    {"", "serve clients again", brokerUp},
		"state": {"", "whether the broker is down", brokerState},
	}}
}

// int16List collects a repeated int16 flag.
type int16List []int16

func (l *int16List) String() string { return fmt.Sprint(*l) }
func (l *int16List) Set(v string) error {
	n, err := strconv.ParseInt(v, 10, 16)
	if err != nil {
		return fmt.Errorf("%q is not a number", v)
	}
	*l = append(*l, int16(n))
	return nil
}

// cliFault is the control API's fault JSON, with the table's columns.
type cliFault minikafka.FaultJSON

// describe is the table's ACTION column.
func (f cliFault) describe() string {
	var parts []string
	if f.Error != "" {
		parts = append(parts, "error "+f.Error)
	} else if f.ErrorCode != 0 {
		parts = append(parts, "error "+strconv.Itoa(int(f.ErrorCode)))
	}
	if f.Drop != "" {
		parts = append(parts, "drop "+f.Drop)
	}
	if f.DelayMs > 0 {
		d := fmt.Sprintf("delay %vms", f.DelayMs)
		if f.DelayMaxMs > f.DelayMs {
			d += fmt.Sprintf("-%vms", f.DelayMaxMs)
		}
		parts = append(parts, d)
	}
	if f.Hold {
		parts = append(parts, "hold")
	}
	if f.Swallow {
		parts = append(parts, "swallow")
	}
	if f.ThrottleMs > 0 {
		parts = append(parts, fmt.Sprintf("throttle %dms", f.ThrottleMs))
	}
	return strings.Join(parts, ", ")
}

func (f cliFault) match() string {
	var parts []string
	if len(f.APIKeys) > 0 {
		parts = append(parts, fmt.Sprintf("keys %v", f.APIKeys))
	}
	if f.Topic != "" {
		t := "topic " + f.Topic
		if f.Partition != nil {
			t += "-" + strconv.Itoa(int(*f.Partition))
		}
		parts = append(parts, t)
	}
	for _, kv := range [][2]string{{"group", f.Group}, {"txn", f.TransactionalID}, {"client", f.ClientID}, {"listener", f.Listener}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	if f.Connection != 0 {
		parts = append(parts, "conn "+strconv.FormatUint(f.Connection, 10))
	}
	if len(parts) == 0 {
		return "any"
	}
	return strings.Join(parts, ", ")
}

func (c *cliCmd) faultAnswer(f cliFault) error {
	fired := f.Fired
	return c.answer(f, []string{"ID", "MATCH", "ACTION", "FIRED"},
		[][]string{{strconv.FormatUint(f.ID, 10), f.match(), f.describe(), strconv.FormatInt(fired, 10)}}, nil)
}

func faultAdd(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	var keys int16List
	c.fs.Var(&keys, "api-key", "match this Kafka API `key` (repeatable; default: every key)")
	minV := c.fs.Int("min-version", -1, "match request versions from this one")
	maxV := c.fs.Int("max-version", -1, "match request versions up to this one")
	topic := c.fs.String("topic", "", "match requests naming this topic")
	part := c.fs.Int("partition", -1, "with -topic: match this partition only")
	group := c.fs.String("group", "", "match requests for this group")
	txn := c.fs.String("txn-id", "", "match requests for this transactional ID")
	client := c.fs.String("match-client-id", "", "match requests from this client ID")
	listener := c.fs.String("listener", "", "match requests on this listener")
	conn := c.fs.Uint64("connection", 0, "match requests on this connection (its id in `fault requests`)")
	times := c.fs.Int("times", 0, "fire this many times (0: until removed)")
	prob := c.fs.Float64("probability", 0, "fire on each match with this probability (0: always)")
	seed := c.fs.Uint64("seed", 0, "seed of -probability's draws")
	errName := c.fs.String("error", "", "answer this Kafka error (NAME or code) without handling the request")
	drop := c.fs.String("drop", "", "close the connection `before` or `after` handling")
	delay := c.fs.Duration("delay", 0, "delay the answer")
	delayMax := c.fs.Duration("delay-max", 0, "with -delay: delay uniformly up to this")
	hold := c.fs.Bool("hold", false, "hold answers until `fault release`")
	swallow := c.fs.Bool("swallow", false, "handle the request and never answer")
	throttle := c.fs.Duration("throttle", 0, "set throttle_time_ms on answers")
	return func(ctx context.Context) error {
		if err := c.needArgs(0, 0, "no arguments (the fault is all flags)"); err != nil {
			return err
		}
		f := cliFault{APIKeys: keys, Topic: *topic, Group: *group, TransactionalID: *txn, ClientID: *client,
			Listener: *listener, Connection: *conn, Times: *times, Probability: *prob, Seed: *seed,
			Drop: *drop, DelayMs: ms(*delay), DelayMaxMs: ms(*delayMax), Hold: *hold, Swallow: *swallow,
			ThrottleMs: int32(*throttle / time.Millisecond)}
		if *minV >= 0 {
			v := int16(*minV)
			f.MinVersion = &v
		}
		if *maxV >= 0 {
			v := int16(*maxV)
			f.MaxVersion = &v
		}
		if *part >= 0 {
			p := int32(*part)
			f.Partition = &p
		}
		if *errName != "" {
			if n, err := strconv.ParseInt(*errName, 10, 16); err == nil {
				f.ErrorCode = int16(n)
			} else {
				f.Error = strings.ToUpper(*errName)
			}
		}
		var out cliFault
		if err := a.do(ctx, "POST", "/v1/faults", f, &out); err != nil {
			return err
		}
		return c.faultAnswer(out)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func faultList(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(0, 0, "no arguments"); err != nil {
			return err
		}
		var out struct {
			Faults []cliFault `json:"faults"`
		}
		if err := a.do(ctx, "GET", "/v1/faults", nil, &out); err != nil {
			return err
		}
		var rows [][]string
		for _, f := range out.Faults {
			fired := f.Fired
			state := "active"
			if f.Done {
				state = "done"
			}
			if f.Held > 0 {
				state = fmt.Sprintf("holding %d", f.Held)
			}
			rows = append(rows, []string{strconv.FormatUint(f.ID, 10), f.match(), f.describe(), strconv.FormatInt(fired, 10), state})
		}
		return c.answer(out.Faults, []string{"ID", "MATCH", "ACTION", "FIRED", "STATE"}, rows, nil)
	}
}

func faultRemove(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	all := c.fs.Bool("all", false, "remove every fault")
	return func(ctx context.Context) error {
		if *all {
			if err := c.needArgs(0, 0, "no fault ids with -all"); err != nil {
				return err
			}
			return a.do(ctx, "DELETE", "/v1/faults", nil, nil)
		}
		if err := c.needArgs(1, -1, "one or more fault ids, or -all"); err != nil {
			return err
		}
		for _, id := range c.args {
			if _, err := strconv.ParseUint(id, 10, 64); err != nil {
				return usagef("fault id %q is not a number", id)
			}
		}
		for _, id := range c.args {
			if err := a.do(ctx, "DELETE", "/v1/faults/"+id, nil, nil); err != nil {
				return err
			}
		}
		return nil
	}
}

func faultRelease(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "a fault id"); err != nil {
			return err
		}
		if _, err := strconv.ParseUint(c.args[0], 10, 64); err != nil {
			return usagef("fault id %q is not a number", c.args[0])
		}
		var out cliFault
		if err := a.do(ctx, "POST", "/v1/faults/"+c.args[0]+"/release", nil, &out); err != nil {
			return err
		}
		return c.faultAnswer(out)
	}
}

func faultPause(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	part := c.fs.Int("partition", -1, "the partition (default: every partition of the topic)")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "a topic"); err != nil {
			return err
		}
		in := map[string]any{"topic": c.args[0]}
		if *part >= 0 {
			in["partition"] = *part
		}
		var out cliFault
		if err := a.do(ctx, "POST", "/v1/faults/pause-partition", in, &out); err != nil {
			return err
		}
		return c.faultAnswer(out)
	}
}

func faultCoordinator(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	loading := c.fs.Bool("loading", false, "answer COORDINATOR_LOAD_IN_PROGRESS instead")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "a group"); err != nil {
			return err
		}
		var out cliFault
		if err := a.do(ctx, "POST", "/v1/faults/coordinator", map[string]any{"group": c.args[0], "loading": *loading}, &out); err != nil {
			return err
		}
		return c.faultAnswer(out)
	}
}

func faultRequests(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	limit := c.fs.Int("limit", 50, "the last N requests")
	key := c.fs.Int("api-key", -1, "only this API key")
	return func(ctx context.Context) error {
		if err := c.needArgs(0, 0, "no arguments"); err != nil {
			return err
		}
		if *limit <= 0 {
			return usagef("-limit %d: want a positive count", *limit)
		}
		path := "/v1/requests?limit=" + strconv.Itoa(*limit)
		if *key >= 0 {
			path += "&api_key=" + strconv.Itoa(*key)
		}
		var out struct {
			Requests []struct {
				Time       time.Time `json:"time"`
				API        string    `json:"api"`
				Version    int16     `json:"version"`
				ClientID   string    `json:"client_id"`
				Connection uint64    `json:"connection"`
				LatencyMs  float64   `json:"latency_ms"`
				Error      string    `json:"error"`
				Closed     bool      `json:"closed"`
			} `json:"requests"`
		}
		var raw any
		if c.json() {
			if err := a.do(ctx, "GET", path, nil, &raw); err != nil {
				return err
			}
			return c.printJSON(raw)
		}
		if err := a.do(ctx, "GET", path, nil, &out); err != nil {
			return err
		}
		var rows [][]string
		for _, r := range out.Requests {
			e := r.Error
			if r.Closed {
				e = strings.TrimSpace(e + " closed")
			}
			rows = append(rows, []string{r.Time.Format("15:04:05.000"), fmt.Sprintf("%s v%d", r.API, r.Version), r.ClientID,
				strconv.FormatUint(r.Connection, 10), fmt.Sprintf("%.2f", r.LatencyMs), e})
		}
		c.table([]string{"TIME", "API", "CLIENT", "CONN", "MS", "ERROR"}, rows)
		return nil
	}
}

func brokerDown(c *cliCmd) func(context.Context) error { return brokerSwitch(c, "/v1/broker/down") }
func brokerUp(c *cliCmd) func(context.Context) error   { return brokerSwitch(c, "/v1/broker/up") }

func brokerState(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(0, 0, "no arguments"); err != nil {
			return err
		}
		return brokerAnswer(ctx, c, a, "GET", "/v1/broker")
	}
}

func brokerSwitch(c *cliCmd, path string) func(context.Context) error {
	a := c.adminFlags()
	return func(ctx context.Context) error {
		if err := c.needArgs(0, 0, "no arguments"); err != nil {
			return err
		}
		return brokerAnswer(ctx, c, a, "POST", path)
	}
}

func brokerAnswer(ctx context.Context, c *cliCmd, a *adminClient, method, path string) error {
	var out struct {
		Down bool `json:"down"`
	}
	if err := a.do(ctx, method, path, nil, &out); err != nil {
		return err
	}
	state := "up"
	if out.Down {
		state = "down"
	}
	return c.answer(out, []string{"BROKER"}, [][]string{{state}}, nil)
}

// onOff is a flag taking on or off, unset when absent.
type onOff struct{ v *bool }

func (o *onOff) String() string {
	if o.v == nil {
		return ""
	}
	return strconv.FormatBool(*o.v)
}

func (o *onOff) Set(s string) error {
	switch s {
	case "on", "true":
		v := true
		o.v = &v
	case "off", "false":
		v := false
		o.v = &v
	default:
		return fmt.Errorf("%q: want on or off", s)
	}
	return nil
}

func faultStorage(c *cliCmd) func(context.Context) error {
	a := c.adminFlags()
	var failSync, full onOff
	c.fs.Var(&failSync, "fail-sync", "`on`: every fsync fails (EIO); off: they succeed")
	c.fs.Var(&full, "full", "`on`: every write fails with ENOSPC; off: the disk has room")
	delay := c.fs.Duration("sync-delay", -1, "make every fsync take at least this long (0: as fast as the disk)")
	return func(ctx context.Context) error {
		if err := c.needArgs(0, 0, "no arguments"); err != nil {
			return err
		}
		in := map[string]any{}
		if failSync.v != nil {
			in["fail_sync"] = *failSync.v
		}
		if full.v != nil {
			in["full"] = *full.v
		}
		if *delay >= 0 {
			in["sync_delay_ms"] = float64(*delay) / float64(time.Millisecond)
		}
		var out struct {
			FailSync    bool    `json:"fail_sync"`
			Full        bool    `json:"full"`
			SyncDelayMs float64 `json:"sync_delay_ms"`
			Failed      int64   `json:"failed"`
		}
		method := "POST"
		var body any = in
		if len(in) == 0 {
			method, body = "GET", nil
		}
		if err := a.do(ctx, method, "/v1/storage", body, &out); err != nil {
			return err
		}
		return c.answer(out, []string{"FAIL SYNC", "FULL", "SYNC DELAY", "FAILED OPS"},
			[][]string{{strconv.FormatBool(out.FailSync), strconv.FormatBool(out.Full), (time.Duration(out.SyncDelayMs * float64(time.Millisecond))).String(), strconv.FormatInt(out.Failed, 10)}}, nil)
	}
}
