package uplink

// What the uplink needs of the broker (Env, Partition, Groups) and the
// names it shares with it.

import (
	"log/slog"

	"github.com/minikafka/minikafka/groupstore"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// Env is the broker's environment the uplink runs in, fixed at New.
type Env struct {
	// FS and DataDir: spools live in DataDir/spool/<topic-id-hex>/<partition>,
	// the forwarders' state files beside them (doc.go).
	FS      vfs.FS
	DataDir string
	Log     *slog.Logger
	// Sync is the broker's durability policy: under SyncAlways only what
	// is fsynced is visible and shipped; under SyncNever state files are
	// not fsynced.
	Sync logstore.SyncMode
	// ClusterID names the uplink's transactional producer upstream
	// (minikafka-uplink-<ClusterID>), stable across restarts.
	ClusterID string
	// MaxBatchBytes bounds a spooled batch, decompressed (the broker's
	// produce bound): the spool's record size and the decoder's limit.
	MaxBatchBytes int
	// Groups are the local consumer groups whose offsets the group
	// offset sync translates; nil when it is off.
	Groups Groups
}

// Groups is the local group coordinator's committed offsets.
type Groups interface {
	StoredGroups() []string
	GroupOffsets(group string) []groupstore.Commit
}

// Partition is a forwarded partition as the uplink sees it. The broker
// implements it; a value may be made anew for each call (the uplink keys
// partitions by topic ID and index). Methods take no lock of the uplink's
// and may be called under Uplink's mutex (doc.go, lock order).
type Partition interface {
	// Topic, TopicID and Index name the partition; they never change.
	Topic() string
	TopicID() [16]byte
	Index() int32
	// TopicPartitions is the topic's partition count now: the upstream
	// topic is made to have at least as many.
	TopicPartitions() int32
	// LogEnd is the end of the partition's log: a spool opened for it
	// continues its offsets from there.
	LogEnd() int64

	// The transaction coordinator's state of the partition. LastStable is
	// the first offset of its oldest open transaction, else hw;
	// AbortedHolds whether pid's data at offset belongs to an aborted
	// transaction; HoldsOpen whether pid has an open transaction in it.
	LastStable(hw int64) int64
	AbortedHolds(pid, offset int64) bool
	HoldsOpen(pid int64) bool

	// UseSpool makes f the partition's store: from then on its records
	// live in f's spool. producers is the partition's idempotent-producer
	// state as Producers last encoded it (nil: none saved); the broker
	// loads it, then rebuilds the rest from the spool's tail. It returns
	// the producer state's generation, and an error when producers does
	// not decode (f is the store all the same).
	UseSpool(f *Forwarder, producers []byte) (gen uint64, err error)
	// Producers encodes the partition's producer state and returns its
	// generation, which moves with every change; when known and the
	// generation is still gen it returns nil data (nothing changed).
	Producers(gen uint64, known bool) (data []byte, now uint64)
}

// partKey names a partition in the uplink's maps.
type partKey struct {
	topicID [16]byte
	index   int32
}

func keyOf(p Partition) partKey { return partKey{p.TopicID(), p.Index()} }

// tpName is an upstream topic partition.
type tpName struct {
	topic string
	part  int32
}
