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
}

func (c *Console) listGroups(r *http.Request) (any, error) {
	listed, err := c.adm.ListGroups(r.Context())
	if err != nil {
		return nil, err
	}
	out := []groupSummary{}
	for _, g := range listed.Sorted() {
		out = append(out, groupSummary{Group: g.Group, Type: groupType(g), State: g.State, ProtocolType: g.ProtocolType})
	}
	return out, nil
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
	TotalLag int64        `json:"total_lag"`
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

// addLag fills in committed offsets, end offsets and lag for every
// partition the group has a commit for or a member is assigned.
func (c *Console) addLag(ctx context.Context, g *groupView) error {
	committed, err := c.adm.FetchOffsets(ctx, g.Group)
	if err != nil {
		return err
	}
	owners := map[string]map[int32]string{}
	for _, m := range g.Members {
		for t, ps := range m.Assigned {
			if owners[t] == nil {
				owners[t] = map[int32]string{}
			}
			for _, p := range ps {
				owners[t][p] = m.MemberID
			}
		}
	}
	topics := map[string]bool{}
	committed.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil {
			topics[o.Topic] = true
		}
	})
	for t := range owners {
		topics[t] = true
	}
	if len(topics) == 0 {
		return nil
	}
	ends, err := c.adm.ListEndOffsets(ctx, slices.Sorted(maps.Keys(topics))...)
	if err != nil {
		return err
	}
	ends.Each(func(e kadm.ListedOffset) {
		if e.Err != nil {
			return
		}
		co, hasCommit := committed.Lookup(e.Topic, e.Partition)
		hasCommit = hasCommit && co.Err == nil && co.At >= 0
		owner, owned := owners[e.Topic][e.Partition]
		if !hasCommit && !owned {
			return
		}
		l := lagView{Topic: e.Topic, Partition: e.Partition, Committed: -1, End: e.Offset, Lag: e.Offset, Member: owner}
		if hasCommit {
			l.Committed, l.Lag = co.At, max(0, e.Offset-co.At)
		}
		g.TotalLag += l.Lag
		g.Lag = append(g.Lag, l)
	})
	sort.Slice(g.Lag, func(i, j int) bool {
		a, b := g.Lag[i], g.Lag[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
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
