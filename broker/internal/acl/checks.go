package acl

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Check returns the error code that refuses a request whole, 0 to go on
// to its handler.
type Check func(r *Request, req kmsg.Request) int16

var (
	errTopicAuth   = kerr.TopicAuthorizationFailed.Code
	errGroupAuth   = kerr.GroupAuthorizationFailed.Code
	errClusterAuth = kerr.ClusterAuthorizationFailed.Code
	errTxnIDAuth   = kerr.TransactionalIDAuthorizationFailed.Code
)

func clusterCheck(op Operation) Check {
	return func(r *Request, _ kmsg.Request) int16 {
		if !r.Allowed(op, kmsg.ACLResourceTypeCluster, ClusterName) {
			return errClusterAuth
		}
		return 0
	}
}

func groupCheck(op Operation, group func(kmsg.Request) string) Check {
	return func(r *Request, req kmsg.Request) int16 {
		if !r.Allowed(op, kmsg.ACLResourceTypeGroup, group(req)) {
			return errGroupAuth
		}
		return 0
	}
}

func txnCheck(id func(kmsg.Request) string, then Check) Check {
	return func(r *Request, req kmsg.Request) int16 {
		if !r.Allowed(kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, id(req)) {
			return errTxnIDAuth
		}
		if then != nil {
			return then(r, req)
		}
		return 0
	}
}

// subscribedTopicsCheck is KIP-848's: a member may subscribe only to
// topic names it may describe (a regex subscription is filtered instead).
func subscribedTopicsCheck(topics func(kmsg.Request) []string) Check {
	return func(r *Request, req kmsg.Request) int16 {
		for _, t := range topics(req) {
			if !r.Allowed(kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t) {
				return errTopicAuth
			}
		}
		return 0
	}
}

func chain(checks ...Check) Check {
	return func(r *Request, req kmsg.Request) int16 {
		for _, c := range checks {
			if code := c(r, req); code != 0 {
				return code
			}
		}
		return 0
	}
}

func strOrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Operations, by Kafka's names.
const (
	readOp            = kmsg.ACLOperationRead
	writeOp           = kmsg.ACLOperationWrite
	deleteOp          = kmsg.ACLOperationDelete
	alterOp           = kmsg.ACLOperationAlter
	describeOp        = kmsg.ACLOperationDescribe
	clusterActionOp   = kmsg.ACLOperationClusterAction
	describeConfigsOp = kmsg.ACLOperationDescribeConfigs
	alterConfigsOp    = kmsg.ACLOperationAlterConfigs
)

