package main

// minikafka group list|describe|seek|delete, and minikafka cluster info|config.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() {
	cliVerbs["group"] = &cliVerb{summary: "Lists, describes, moves and deletes consumer groups (classic and KIP-848).", sub: map[string]cliCommand{
		"list":          {"", "list groups with their state and type", groupList},
		"describe":      {"GROUP...", "members, assignment and lag per partition", groupDescribe},
		"seek":          {"GROUP -to start|end|OFFSET|@TIME|group:OTHER [-topics t1,t2]", "set an empty group's committed offsets", groupSeek},
		"delete":        {"GROUP...", "delete empty groups and their offsets", groupDelete},
		"offset-delete": {"GROUP TOPIC[:P,P...]...", "delete a group's committed offsets of topics (or of some partitions) it is not subscribed to", groupOffsetDelete},
	}}
	cliVerbs["cluster"] = &cliVerb{summary: "Shows the cluster and its brokers' configs; with -nodes, stops and starts nodes and moves leaders and coordinators (-admin-addr).", sub: map[string]cliCommand{
		"info":   {"", "cluster ID, controller and brokers", clusterInfo},
		"config": {"[-broker ID] [-all]", "a broker's configs (the controller's unless -broker; set ones, -all for every one)", clusterConfig},
	}}
	for name, cmd := range clusterControls { // cli_cluster.go
		cliVerbs["cluster"].sub[name] = cmd
	}
}

func groupList(c *cliCmd) func(context.Context) error {
	return func(ctx context.Context) error {
		adm, err := c.admin(0, 0, "no arguments")
		if err != nil {
			return err
		}
		lg, err := adm.ListGroups(ctx)
		if err != nil {
			return err
		}
		type listed struct {
			Group        string `json:"group"`
			State        string `json:"state"`
			Type         string `json:"type"`
			ProtocolType string `json:"protocol_type"`
		}
		out := []listed{}
		for _, name := range lg.Sorted() {
			g := lg[name.Group]
			typ := g.GroupType
			if typ == "" {
				typ = "classic"
			}
			out = append(out, listed{g.Group, g.State, typ, g.ProtocolType})
		}
		if c.json() {
			return c.printJSON(out)
		}
		var rows [][]string
		for _, g := range out {
			rows = append(rows, []string{g.Group, g.State, g.Type, g.ProtocolType})
		}
		c.table([]string{"GROUP", "STATE", "TYPE", "PROTOCOL-TYPE"}, rows)
		return nil
	}
}

// describedGroup is `group describe`'s answer for one group, classic or
// KIP-848 alike.
type describedGroup struct {
	Group    string            `json:"group"`
	Type     string            `json:"type"` // classic or consumer
	State    string            `json:"state"`
	Protocol string            `json:"protocol"` // the classic assignor, or the KIP-848 server assignor
	Epoch    int32             `json:"epoch,omitempty"`
	Members  []describedMember `json:"members"`
	Lag      []describedLag    `json:"lag"`
	Total    int64             `json:"total_lag"`
}

type describedMember struct {
	MemberID   string             `json:"member_id"`
	InstanceID string             `json:"instance_id,omitempty"`
	ClientID   string             `json:"client_id"`
	Host       string             `json:"host"`
	Assigned   map[string][]int32 `json:"assigned"`
}

type describedLag struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed int64  `json:"committed"` // -1: none
	End       int64  `json:"log_end_offset"`
	Lag       int64  `json:"lag"`
	MemberID  string `json:"member_id,omitempty"`
}

