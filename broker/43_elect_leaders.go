package broker

// ElectLeaders v0–v2.
//
// As Kafka's controller answers it, over the simulated cluster
// (cluster.go). PREFERRED (0) makes each partition's first replica its
// leader, with a new leader epoch, when it is an in-sync replica that is
// up (else PREFERRED_LEADER_NOT_AVAILABLE); UNCLEAN (1) elects the first
// running replica of a partition that has no leader, in or out of the ISR
// (else ELIGIBLE_LEADERS_NOT_AVAILABLE). A partition that already has the
// leader asked for gets ELECTION_NOT_NEEDED, an unknown one
// UNKNOWN_TOPIC_OR_PARTITION. A request for every partition (null
// topics) lists only the partitions elected or failed, as Kafka does. An
// election type other than 0 or 1 is INVALID_REQUEST.

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleElectLeaders(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ElectLeadersRequest)
	resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
	resp.Version = req.Version
	if r.ElectionType != 0 && r.ElectionType != 1 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		b.logBad(req, "elect leaders: unknown election type", "type", r.ElectionType)
		return protocol.Reply{Response: resp}
	}
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	type target struct {
		name  string
		parts []int32
	}
	var targets []target
	all := r.Topics == nil
	if all {
		for name, t := range b.topics.Load().byName {
			tg := target{name: name}
			for i := range t.partitions() {
				tg.parts = append(tg.parts, int32(i))
			}
			targets = append(targets, tg)
		}
		slices.SortFunc(targets, func(a, b target) int { return strings.Compare(a.name, b.name) })
	}
	for _, rt := range r.Topics {
		targets = append(targets, target{rt.Topic, rt.Partitions})
	}
	for _, tg := range targets {
		st := kmsg.NewElectLeadersResponseTopic()
		st.Topic = tg.name
		changed := false
		for _, i := range tg.parts {
			sp := kmsg.NewElectLeadersResponseTopicPartition()
			sp.Partition = i
			p := b.partitionOf(tg.name, i)
			if p == nil {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				sp.ErrorMessage = kmsg.StringPtr("The topic or partition does not exist on this broker")
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			pl, code, msg := b.cl.Elect(p.place.Load(), r.ElectionType == 1)
			if pl != nil {
				b.changePlacement(p, pl)
				if r.ElectionType == 1 {
					b.log.Warn("unclean leader election", "topic", p.topic.name, "partition", p.index, "leader", pl.Leader)
				}
			}
			if code == 0 {
				changed = true
			}
			if all && code == kerr.ElectionNotNeeded.Code {
				continue
			}
			sp.ErrorCode = code
			if msg != "" {
				sp.ErrorMessage = kmsg.StringPtr(msg)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		if changed {
			if err := b.persistPlacementLocked(b.lookupTopic(tg.name, [16]byte{})); err != nil {
				b.log.Error("persisting elected leaders", "err", err)
			}
		}
		if len(st.Partitions) > 0 || !all {
			resp.Topics = append(resp.Topics, st)
		}
	}
	return protocol.Reply{Response: resp}
}
