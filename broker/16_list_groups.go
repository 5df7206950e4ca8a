package broker

// ListGroups v0–v5.
//
// Behavior: every group the coordinator knows, including groups that only
// have committed offsets (listed as Empty with no protocol type, as Kafka
// lists groups loaded from __consumer_offsets). KIP-848 groups have type
// "consumer" and their own states (Empty, Assigning, Reconciling, Stable).
// v4 filters by state (case-insensitive), v5 by type.

import (
	"context"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleListGroups(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ListGroupsRequest)
	resp := r.ResponseKind().(*kmsg.ListGroupsResponse)
	c := b.coord()
	if c == nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return protocol.Reply{Response: resp}
	}
	type entry struct{ name, protocolType, state, typ string }
	seen := map[string]entry{}
	c.mu.Lock()
	groups := make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	for _, g := range groups {
		g.mu.Lock()
		switch {
		case g.state == stateDead:
		case g.cg != nil && len(g.members) == 0:
			seen[g.name] = entry{g.name, "consumer", g.cgState(), "consumer"}
		default:
			seen[g.name] = entry{g.name, g.protocolType, g.state.String(), "classic"}
		}
		g.mu.Unlock()
	}
	for _, name := range c.store.Groups() {
		if _, ok := seen[name]; !ok {
			seen[name] = entry{name, "", stateEmpty.String(), "classic"}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := seen[n]
		if len(r.StatesFilter) > 0 && !containsFold(r.StatesFilter, e.state) {
			continue
		}
		if len(r.TypesFilter) > 0 && !containsFold(r.TypesFilter, e.typ) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = e.name, e.protocolType, e.state, e.typ
		resp.Groups = append(resp.Groups, lg)
	}
	return protocol.Reply{Response: resp}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
