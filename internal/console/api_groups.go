package console

// Consumer groups: list, describe with lag, reset offsets of an empty group.

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

type groupSummary struct {
	Group        string `json:"group"`
	Type         string `json:"type"` // classic, consumer (KIP-848) or share
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	MemberCount  int    `json:"member_count"`
	// TotalLag is summed as minikafka inspect lag sums it; nil for share
	// groups (they commit no offsets).
	TotalLag *int64 `json:"total_lag,omitempty"`
}

// listGroups lists every group with its member count and total lag. It
// asks the broker a fixed number of questions however many groups there
// are: one describe per group type, one offset fetch, one pair of offset
// listings for all the topics the groups touch.
func (c *Console) listGroups(r *http.Request) (any, error) {
	ctx := r.Context()
	listed, err := c.adm.ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	var classic, consumer, share []string
	for _, g := range listed.Sorted() {
		switch groupType(g) {
		case "consumer":
			consumer = append(consumer, g.Group)
		case "share":
			share = append(share, g.Group)
		default:
			classic = append(classic, g.Group)
		}
	}
	members := map[string]int{}
	owners := map[string]map[string]map[int32]bool{} // group, topic, partition
	own := func(g, t string, ps []int32) {
		if owners[g] == nil {
			owners[g] = map[string]map[int32]bool{}
		}
		if owners[g][t] == nil {
			owners[g][t] = map[int32]bool{}
		}
		for _, p := range ps {
			owners[g][t][p] = true
		}
	}
	if len(classic) > 0 {
		dgs, err := c.adm.DescribeGroups(ctx, classic...)
		if err != nil {
			return nil, err
		}
		for name, dg := range dgs {
			members[name] = len(dg.Members)
			for _, m := range dg.Members {
				if a, ok := m.Assigned.AsConsumer(); ok {
					for _, t := range a.Topics {
						own(name, t.Topic, t.Partitions)
					}
				}
			}
		}
	}
	if len(consumer) > 0 {
		cgs, err := c.adm.DescribeConsumerGroups(ctx, consumer...)
		if err != nil {
			return nil, err
		}
		for name, cg := range cgs {
			members[name] = len(cg.Members)
			for _, m := range cg.Members {
				m.Assignment.EachPartitions(func(t string, ps []int32) { own(name, t, ps) })
			}
		}
	}
	if len(share) > 0 {
		sgs, err := c.adm.DescribeShareGroups(ctx, share...)
		if err != nil {
			return nil, err
		}
		for name, sg := range sgs {
			members[name] = len(sg.Members)
		}
	}
	committed := map[string]kadm.OffsetResponses{}
	topics := map[string]bool{}
	if withOffsets := slices.Concat(classic, consumer); len(withOffsets) > 0 {
		for name, f := range c.adm.FetchManyOffsets(ctx, withOffsets...) {
			if f.Err != nil {
				continue
			}
			committed[name] = f.Fetched
			f.Fetched.Each(func(o kadm.OffsetResponse) {
				if o.Err == nil && o.At >= 0 {
					topics[o.Topic] = true
				}
			})
		}
	}
	for _, byTopic := range owners {
		for t := range byTopic {
			topics[t] = true
		}
	}
	var offs partitionOffsets
	if len(topics) > 0 {
		if offs, err = c.listPartitionOffsets(ctx, slices.Sorted(maps.Keys(topics))); err != nil {
			return nil, err
		}
	}
	out := []groupSummary{}
	for _, g := range listed.Sorted() {
		gs := groupSummary{Group: g.Group, Type: groupType(g), State: g.State, ProtocolType: g.ProtocolType, MemberCount: members[g.Group]}
		if gs.Type != "share" {
			var total int64
			for _, l := range groupLag(committed[g.Group], owners[g.Group], offs) {
				total += l.Lag
			}
			gs.TotalLag = &total
		}
		out = append(out, gs)
	}
	return out, nil
}

// partitionOffsets holds the log start and end of partitions, by topic
// and partition.
type partitionOffsets struct{ start, end kadm.ListedOffsets }

func (c *Console) listPartitionOffsets(ctx context.Context, topics []string) (partitionOffsets, error) {
	start, err := c.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return partitionOffsets{}, err
	}
	end, err := c.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return partitionOffsets{}, err
	}
	return partitionOffsets{start, end}, nil
}