// wholeRequestChecks are the checks that refuse a request whole, by API
// key, each as Kafka's KafkaApis makes it.
var wholeRequestChecks = map[int16]Check{
	0: func(r *Request, req kmsg.Request) int16 { // Produce: a transactional producer's ID
		if id := req.(*kmsg.ProduceRequest).TransactionID; id != nil &&
			!r.Allowed(writeOp, kmsg.ACLResourceTypeTransactionalId, *id) {
			return errTxnIDAuth
		}
		return 0
	},
	8:  groupCheck(readOp, func(r kmsg.Request) string { return r.(*kmsg.OffsetCommitRequest).Group }),
	11: groupCheck(readOp, func(r kmsg.Request) string { return r.(*kmsg.JoinGroupRequest).Group }),
	12: groupCheck(readOp, func(r kmsg.Request) string { return r.(*kmsg.HeartbeatRequest).Group }),
	13: groupCheck(readOp, func(r kmsg.Request) string { return r.(*kmsg.LeaveGroupRequest).Group }),
	14: groupCheck(readOp, func(r kmsg.Request) string { return r.(*kmsg.SyncGroupRequest).Group }),
	22: func(r *Request, req kmsg.Request) int16 { // InitProducerId
		ip := req.(*kmsg.InitProducerIDRequest)
		if ip.TransactionalID != nil {
			if !r.Allowed(writeOp, kmsg.ACLResourceTypeTransactionalId, *ip.TransactionalID) {
				return errTxnIDAuth
			}
			return 0
		}
		// KIP-679: an idempotent producer needs IDEMPOTENT_WRITE on the
		// cluster or WRITE on some topic.
		if !r.Allowed(kmsg.ACLOperationIdempotentWrite, kmsg.ACLResourceTypeCluster, ClusterName) &&
			!r.ByResourceType(writeOp, kmsg.ACLResourceTypeTopic) {
			return errClusterAuth
		}
		return 0
	},
	24: func(r *Request, req kmsg.Request) int16 {
		if req.GetVersion() >= 4 { // broker-to-broker (KIP-890)
			return clusterCheck(clusterActionOp)(r, req)
		}
		return txnCheck(func(r kmsg.Request) string { return r.(*kmsg.AddPartitionsToTxnRequest).TransactionalID }, nil)(r, req)
	},
	25: txnCheck(func(r kmsg.Request) string { return r.(*kmsg.AddOffsetsToTxnRequest).TransactionalID },
		groupCheck(readOp, func(r kmsg.Request) string { return r.(*kmsg.AddOffsetsToTxnRequest).Group })),
	26: txnCheck(func(r kmsg.Request) string { return r.(*kmsg.EndTxnRequest).TransactionalID }, nil),
	27: clusterCheck(clusterActionOp),
	28: txnCheck(func(r kmsg.Request) string { return r.(*kmsg.TxnOffsetCommitRequest).TransactionalID },
		groupCheck(readOp, func(r kmsg.Request) string { return r.(*kmsg.TxnOffsetCommitRequest).Group })),
	29: clusterCheck(describeOp),
	30: clusterCheck(alterOp),
	31: clusterCheck(alterOp),
	34: clusterCheck(alterOp),
	35: clusterCheck(describeOp),
	43: clusterCheck(alterOp),
	45: clusterCheck(alterOp),
	46: clusterCheck(describeOp),
	47: groupCheck(deleteOp, func(r kmsg.Request) string { return r.(*kmsg.OffsetDeleteRequest).Group }),
	48: clusterCheck(describeConfigsOp),
	49: clusterCheck(alterConfigsOp),
	50: clusterCheck(describeOp),
	51: clusterCheck(alterOp),
	55: clusterCheck(describeOp),
	57: clusterCheck(alterOp),
	68: chain(groupCheck(readOp, func(r kmsg.Request) string { return r.(*kmsg.ConsumerGroupHeartbeatRequest).Group }),
		subscribedTopicsCheck(func(r kmsg.Request) []string { return r.(*kmsg.ConsumerGroupHeartbeatRequest).SubscribedTopicNames })),
	74: clusterCheck(describeConfigsOp),
	76: chain(groupCheck(readOp, func(r kmsg.Request) string { return r.(*kmsg.ShareGroupHeartbeatRequest).GroupID }),
		subscribedTopicsCheck(func(r kmsg.Request) []string { return r.(*kmsg.ShareGroupHeartbeatRequest).SubscribedTopicNames })),
	78: groupCheck(readOp, func(r kmsg.Request) string { return strOrEmpty(r.(*kmsg.ShareFetchRequest).GroupID) }),
	79: groupCheck(readOp, func(r kmsg.Request) string { return strOrEmpty(r.(*kmsg.ShareAcknowledgeRequest).GroupID) }),
	91: groupCheck(readOp, func(r kmsg.Request) string { return r.(*kmsg.AlterShareGroupOffsetsRequest).GroupID }),
	92: groupCheck(deleteOp, func(r kmsg.Request) string { return r.(*kmsg.DeleteShareGroupOffsetsRequest).GroupID }),
}

// WholeRequestCheck is the check that refuses a request of API key whole
// before its handler, nil for none: Kafka's KafkaApis refuses a group,
// transactional ID or cluster operation with the request's own error
// response, and per-item checks in the handlers answer
// TOPIC_AUTHORIZATION_FAILED (and so on) per item.
func WholeRequestCheck(key int16) Check { return wholeRequestChecks[key] }
