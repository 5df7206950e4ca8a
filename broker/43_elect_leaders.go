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
	resp.Topics = b.cl.ElectLeaders(clusterView{b}, r, b.log)
	return protocol.Reply{Response: resp}
}
