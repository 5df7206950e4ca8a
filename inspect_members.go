package minikafka

import (
	"context"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// GroupMember is one member of a consumer group with what it is assigned:
// for a classic group the assignment its leader handed out (decoded when
// the group uses the consumer protocol), for a KIP-848 group the
// coordinator's current assignment.
type GroupMember struct {
	MemberID   string             `json:"member_id"`
	InstanceID string             `json:"instance_id,omitempty"`
	ClientID   string             `json:"client_id"`
	ClientHost string             `json:"client_host"`
	Assignment map[string][]int32 `json:"assignment"`
}

// GroupMembers lists a group's members and their assignments, by member
// ID; empty for a group without members (or unknown).
func (b *Broker) GroupMembers(ctx context.Context, group string) ([]GroupMember, error) {
	g, ok := b.GroupState(group)
	if !ok || g.Members == 0 {
		return []GroupMember{}, nil
	}
	var out []GroupMember
	if g.Type == "consumer" {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{group}
		resp, err := b.do(ctx, req)
		if err != nil {
			return nil, err
		}
		d := resp.(*kmsg.ConsumerGroupDescribeResponse).Groups[0]
		if err := kerr.ErrorForCode(d.ErrorCode); err != nil {
			return nil, fmt.Errorf("group %q: %w", group, err)
		}
		for _, m := range d.Members {
			gm := newGroupMember(m.MemberID, m.InstanceID, m.ClientID, m.ClientHost)
			for _, tp := range m.Assignment.TopicPartitions {
				gm.Assignment[tp.Topic] = append(gm.Assignment[tp.Topic], tp.Partitions...)
			}
			out = append(out, gm)
		}
	} else {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Version = 5
		req.Groups = []string{group}
		resp, err := b.do(ctx, req)
		if err != nil {
			return nil, err
		}
		d := resp.(*kmsg.DescribeGroupsResponse).Groups[0]
		if err := kerr.ErrorForCode(d.ErrorCode); err != nil {
			return nil, fmt.Errorf("group %q: %w", group, err)
		}
		for _, m := range d.Members {
			gm := newGroupMember(m.MemberID, m.InstanceID, m.ClientID, m.ClientHost)
			if d.ProtocolType == "consumer" && len(m.MemberAssignment) > 0 {
				var a kmsg.ConsumerMemberAssignment
				if err := a.ReadFrom(m.MemberAssignment); err == nil {
					for _, t := range a.Topics {
						gm.Assignment[t.Topic] = append(gm.Assignment[t.Topic], t.Partitions...)
					}
				}
			}
			out = append(out, gm)
		}
	}
	for i := range out {
		for t := range out[i].Assignment {
			sort.Slice(out[i].Assignment[t], func(a, c int) bool { return out[i].Assignment[t][a] < out[i].Assignment[t][c] })
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MemberID < out[j].MemberID })
	return out, nil
}

func newGroupMember(id string, instance *string, clientID, host string) GroupMember {
	gm := GroupMember{MemberID: id, ClientID: clientID, ClientHost: host, Assignment: map[string][]int32{}}
	if instance != nil {
		gm.InstanceID = *instance
	}
	return gm
}
