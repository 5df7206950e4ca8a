package uplink

// Consumer groups that can move upstream (-forward-group-offsets, and
// -forward-checkpoints: see checkpoints.go).
//
// A group that consumes a forwarded topic locally commits local offsets;
// the same records sit upstream at other offsets (the upstream partition
// may hold records from elsewhere, or have been written before forwarding
// began). Every batch the upstream acknowledges gives an offset sync, as
// MirrorMaker 2 calls it: local offsets [Local, Local+Len) are upstream
// offsets [Upstream, Upstream+Len), exactly, since a batch's records are
// shipped whole and in order. A forwarder keeps its last maxSyncs syncs in
// memory, the newest in its producer journal and all of them in
// <spool dir>.offset-syncs (rewritten by each pass of the sync loop), so
// translation survives a restart.
//
// With UplinkConfig.SyncGroupOffsets, every SyncGroupOffsetsInterval the
// uplink translates each local group's committed offsets on forwarded
// topics and commits them to the group of the same name upstream, on the
// upstream topic, as MM2 does with sync.group.offsets.enabled: only while
// the upstream group has no members (a commit from outside a live group
// would be refused, and would fight its own consumers), and never moving
// an upstream offset backwards. A committed offset inside a synced batch
// translates exactly; one past the newest sync (records not shipped yet)
// translates to the end of the newest shipped batch, so a consumer that
// moves upstream re-reads at most the records the forwarder had not yet
// shipped; one older than every kept sync is not translated (the upstream
// position of those records is no longer known, and guessing forward
// could skip records).

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/minikafka/minikafka/internal/vfs"
)

// offsetSync maps local offsets [Local, Local+Len) to upstream offsets
// [Upstream, Upstream+Len).
type offsetSync struct {
	Local    int64 `json:"local"`
	Upstream int64 `json:"upstream"`
	Len      int64 `json:"len"`
}

const maxSyncs = 512

// offsetSyncs is a forwarder's recent syncs, ordered by Local.
type offsetSyncs struct {
	mu    sync.Mutex
	syncs []offsetSync
	dirty bool
}

func (o *offsetSyncs) add(s offsetSync) {
	if s.Len <= 0 || s.Local < 0 || s.Upstream < 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := len(o.syncs); n > 0 && o.syncs[n-1].Local >= s.Local {
		// A resend after a restart, or older: keep the order.
		i := sort.Search(n, func(i int) bool { return o.syncs[i].Local >= s.Local })
		if i < n && o.syncs[i].Local == s.Local {
			o.syncs[i] = s
			o.dirty = true
			return
		}
		o.syncs = slices.Insert(o.syncs, i, s)
	} else {
		o.syncs = append(o.syncs, s)
	}
	if len(o.syncs) > maxSyncs {
		o.syncs = slices.Delete(o.syncs, 0, len(o.syncs)-maxSyncs)
	}
	o.dirty = true
}

func (o *offsetSyncs) newest() *offsetSync {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.syncs) == 0 {
		return nil
	}
	s := o.syncs[len(o.syncs)-1]
	return &s
}

// translate returns the upstream offset for local committed offset c (the
// next record to consume); false when it cannot be known.
func (o *offsetSyncs) translate(c int64) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	// The newest sync starting at or before c.
	i := sort.Search(len(o.syncs), func(i int) bool { return o.syncs[i].Local > c }) - 1
	if i < 0 {
		return 0, false
	}
	s := o.syncs[i]
	if c < s.Local+s.Len {
		return s.Upstream + (c - s.Local), true
	}
	// Past the end of s: the next records, once shipped, land at or after
	// the end of s upstream.
	return s.Upstream + s.Len, true
}

func (o *offsetSyncs) snapshot() ([]offsetSync, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.dirty
	o.dirty = false
	return slices.Clone(o.syncs), d
}

func offsetSyncsPath(spoolDir string) string { return spoolDir + ".offset-syncs" }

// loadSyncs reads the persisted syncs; a damaged file only costs
// translations of old offsets.
func (f *Forwarder) loadSyncs() {
	data, err := vfs.ReadFile(f.u.env.FS, f.syncsPath)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var ss []offsetSync
	if err == nil {
		err = json.Unmarshal(data, &ss)
	}
	if err != nil {
		f.u.log.Warn("forwarding: unreadable offset syncs; older group offsets cannot be translated", "file", f.syncsPath, "err", err)
		return
	}
	for _, s := range ss {
		f.syncs.add(s)
	}
}

// saveSyncs rewrites the syncs file when they changed, once per sync
// pass (fsynced unless durability is never).
func (f *Forwarder) saveSyncs() {
	ss, dirty := f.syncs.snapshot()
	if !dirty || len(ss) == 0 {
		return
	}
	data, _ := json.Marshal(ss)
	if err := f.replaceStateFile(f.syncsPath, data); err != nil {
		f.u.log.Warn("forwarding: saving offset syncs", "file", f.syncsPath, "err", err)
	}
}

// GroupOffsetSync is one group partition's offset as the uplink last
// synced it upstream (ForwardGroupOffsets).
type GroupOffsetSync struct {
	Group         string `json:"group"`
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	UpstreamTopic string `json:"upstream_topic"`
	// LocalOffset is the group's committed offset here; UpstreamOffset its
	// translation (-1 when it cannot be translated); Committed what the
	// upstream group holds after the last sync (-1 if nothing).
	LocalOffset    int64 `json:"local_offset"`
	UpstreamOffset int64 `json:"upstream_offset"`
	Committed      int64 `json:"committed"`
	// Lag is how many records the upstream group is behind the
	// translation (0 when synced); with CheckpointsAlias and without
	// SyncGroupOffsets, how far the last checkpoint is behind it.
	Lag int64 `json:"lag"`
	// Checkpoint is the upstream offset of the last MM2 checkpoint written
	// for it (CheckpointsAlias; -1 when none was).
	Checkpoint int64 `json:"checkpoint"`
	// SyncedAt is the last sync pass that looked at it; Err why it was
	// not committed ("" when it was or needed not be).
	SyncedAt time.Time `json:"synced_at"`
	Err      string    `json:"error,omitempty"`

	metadata string // the local commit's, for its checkpoint
}