// groupLag computes a group's lag the way minikafka inspect lag does: for
// every partition of every topic the group has a commit on or a member is
// assigned, the high watermark minus the committed offset, or minus the
// log start where nothing is committed (a consumer starting there has
// that much to read).
func groupLag(committed kadm.OffsetResponses, owned map[string]map[int32]bool, offs partitionOffsets) []lagView {
	topics := map[string]bool{}
	committed.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			topics[o.Topic] = true
		}
	})
	for t := range owned {
		topics[t] = true
	}
	out := []lagView{}
	offs.end.Each(func(e kadm.ListedOffset) {
		if e.Err != nil || !topics[e.Topic] {
			return
		}
		l := lagView{Topic: e.Topic, Partition: e.Partition, Committed: -1, End: e.Offset}
		from := int64(0)
		if s, ok := offs.start.Lookup(e.Topic, e.Partition); ok && s.Err == nil {
			from = s.Offset
		}
		if co, ok := committed.Lookup(e.Topic, e.Partition); ok && co.Err == nil && co.At >= 0 {
			l.Committed, from = co.At, co.At
		}
		l.Lag = max(0, e.Offset-from)
		out = append(out, l)
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return out
}

func groupType(g kadm.ListedGroup) string {
	if g.GroupType != "" {
		return g.GroupType
	}
	return "classic" // a broker before KIP-848 lists no type
}

type memberView struct {
	MemberID   string             `json:"member_id"`
	InstanceID string             `json:"instance_id,omitempty"`
	ClientID   string             `json:"client_id"`
	Host       string             `json:"host"`
	Epoch      int32              `json:"epoch,omitempty"`
	Assigned   map[string][]int32 `json:"assigned"`
}

type lagView struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed int64  `json:"committed"` // -1: no commit
	End       int64  `json:"end"`
	Lag       int64  `json:"lag"`
	Member    string `json:"member,omitempty"`
}

type groupView struct {
	groupSummary
	Protocol string       `json:"protocol"` // the assignor
	Epoch    int32        `json:"epoch,omitempty"`
	Members  []memberView `json:"members"`
	Lag      []lagView    `json:"lag"`
}

func newMember(id string, instance *string, client, host string) memberView {
	mv := memberView{MemberID: id, ClientID: client, Host: host, Assigned: map[string][]int32{}}
	if instance != nil {
		mv.InstanceID = *instance
	}
	return mv
}

// loadGroup describes a group with the API of its type.
func (c *Console) loadGroup(ctx context.Context, name string) (groupView, error) {
	g := groupView{groupSummary: groupSummary{Group: name, Type: "classic"}, Members: []memberView{}, Lag: []lagView{}}
	listed, err := c.adm.ListGroups(ctx)
	if err != nil {
		return g, err
	}
	lg, ok := listed[name]
	if !ok {
		return g, errorf(http.StatusNotFound, "group %q does not exist", name)
	}
	g.Type, g.ProtocolType = groupType(lg), lg.ProtocolType
	if g.Type == "consumer" {
		cgs, err := c.adm.DescribeConsumerGroups(ctx, name)
		if err != nil {
			return g, err
		}
		cg := cgs[name]
		if cg.Err != nil {
			return g, cg.Err
		}
		g.State, g.Protocol, g.Epoch = cg.State, cg.AssignorName, cg.Epoch
		for _, m := range cg.Members {
			mv := newMember(m.MemberID, m.InstanceID, m.ClientID, m.ClientHost)
			mv.Epoch = m.MemberEpoch
			m.Assignment.EachPartitions(func(t string, ps []int32) { mv.Assigned[t] = slices.Sorted(slices.Values(ps)) })
			g.Members = append(g.Members, mv)
		}
	} else {
		dgs, err := c.adm.DescribeGroups(ctx, name)
		if err != nil {
			return g, err
		}
		dg := dgs[name]
		if dg.Err != nil {
			return g, withMessage(dg.Err, dg.ErrMessage)
		}
		g.State, g.Protocol = dg.State, dg.Protocol
		for _, m := range dg.Members {
			mv := newMember(m.MemberID, m.InstanceID, m.ClientID, m.ClientHost)
			if a, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range a.Topics {
					mv.Assigned[t.Topic] = slices.Sorted(slices.Values(t.Partitions))
				}
			}
			g.Members = append(g.Members, mv)
		}
	}
	return g, c.addLag(ctx, &g)
}

