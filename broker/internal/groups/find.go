package groups

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Located is a key's coordinator as FindCoordinator answers it: its node
// and that node's address, or the code refusing the key.
type Located struct {
	Node int32
	Host string
	Port int32
	Code int16
}

// FindCoordinator answers FindCoordinator for the two key types Kafka has,
// 0 (a group) and 1 (a transactional ID); any other is INVALID_REQUEST for
// every key. Before v4 the request names one key, from v4 a batch, with one
// answer each. locate, the broker's, places a key (its cluster's routing,
// authorization); it is not asked about a key of another type. A refused
// key answers node -1, no host and port -1, as Kafka.
func FindCoordinator(r *kmsg.FindCoordinatorRequest, locate func(key string) Located) *kmsg.FindCoordinatorResponse {
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	var msg *string
	if r.CoordinatorType != 0 && r.CoordinatorType != 1 {
		msg = kmsg.StringPtr("unsupported coordinator key type")
	}
	answer := func(key string) Located {
		l := Located{Code: kerr.InvalidRequest.Code}
		if msg == nil {
			l = locate(key)
		}
		if l.Code != 0 {
			l.Node, l.Host, l.Port = -1, "", -1
		}
		return l
	}
	if r.Version < 4 {
		l := answer(r.CoordinatorKey)
		resp.ErrorMessage = msg
		resp.NodeID, resp.Host, resp.Port, resp.ErrorCode = l.Node, l.Host, l.Port, l.Code
		return resp
	}
	for _, k := range r.CoordinatorKeys {
		l := answer(k)
		rc := kmsg.NewFindCoordinatorResponseCoordinator()
		rc.Key, rc.ErrorMessage = k, msg
		rc.NodeID, rc.Host, rc.Port, rc.ErrorCode = l.Node, l.Host, l.Port, l.Code
		resp.Coordinators = append(resp.Coordinators, rc)
	}
	return resp
}