// noteErr sets r's error unless an earlier step of the pass set one.
func (r *GroupOffsetSync) noteErr(msg string) {
	if r.Err == "" {
		r.Err = msg
	}
}

// noteErrs is noteErr for every row.
func noteErrs(rows []GroupOffsetSync, msg string) {
	for i := range rows {
		rows[i].noteErr(msg)
	}
}

// groupSyncLoop commits translated group offsets upstream until the
// uplink closes.
func (u *Uplink) groupSyncLoop() {
	defer u.wg.Done()
	t := time.NewTicker(u.cfg.SyncGroupOffsetsInterval)
	defer t.Stop()
	for {
		select {
		case <-u.ctx.Done():
			return
		case <-t.C:
		}
		u.syncGroupOffsets(u.ctx)
	}
}

// syncGroupOffsets is one pass of the group offset sync.
func (u *Uplink) syncGroupOffsets(ctx context.Context) {
	u.mu.Lock()
	byTopic := map[string]map[int32]*Forwarder{}
	for _, f := range u.parts {
		if byTopic[f.topic] == nil {
			byTopic[f.topic] = map[int32]*Forwarder{}
		}
		byTopic[f.topic][f.index] = f
	}
	u.mu.Unlock()
	for _, parts := range byTopic {
		for _, f := range parts {
			f.saveSyncs()
		}
	}
	adm := kadm.NewClient(u.client)
	now := time.Now()
	var out []GroupOffsetSync
	for _, group := range u.env.Groups.StoredGroups() {
		var rows []GroupOffsetSync
		for _, c := range u.env.Groups.GroupOffsets(group) {
			f := byTopic[c.Topic][c.Partition]
			if f == nil || c.Offset.Offset < 0 {
				continue
			}
			row := GroupOffsetSync{Group: group, Topic: c.Topic, Partition: c.Partition, UpstreamTopic: f.upstream,
				LocalOffset: c.Offset.Offset, UpstreamOffset: -1, Committed: -1, Checkpoint: -1, SyncedAt: now,
				metadata: c.Offset.Metadata}
			if up, ok := f.syncs.translate(c.Offset.Offset); ok {
				row.UpstreamOffset = up
			} else {
				row.Err = "no offset sync at or before the committed offset"
			}
			rows = append(rows, row)
		}
		if len(rows) == 0 {
			continue
		}
		if u.cfg.SyncGroupOffsets {
			u.syncGroup(ctx, adm, group, rows)
		}
		out = append(out, rows...)
	}
	if u.cfg.CheckpointsAlias != "" && len(out) > 0 {
		u.emitCheckpoints(ctx, adm, out)
	}
	slices.SortFunc(out, CompareGroupOffsetSyncs)
	u.groupSyncMu.Lock()
	u.groupSync = out
	u.groupSyncMu.Unlock()
}

// syncGroup commits rows' translations to group upstream when its state
// allows, filling in what the upstream holds afterwards.
func (u *Uplink) syncGroup(ctx context.Context, adm *kadm.Client, group string, rows []GroupOffsetSync) {
	setErr := func(msg string) { noteErrs(rows, msg) }
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		setErr("describing the upstream group: " + err.Error())
		return
	}
	if d, ok := described[group]; ok && d.Err == nil && len(d.Members) > 0 {
		setErr("the upstream group has members; offsets are synced only while it is empty")
		return
	}
	current, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		setErr("fetching the upstream group's offsets: " + err.Error())
		return
	}
	commit := kadm.Offsets{}
	for i := range rows {
		r := &rows[i]
		if o, ok := current.Lookup(r.UpstreamTopic, r.Partition); ok && o.Err == nil {
			r.Committed = o.At
		}
		if r.UpstreamOffset < 0 || r.UpstreamOffset <= r.Committed {
			continue // untranslatable, or never backwards
		}
		commit.Add(kadm.Offset{Topic: r.UpstreamTopic, Partition: r.Partition, At: r.UpstreamOffset, LeaderEpoch: -1})
	}
	if len(commit) > 0 {
		res, err := adm.CommitOffsets(ctx, group, commit)
		if err != nil {
			setErr("committing upstream: " + err.Error())
			return
		}
		for i := range rows {
			r := &rows[i]
			if c, ok := res.Lookup(r.UpstreamTopic, r.Partition); ok {
				if c.Err != nil {
					r.Err = "committing upstream: " + c.Err.Error()
				} else {
					r.Committed = c.At
				}
			}
		}
	}
	for i := range rows {
		if r := &rows[i]; r.UpstreamOffset >= 0 {
			r.Lag = max(0, r.UpstreamOffset-max(r.Committed, 0)) // nothing committed: all of it
		}
	}
}

// GroupOffsets is the last group offset sync pass: one row per group and
// forwarded partition it committed; nil when the sync is off or has not
// run yet.
func (u *Uplink) GroupOffsets() []GroupOffsetSync {
	u.groupSyncMu.Lock()
	defer u.groupSyncMu.Unlock()
	return slices.Clone(u.groupSync)
}

// CompareGroupOffsetSyncs orders rows by group, then topic and partition:
// the order of forward-status and /metrics.
func CompareGroupOffsetSyncs(a, b GroupOffsetSync) int {
	return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}
