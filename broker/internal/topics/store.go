// Package topics is topic administration apart from the topic table: the
// files a topic is on disk (Scan, WriteMeta, RemoveDir), its ID (NewID),
// where a partition's placement stands after a restart (Restore), and
// the rules CreateTopics and CreatePartitions validate a request by
// (ValidateCreate, CheckGrow). It imports neither broker nor protocol.
//
// The broker keeps the table (an atomic pointer to immutable maps), the
// partitions and their logs, the authorizer's checks, quotas and the
// answers' codes for storage failures; it calls this package under its
// adminMu and implements Admin for the questions validation asks back
// (does a topic exist, the dynamic config defaults, the internal offsets
// topic). Nothing here is on the produce or fetch path.
//
// On-disk layout under DataDir:
//
//	cluster_id                    the cluster ID, written once
//	producer_ids                  next unallocated producer ID block
//	topics/<id-hex>/topic.json    Meta: name, ID, partition count, configs
//	topics/<id-hex>/<partition>/  one logstore.Log per partition
//
// Directories are named by topic ID so a topic deleted and re-created under
// the same name never meets the old one's files. topic.json is replaced
// atomically (tmp, fsync, rename, fsync dir); a topic directory without it
// is debris from an interrupted create or delete and is removed on start.
package topics

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/minikafka/minikafka/broker/internal/cluster"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/vfs"
)

