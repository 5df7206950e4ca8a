package topics

import (
	"errors"
	"log/slog"
	"path"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/cluster"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/vfs"
)

// A topic written with WriteMeta is found by Scan with its configs and
// placements; debris (.tmp, .deleted, a directory without topic.json) is
// removed; RemoveDir leaves nothing that Scan finds.
func TestScanWriteRemove(t *testing.T) {
	mem := vfs.NewMem()
	log := slog.New(slog.DiscardHandler)
	const dir = "/data/topics"
	id, err := NewID()
	if err != nil {
		t.Fatal(err)
	}
	td := Dir(dir, id)
	cl, _ := cluster.New([]cluster.Node{{ID: 1}, {ID: 2}})
	places := []*cluster.Placement{cl.NewPlacement([]int32{1, 2}), cl.NewPlacement([]int32{2, 1})}
	if Placements(false, places) != nil || len(Placements(true, places)) != 2 {
		t.Fatal("Placements: a single node at epoch 0 keeps none, several nodes keep all")
	}
	for _, d := range []string{td, dir + "/x.tmp", dir + "/y.deleted", dir + "/00ff"} {
		if err := mem.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := &Meta{Version: 1, Name: "t", ID: path.Base(td), Partitions: 2, Configs: map[string]string{"cleanup.policy": "compact"}, Placement: Placements(true, places)}
	if err := WriteMeta(mem, td, m); err != nil {
		t.Fatal(err)
	}
	found, err := Scan(mem, dir, log)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Name != "t" || found[0].ID != id || found[0].Partitions != 2 ||
		found[0].Cfg.Set["cleanup.policy"] != "compact" || len(found[0].Placement) != 2 || !slices.Equal(found[0].Placement[1].Replicas, []int32{2, 1}) {
		t.Fatalf("found %+v", found)
	}
	if names, _ := mem.ReadDir(dir); !slices.Equal(names, []string{path.Base(td)}) {
		t.Fatalf("left after Scan: %v", names)
	}
	if freed, err := RemoveDir(mem, dir, td); !freed || err != nil {
		t.Fatalf("RemoveDir: %v %v", freed, err)
	}
	if found, err := Scan(mem, dir, log); err != nil || len(found) != 0 {
		t.Fatalf("after RemoveDir: %+v %v", found, err)
	}
	if _, err := RemoveDir(mem, dir, td); !errors.Is(err, ErrNotDeleted) {
		t.Fatalf("removing what is not there: %v, want ErrNotDeleted", err)
	}

	bad := Dir(dir, [16]byte{1})
	mem.MkdirAll(bad, 0o755)
	WriteMeta(mem, bad, &Meta{Version: 2, Name: "u", ID: path.Base(bad)})
	if _, err := Scan(mem, dir, log); err == nil {
		t.Fatal("a topic.json of an unknown version was accepted")
	}
}

type admin struct {
	exists  map[string]bool
	ensured int
}

func (a *admin) Exists(name string) bool { return a.exists[name] }
func (a *admin) EnsureOffsetsTopic() error {
	a.ensured++
	a.exists[OffsetsTopic] = true
	return nil
}
func (a *admin) ParseConfigs(set map[string]string) (*topicconfig.Config, error) {
	return topicconfig.Parse(set)
}

// ValidateCreate and CheckGrow over a three-node cluster alone: each
// refusal's code, the defaults, and the placements they return.
func TestValidate(t *testing.T) {
	cl, err := cluster.New([]cluster.Node{{ID: 1}, {ID: 2}, {ID: 3}})
	if err != nil {
		t.Fatal(err)
	}
	s := Settings{Cluster: cl, DefaultPartitions: 4, DefaultReplicationFactor: 2}
	a := &admin{exists: map[string]bool{"old": true}}
	topic := func(name string, n int32, rf int16, assign ...[]int32) *kmsg.CreateTopicsRequestTopic {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, n, rf
		for i, r := range assign {
			ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			ra.Partition, ra.Replicas = int32(i), r
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
		}
		return &rt
	}
	for _, c := range []struct {
		rt   *kmsg.CreateTopicsRequestTopic
		dup  bool
		want int16
	}{
		{topic("a", 1, 1), true, kerr.InvalidRequest.Code},
		{topic("a/b", 1, 1), false, kerr.InvalidTopicException.Code},
		{topic("old", 1, 1), false, kerr.TopicAlreadyExists.Code},
		{topic("a", 0, 1), false, kerr.InvalidPartitions.Code},
		{topic("a", MaxPartitions+1, 1), false, kerr.InvalidPartitions.Code},
		{topic("a", 1, 4), false, kerr.InvalidReplicationFactor.Code},
		{topic("a", 1, 0), false, kerr.InvalidReplicationFactor.Code},
		{topic("a", 1, 1, []int32{1}), false, kerr.InvalidRequest.Code},
		{topic("a", -1, -1, []int32{1, 1}), false, kerr.InvalidReplicaAssignment.Code},
		{topic("a", -1, -1, []int32{1, 9}), false, kerr.InvalidReplicaAssignment.Code},
		{topic("a", -1, -1, []int32{1, 2}, []int32{3}), false, kerr.InvalidReplicaAssignment.Code},
	} {
		if _, code, err := ValidateCreate(c.rt, c.dup, s, a); code != c.want || err == nil {
			t.Errorf("%s %d/%d %v: code %d (%v), want %d", c.rt.Topic, c.rt.NumPartitions, c.rt.ReplicationFactor, c.rt.ReplicaAssignment, code, err, c.want)
		}
	}
	rt := topic("a", -1, -1)
	rt.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "nope", Value: new(string)}}
	if _, code, _ := ValidateCreate(rt, false, s, a); code != kerr.InvalidConfig.Code {
		t.Errorf("unknown config: code %d", code)
	}
	c, code, err := ValidateCreate(topic("a", -1, -1), false, s, a)
	if code != 0 || c.Partitions != 4 || len(c.Replicas) != 4 || len(c.Replicas[0]) != 2 {
		t.Fatalf("defaults: %+v %d %v", c, code, err)
	}
	c, code, _ = ValidateCreate(topic("a", -1, -1, []int32{3, 1}, []int32{1, 2}), false, s, a)
	if code != 0 || c.Partitions != 2 || !slices.Equal(c.Replicas[0], []int32{3, 1}) {
		t.Fatalf("assignment: %+v %d", c, code)
	}
	if _, code, _ = ValidateCreate(topic(OffsetsTopic, 1, 1), false, s, a); code != kerr.TopicAlreadyExists.Code || a.ensured != 1 {
		t.Fatalf("__consumer_offsets: code %d, ensured %d", code, a.ensured)
	}
	if s.ReplicationFactor("__transaction_state") != 3 || s.ReplicationFactor("x") != 2 {
		t.Fatal("replication factors")
	}
	if cfgs := CreatedConfigs(c.Cfg); len(cfgs) != len(topicconfig.Defs) || *cfgs[0].Value == "" {
		t.Fatalf("%d configs, want %d", len(cfgs), len(topicconfig.Defs))
	}

	grow := func(count int32, assign ...[]int32) *kmsg.CreatePartitionsRequestTopic {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "t", count
		for _, r := range assign {
			rt.Assignment = append(rt.Assignment, kmsg.CreatePartitionsRequestTopicAssignment{Replicas: r})
		}
		return &rt
	}
	for _, c := range []struct {
		rt   *kmsg.CreatePartitionsRequestTopic
		dup  bool
		cur  int32
		want int16
	}{
		{grow(3), true, 2, kerr.InvalidRequest.Code},
		{grow(3), false, -1, kerr.UnknownTopicOrPartition.Code},
		{grow(1), false, 2, kerr.InvalidPartitions.Code},
		{grow(2), false, 2, kerr.InvalidPartitions.Code},
		{grow(MaxPartitions + 1), false, 2, kerr.InvalidPartitions.Code},
		{grow(4, []int32{1, 2}), false, 2, kerr.InvalidReplicaAssignment.Code},
		{grow(3, []int32{1}), false, 2, kerr.InvalidReplicaAssignment.Code},
	} {
		if _, code, err := CheckGrow(cl, c.rt, c.dup, c.cur, 2); code != c.want || err == nil {
			t.Errorf("grow %d from %d: code %d (%v), want %d", c.rt.Count, c.cur, code, err, c.want)
		}
	}
	if place, code, _ := CheckGrow(cl, grow(3, []int32{2, 3}), false, 2, 2); code != 0 || len(place) != 1 {
		t.Fatalf("grow with an assignment: %v %d", place, code)
	}
}

