package cluster

import "github.com/twmb/franz-go/pkg/kmsg"

// CoordinatedKeys names the coordinator kind and keys a request is about
// (the groups or transactional IDs its coordinator must own); none for
// requests any node answers.
func CoordinatedKeys(body kmsg.Request) (int, []string) {
	one := func(kind int, k string) (int, []string) { return kind, []string{k} }
	switch r := body.(type) {
	case *kmsg.OffsetCommitRequest:
		return one(GroupCoordinator, r.Group)
	case *kmsg.OffsetFetchRequest:
		if r.Version < 8 {
			return one(GroupCoordinator, r.Group)
		}
		ks := make([]string, len(r.Groups))
		for i, g := range r.Groups {
			ks[i] = g.Group
		}
		return GroupCoordinator, ks
	case *kmsg.JoinGroupRequest:
		return one(GroupCoordinator, r.Group)
	case *kmsg.HeartbeatRequest:
		return one(GroupCoordinator, r.Group)
	case *kmsg.LeaveGroupRequest:
		return one(GroupCoordinator, r.Group)
	case *kmsg.SyncGroupRequest:
		return one(GroupCoordinator, r.Group)
	case *kmsg.DescribeGroupsRequest:
		return GroupCoordinator, r.Groups
	case *kmsg.DeleteGroupsRequest:
		return GroupCoordinator, r.Groups
	case *kmsg.OffsetDeleteRequest:
		return one(GroupCoordinator, r.Group)
	case *kmsg.TxnOffsetCommitRequest:
		return one(GroupCoordinator, r.Group)
	case *kmsg.ConsumerGroupHeartbeatRequest:
		return one(GroupCoordinator, r.Group)
	case *kmsg.ConsumerGroupDescribeRequest:
		return GroupCoordinator, r.Groups
	case *kmsg.ShareGroupHeartbeatRequest:
		return one(GroupCoordinator, r.GroupID)
	case *kmsg.ShareGroupDescribeRequest:
		return GroupCoordinator, r.GroupIDs
	case *kmsg.DescribeShareGroupOffsetsRequest:
		ks := make([]string, len(r.Groups))
		for i, g := range r.Groups {
			ks[i] = g.GroupID
		}
		return GroupCoordinator, ks
	case *kmsg.AlterShareGroupOffsetsRequest:
		return one(GroupCoordinator, r.GroupID)
	case *kmsg.DeleteShareGroupOffsetsRequest:
		return one(GroupCoordinator, r.GroupID)
	case *kmsg.InitProducerIDRequest:
		if r.TransactionalID != nil {
			return one(TxnCoordinator, *r.TransactionalID)
		}
	case *kmsg.AddPartitionsToTxnRequest:
		if r.Version < 4 {
			return one(TxnCoordinator, r.TransactionalID)
		}
		ks := make([]string, len(r.Transactions))
		for i, t := range r.Transactions {
			ks[i] = t.TransactionalID
		}
		return TxnCoordinator, ks
	case *kmsg.AddOffsetsToTxnRequest:
		return one(TxnCoordinator, r.TransactionalID)
	case *kmsg.EndTxnRequest:
		return one(TxnCoordinator, r.TransactionalID)
	case *kmsg.DescribeTransactionsRequest:
		return TxnCoordinator, r.TransactionalIDs
	}
	return 0, nil
}