// Meta is the persisted form of a topic (topic.json).
type Meta struct {
	Version    int               `json:"version"`
	Name       string            `json:"name"`
	ID         string            `json:"id"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
	// Placement is each partition's replicas, ISR, leader and leader
	// epochs; absent while the topic has never had more than the one
	// node's placement at epoch 0 (Placements).
	Placement []*cluster.Placement `json:"placement,omitempty"`
}

// UUIDString is Kafka's printed form of a UUID: unpadded base64url.
func UUIDString(u [16]byte) string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// NewID is a new topic ID.
func NewID() ([16]byte, error) {
	for {
		var u [16]byte
		if _, err := rand.Read(u[:]); err != nil {
			return u, err
		}
		// Kafka reserves the zero UUID and the one with only the last
		// bit set (METADATA_TOPIC_ID); base64 forms starting with '-'
		// are avoided too since they read as flags on a command line.
		if u != ([16]byte{}) && u != [16]byte{15: 1} && UUIDString(u)[0] != '-' {
			return u, nil
		}
	}
}

// Dir is a topic's directory under topicsDir.
func Dir(topicsDir string, id [16]byte) string {
	return path.Join(topicsDir, hex.EncodeToString(id[:]))
}

// Found is a persisted topic as Scan reads it.
type Found struct {
	Dir  string
	Name string
	ID   [16]byte
	Cfg  *topicconfig.Config
	// Partitions is the partition count; Placement the saved placements.
	Partitions int32
	Placement  []*cluster.Placement
}

// Scan reads every topic.json under topicsDir, removing the debris of
// interrupted creates and deletes on the way.
func Scan(fsys vfs.FS, topicsDir string, log *slog.Logger) ([]Found, error) {
	names, err := fsys.ReadDir(topicsDir)
	if err != nil {
		return nil, fmt.Errorf("broker: listing topics: %w", err)
	}
	var out []Found
	for _, dn := range names {
		dir := path.Join(topicsDir, dn)
		if strings.HasSuffix(dn, ".tmp") || strings.HasSuffix(dn, ".deleted") {
			if err := fsys.RemoveAll(dir); err != nil {
				return nil, fmt.Errorf("broker: removing debris %s: %w", dir, err)
			}
			continue
		}
		data, err := vfs.ReadFile(fsys, path.Join(dir, "topic.json"))
		if errors.Is(err, os.ErrNotExist) {
			log.Warn("removing topic directory without topic.json (interrupted create)", "dir", dir)
			if err := fsys.RemoveAll(dir); err != nil {
				return nil, fmt.Errorf("broker: removing debris %s: %w", dir, err)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("broker: reading %s: %w", dir, err)
		}
		var m Meta
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("broker: decoding %s/topic.json: %w", dir, err)
		}
		if m.Version != 1 {
			return nil, fmt.Errorf("broker: %s/topic.json: unsupported version %d", dir, m.Version)
		}
		idb, err := hex.DecodeString(m.ID)
		if err != nil || len(idb) != 16 || m.ID != dn {
			return nil, fmt.Errorf("broker: %s/topic.json: bad topic id %q", dir, m.ID)
		}
		cfg, err := topicconfig.Parse(m.Configs)
		if err != nil {
			return nil, fmt.Errorf("broker: %s/topic.json: %w", dir, err)
		}
		out = append(out, Found{Dir: dir, Name: m.Name, ID: [16]byte(idb), Cfg: cfg, Partitions: m.Partitions, Placement: m.Placement})
	}
	return out, nil
}

// Placements is what topic.json keeps of places, a topic's partitions'
// placements: all of them once the cluster has several nodes or one has
// moved past epoch 0, else none.
func Placements(multi bool, places []*cluster.Placement) []*cluster.Placement {
	for _, pl := range places {
		if multi || pl.Epoch > 0 {
			return places
		}
	}
	return nil
}

// WriteMeta replaces dir's topic.json with m, atomically.
func WriteMeta(fsys vfs.FS, dir string, m *Meta) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return vfs.WriteFileAtomic(fsys, path.Join(dir, "topic.json"), data, 0o644)
}

// ErrNotDeleted marks a deletion that may not survive a restart: the
// topic's directory could be neither renamed nor stripped of topic.json.
var ErrNotDeleted = errors.New("broker: the topic's deletion is not durable")

// RemoveDir removes a deleted topic's directory (its logs closed) and
// reports whether space was freed. An error wrapping ErrNotDeleted means
// the topic may come back at the next start; any other is leftover data,
// swept then.
func RemoveDir(fsys vfs.FS, topicsDir, dir string) (freed bool, err error) {
	// Rename first so a crash mid-removal never resurrects a partial
	// topic: the .deleted directory is swept on the next start.
	gone := dir + ".deleted"
	var errs []error
	if err := fsys.Rename(dir, gone); err != nil {
		// A full disk can refuse even a rename (the directory may need
		// a block for the new name); unlinking topic.json needs none,
		// and without it the directory is debris at the next start.
		if rerr := fsys.Remove(path.Join(dir, "topic.json")); rerr != nil {
			return false, fmt.Errorf("%w: %w (and removing topic.json: %w)", ErrNotDeleted, err, rerr)
		}
		if err := fsys.SyncDir(dir); err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", ErrNotDeleted, err))
		}
		if err := fsys.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
		return true, errors.Join(errs...)
	}
	if err := fsys.SyncDir(topicsDir); err != nil {
		errs = append(errs, err)
	}
	if err := fsys.RemoveAll(gone); err != nil {
		return false, errors.Join(append(errs, err)...)
	}
	return true, errors.Join(errs...)
}

// Restore is a partition's placement at start: the saved one with every
// node up (a whole cluster restarts), without replicas on nodes no longer
// configured; a partition left with none is placed anew. A leader that
// cannot stay gives way with a new epoch, starting at logEnd().
func Restore(cl *cluster.State, log *slog.Logger, topic string, i int32, saved *cluster.Placement, logEnd func() int64) *cluster.Placement {
	if saved == nil || len(saved.Epochs) == 0 {
		return cl.NewPlacement([]int32{cl.Nodes()[0].ID})
	}
	pl := saved.Clone()
	pl.Replicas = cluster.InOrder(saved.Replicas, func(r int32) bool { return cl.Index(r) >= 0 })
	if len(pl.Replicas) == 0 {
		pl.Replicas = cl.AssignReplicas(topic, i, i+1, 1)[0]
		log.Warn("partition's replicas are not nodes of this cluster; placed anew", "topic", topic, "partition", i, "was", saved.Replicas, "now", pl.Replicas)
	}
	pl.ISR = slices.Clone(pl.Replicas)
	if !slices.Contains(pl.Replicas, pl.Leader) {
		pl.Leader = pl.Replicas[0]
		pl.Epoch++
		pl.Epochs = append(pl.Epochs, cluster.EpochStart{Epoch: pl.Epoch, Start: logEnd()})
	}
	return pl
}

// OpenWorkers is how many partition logs recover at once: recovery is
// mostly small file reads and directory listings, which overlap well.
const OpenWorkers = 16

// Parallel runs open(0) … open(n-1) on OpenWorkers goroutines; after the
// first failure it starts no more and returns that error.
func Parallel(n int, open func(i int) error) error {
	jobs := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		failed   atomic.Bool
	)
	for range OpenWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if failed.Load() {
					continue
				}
				if err := open(j); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					failed.Store(true)
				}
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return firstErr
}