func groupDescribe(c *cliCmd) func(context.Context) error {
	return func(ctx context.Context) error {
		adm, err := c.admin(1, -1, "one or more group names")
		if err != nil {
			return err
		}
		var out []describedGroup
		for _, name := range c.args {
			dg, err := describeGroup(ctx, adm, name)
			if err != nil {
				return err
			}
			out = append(out, dg)
		}
		if c.json() {
			return c.printJSON(out)
		}
		for i, dg := range out {
			if i > 0 {
				fmt.Fprintln(c.env.stdout)
			}
			fmt.Fprintf(c.env.stdout, "GROUP %s  TYPE %s  STATE %s  PROTOCOL %s  MEMBERS %d  TOTAL-LAG %d\n",
				dg.Group, dg.Type, dg.State, orDash(dg.Protocol), len(dg.Members), dg.Total)
			if len(dg.Members) > 0 {
				var rows [][]string
				for _, m := range dg.Members {
					rows = append(rows, []string{m.MemberID, orDash(m.InstanceID), m.ClientID, m.Host, formatAssigned(m.Assigned)})
				}
				fmt.Fprintln(c.env.stdout)
				c.table([]string{"MEMBER", "INSTANCE", "CLIENT-ID", "HOST", "ASSIGNED"}, rows)
			}
			if len(dg.Lag) > 0 {
				var rows [][]string
				for _, l := range dg.Lag {
					committed := "-"
					if l.Committed >= 0 {
						committed = strconv.FormatInt(l.Committed, 10)
					}
					rows = append(rows, []string{l.Topic, strconv.Itoa(int(l.Partition)), committed, strconv.FormatInt(l.End, 10), strconv.FormatInt(l.Lag, 10), orDash(l.MemberID)})
				}
				fmt.Fprintln(c.env.stdout)
				c.table([]string{"TOPIC", "PARTITION", "COMMITTED", "LOG-END", "LAG", "MEMBER"}, rows)
			}
		}
		return nil
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func formatAssigned(a map[string][]int32) string {
	var topics []string
	for t := range a {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	var parts []string
	for _, t := range topics {
		ps := make([]string, len(a[t]))
		for i, p := range a[t] {
			ps[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, t+":"+strings.Join(ps, ","))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// describeGroup describes a classic group, or a KIP-848 one when the
// classic describe says it is not classic, with the lag of every partition
// it has a commit for or is assigned.
func describeGroup(ctx context.Context, adm *kadm.Client, name string) (describedGroup, error) {
	dg := describedGroup{Group: name, Members: []describedMember{}, Lag: []describedLag{}}
	owner := map[string]map[int32]string{}
	own := func(m describedMember) {
		for t, ps := range m.Assigned {
			if owner[t] == nil {
				owner[t] = map[int32]string{}
			}
			for _, p := range ps {
				owner[t][p] = m.MemberID
			}
		}
	}
	described, err := adm.DescribeGroups(ctx, name)
	if err != nil {
		return dg, err
	}
	g := described[name]
	switch {
	case g.Err == nil && g.State != "Dead":
		dg.Type, dg.State, dg.Protocol = "classic", g.State, g.Protocol
		for _, m := range g.Members {
			dm := describedMember{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Assigned: map[string][]int32{}}
			if m.InstanceID != nil {
				dm.InstanceID = *m.InstanceID
			}
			if ca, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range ca.Topics {
					dm.Assigned[t.Topic] = t.Partitions
				}
			}
			own(dm)
			dg.Members = append(dg.Members, dm)
		}
	case errors.Is(g.Err, kerr.GroupIDNotFound) || g.State == "Dead":
		cgs, err := adm.DescribeConsumerGroups(ctx, name)
		if err != nil {
			return dg, err
		}
		cg := cgs[name]
		if cg.Err != nil {
			if errors.Is(cg.Err, kerr.GroupIDNotFound) {
				return dg, fmt.Errorf("group %s does not exist", name)
			}
			return dg, fmt.Errorf("group %s: %w", name, cg.Err)
		}
		dg.Type, dg.State, dg.Protocol, dg.Epoch = "consumer", cg.State, cg.AssignorName, cg.Epoch
		for _, m := range cg.Members {
			dm := describedMember{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Assigned: map[string][]int32{}}
			if m.InstanceID != nil {
				dm.InstanceID = *m.InstanceID
			}
			for t, ps := range m.Assignment {
				for p := range ps {
					dm.Assigned[t] = append(dm.Assigned[t], p)
				}
				slices.Sort(dm.Assigned[t])
			}
			own(dm)
			dg.Members = append(dg.Members, dm)
		}
	default:
		return dg, fmt.Errorf("group %s: %w", name, g.Err)
	}
	offs, err := adm.FetchOffsets(ctx, name)
	if err != nil {
		return dg, err
	}
	committed := map[string]map[int32]int64{}
	topics := map[string]bool{}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			return
		}
		if committed[o.Topic] == nil {
			committed[o.Topic] = map[int32]int64{}
		}
		committed[o.Topic][o.Partition] = o.At
		topics[o.Topic] = true
	})
	for t := range owner {
		topics[t] = true
	}
	if len(topics) == 0 {
		return dg, nil
	}
	var names []string
	for t := range topics {
		names = append(names, t)
	}
	sort.Strings(names)
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return dg, err
	}
	starts, err := adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return dg, err
	}
	// Every partition of those topics is listed, as inspect lag lists
	// them: one without a commit has everything from its log start to
	// read (as rpk and kadm count it; Kafka's kafka-consumer-groups shows
	// "-" there and prints no total), so the total is what the group
	// has left to consume.
	ends.Each(func(e kadm.ListedOffset) {
		if e.Err != nil {
			return
		}
		c, ok := committed[e.Topic][e.Partition]
		l := describedLag{Topic: e.Topic, Partition: e.Partition, Committed: -1, End: e.Offset, Lag: e.Offset, MemberID: owner[e.Topic][e.Partition]}
		if s, sok := starts.Lookup(e.Topic, e.Partition); sok && s.Err == nil {
			l.Lag = max(e.Offset-s.Offset, 0)
		}
		if ok {
			l.Committed, l.Lag = c, max(e.Offset-c, 0)
		}
		dg.Total += l.Lag
		dg.Lag = append(dg.Lag, l)
	})
	sort.Slice(dg.Lag, func(i, j int) bool {
		if dg.Lag[i].Topic != dg.Lag[j].Topic {
			return dg.Lag[i].Topic < dg.Lag[j].Topic
		}
		return dg.Lag[i].Partition < dg.Lag[j].Partition
	})
	return dg, nil
}

