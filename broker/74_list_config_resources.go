package broker

// ListConfigResources v0–v1 (KIP-1142; v0 was ListClientMetricsResources)
// and AlterReplicaLogDirs v1–v2.
//
// ListConfigResources lists what DescribeConfigs can be asked about:
// topics (2), this broker (4) and its loggers (8) under the node ID, groups
// (32: classic, consumer and share), and client-metrics subscriptions (16,
// broker/internal/configs). No types (and v0, which knew only client
// metrics and lists them) means Kafka's default set; an unknown type is
// INVALID_REQUEST.
//
// AlterReplicaLogDirs: the data directory is the one log dir, so a move
// to it is a no-op that succeeds, another path is LOG_DIR_NOT_FOUND and a
// partition this node does not have REPLICA_NOT_AVAILABLE, as Kafka's
// ReplicaManager answers.

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// Config resource types (DescribeConfigs' resource type numbers).
const (
	resTopic         int8 = 2
	resBroker        int8 = 4
	resBrokerLogger  int8 = 8
	resClientMetrics int8 = 16
	resGroup         int8 = 32
)

func (b *Broker) handleListConfigResources(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ListConfigResourcesRequest)
	resp := r.ResponseKind().(*kmsg.ListConfigResourcesResponse)
	resp.Version = req.Version
	types := r.ResourceTypes
	if req.Version == 0 {
		types = []int8{resClientMetrics}
	} else if len(types) == 0 {
		types = []int8{resTopic, resBroker, resBrokerLogger, resClientMetrics, resGroup}
	}
	add := func(name string, typ int8) {
		cr := kmsg.NewListConfigResourcesResponseConfigResource()
		cr.Name, cr.Type = name, typ
		resp.ConfigResources = append(resp.ConfigResources, cr)
	}
	for _, typ := range types {
		switch typ {
		case resTopic:
			var names []string
			for name := range b.topics.Load().byName {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, n := range names {
				add(n, resTopic)
			}
		case resBroker, resBrokerLogger:
			for _, id := range b.cl.NodeIDs() {
				add(strconv.Itoa(int(id)), typ)
			}
		case resClientMetrics:
			for _, n := range b.configs.ClientMetricsNames() {
				add(n, resClientMetrics)
			}
		case resGroup:
			lr := kmsg.NewPtrListGroupsRequest()
			lr.Version = 5
			for _, g := range b.groups.ListGroups(lr, nil, nil).Groups {
				add(g.Group, resGroup)
			}
			for _, g := range b.share.Groups() {
				add(g.Name, resGroup)
			}
		default:
			resp.ErrorCode = kerr.InvalidRequest.Code
			resp.ConfigResources = nil
			b.logBad(req, "list config resources: unsupported resource type", "type", typ)
			return protocol.Reply{Response: resp}
		}
	}
	return protocol.Reply{Response: resp}
}

func (b *Broker) handleAlterReplicaLogDirs(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.AlterReplicaLogDirsRequest)
	resp := r.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	resp.Version = req.Version
	ours := filepath.Clean(b.cfg.DataDir)
	byTopic := map[string]int{}
	for _, d := range r.Dirs {
		known := filepath.Clean(d.Dir) == ours
		for _, dt := range d.Topics {
			i, ok := byTopic[dt.Topic]
			if !ok {
				i = len(resp.Topics)
				byTopic[dt.Topic] = i
				st := kmsg.NewAlterReplicaLogDirsResponseTopic()
				st.Topic = dt.Topic
				resp.Topics = append(resp.Topics, st)
			}
			t := b.lookupTopic(dt.Topic, [16]byte{})
			for _, p := range dt.Partitions {
				sp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				sp.Partition = p
				switch {
				case !known:
					sp.ErrorCode = kerr.LogDirNotFound.Code
					b.logBad(req, "alter replica log dirs: not a log dir", "dir", d.Dir)
				case t == nil || t.partition(p) == nil:
					sp.ErrorCode = kerr.ReplicaNotAvailable.Code
				}
				resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, sp)
			}
		}
	}
	return protocol.Reply{Response: resp}
}
