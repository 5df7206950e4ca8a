package uplink

// MirrorMaker 2 checkpoints (UplinkConfig.CheckpointsAlias).
//
// Consumers that move to another cluster with MirrorMaker 2 find their
// offsets in the target cluster's <source alias>.checkpoints.internal
// topic (RemoteClusterUtils.translateOffsets reads it; so do tools built
// on it). The forwarder is the mirror here, so each pass of the group
// offset sync also writes, for every local group partition on a forwarded
// topic whose translation changed, one checkpoint record to that topic
// upstream, in MM2's format: the key is the group, the upstream topic and
// the partition; the value a version (0), the local committed offset (MM2's
// "upstreamOffset": the offset in the source cluster), its translation
// upstream (MM2's "offset") and the commit's metadata. Strings are Kafka's
// protocol STRING (int16 length, UTF-8) and integers big-endian, as MM2's
// Struct schemas write them. The topic is created compacted with one
// partition, as MM2 creates it, so the newest checkpoint per key is kept.
//
// Translation is the group sync's (groups.go), so the same
// guarantee holds: a consumer that starts upstream at a checkpoint's offset
// re-reads at most the records the forwarder had not shipped when it was
// written, and loses none. MM2's offset-syncs topic is not written: it is
// MM2's own input for making checkpoints, which the forwarder makes from
// the syncs it keeps itself (<spool dir>.offset-syncs).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/internal/topicname"
)

// CheckpointsTopic is the upstream topic MM2's consumers read checkpoints
// of the cluster alias names from.
func CheckpointsTopic(alias string) string { return alias + ".checkpoints.internal" }

// ValidateCheckpointsAlias reports whether alias names a legal checkpoints
// topic.
func ValidateCheckpointsAlias(alias string) error {
	if alias == "" {
		return errors.New("the checkpoints alias is empty")
	}
	if err := topicname.Validate(CheckpointsTopic(alias)); err != nil {
		return fmt.Errorf("checkpoints alias %q: %w", alias, err)
	}
	return nil
}

// appendProtocolString appends s as Kafka's protocol STRING: an int16
// length, then the bytes. false when s is too long for it.
func appendProtocolString(b []byte, s string) ([]byte, bool) {
	if len(s) > math.MaxInt16 {
		return b, false
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...), true
}

// checkpointRecord encodes one MM2 checkpoint; false when a string is too
// long for MM2's format.
func checkpointRecord(topic, group, upstreamTopic string, partition int32, local, upstream int64, metadata string) (*kgo.Record, bool) {
	key, ok1 := appendProtocolString(nil, group)
	key, ok2 := appendProtocolString(key, upstreamTopic)
	key = binary.BigEndian.AppendUint32(key, uint32(partition))
	val := binary.BigEndian.AppendUint16(nil, 0) // version
	val = binary.BigEndian.AppendUint64(val, uint64(local))
	val = binary.BigEndian.AppendUint64(val, uint64(upstream))
	val, ok3 := appendProtocolString(val, metadata)
	return &kgo.Record{Topic: topic, Partition: 0, Key: key, Value: val}, ok1 && ok2 && ok3
}

// checkpointKey identifies a group partition's checkpoint.
type checkpointKey struct {
	group, topic string
	partition    int32
}

func checkpointKeyOf(r *GroupOffsetSync) checkpointKey {
	return checkpointKey{r.Group, r.UpstreamTopic, r.Partition}
}

// checkpointed is the last checkpoint written for a key.
type checkpointed struct {
	local, upstream int64
	metadata        string
}

// emitCheckpoints writes a checkpoint for every row whose translation
// changed since the last one written, filling in each row's Checkpoint.
func (u *Uplink) emitCheckpoints(ctx context.Context, adm *kadm.Client, rows []GroupOffsetSync) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := u.writeCheckpoints(ctx, adm, rows); err != "" {
		noteErrs(rows, err)
	}
	for i := range rows {
		r := &rows[i]
		r.Checkpoint = -1
		if c, ok := u.checkpoints[checkpointKeyOf(r)]; ok {
			r.Checkpoint = c.upstream
		}
		if !u.cfg.SyncGroupOffsets && r.UpstreamOffset >= 0 {
			// No upstream group is synced: the lag is the checkpoint's.
			r.Lag = max(0, r.UpstreamOffset-max(r.Checkpoint, 0))
		}
	}
}

// writeCheckpoints produces the changed checkpoints of rows, noting each
// written one in u.checkpoints and a record's own failure in its row; it
// returns why none could be written ("" when that is not so).
func (u *Uplink) writeCheckpoints(ctx context.Context, adm *kadm.Client, rows []GroupOffsetSync) string {
	topic := CheckpointsTopic(u.cfg.CheckpointsAlias)
	if !u.checkpointsTopicReady {
		_, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, topic)
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return "creating " + topic + " upstream: " + err.Error()
		}
		u.checkpointsTopicReady = true
	}
	var recs []*kgo.Record
	rowOf := map[*kgo.Record]int{} // ProduceSync answers in completion order
	for i := range rows {
		r := &rows[i]
		if r.UpstreamOffset < 0 {
			continue
		}
		if last, ok := u.checkpoints[checkpointKeyOf(r)]; ok && last == (checkpointed{r.LocalOffset, r.UpstreamOffset, r.metadata}) {
			continue
		}
		rec, ok := checkpointRecord(topic, r.Group, r.UpstreamTopic, r.Partition, r.LocalOffset, r.UpstreamOffset, r.metadata)
		if !ok {
			r.noteErr("checkpoint: a name or the metadata is longer than MirrorMaker 2's format allows")
			continue
		}
		recs = append(recs, rec)
		rowOf[rec] = i
	}
	if len(recs) == 0 {
		return ""
	}
	for _, pr := range u.client.ProduceSync(ctx, recs...) {
		r := &rows[rowOf[pr.Record]]
		if pr.Err != nil {
			r.noteErr("writing the checkpoint: " + pr.Err.Error())
			continue
		}
		u.checkpoints[checkpointKeyOf(r)] = checkpointed{r.LocalOffset, r.UpstreamOffset, r.metadata}
	}
	return ""
}
