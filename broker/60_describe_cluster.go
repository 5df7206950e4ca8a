package broker

// DescribeCluster v0–v2.
//
// This node is the whole cluster and its controller. EndpointType (v1+) 1
// asks for brokers; 2 (controllers) is answered with the same node, since
// it is also the controller (Kafka's combined mode); anything else is
// UNSUPPORTED_ENDPOINT_TYPE. Nothing is ever fenced (v2).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeCluster(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeClusterRequest)
	resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.Version = req.Version
	resp.EndpointType = r.EndpointType
	if req.Version >= 1 && r.EndpointType != 1 && r.EndpointType != 2 {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		b.logBad(req, "describe cluster: unsupported endpoint type", "type", r.EndpointType)
		return protocol.Reply{Response: resp}
	}
	resp.ClusterID = b.clusterID
	resp.ControllerID = b.cl.Controller()
	for _, mb := range b.metadataBrokers(req) {
		br := kmsg.NewDescribeClusterResponseBroker()
		br.NodeID, br.Host, br.Port, br.Rack = mb.NodeID, mb.Host, mb.Port, mb.Rack
		resp.Brokers = append(resp.Brokers, br)
	}
	resp.ClusterAuthorizedOperations = b.authorizer(req).authorizedOps(r.IncludeClusterAuthorizedOperations, kmsg.ACLResourceTypeCluster, clusterName)
	return protocol.Reply{Response: resp}
}