func groupSeek(c *cliCmd) func(context.Context) error {
	to := c.fs.String("to", "", "start, end, an offset, @TIME (ms or RFC 3339), or group:OTHER (copy OTHER's commits)")
	topicsFlag := c.fs.String("topics", "", "comma-separated topics (default: those the group has commits for)")
	return func(ctx context.Context) error {
		if err := c.needArgs(1, 1, "one group name"); err != nil {
			return err
		}
		if *to == "" {
			return usagef("-to: want start, end, an offset, @TIME or group:OTHER")
		}
		group := c.args[0]
		_, adm, err := c.client()
		if err != nil {
			return err
		}
		var topics []string
		if *topicsFlag != "" {
			topics = strings.Split(*topicsFlag, ",")
		}
		set := kadm.Offsets{}
		if other, ok := strings.CutPrefix(*to, "group:"); ok {
			offs, err := adm.FetchOffsets(ctx, other)
			if err != nil {
				return err
			}
			if err := offs.Error(); err != nil {
				return fmt.Errorf("group %s: %w", other, err)
			}
			want := map[string]bool{}
			for _, t := range topics {
				want[t] = true
			}
			offs.Each(func(o kadm.OffsetResponse) {
				if len(want) == 0 || want[o.Topic] {
					set.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.At, LeaderEpoch: -1})
				}
			})
			if len(set) == 0 {
				return fmt.Errorf("group %s has no committed offsets to copy", other)
			}
		} else {
			spec, err := parseStartOffset(strings.TrimPrefix(*to, "="))
			if err != nil {
				return usagef("-to %q: want start, end, an offset, @TIME or group:OTHER", *to)
			}
			if spec.kind == 'r' {
				return usagef("-to %q: want start, end, an offset, @TIME or group:OTHER", *to)
			}
			if len(topics) == 0 {
				offs, err := adm.FetchOffsets(ctx, group)
				if err != nil {
					return err
				}
				seen := map[string]bool{}
				offs.Each(func(o kadm.OffsetResponse) {
					if !seen[o.Topic] {
						seen[o.Topic] = true
						topics = append(topics, o.Topic)
					}
				})
				if len(topics) == 0 {
					return usagef("group %s has no committed offsets: name the topics with -topics", group)
				}
				sort.Strings(topics)
			}
			ends, err := adm.ListEndOffsets(ctx, topics...)
			if err != nil {
				return err
			}
			for _, t := range topics {
				if len(ends[t]) == 0 {
					return fmt.Errorf("topic %s does not exist", t)
				}
				e := map[int32]int64{}
				for p, o := range ends[t] {
					e[p] = o.Offset
				}
				from, err := spec.resolve(ctx, adm, t, e)
				if err != nil {
					return err
				}
				for p, o := range from {
					set.Add(kadm.Offset{Topic: t, Partition: p, At: o, LeaderEpoch: -1})
				}
			}
		}
		resps, err := adm.CommitOffsets(ctx, group, set)
		if err != nil {
			return err
		}
		var out []partOutcome
		resps.Each(func(o kadm.OffsetResponse) {
			m := partOutcome{Topic: o.Topic, Partition: o.Partition, Offset: o.At}
			if o.Err != nil {
				m.Error = o.Err.Error()
				if errors.Is(o.Err, kerr.UnknownMemberID) || errors.Is(o.Err, kerr.RebalanceInProgress) || errors.Is(o.Err, kerr.IllegalGeneration) {
					// The same for every partition: said once.
					m.Error = fmt.Sprintf("group %s is not empty: stop its members first (%v)", group, o.Err)
				}
			}
			out = append(out, m)
		})
		return c.answerPartitions(out, "OFFSET", func(o partOutcome) error {
			if strings.HasPrefix(o.Error, "group ") {
				return errors.New(o.Error)
			}
			return fmt.Errorf("group %s topic %s partition %d: %s", group, o.Topic, o.Partition, o.Error)
		})
	}
}