// Parallel runs every job once, and after a failure starts no more and
// returns the first error.
func TestParallel(t *testing.T) {
	var ran atomic.Int64
	if err := Parallel(100, func(int) error { ran.Add(1); return nil }); err != nil || ran.Load() != 100 {
		t.Fatalf("ran %d, err %v", ran.Load(), err)
	}
	ran.Store(0)
	boom := errors.New("boom")
	err := Parallel(10000, func(i int) error {
		ran.Add(1)
		if i == 0 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || ran.Load() == 10000 {
		t.Fatalf("after a failure: ran %d, err %v", ran.Load(), err)
	}

	// DeleteRequested gives v6's form for the names of older versions.
	r := kmsg.NewPtrDeleteTopicsRequest()
	r.TopicNames = []string{"a", "b"}
	if got := DeleteRequested(r, 5); len(got) != 2 || *got[1].Topic != "b" {
		t.Fatalf("DeleteRequested: %+v", got)
	}
}

type deleting struct{ denied, hidden string }

func (d deleting) NameOf(id [16]byte) string {
	return map[[16]byte]string{{1}: "a", {2}: "secret", {3}: OffsetsTopic}[id]
}
func (d deleting) Exists(name string) bool {
	return name == "a" || name == "secret" || name == OffsetsTopic
}
func (d deleting) MayDelete(name string) error {
	if name == "secret" || name == d.denied {
		return errors.New("denied")
	}
	return nil
}
func (d deleting) MayDescribe(name string) bool { return name != d.hidden }

// ResolveDelete alone: exactly one of name and ID, DELETE before
// existence for a name, the name of a denied ID shown only with DESCRIBE,
// internal topics refused.
func TestResolveDelete(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		name  *string
		id    [16]byte
		d     deleting
		want  int16
		shown bool
	}{
		{nil, [16]byte{}, deleting{}, kerr.InvalidRequest.Code, false},
		{str("a"), [16]byte{1}, deleting{}, kerr.InvalidRequest.Code, false},
		{str("nope"), [16]byte{}, deleting{denied: "nope"}, kerr.TopicAuthorizationFailed.Code, false},
		{str("nope"), [16]byte{}, deleting{}, kerr.UnknownTopicOrPartition.Code, false},
		{nil, [16]byte{9}, deleting{}, kerr.UnknownTopicID.Code, false},
		{nil, [16]byte{2}, deleting{}, kerr.TopicAuthorizationFailed.Code, true},
		{nil, [16]byte{2}, deleting{hidden: "secret"}, kerr.TopicAuthorizationFailed.Code, false},
		{nil, [16]byte{3}, deleting{}, kerr.InvalidRequest.Code, false},
		{str(OffsetsTopic), [16]byte{}, deleting{}, kerr.InvalidRequest.Code, false},
		{nil, [16]byte{1}, deleting{}, 0, false},
		{str("a"), [16]byte{}, deleting{}, 0, false},
	} {
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic, rt.TopicID = c.name, c.id
		name, shown, code, err := ResolveDelete(&rt, c.d)
		if code != c.want || (shown != nil) != c.shown || (code == 0) != (err == nil) || (code == 0 && name != "a") {
			t.Errorf("%v %v %+v: %q %v %d %v, want code %d shown %v", c.name, c.id, c.d, name, shown, code, err, c.want, c.shown)
		}
	}
}
