package share

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConfigNames are the GROUP resource configs a share group reads, with
// their defaults. The coordinator stores a group's consumer.* configs
// (KIP-848 groups, broker/internal/configs) as well: one durable place for
// every GROUP resource config.
func ConfigNames() map[string]string { return maps.Clone(groupConfigDefaults) }

// ValidateConfig checks one share group config value as Kafka does,
// within the broker's bounds (Kafka's group.share.{min,max}.* defaults;
// the minimum lock duration is configurable).
func (c *Coordinator) ValidateConfig(name, value string) error {
	bound := func(lo, hi int64) error {
		n, err := strconv.ParseInt(value, 10, 32)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("Invalid value %s for configuration %s: Value must be an integer in [%d, %d]", value, name, lo, hi)
		}
		return nil
	}
	switch name {
	case "share.auto.offset.reset":
		if value != "latest" && value != "earliest" {
			return fmt.Errorf("Invalid value %s for configuration share.auto.offset.reset: String must be one of: latest, earliest", value)
		}
	case "share.isolation.level":
		if value != "read_uncommitted" && value != "read_committed" {
			return fmt.Errorf("Invalid value %s for configuration share.isolation.level: String must be one of: read_committed, read_uncommitted", value)
		}
	case "share.record.lock.duration.ms":
		return bound(c.cfg.MinRecordLockDuration.Milliseconds(), max(60000, c.cfg.MinRecordLockDuration.Milliseconds()))
	case "share.session.timeout.ms":
		return bound(45000, 60000)
	case "share.heartbeat.interval.ms":
		return bound(5000, 15000)
	case "share.delivery.count.limit":
		if n, err := strconv.ParseInt(value, 10, 16); err != nil || n < 2 || n > 10 {
			return fmt.Errorf("Invalid value %s for configuration share.delivery.count.limit: Value must be in [2, 10]", value)
		}
	default:
		return fmt.Errorf("Unknown group config name: %s", name)
	}
	return nil
}

// GroupConfigs is a group's explicitly set configs.
func (c *Coordinator) GroupConfigs(group string) map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.configs[group])
}

// SetGroupConfigs replaces a group's explicitly set configs, durably.
func (c *Coordinator) SetGroupConfigs(group string, set map[string]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.st.write(&frame{kind: kindConfig, group: group, configs: set}); err != nil {
		return err
	}
	c.cfgMu.Lock()
	defer c.cfgMu.Unlock()
	if len(set) == 0 {
		delete(c.configs, group)
	} else {
		c.configs[group] = maps.Clone(set)
	}
	return nil
}

// GroupConfig is one of a group's explicitly set configs. It takes only
// cfgMu, so any coordinator may ask while holding its own locks.
func (c *Coordinator) GroupConfig(group, name string) (string, bool) {
	c.cfgMu.RLock()
	defer c.cfgMu.RUnlock()
	v, ok := c.configs[group][name]
	return v, ok
}