func groupDelete(c *cliCmd) func(context.Context) error {
	return func(ctx context.Context) error {
		adm, err := c.admin(1, -1, "one or more group names")
		if err != nil {
			return err
		}
		resps, err := adm.DeleteGroups(ctx, c.args...)
		if err != nil {
			return err
		}
		type status struct {
			Group string `json:"group"`
			Error string `json:"error,omitempty"`
		}
		var out []status
		var rows [][]string
		var ok []bool
		var errs []error
		for _, g := range c.args {
			s := status{Group: g}
			if err := resps[g].Err; err != nil {
				s.Error = err.Error()
				if errors.Is(err, kerr.GroupIDNotFound) {
					errs = append(errs, fmt.Errorf("group %s does not exist", g))
				} else {
					errs = append(errs, fmt.Errorf("group %s: %w", g, err))
				}
			}
			out = append(out, s)
			rows = append(rows, []string{s.Group, statusText(s.Error)})
			ok = append(ok, s.Error == "")
		}
		return c.answerItems(out, []string{"GROUP", "STATUS"}, rows, ok, errs)
	}
}

// groupOffsetDelete is kafka-consumer-groups --delete-offsets: TOPIC alone
// means every partition of the topic, TOPIC:0,2 those partitions.
func groupOffsetDelete(c *cliCmd) func(context.Context) error {
	return func(ctx context.Context) error {
		adm, err := c.admin(2, -1, "GROUP and one or more TOPIC or TOPIC:P,P")
		if err != nil {
			return err
		}
		group := c.args[0]
		set := kadm.TopicsSet{}
		var whole []string
		for _, a := range c.args[1:] {
			topic, ps, ok := strings.Cut(a, ":")
			if topic == "" {
				return usagef("%q: want TOPIC or TOPIC:P,P", a)
			}
			if !ok {
				whole = append(whole, topic)
				continue
			}
			for p := range strings.SplitSeq(ps, ",") {
				n, err := partitionArg(p)
				if err != nil {
					return err
				}
				set.Add(topic, n)
			}
		}
		if len(whole) > 0 {
			ends, err := adm.ListEndOffsets(ctx, whole...)
			if err != nil {
				return err
			}
			for _, t := range whole {
				if len(ends[t]) == 0 {
					return fmt.Errorf("topic %s does not exist", t)
				}
				for p, o := range ends[t] {
					if o.Err != nil {
						return topicErr(t, o.Err)
					}
					set.Add(t, p)
				}
			}
		}
		resps, err := adm.DeleteOffsets(ctx, group, set)
		if errors.Is(err, kerr.GroupIDNotFound) {
			return fmt.Errorf("group %s does not exist", group)
		}
		if err != nil {
			return fmt.Errorf("group %s: %w", group, err)
		}
		type deleted struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
			Error     string `json:"error,omitempty"`
		}
		var out []deleted
		for t, ps := range set {
			for p := range ps {
				o := deleted{Topic: t, Partition: p}
				if perr, ok := resps.Lookup(t, p); ok && perr != nil {
					o.Error = perr.Error()
				}
				out = append(out, o)
			}
		}
		sort.Slice(out, func(i, j int) bool {
			if out[i].Topic != out[j].Topic {
				return out[i].Topic < out[j].Topic
			}
			return out[i].Partition < out[j].Partition
		})
		var rows [][]string
		var ok []bool
		var failed []error // in partition order
		for _, o := range out {
			rows = append(rows, []string{o.Topic, strconv.Itoa(int(o.Partition)), statusText(o.Error)})
			ok = append(ok, o.Error == "")
			if o.Error != "" {
				failed = append(failed, fmt.Errorf("group %s topic %s partition %d: %s", group, o.Topic, o.Partition, o.Error))
			}
		}
		return c.answerItems(out, []string{"TOPIC", "PARTITION", "STATUS"}, rows, ok, failed)
	}
}