// addLag fills in committed offsets, end offsets and lag (see groupLag)
// and the member count.
func (c *Console) addLag(ctx context.Context, g *groupView) error {
	g.MemberCount = len(g.Members)
	var total int64
	g.TotalLag = &total
	committed, err := c.adm.FetchOffsets(ctx, g.Group)
	if err != nil {
		return err
	}
	owners := map[string]map[int32]bool{}
	owner := map[string]map[int32]string{}
	for _, m := range g.Members {
		for t, ps := range m.Assigned {
			if owners[t] == nil {
				owners[t], owner[t] = map[int32]bool{}, map[int32]string{}
			}
			for _, p := range ps {
				owners[t][p], owner[t][p] = true, m.MemberID
			}
		}
	}
	topics := map[string]bool{}
	committed.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			topics[o.Topic] = true
		}
	})
	for t := range owners {
		topics[t] = true
	}
	if len(topics) == 0 {
		return nil
	}
	offs, err := c.listPartitionOffsets(ctx, slices.Sorted(maps.Keys(topics)))
	if err != nil {
		return err
	}
	g.Lag = groupLag(committed, owners, offs)
	for i := range g.Lag {
		g.Lag[i].Member = owner[g.Lag[i].Topic][g.Lag[i].Partition]
		total += g.Lag[i].Lag
	}
	return nil
}

func (c *Console) describeGroup(r *http.Request) (any, error) {
	return c.loadGroup(r.Context(), r.PathValue("group"))
}

type resetReq struct {
	To        string `json:"to"`        // start, end or timestamp
	Timestamp int64  `json:"timestamp"` // ms, for to=timestamp
	Topic     string `json:"topic"`     // only this topic; "" all the group has commits for
}

// resetGroup moves an empty group's committed offsets to the start, the
// end or the first offset at or after a time. A group with members is
// refused: its members would overwrite the commit (Kafka's tools refuse
// the same).
func (c *Console) resetGroup(r *http.Request) (any, error) {
	ctx := r.Context()
	name := r.PathValue("group")
	var req resetReq
	if err := readJSON(r, &req); err != nil {
		return nil, err
	}
	switch req.To {
	case "start", "end":
	case "timestamp":
		if req.Timestamp < 0 {
			return nil, errorf(http.StatusBadRequest, "timestamp %d: must be >= 0", req.Timestamp)
		}
	default:
		return nil, errorf(http.StatusBadRequest, "to %q: want start, end or timestamp", req.To)
	}
	g, err := c.loadGroup(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(g.Members) > 0 || (g.State != "Empty" && g.State != "Dead") {
		return nil, errorf(http.StatusConflict, "group %q is %s with %d members: offsets can be reset only when it is empty", name, g.State, len(g.Members))
	}
	var topics []string
	if req.Topic != "" {
		topics = []string{req.Topic}
	} else {
		for _, l := range g.Lag {
			if !slices.Contains(topics, l.Topic) {
				topics = append(topics, l.Topic)
			}
		}
	}
	if len(topics) == 0 {
		return nil, errorf(http.StatusBadRequest, "group %q has no committed offsets; name a topic", name)
	}
	var listed kadm.ListedOffsets
	switch req.To {
	case "start":
		listed, err = c.adm.ListStartOffsets(ctx, topics...)
	case "end":
		listed, err = c.adm.ListEndOffsets(ctx, topics...)
	default:
		listed, err = c.adm.ListOffsetsAfterMilli(ctx, req.Timestamp, topics...)
	}
	if err != nil {
		return nil, err
	}
	var ends kadm.ListedOffsets
	if req.To == "timestamp" {
		if ends, err = c.adm.ListEndOffsets(ctx, topics...); err != nil {
			return nil, err
		}
	}
	set := kadm.Offsets{}
	var firstErr error
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			if firstErr == nil {
				firstErr = o.Err
			}
			return
		}
		at := o.Offset
		if at < 0 { // no record at or after the time: the end
			e, _ := ends.Lookup(o.Topic, o.Partition)
			at = e.Offset
		}
		set.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: at, LeaderEpoch: -1})
	})
	if firstErr != nil {
		if errors.Is(firstErr, kerr.UnknownTopicOrPartition) {
			return nil, errorf(http.StatusNotFound, "topic %q does not exist", req.Topic)
		}
		return nil, firstErr
	}
	resps, err := c.adm.CommitOffsets(ctx, name, set)
	if err != nil {
		return nil, err
	}
	if err := resps.Error(); err != nil {
		return nil, err
	}
	return c.loadGroup(ctx, name)
}
