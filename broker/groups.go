package broker

// The group coordinator, broker/internal/groups, as the broker opens it and
// answers it (groupsView, groupAccess); the NN_*.go files for the group
// APIs hand it the decoded requests.

import (
	"path"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/groups"
)

// newGroupCoordinator opens the group coordinator over the broker's data
// dir, with the broker seen through groupsView.
func newGroupCoordinator(b *Broker) (*groups.Coordinator, error) {
	return groups.New(groups.Config{
		FS: b.fs, Dir: path.Join(b.cfg.DataDir, "group_offsets"),
		Sync: b.cfg.Sync.Mode, Every: b.cfg.Sync.Interval,
		Logger: b.log, Now: b.Now,
		InitialRebalanceDelay: b.cfg.GroupInitialRebalanceDelay,
		Settings:              b.cfg.Groups.WithDefaults(),
		// Group configs (the GROUP config resource, internal/configs)
		// live with the share coordinator's state, which starts after
		// this one.
		GroupConfig: func(group, name string) (string, bool) {
			if b.share == nil {
				return "", false
			}
			return b.share.GroupConfig(group, name)
		},
	}, groupsView{b})
}

// groupsView is the broker as the group coordinator sees it
// (groups.Broker).
type groupsView struct{ b *Broker }

func (v groupsView) TopicID(name string) ([16]byte, bool)     { return v.b.TopicID(name) }
func (v groupsView) TopicName(id [16]byte) (string, bool)     { return v.b.TopicName(id) }
func (v groupsView) PartitionCount(name string) (int32, bool) { return v.b.PartitionCount(name) }
func (v groupsView) OnTopicDeleted(fn func(string, [16]byte)) { v.b.OnTopicDeleted(fn) }

func (v groupsView) TopicNames() []string {
	byName := v.b.topics.Load().byName
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	return names
}

// TxnOffsetPending asks the transaction coordinator, which exists once
// storage is open (the coordinator asks only while serving requests).
func (v groupsView) TxnOffsetPending(group, topic string, partition int32) bool {
	return v.b.txns.offsetPending(group, topic, partition)
}

// GroupConfig holds the group coordinator's settings, named as Kafka names
// them (groups.Settings documents each); a zero field means Kafka's
// default.
type GroupConfig = groups.Settings

// DefaultGroupConfig is Kafka's defaults.
func DefaultGroupConfig() GroupConfig { return groups.DefaultSettings() }

// groupAccess is a request's authz as the group coordinator asks it
// (groups.Access); nil when nothing is to be checked.
func groupAccess(az *authz) groups.Access {
	if az == nil {
		return nil
	}
	return groupAuthz{az}
}

type groupAuthz struct{ az *authz }

func (g groupAuthz) Group(op kmsg.ACLOperation, name string) bool { return g.az.group(op, name) }
func (g groupAuthz) Topic(op kmsg.ACLOperation, name string) bool { return g.az.topic(op, name) }
func (g groupAuthz) TopicVisible(op kmsg.ACLOperation, name string) bool {
	return g.az.topicVisible(op, name)
}
func (g groupAuthz) GroupOps(asked bool, name string) int32 {
	return g.az.authorizedOps(asked, kmsg.ACLResourceTypeGroup, name)
}
