package broker

// DescribeLogDirs v0–v4.
//
// There is one log dir, DataDir; every partition lives in it. A nil topic
// list asks for every topic; named topics or partitions that do not exist
// are left out, as Kafka does. Size is the partition log's size on disk,
// OffsetLag 0 (no replica is catching up), IsFuture false. v4 adds the
// volume's total and usable bytes (-1 when unknown, e.g. in memory).

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeLogDirs(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeLogDirsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	resp.Version = req.Version
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.Dir = b.cfg.DataDir
	dir.TotalBytes, dir.UsableBytes = -1, -1
	if _, isOS := b.fs.(vfs.OS); isOS {
		dir.TotalBytes, dir.UsableBytes = diskSpace(b.cfg.DataDir)
	}
	// A node of a simulated cluster describes the replicas it holds.
	node, routed := b.reqNode(req)
	describe := func(t *topic, parts []int32) {
		st := kmsg.NewDescribeLogDirsResponseDirTopic()
		st.Topic = t.name
		add := func(p *partition) {
			if routed && !slices.Contains(p.place.Load().Replicas, node) {
				return
			}
			sp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			sp.Partition, sp.Size = p.index, p.log.Size()
			st.Partitions = append(st.Partitions, sp)
		}
		if parts == nil {
			for _, p := range t.partitions() {
				add(p)
			}
		}
		for _, i := range parts {
			if p := t.partition(i); p != nil {
				add(p)
			}
		}
		if len(st.Partitions) > 0 {
			dir.Topics = append(dir.Topics, st)
		}
	}
	if r.Topics == nil {
		for _, t := range b.topics.Load().byName {
			describe(t, nil)
		}
	} else {
		for _, rt := range r.Topics {
			if t := b.lookupTopic(rt.Topic, [16]byte{}); t != nil {
				describe(t, rt.Partitions)
			}
		}
	}
	resp.Dirs = append(resp.Dirs, dir)
	return protocol.Reply{Response: resp}
}