// DescribeOffsets serves one group of DescribeShareGroupOffsets: SPSO
// per partition (-1 where the group has no state) and, from v1, the lag
// (records from SPSO to the high watermark not yet done).
func (c *Coordinator) DescribeOffsets(version int16, rg *kmsg.DescribeShareGroupOffsetsRequestGroup) kmsg.DescribeShareGroupOffsetsResponseGroup {
	out := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
	out.GroupID = rg.GroupID
	if c.b.OtherGroup(rg.GroupID) {
		out.ErrorCode, out.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr("Group "+rg.GroupID+" is not a share group.")
		return out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[rg.GroupID]
	if g == nil {
		out.ErrorCode, out.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr("Group "+rg.GroupID+" not found.")
		return out
	}
	part := func(topic string, id [16]byte, p int32) kmsg.DescribeShareGroupOffsetsResponseGroupTopicPartition {
		rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
		rp.Partition, rp.StartOffset, rp.LeaderEpoch, rp.Lag = p, -1, -1, -1
		if sp := g.parts[tp{id, p}]; sp != nil {
			rp.StartOffset, rp.LeaderEpoch = sp.spso, 0
			if _, hwm, ok := c.b.Offsets(topic, p); ok {
				rp.Lag = max(hwm-sp.speo(), 0) + sp.inFlight()
			}
		}
		return rp
	}
	if rg.Topics == nil {
		// Every partition the group has state for.
		byTopic := map[[16]byte][]int32{}
		for k := range g.parts {
			byTopic[k.id] = append(byTopic[k.id], k.p)
		}
		for _, id := range sortedIDs(byTopic) {
			name, ok := c.b.TopicName(id)
			if !ok {
				continue
			}
			rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			rt.Topic, rt.TopicID = name, id
			ps := byTopic[id]
			slices.Sort(ps)
			for _, p := range ps {
				rt.Partitions = append(rt.Partitions, part(name, id, p))
			}
			out.Topics = append(out.Topics, rt)
		}
		return out
	}
	for _, t := range rg.Topics {
		rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
		rt.Topic = t.Topic
		id, ok := c.b.TopicID(t.Topic)
		n, _ := c.b.PartitionCount(t.Topic)
		rt.TopicID = id
		for _, p := range t.Partitions {
			rp := part(t.Topic, id, p)
			if !ok || p < 0 || p >= n {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		out.Topics = append(out.Topics, rt)
	}
	return out
}

// AlterOffsets serves AlterShareGroupOffsets: the group must be empty
// (NON_EMPTY_GROUP otherwise); each partition's SPSO is set, creating
// the group's state (Kafka creates the group too).
func (c *Coordinator) AlterOffsets(r *kmsg.AlterShareGroupOffsetsRequest) *kmsg.AlterShareGroupOffsetsResponse {
	resp := r.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	if r.GroupID == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp
	}
	if c.b.OtherGroup(r.GroupID) {
		resp.ErrorCode, resp.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr("Group "+r.GroupID+" is not a share group.")
		return resp
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[r.GroupID]
	if g != nil && len(g.members) > 0 {
		resp.ErrorCode = kerr.NonEmptyGroup.Code
		return resp
	}
	g = c.getOrCreate(r.GroupID)
	for _, t := range r.Topics {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		id, ok := c.b.TopicID(t.Topic)
		rt.TopicID = id
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			start, hwm, pok := c.b.Offsets(t.Topic, p.Partition)
			switch {
			case !ok || !pok:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case p.StartOffset < start || p.StartOffset > hwm:
				rp.ErrorCode = kerr.InvalidRequest.Code
				rp.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("start offset %d is outside [%d, %d]", p.StartOffset, start, hwm))
			default:
				sp := &partition{id: id, p: p.Partition, spso: p.StartOffset}
				g.parts[tp{id, p.Partition}] = sp
				if err := c.persist(g, sp); err != nil {
					rp.ErrorCode = kerr.CoordinatorNotAvailable.Code
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// DeleteOffsets serves DeleteShareGroupOffsets: the group must exist and
// be empty; each topic's share state is removed.
func (c *Coordinator) DeleteOffsets(r *kmsg.DeleteShareGroupOffsetsRequest) *kmsg.DeleteShareGroupOffsetsResponse {
	resp := r.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	if c.b.OtherGroup(r.GroupID) {
		resp.ErrorCode, resp.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr("Group "+r.GroupID+" is not a share group.")
		return resp
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[r.GroupID]
	switch {
	case g == nil:
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp
	case len(g.members) > 0:
		resp.ErrorCode = kerr.NonEmptyGroup.Code
		return resp
	}
	for _, t := range r.Topics {
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		id, ok := c.b.TopicID(t.Topic)
		rt.TopicID = id
		if !ok {
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		for k := range g.parts {
			if k.id == id {
				delete(g.parts, k)
				if err := c.st.write(&frame{kind: kindPartDel, group: g.name, topicID: k.id, part: k.p}); err != nil {
					rt.ErrorCode = kerr.CoordinatorNotAvailable.Code
				}
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// RefuseOffsetCommit answers an OffsetCommit to a share group's ID:
// GROUP_ID_NOT_FOUND on every partition, as Kafka.
func RefuseOffsetCommit(r *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.GroupIDNotFound.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