func clusterInfo(c *cliCmd) func(context.Context) error {
	return func(ctx context.Context) error {
		adm, err := c.admin(0, 0, "no arguments")
		if err != nil {
			return err
		}
		md, err := adm.BrokerMetadata(ctx)
		if err != nil {
			return err
		}
		type broker struct {
			NodeID int32  `json:"node_id"`
			Host   string `json:"host"`
			Port   int32  `json:"port"`
			Rack   string `json:"rack,omitempty"`
		}
		info := struct {
			Cluster    string   `json:"cluster_id"`
			Controller int32    `json:"controller"`
			Brokers    []broker `json:"brokers"`
		}{Cluster: md.Cluster, Controller: md.Controller, Brokers: []broker{}}
		for _, b := range md.Brokers {
			br := broker{NodeID: b.NodeID, Host: b.Host, Port: b.Port}
			if b.Rack != nil {
				br.Rack = *b.Rack
			}
			info.Brokers = append(info.Brokers, br)
		}
		if c.json() {
			return c.printJSON(info)
		}
		fmt.Fprintf(c.env.stdout, "CLUSTER %s  CONTROLLER %d\n\n", info.Cluster, info.Controller)
		var rows [][]string
		for _, b := range info.Brokers {
			rows = append(rows, []string{strconv.Itoa(int(b.NodeID)), b.Host, strconv.Itoa(int(b.Port)), orDash(b.Rack)})
		}
		c.table([]string{"NODE", "HOST", "PORT", "RACK"}, rows)
		return nil
	}
}

func clusterConfig(c *cliCmd) func(context.Context) error {
	node := c.fs.Int("broker", -1, "broker `node ID` (default: the controller)")
	all := c.fs.Bool("all", false, "every config, defaults too")
	return func(ctx context.Context) error {
		adm, err := c.admin(0, 0, "no arguments")
		if err != nil {
			return err
		}
		// Without a node ID kadm describes the cluster-wide dynamic
		// defaults, which are empty unless set: ask a broker instead.
		if *node < 0 {
			md, err := adm.BrokerMetadata(ctx)
			if err != nil {
				return err
			}
			switch {
			case md.Controller >= 0:
				*node = int(md.Controller)
			case len(md.Brokers) > 0:
				*node = int(md.Brokers[0].NodeID)
			default:
				return errors.New("the cluster lists no brokers")
			}
		}
		rcs, err := adm.DescribeBrokerConfigs(ctx, int32(*node))
		if err != nil {
			return err
		}
		out := []describedConfig{}
		for _, rc := range rcs {
			if rc.Err != nil {
				return fmt.Errorf("broker %s: %w", rc.Name, rc.Err)
			}
			for _, cfg := range rc.Configs {
				src := strings.ToLower(strings.TrimSuffix(cfg.Source.String(), "_CONFIG"))
				if !*all && cfg.Source.String() == "DEFAULT_CONFIG" {
					continue
				}
				out = append(out, describedConfig{cfg.Key, cfg.MaybeValue(), src})
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		if c.json() {
			return c.printJSON(out)
		}
		if len(out) == 0 && !*all {
			// An empty table would read as "no configs".
			fmt.Fprintf(c.env.stdout, "every config of broker %d has its default value (-all lists them)\n", *node)
			return nil
		}
		var rows [][]string
		for _, cfg := range out {
			rows = append(rows, []string{cfg.Name, cfg.Value, cfg.Source})
		}
		c.table([]string{"CONFIG", "VALUE", "SOURCE"}, rows)
		return nil
	}
}
